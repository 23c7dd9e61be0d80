"""ExactTopK (quantised scan + float64 re-rank) gives the full float64 product's top k: the
same indices, ties by index, and the same floats, on real description embeddings and on
data built to tie; too narrow a scan falls back to the full product."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.retrieve.kernels._rows import same_float_rows
from hopbench.retrieve.kernels.topk import ExactTopK, full_product_top_k


def _same(a, b):
    return all(
        np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_equals_full_product_on_real_descriptions(musique_kg, encoder, shards):
    desc = np.asarray(musique_kg.description_embeddings, dtype=np.float64)
    rng = np.random.default_rng(0)
    # > 1024 distinct rows so the scan path (not the full product) runs
    rows = np.concatenate([desc + 0.02 * rng.standard_normal(desc.shape) for _ in range(30)])
    search = ExactTopK(rows, candidates=64, shards=shards, min_rows_per_shard=1000)
    assert search.shards == shards
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
    for cands, shards in ((16, 1), (32, 1), (600, 1), (16, 2), (32, 3)):
        s = ExactTopK(rows, candidates=cands, shards=shards, min_rows_per_shard=100)
        for k in (1, 3, 7):
            assert _same(s.search(vecs, k), full_product_top_k(rows, vecs, k)), (cands, shards, k)
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


def test_shards_scan_the_same_codes():
    """Sharding splits one trained index: the approximate scores are the single scan's."""
    rng = np.random.default_rng(4)
    rows = rng.standard_normal((5000, 32))
    one = ExactTopK(rows, shards=1)
    two = ExactTopK(rows, shards=2, min_rows_per_shard=1000)
    assert two.shards == 2 and two.index.ntotal == 5000 and one.quant_err == two.quant_err
    q = rng.standard_normal((3, 32)).astype(np.float32)
    d1, i1 = one.index.search(q, 50)
    d2, i2 = two.index.search(q, 50)
    np.testing.assert_array_equal(d1, d2)
    assert set(i1.ravel()) == set(i2.ravel())
    assert ExactTopK(rows, min_rows_per_shard=8192).shards == 1  # too small to split
