"""PPR for a block of questions whose every column equals `personalized_pagerank` to the last bit.

Why not `personalized_pagerank_batch`: it runs every column until the slowest has converged
and normalises with 2-D reductions, so a column agrees with the one-question solve only
within `tol`, and a ranking can flip inside a near tie. A run that hands a retriever blocks of
questions (`hopbench.harness.question_blocks`) must write the rows the one-question loop
writes, so here each column follows exactly the one-question recursion (`ppr._chebyshev`):

- the sparse product of the block, scipy's CSR times a C-ordered (n, b) array, adds each
  column's terms in the same order as the CSR times one vector (row by row, entries in index
  order, from 0), and every other update is elementwise with the same scalars;
- every reduction (the reset's sum, the residual's L1 norm, the result's sum) is taken on the
  column as a contiguous 1-D array, as the one-question solve takes it;
- a column stops at the same check as it would alone and leaves the block then.

tests/retrieve/kernels/test_ppr_block.py compares with `==` on a real graph.
"""

from __future__ import annotations

import numpy as np

from hopbench.retrieve.kernels.ppr import PPRGraph, personalized_pagerank, prepare_ppr

CHECK_EVERY = 4  # as ppr._chebyshev: the residual is looked at every 4th step


def personalized_pagerank_block(
    graph: PPRGraph,
    resets: np.ndarray,
    *,
    damping: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 1000,
    method: str = "auto",
) -> np.ndarray:
    """(n, b) PPR scores; column j is `personalized_pagerank(graph, resets[:, j], ...)` exactly."""
    if not isinstance(graph, PPRGraph):
        graph = prepare_ppr(graph)
    resets = np.asarray(resets, dtype=np.float64)
    if resets.ndim != 2:
        raise ValueError(f"resets must be a 2-D (n, b) array, got shape {resets.shape}")
    if method == "auto":
        method = "chebyshev" if graph.scaled is not None else "power"
    if method != "chebyshev" or damping == 0.0 or resets.shape[1] == 1:
        # nothing to share (or no block recursion for it): the one-question solves themselves
        cols = [
            personalized_pagerank(
                graph, resets[:, j], damping=damping, tol=tol, max_iter=max_iter, method=method
            )
            for j in range(resets.shape[1])
        ]
        return np.stack(cols, axis=1) if cols else np.zeros_like(resets)
    if not 0.0 < damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    p = np.stack([_normalised(resets[:, j], graph.n) for j in range(resets.shape[1])], axis=1)
    return _chebyshev_block(graph, p, damping, tol, max_iter)


def _normalised(reset: np.ndarray, n: int) -> np.ndarray:
    """One reset column divided by its 1-D sum, as `ppr._normalise_resets` does for one."""
    r = np.ascontiguousarray(reset)
    if r.shape[0] != n:
        raise ValueError(f"reset vector has {r.shape[0]} entries, graph has {n} nodes")
    if not np.all(np.isfinite(r)) or (r.size and r.min() < 0):
        raise ValueError("reset vector must be finite and non-negative")
    total = r.sum(axis=0)
    if total <= 0:
        raise ValueError("reset vector sums to 0; give at least one node positive weight")
    return r / total


def _chebyshev_block(
    graph: PPRGraph, p: np.ndarray, damping: float, tol: float, max_iter: int
) -> np.ndarray:
    """`ppr._chebyshev` on the columns of p at once (see the module docstring)."""
    s_half = graph.sqrt_strength[:, None]
    live = ~graph.dangling
    f = np.zeros_like(p)
    f[live] = p[live] / s_half[live]
    sigma = 1.0 / damping
    rho = 1.0 / sigma
    u = np.zeros_like(f)
    r = f.copy()
    step = r.copy()
    out = np.empty_like(p)
    cols = np.arange(p.shape[1])  # the block's columns still iterating
    for k in range(1, max_iter + 1):
        u += step
        kd = graph.scaled @ step
        kd *= damping
        r -= step
        r += kd
        rho_next = 1.0 / (2.0 * sigma - rho)
        step *= rho_next * rho
        step += r * (2.0 * rho_next / damping)
        rho = rho_next
        if k % CHECK_EVERY == 0 or k == max_iter:
            res = s_half * r
            done = np.array(
                [
                    2.0 * (np.abs(res[:, j]).sum(axis=0) / (1.0 - damping)) < tol
                    for j in range(len(cols))
                ]
            )
            for j in np.flatnonzero(done):
                out[:, cols[j]] = _finished(graph, u[:, j], p[:, cols[j]])
            if done.all():
                return out
            if done.any():
                keep = np.flatnonzero(~done)
                cols, u, r, step = cols[keep], u[:, keep], r[:, keep], step[:, keep]
    raise RuntimeError(f"PPR did not converge to tol={tol} in {max_iter} iterations")


def _finished(graph: PPRGraph, u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """y = S^1/2 u, dangling nodes at their reset, normalised by its 1-D sum."""
    y = graph.sqrt_strength * u
    y[graph.dangling] = p[graph.dangling]
    return y / y.sum(axis=0)
