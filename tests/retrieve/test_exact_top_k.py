"""ExactTopK (quantised scan + float64 re-rank) gives the full float64 product's top k: the
same indices, ties by index, and the same floats, on real description embeddings and on
data built to tie; too narrow a scan falls back to the full product."""

from __future__ import annotations

import numpy as np

from hopbench.retrieve.activation_rules import full_product_top_k
from hopbench.retrieve.exact_top_k import ExactTopK
from hopbench.retrieve.kernels._rows import same_float_rows


def _same(a, b):
    return all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True))


def test_equals_full_product_on_real_descriptions(musique_kg, encoder):
    desc = np.asarray(musique_kg.description_embeddings, dtype=np.float64)
    rng = np.random.default_rng(0)
    # > 1024 distinct rows so the scan path (not the full product) runs
    rows = np.concatenate([desc + 0.02 * rng.standard_normal(desc.shape) for _ in range(30)])
    search = ExactTopK(rows, candidates=64)
    mentions = ["the director", "which film", "who", "a county in georgia", "paris", "the river"]
    for u in (1, 2, 3, 6):
        vecs = np.asarray(encoder.encode(mentions[:u]), dtype=np.float64)
        for k in (1, 2, 5):
            assert _same(search.search(vecs, k), full_product_top_k(rows, vecs, k)), (u, k)
    assert search.n_fallbacks == 0
    assert search.search(vecs, 5) is search.search(vecs.copy(), 5)  # memoised


def test_ties_and_fallback():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((300, 24))
    rows = np.concatenate([base, base, base[:50]])  # every score appears two or three times
    vecs = rng.standard_normal((4, 24))
    for cands in (16, 32, 600):
        s = ExactTopK(rows, candidates=cands)
        for k in (1, 3, 7):
            assert _same(s.search(vecs, k), full_product_top_k(rows, vecs, k)), (cands, k)
    narrow = ExactTopK(np.ones((2000, 8)), candidates=20)  # all rows tie: the scan cannot decide
    got = narrow.search(np.ones((1, 8)), 3)
    assert narrow.n_fallbacks == 1 and got[0][0].tolist() == [0, 1, 2]


def test_same_float_rows_on_real_embeddings(musique_kg, encoder):
    rows = np.concatenate([np.asarray(musique_kg.description_embeddings, dtype=np.float64)] * 40)
    rng = np.random.default_rng(2)
    q = np.asarray(encoder.encode(["the director", "which film", "who"]), dtype=np.float64)
    for size in (1, 3, 7, 33, 100, 700, 1500):
        which = np.sort(rng.choice(rows.shape[0], size, replace=False))
        assert np.array_equal(same_float_rows(rows, which, q), (rows @ q.T)[which]), size
        assert np.array_equal(same_float_rows(rows, which, q[0]), (rows @ q[0])[which]), size
