"""The rows the Neo4j export writes, built without a database: the `pairs` property of each
RELATES_TO comes from the rule its caller gives (the store knows no method's rule)."""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from hopbench.graphdb.export import export_rows
from hopbench.retrieve.qasa.activation_rules import relation_matrix


def _toy_graph():
    """Three entities, two passages; facts 0->1 and 1->0 (two ordered pairs), 1->2 (one)."""
    relation = sp.csr_matrix(np.array([[0, 2, 0], [2, 0, 1], [0, 1, 0]], dtype=np.float32))
    return SimpleNamespace(
        n_entities=3,
        entity_names=["a", "b", "c"],
        entity_labels=["X", "X", "Y"],
        entity_descriptions=["", "", ""],
        description_embeddings=np.eye(3, dtype=np.float32),
        passage_ids=["p0", "p1"],
        passage_embeddings=np.ones((2, 3), dtype=np.float32),
        relation=relation,
        fact_subject=np.array([0, 1, 1]),
        fact_object=np.array([1, 0, 2]),
        context=sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 1]], dtype=np.float32)),
    )


def test_the_pairs_property_is_the_callers_rule():
    kg = _toy_graph()
    sevens = export_rows(kg, pair_counts=lambda g: 7 * (sp.csr_matrix(g.relation) != 0))
    assert [(r["u"], r["v"], r["n"]) for r in sevens["relations"]] == [(0, 1, 7.0), (1, 2, 7.0)]


def test_the_spreading_activation_rule_gives_one_or_two_ordered_pairs():
    rows = export_rows(_toy_graph(), pair_counts=partial(relation_matrix, edges="pairs"))
    assert [(r["u"], r["v"], r["c"], r["n"]) for r in rows["relations"]] == [
        (0, 1, 2.0, 2.0),
        (1, 2, 1.0, 1.0),
    ]
    assert [(m["p"], m["e"]) for m in rows["mentions"]] == [(0, 0), (0, 1), (1, 1), (1, 2)]
