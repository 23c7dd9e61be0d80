"""The retrieval protocol of a dataset (docs/results.md, "Protocol settings"): the corpus order
(`hopbench.data.corpus_order`) and the retrieval unit (`hopbench.data.chunking`), applied to a
loaded dataset in that order: ordered first, then chunked.

At their defaults (PROTOCOL_DEFAULTS: every run before them) they enter no dataset fingerprint
and no run hash (`hopbench.core.hash_inputs`).
"""

from __future__ import annotations

from hopbench.core.errors import HopbenchError
from hopbench.core.hash_inputs import omit_defaults
from hopbench.data.chunking import (
    DEFAULT_TOKENIZER,
    check_chunk_settings,
    chunk_corpus,
    credit_questions,
)
from hopbench.data.corpus_order import check_order_settings, ordered_corpus
from hopbench.data.schema import Passage, Question

CHUNKINGS = ("passages", "tokens")
PROTOCOL_DEFAULTS = {
    "corpus_order": "given",
    "corpus_seed": 0,
    "chunking": "passages",
    "chunk_size": 1000,
    "chunk_overlap": 100,
    "chunk_tokenizer": DEFAULT_TOKENIZER,
}


def check_protocol(settings: dict) -> None:
    """Every protocol setting has a value it can take (one HopbenchError naming the key)."""
    check_order_settings(settings["corpus_order"], settings["corpus_seed"])
    if settings["chunking"] not in CHUNKINGS:
        raise HopbenchError(
            f"dataset.chunking must be one of {list(CHUNKINGS)}, got {settings['chunking']!r}"
        )
    check_chunk_settings(settings["chunk_size"], settings["chunk_overlap"])


def apply_protocol(
    questions: list[Question], corpus: list[Passage], settings: dict
) -> tuple[list[Question], list[Passage], dict]:
    """The questions (gold credited to chunks when chunked), the corpus in its order and unit,
    and notes on the chunking (empty for passages)."""
    check_protocol(settings)
    corpus = ordered_corpus(corpus, settings["corpus_order"], settings["corpus_seed"])
    if settings["chunking"] == "passages":
        return questions, corpus, {}
    chunked = chunk_corpus(
        corpus, settings["chunk_size"], settings["chunk_overlap"], settings["chunk_tokenizer"]
    )
    notes = {
        "chunking": {
            "tokenizer": chunked.tokenizer,
            "n_source_passages": len(chunked.credit),
            "n_corpus_tokens": chunked.n_tokens,
        }
    }
    return credit_questions(questions, chunked.credit), chunked.chunks, notes


def fingerprint_parts(settings: dict) -> dict:
    """The settings that change the corpus: none at the defaults; the chunk settings only when
    chunked, the seed only when shuffled."""
    added = omit_defaults(settings, PROTOCOL_DEFAULTS)
    if settings["chunking"] == "passages":
        added = {k: v for k, v in added.items() if not k.startswith("chunk_")}
    if settings["corpus_order"] == "given":
        added.pop("corpus_seed", None)
    return added
