"""Linking a question's mentions to the graph: each mention -> its nearest entity by name embedding.

HippoRAG 1's query NER linking (`retrieve_node`: argmax of the cosine to every phrase node),
which HippoRAG 1 seeding, CatRAG's anchors and NeuroPath's seeds all use. One definition, so
the three link a mention to the same entity: the highest cosine, the lowest index on ties
(numpy's argmax), the cosine computed in float64 as entity_embeddings @ mention_vecs.T.
"""

from __future__ import annotations

import numpy as np


def mention_entity_cosines(mention_vecs, entity_embeddings) -> np.ndarray:
    """(E, M) float64 cosines of every entity name to every mention (both L2-normalised)."""
    return (
        np.asarray(entity_embeddings, dtype=np.float64)
        @ np.asarray(mention_vecs, dtype=np.float64).T
    )


def nearest_entities(mention_vecs, entity_embeddings) -> list[int]:
    """The entity index each mention links to, in mention order ([] without mentions or entities)."""
    if len(mention_vecs) == 0 or len(entity_embeddings) == 0:
        return []
    cos = mention_entity_cosines(mention_vecs, entity_embeddings)
    return [int(e) for e in np.argmax(cos, axis=0)]
