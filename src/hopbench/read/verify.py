"""Claim verifier (HoVer): SUPPORTED / NOT_SUPPORTED from the top retrieved passages."""

from __future__ import annotations

from hopbench.data.schema import Passage, Question
from hopbench.llm.prompts import verify as prompt
from hopbench.read.base import Reader


class ClaimVerifier(Reader):
    name = "verify"

    def _ask(self, question: Question, passages: list[Passage], calls: list) -> str:
        data = self._chat_json(prompt.messages, prompt.SCHEMA, prompt.SCHEMA_NAME, question.text,
                               passages, calls)
        if calls:
            calls[-1]["reasoning"] = data["reasoning"]
        return data["label"]
