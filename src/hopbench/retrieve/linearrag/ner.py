"""LinearRAG's NER pass (their ``src/ner.py``), kept in a deterministic order.

Their rules: every named entity except ORDINAL and CARDINAL; a passage's entities are its
distinct entity texts; each entity is filed under the text of its spaCy sentence, and
sentences of equal text are merged over the corpus (entities appended once, in order).
Question entities are the same entities lower-cased. Their code keeps these in Python sets,
whose iteration order changes with the interpreter's hash seed; here they keep the order of
first appearance, so a run is reproducible (docs/methods/linearrag.md, "Order").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SKIPPED_LABELS = ("ORDINAL", "CARDINAL")


@dataclass
class CorpusEntities:
    """NER output of a corpus: entities per passage, entities per sentence (both ordered)."""

    passage_entities: list[list[str]]
    sentence_entities: dict[str, list[str]]


def corpus_entities(docs: Iterable) -> CorpusEntities:
    """Their ``batch_ner`` over spaCy docs given in corpus order."""
    passages: list[list[str]] = []
    sentences: dict[str, list[str]] = {}
    for doc in docs:
        seen: dict[str, None] = {}
        for ent in doc.ents:
            if ent.label_ in SKIPPED_LABELS:
                continue
            listed = sentences.setdefault(ent.sent.text, [])
            if ent.text not in listed:
                listed.append(ent.text)
            seen.setdefault(ent.text, None)
        passages.append(list(seen))
    return CorpusEntities(passages, sentences)


def question_entities(doc) -> list[str]:
    """Their ``question_ner``: distinct lower-cased entity texts, here in order of appearance."""
    out: dict[str, None] = {}
    for ent in doc.ents:
        if ent.label_ not in SKIPPED_LABELS:
            out.setdefault(ent.text.lower(), None)
    return list(out)


def run_corpus_ner(nlp, texts: Sequence[str], batch_size: int = 64) -> CorpusEntities:
    """NER of every passage with a loaded spaCy pipeline (the batch size changes no output)."""
    return corpus_entities(nlp.pipe(texts, batch_size=batch_size))
