"""Exact top-k: the k largest values, and the top-k rows of a fixed matrix by inner product.

`top_k_indices` and `full_product_top_k` define the answer (largest first, ties by index, all
in float64). Seeding by vector search (`activation_rules.seed_activations`) ranks every
entity description against a mention, an E x d float64 product per query; `ExactTopK` scans an
8-bit scalar-quantised copy instead (faiss, 4x fewer bytes) and keeps
every row that could be in the exact top k given a proven bound on the quantisation error,
then ranks those candidates with float64 products. The answer (indices, ties by index, and
scores) is that of the full float64 product; when the candidate list might be cut short, the
query falls back to the full product.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import faiss
import numpy as np

from hopbench.retrieve.kernels._rows import same_float_rows


def full_product_top_k(
    rows: np.ndarray, vecs: np.ndarray, k: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per vector: (`top_k_indices` of rows @ vector, those products), all in float64."""
    cos = np.asarray(rows, dtype=np.float64) @ np.asarray(vecs, dtype=np.float64).T  # (E, u)
    out = []
    for j in range(cos.shape[1]):
        top = top_k_indices(cos[:, j], k)
        out.append((top, cos[top, j]))
    return out


def top_k_indices(values: np.ndarray, k: int) -> np.ndarray:
    """The k largest values' indices, largest first, ties by index (a stable full sort's
    first k) without sorting everything: every value >= the k-th largest is a candidate."""
    if k >= values.size:
        return np.lexsort((np.arange(values.size), -values))
    kth = np.partition(values, values.size - k)[values.size - k]
    cand = np.flatnonzero(values >= kth)
    return cand[np.lexsort((cand, -values[cand]))][:k]


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# search(vectors, k) -> per vector (top-k row indices, their scores)
TopKSearch = Callable[[np.ndarray, int], list[tuple[np.ndarray, np.ndarray]]]

# faiss sums d float32 products: |error| <= d * 2^-24 * |x||q| (with room for the casts)
_FP32_SLACK_PER_DIM = 2.0**-22


class ExactTopK:
    """Exact float64 top-k inner products against `rows` (E x d), via a quantised pre-scan."""

    def __init__(
        self,
        rows: np.ndarray,
        candidates: int = 256,
        memo_size: int = 100_000,
        shards: int | None = None,
        min_rows_per_shard: int = 8192,
    ) -> None:
        """`shards`: the scan is split over this many faiss threads (default: the cores this
        process may use; only when each shard gets `min_rows_per_shard` rows). Timings by
        shard count: benchmarks/speed/results/retrieval_kernels.md."""
        self.exact = np.asarray(rows, dtype=np.float64)
        # the answer for a set of query vectors never changes, and mention sets recur
        self._memo: dict[tuple, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.memo_size = memo_size
        self.n_fallbacks = 0
        n, d = self.exact.shape
        self.candidates = candidates
        self.index = None
        self.shards = 1
        if n == 0:
            return
        x32 = np.ascontiguousarray(rows, dtype=np.float32)
        index = faiss.IndexScalarQuantizer(
            d, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        index.train(x32)
        index.add(x32)
        decoded = index.reconstruct_n(0, n).astype(np.float64)
        # |<x, q> - <decoded x, q>| <= |x - decoded x| |q|; faiss then adds float32 rounding
        self.quant_err = float(np.linalg.norm(self.exact - decoded, axis=1).max())
        self.fp_err = d * _FP32_SLACK_PER_DIM * float(np.linalg.norm(decoded, axis=1).max())
        shards = int(shards or usable_cores())
        shards = max(1, min(shards, n // max(1, min_rows_per_shard)))
        self.index = index if shards == 1 else _sharded(index, x32, shards)
        self.shards = shards

    def margin(self, q: np.ndarray) -> float:
        """Bound on |approximate - exact| score for query q."""
        return (self.quant_err + self.fp_err) * float(np.linalg.norm(q)) + 1e-12

    def search(self, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each query row: (top-k row indices, largest first, ties by index; their float64
        scores), the same floats as `full_product_top_k(rows, queries, k)`.

        Candidate scores come from one product of the candidate rows with all the queries
        (`same_float_rows`), so each score is the float the full product gives.
        """
        qs = np.asarray(queries, dtype=np.float64)
        k = min(k, self.exact.shape[0])
        if k <= 0 or not qs.shape[0]:
            return [(np.empty(0, dtype=np.int64), np.empty(0)) for _ in range(qs.shape[0])]
        key = (qs.shape, qs.tobytes(), k)
        if key not in self._memo:
            if len(self._memo) >= self.memo_size:
                self._memo.clear()
            self._memo[key] = self._search(qs, k)
        return self._memo[key]

    def _search(self, qs: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        n = self.exact.shape[0]
        width = min(max(self.candidates, 4 * k), n)
        cand = self._candidates(qs, k, width) if self.index is not None and width < n else None
        if cand is None:
            return full_product_top_k(self.exact, qs, k)
        scores = same_float_rows(self.exact, cand, qs)
        out = []
        for j in range(qs.shape[0]):
            top = top_k_indices(scores[:, j], k)
            out.append((cand[top], scores[top, j]))
        return out

    def _candidates(self, qs: np.ndarray, k: int, width: int) -> np.ndarray | None:
        """Sorted rows that may be in some query's exact top k, or None if the scan's width
        might have cut them short (then the caller takes the full product)."""
        approx, ids = self.index.search(np.ascontiguousarray(qs, dtype=np.float32), width)
        keep = []
        for q, a, i in zip(qs, approx, ids):
            # every exact top-k row scores >= (k-th approximate) - 2 * margin, see module docstring
            floor = float(a[k - 1]) - 2.0 * self.margin(q)
            if a[-1] >= floor or (i < 0).any():
                self.n_fallbacks += 1
                return None
            keep.append(i[a >= floor])
        return np.unique(np.concatenate(keep)).astype(np.int64)


def _sharded(trained: faiss.IndexScalarQuantizer, x32: np.ndarray, shards: int) -> faiss.Index:
    """The same codes (one training, so the same decoded rows and error bound) split into
    `shards` contiguous parts searched by faiss threads; ids stay global (successive_ids)."""
    sharded = faiss.IndexShards(trained.d, True, True)
    sharded.own_indices = True
    bounds = np.linspace(0, x32.shape[0], shards + 1).astype(int)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        part = faiss.clone_index(trained)
        part.reset()
        part.add(x32[lo:hi])
        sharded.add_shard(part)
        part.this.disown()
    return sharded
