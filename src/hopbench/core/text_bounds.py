"""How much of a text a tokenizer or spaCy is given: a generous prefix, never the whole of a huge one.

Why: a fast tokenizer tokenises the whole string even with `truncation=True`; a 52 MB
paragraph of which 256 tokens were used took 9.7 GB in `token_lengths` (issue #54). Cutting
the text first bounds that memory by the cut, not by the input. The cuts are generous, so they
change nothing a model or spaCy computes on real text (docs/datasets.md, "Long texts"):

- tokenizer: `CHARS_PER_TOKEN` characters for each token kept (16,384 characters for
  MiniLM's 256 tokens); English averages about 4.5 characters a token, so only a text whose
  first tokens average more than 64 characters each (a run of spaces, words longer than the
  tokenizer's 100-character word limit) could lose tokens it would have kept;
- spaCy: `SPACY_MAX_CHARS`, spaCy's own `nlp.max_length` default, beyond which spaCy refuses
  a text with an error; a longer text is cut there (with a warning) instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 64
SPACY_MAX_CHARS = 1_000_000


def tokenizer_chars(max_tokens: int) -> int:
    """The characters kept of a text whose first `max_tokens` tokens are used."""
    return CHARS_PER_TOKEN * max(int(max_tokens), 1)


def cut_for_tokenizer(texts: Sequence[str], max_tokens: int) -> list[str]:
    """`texts`, each cut to `tokenizer_chars(max_tokens)` characters (a short text is the same
    object: nothing is copied)."""
    bound = tokenizer_chars(max_tokens)
    return [t if len(t) <= bound else t[:bound] for t in texts]


def cut_for_spacy(text: str) -> str:
    """`text`, or its first `SPACY_MAX_CHARS` characters (a warning says so)."""
    if len(text) <= SPACY_MAX_CHARS:
        return text
    log.warning(
        "a text of %d characters goes to spaCy cut to its first %d (spaCy's own maximum)",
        len(text),
        SPACY_MAX_CHARS,
    )
    return text[:SPACY_MAX_CHARS]
