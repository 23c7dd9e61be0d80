"""The spaCy pipeline the extractor and question analysis share, loaded once per process.

Question mentions (hopbench.retrieve.question) are read with the same pipeline as passages, so
a mention and a graph entity of the same text get the same tokens and the same stripping.
"""

from __future__ import annotations

DISABLED = ("lemmatizer",)

_PIPELINES: dict[str, object] = {}


def load_pipeline(model: str):
    """One loaded pipeline per model and process (loading takes seconds; inference is read-only)."""
    if model not in _PIPELINES:
        import spacy

        from hopbench.kg.spacy_pos import use_fast_pos

        nlp = spacy.load(model, disable=list(DISABLED))
        use_fast_pos(nlp)  # same POS tags as the attribute_ruler, about 20% less time overall
        _PIPELINES[model] = nlp
    return _PIPELINES[model]
