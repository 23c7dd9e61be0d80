"""Entity-name normalisation and sentence lookup shared by every extractor and the builder."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")


def normalize_name(text: str) -> str:
    """HippoRAG's `text_processing`: lower-case, non-alphanumerics to spaces (then collapsed).

    Non-ASCII letters are alphanumerics too (``str.isalnum``) so 'Zürich' stays 'zürich'.
    """
    lowered = text.lower()
    out = [c if c.isalnum() else " " for c in lowered]
    return " ".join("".join(out).split())


def alnum_count(name: str) -> int:
    return sum(c.isalnum() for c in name)


def clean_text(text: str) -> str:
    """Replace lone surrogates and other un-encodable code points so hashing and JSON never fail."""
    return text.encode("utf-8", "replace").decode("utf-8")


def split_sentences(text: str) -> list[str]:
    """A cheap splitter for description sentences (the spaCy parse is not kept after extraction)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def first_mention(sentences: list[str], surface_forms: list[str]) -> str | None:
    """The first sentence that contains any surface form (case-insensitive), else None."""
    lowered = [s.lower() for s in sentences]
    forms = [f.lower() for f in surface_forms if f.strip()]
    for sent, low in zip(sentences, lowered):
        if any(f in low for f in forms):
            return sent
    return None
