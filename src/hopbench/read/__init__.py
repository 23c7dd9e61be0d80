"""Readers: turn retrieved passages into an answer (QA) or a label (claim verification)."""

from hopbench.read.base import Reader, ReaderOutput
from hopbench.read.qa import QAReader
from hopbench.read.verify import ClaimVerifier

__all__ = ["Reader", "ReaderOutput", "QAReader", "ClaimVerifier"]
