"""What makes a batch of embedding vectors unusable, whoever computed them.

Why: a broken embedding server can answer HTTP 200 with vectors that parse: all zeros, one
vector for every input, NaN, vectors of no dimension. Accepted, they were cached and the run
was filed complete with R@2 0, and stayed wrong after the server was fixed (issue #54). The
server client refuses such a reply (`ServerEncoder`) and such a cache entry.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MIN_DIM = 2  # a 1-dimensional unit vector is +-1: every pair of texts scores +-1
ZERO_NORM = 1e-12  # the floor `ServerEncoder` normalises by: a shorter vector has no direction
SAME_ATOL = 1e-6  # unit vectors this close in every component are one vector (JSON keeps ~1e-8)


def _folded(text: str) -> str:
    """Case and spacing folded: an uncased model (MiniLM) gives "Apple" and "APPLE " one vector."""
    return " ".join(text.casefold().split())


def degenerate(vectors: np.ndarray, texts: Sequence[str]) -> str | None:
    """Why `vectors` (one row per text of `texts`) cannot be used, or None: fewer than
    `MIN_DIM` dimensions, a value that is not finite, a zero vector, or the same unit vector
    for every text although at least two texts differ in more than case and spacing."""
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] < MIN_DIM:
        return f"vectors of {arr.shape[-1] if arr.ndim else 0} dimensions"
    if not np.isfinite(arr).all():
        return "a vector holds NaN or infinity"
    norms = np.linalg.norm(arr, axis=1)
    zero = np.flatnonzero(norms < ZERO_NORM)
    if len(zero):
        return f"a zero vector for text {int(zero[0])} ({len(zero)} of {len(arr)})"
    if len(arr) > 1 and len({_folded(t) for t in texts}) > 1:
        unit = arr / norms[:, None]
        if np.abs(unit - unit[0]).max() <= SAME_ATOL:
            return f"the same vector for all {len(arr)} texts, which differ"
    return None
