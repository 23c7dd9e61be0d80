"""Products on a subset of a matrix's rows that give the same floats as the full product.

Computing only the rows a query needs (candidates, gated nodes, tied passages) must not
change a result, and ungated spreading activation compares activations exactly, so even a
last-bit change can flip a tie downstream. OpenBLAS, though, sends small products (M*N*K
below a few 1e5) to other kernels and the last rows of a block (M mod the unroll) to a tail
kernel, and both may round differently from the big product. Padding the subset to a
multiple of 64 rows (at least 1024 for a matrix-matrix product), the rows asked for first,
avoids both; tests/retrieve/kernels/test_topk.py and test_fast_paths.py check the equality
on real embeddings.
"""

from __future__ import annotations

import numpy as np

_ROW_MULTIPLE = 64
_MIN_ROWS_GEMM = 1024


def same_float_rows(rows: np.ndarray, which: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """(rows @ queries.T)[which] for 2-D queries, (rows @ q)[which] for one 1-D query,
    computed on about `which.size` rows but equal to the full product's floats."""
    m = which.size
    least = _MIN_ROWS_GEMM if queries.ndim == 2 else _ROW_MULTIPLE
    size = max(least, -(-m // _ROW_MULTIPLE) * _ROW_MULTIPLE)
    rhs = queries.T if queries.ndim == 2 else queries
    if size >= rows.shape[0]:
        return (rows @ rhs)[which]
    padded = np.concatenate([which, np.arange(size - m) % rows.shape[0]])
    return (rows[padded] @ rhs)[:m]
