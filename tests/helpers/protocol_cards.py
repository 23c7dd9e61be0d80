"""A complete protocol card as metrics.json holds it (hopbench.core.protocol_card), for tests
that write runs by hand."""

from __future__ import annotations


def nested_card(**changes) -> dict:
    """A complete card of a graph run with an LLM for retrieval and reading; `changes` replace
    top-level entries (embedder={...}, llm=None, graph=None, ...)."""
    out = {
        "version": 1,
        "retrieval_unit": "passage",
        "chunking": "passages as given",
        "corpus_digest": "sha256:" + "c" * 64,
        "question_set_digest": "sha256:" + "a" * 64,
        "n_questions": 1000,
        "n_retrieval_scored": 863,
        "recall": "recall@k: share of gold passages in the top k",
        "retrieval_depth": 10,
        "embedder": {"name": "minilm", "digest": "sha256:" + "e" * 64},
        "llm": {"name": "qwen", "digest": "sha256:" + "f" * 64, "roles": ["retrieval", "reader"]},
        "reader_context": "top-5 passages",
        "graph": {
            "label": "spacy",
            "entities": 10,
            "facts": 5,
            "passages": 4,
            "relation_edges": 3,
            "synonym_edges": 2,
            "context_edges": 7,
        },
    }
    out.update(changes)
    return out
