"""The screened block gives the one-query float64 product's floats where they matter: the exact
min and max, and every row of the top k, on the real MuSiQue graph's fact embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.retrieve.kernels.screened import ScreenedRows


@pytest.fixture(scope="module")
def facts_and_queries(musique_graph):
    facts = np.asarray(musique_graph.fact_embeddings, dtype=np.float64)
    # real query-like vectors: entity name embeddings, and a few facts themselves (a top-1 tie)
    ents = np.asarray(musique_graph.entity_embeddings, dtype=np.float64)
    return facts, np.concatenate([ents[::37][:60], facts[:4]])


@pytest.mark.parametrize("k", [1, 5, 30])
def test_min_max_and_the_top_k_are_the_full_products(facts_and_queries, k):
    facts, queries = facts_and_queries
    screen = ScreenedRows(facts)
    for q, s in zip(queries, screen.block(queries, k), strict=True):
        full = facts @ q
        assert s.lo == full.min() and s.hi == full.max()
        assert np.array_equal(s.values, full[s.rows_kept])
        top = np.lexsort((np.arange(full.size), -full))[:k]
        assert set(top) <= set(s.rows_kept)
        assert np.all(np.diff(s.rows_kept) > 0)
        assert s.rows_kept.size < facts.shape[0] // 4  # a screen, not the whole matrix
        assert screen.sure(s, q)


def test_the_margin_covers_the_float32_error(facts_and_queries):
    facts, queries = facts_and_queries
    screen = ScreenedRows(facts)
    approx = screen.rows32 @ queries.astype(np.float32).T
    for j, q in enumerate(queries):
        err = np.abs(approx[:, j].astype(np.float64) - facts @ q).max()
        assert err <= screen.margin(q) / 2  # the bound itself, before margin's factor 2


def test_no_rows_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        ScreenedRows(np.zeros((0, 4))).block(np.ones((1, 4)), 5)
