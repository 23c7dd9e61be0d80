"""CSR helpers shared by the kernels: gather the edges of a set of rows without a Python loop."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def gather_rows(adj: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges leaving `rows`: (position of the source in `rows`, target column, weight).

    Concatenates the CSR segments indptr[r]:indptr[r+1] of every r in `rows` with one
    np.repeat/arange, so the cost is proportional to the edges touched, not to the graph.
    """
    starts = adj.indptr[rows]
    lengths = adj.indptr[rows + 1] - starts
    total = int(lengths.sum())
    owner = np.repeat(np.arange(rows.shape[0]), lengths)
    if total == 0:
        return owner, np.empty(0, dtype=adj.indices.dtype), np.empty(0, dtype=adj.data.dtype)
    # position k of the concatenation maps to starts[owner[k]] + (k - first k of that owner)
    offsets = np.cumsum(lengths) - lengths
    pos = np.arange(total) + np.repeat(starts - offsets, lengths)
    return owner, adj.indices[pos], adj.data[pos]


def as_csr(adj: sp.spmatrix, name: str = "adjacency") -> sp.csr_matrix:
    """Square float64 CSR with duplicates summed and finite non-negative weights."""
    a = sp.csr_matrix(adj, dtype=np.float64)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be square, got shape {a.shape}")
    if not a.has_canonical_format:
        a = a.copy()
        a.sum_duplicates()
    if a.nnz and (not np.all(np.isfinite(a.data)) or a.data.min() < 0):
        raise ValueError(f"{name} weights must be finite and non-negative")
    return a
