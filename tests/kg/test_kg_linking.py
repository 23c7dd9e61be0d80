"""kg.linking.nearest_entities: the one mention -> entity link of HippoRAG 1, CatRAG and NeuroPath.

Each retriever had its own copy before; these check the helper picks what each copy picked, on
the real MuSiQue sub-corpus graph (every question mention and every entity name as a mention),
and the tie rule (lowest index) by hand.
"""

from __future__ import annotations

import numpy as np

from hopbench.kg.linking import nearest_entities
from hopbench.kg.text import normalize_name
from hopbench.retrieve.question import question_mentions


def _entity_major(mention_vecs, entity_embeddings) -> list[int]:
    """HippoRAG 1's and CatRAG's former copy: entity @ mention.T, argmax down each column."""
    cos = (
        np.asarray(entity_embeddings, dtype=np.float64)
        @ np.asarray(mention_vecs, dtype=np.float64).T
    )
    return [int(np.argmax(cos[:, j])) for j in range(cos.shape[1])]


def _mention_major(mention_vecs, entity_embeddings) -> list[int]:
    """NeuroPath's former copy: mention @ entity.T, argmax along each row."""
    cos = (
        np.asarray(mention_vecs, dtype=np.float64)
        @ np.asarray(entity_embeddings, dtype=np.float64).T
    )
    return [int(np.argmax(row)) for row in cos]


def test_same_links_as_the_former_copies_on_musique(musique_sub, musique_kg, encoder):
    entities = musique_kg.entity_embeddings
    groups = []
    for q in musique_sub.questions:
        raw = question_mentions(q.text)
        groups += [raw, [m for m in dict.fromkeys(normalize_name(x) for x in raw) if m]]
    groups.append(list(musique_kg.entity_names))  # each name's own vector (and its case twins)
    n = 0
    for mentions in groups:
        assert mentions
        vecs = encoder.encode(mentions)
        for emb in (
            entities,
            np.asarray(entities, dtype=np.float64),
        ):  # as HippoRAG / NeuroPath pass it
            got = nearest_entities(vecs, emb)
            assert got == _entity_major(vecs, emb) == _mention_major(vecs, emb)
            n += len(got)
    assert n > 2 * musique_kg.n_entities


def test_ties_go_to_the_lowest_index_and_empty_inputs_link_nothing():
    e = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    m = np.array([[1.0, 0.0], [0.0, 1.0], [0.8, 0.6]])
    assert nearest_entities(m, e) == [1, 0, 3]
    assert nearest_entities(np.zeros((0, 2)), e) == []
    assert nearest_entities(m, np.zeros((0, 2))) == []
