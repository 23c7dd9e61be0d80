"""Claim verifier (HoVer): SUPPORTED / NOT_SUPPORTED from the top retrieved passages."""

from __future__ import annotations

from hopbench.llm.prompts import verify
from hopbench.read.base import Reader


class ClaimVerifier(Reader):
    name = "verify"
    prompt = verify
    answer_field = "label"
