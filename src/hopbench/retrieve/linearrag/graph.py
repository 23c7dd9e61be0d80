"""LinearRAG's graph (their ``LinearRAG.index``): entity and passage nodes, sentence structure.

Nodes: every entity (a distinct NER text), then every passage, in that order (their
``add_nodes``). Sentences are not nodes; they link entities for the activation step:
``entity_sentences[e]`` are the sentences mentioning e, ``sentence_entities[s]`` the entities
in sentence s (their ``entity_hash_id_to_sentence_hash_ids`` and the reverse).

Undirected weighted edges (their ``add_entity_to_passage_edges``, ``add_adjacent_passage_edges``,
``augment_graph``):
- passage p - entity e, weight count(e in p) / sum over p's entities of their counts, counted
  case-sensitively in the passage text as indexed (with its ``idx:`` prefix);
- passage - next passage, weight 1, when `adjacent_edges`: passages whose text starts with
  ``<digits>:`` are sorted by that number (stably) and each is linked to the next one. With
  the ``idx:`` prefix that run.py writes, this links each passage to its corpus successor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve.linearrag.ner import CorpusEntities

INDEX_PREFIX = re.compile(r"^(\d+):")


@dataclass
class LinearRAGGraph:
    """The structure retrieval reads; node i < n_entities is an entity, else passage i - E."""

    entities: list[str]
    sentences: list[str]
    passage_texts: list[str]
    entity_sentences: list[list[int]]
    sentence_entities: list[list[int]]
    adjacency: sp.csr_matrix  # symmetric (E + P) x (E + P), summed weights
    n_adjacent_edges: int

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def n_passages(self) -> int:
        return len(self.passage_texts)


def prefixed_texts(contents: Sequence[str]) -> list[str]:
    """run.py's passages: ``f"{idx}:{chunk}"`` with idx the corpus position."""
    return [f"{i}:{c}" for i, c in enumerate(contents)]


def adjacent_pairs(passage_texts: Sequence[str]) -> list[tuple[int, int]]:
    """Their ``add_adjacent_passage_edges``: (passage, next passage) by the numeric prefix."""
    indexed = [
        (int(m.group(1)), i)
        for i, text in enumerate(passage_texts)
        if (m := INDEX_PREFIX.match(text.strip()))
    ]
    indexed.sort(key=lambda x: x[0])
    return [(indexed[j][1], indexed[j + 1][1]) for j in range(len(indexed) - 1)]


def build_graph(
    passage_texts: Sequence[str],
    ner: CorpusEntities,
    *,
    adjacent_edges: bool = True,
    entity_order: Sequence[str] | None = None,
    sentence_order: Sequence[str] | None = None,
    entity_sentence_order: dict[str, Sequence[str]] | None = None,
) -> LinearRAGGraph:
    """The graph of module docstring from the passages as indexed and their NER output.

    `entity_order` / `sentence_order` (default: first appearance) only say which index each
    entity and sentence gets, and `entity_sentence_order` in which order an entity lists its
    sentences (default: by index); the parity benchmark passes the authors' orders with them.
    """
    if len(ner.passage_entities) != len(passage_texts):
        raise ValueError(
            f"NER covers {len(ner.passage_entities)} passages, the corpus has {len(passage_texts)}"
        )
    if entity_order is None:
        seen: dict[str, None] = {}
        for ents in ner.passage_entities:
            for e in ents:
                seen.setdefault(e, None)
        entity_order = list(seen)
    entities = list(entity_order)
    ent_index = {e: i for i, e in enumerate(entities)}
    sentences = list(ner.sentence_entities if sentence_order is None else sentence_order)

    sentence_entities = [[ent_index[e] for e in ner.sentence_entities[s]] for s in sentences]
    entity_sentences: list[list[int]] = [[] for _ in entities]
    for s, ents in enumerate(sentence_entities):
        for e in ents:
            entity_sentences[e].append(s)
    sent_index = {s: i for i, s in enumerate(sentences)}
    for e, order in (entity_sentence_order or {}).items():
        entity_sentences[ent_index[e]] = [sent_index[s] for s in order]

    n_e, n_p = len(entities), len(passage_texts)
    rows, cols, weights = [], [], []
    for p, (text, ents) in enumerate(zip(passage_texts, ner.passage_entities)):
        counts = [text.count(e) for e in ents]
        total = sum(counts)
        for e, c in zip(ents, counts):
            rows.append(n_e + p)
            cols.append(ent_index[e])
            weights.append(c / total)
    pairs = adjacent_pairs(passage_texts) if adjacent_edges else []
    for a, b in pairs:
        if a != b:
            rows.append(n_e + a)
            cols.append(n_e + b)
            weights.append(1.0)
    n = n_e + n_p
    upper = sp.coo_matrix((weights, (rows, cols)), shape=(n, n), dtype=np.float64)
    adjacency = (upper + upper.T).tocsr()
    return LinearRAGGraph(
        entities=entities,
        sentences=sentences,
        passage_texts=list(passage_texts),
        entity_sentences=entity_sentences,
        sentence_entities=sentence_entities,
        adjacency=adjacency,
        n_adjacent_edges=len(pairs),
    )
