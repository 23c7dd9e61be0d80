"""Personalized PageRank on an undirected weighted graph, as HippoRAG 2 runs it.

HippoRAG 2 (OSU-NLP-Group/HippoRAG, ``HippoRAG.py`` L1736-1743) calls
``igraph.Graph.personalized_pagerank(damping=0.5, directed=False, weights='weight',
reset=r, implementation='prpack')``. That is the stationary vector of

    x = d * (P x + (1ᵀ_dangling x) * p) + (1 - d) * p,         p = r / Σr,

where P is the column-stochastic transition P[v, u] = w_uv / s_u, s_u = Σ_v w_uv (the
weighted degree, "strength"), and a walker standing on a dangling node (s_u = 0:
isolated, or all its edges weigh 0) jumps by the reset distribution p. This is also
exactly what ``networkx.pagerank(G, alpha=d, personalization=r, weight='weight')`` computes
(its ``dangling=None`` default sends dangling mass by the personalization vector), so the
tests compare against both.

Solver. Writing c = d·(1ᵀ_dangling x) + (1 - d), the fixed point reads (I - dP) x = c p,
so x ∝ y with y = Σ_k (dP)^k p. We iterate y ← p + dP y (one sparse mat-vec per step,
error shrinks by d = 0.5 per step) and return y / Σy. The batched form does the same with
a dense (n, b) block of reset vectors and one sparse mat-mat product per step, so many
questions share each pass over the graph.

Self-loops: a diagonal entry w_vv is taken once, as networkx does. igraph counts an
undirected self-loop twice (in the strength and as a walk step); pass
``self_loops="twice"`` to `prepare_ppr` to reproduce igraph on graphs that have them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class PPRGraph:
    """Per-graph precomputation, reused by every query: the scaled transpose and the sinks."""

    transition: sp.csr_matrix  # P[v, u] = w_uv / s_u (columns of dangling nodes are zero)
    dangling: np.ndarray  # bool (n,), s_u == 0
    n: int


def prepare_ppr(adj: sp.spmatrix, *, self_loops: str = "once", check_symmetric: bool = True
                ) -> PPRGraph:
    """Build the column-stochastic transition of a symmetric weighted adjacency (CSR).

    `adj[u, v]` is the total weight between u and v (parallel edges already summed, as
    igraph sums them). Weights must be finite and >= 0.
    """
    a = sp.csr_matrix(adj, dtype=np.float64, copy=True)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {a.shape}")
    a.sum_duplicates()
    if a.nnz and (not np.all(np.isfinite(a.data)) or a.data.min() < 0):
        raise ValueError("adjacency weights must be finite and non-negative")
    if check_symmetric and a.nnz and abs(a - a.T).max() > 1e-12 * max(1.0, a.data.max()):
        raise ValueError("adjacency is not symmetric; PPR here is for undirected graphs "
                         "(symmetrise it, e.g. adj + adj.T, or pass check_symmetric=False)")
    if self_loops == "twice":
        a = (a + sp.diags(a.diagonal())).tocsr()
    elif self_loops != "once":
        raise ValueError(f"self_loops must be 'once' or 'twice', got {self_loops!r}")
    strength = np.asarray(a.sum(axis=1)).ravel()
    dangling = strength <= 0
    inv = np.zeros_like(strength)
    inv[~dangling] = 1.0 / strength[~dangling]
    # column u of P is row u of A scaled by 1/s_u:  P = Aᵀ diag(1/s)
    transition = sp.csr_matrix(a.T @ sp.diags(inv))
    transition.sort_indices()
    return PPRGraph(transition=transition, dangling=dangling, n=a.shape[0])


def _normalise_resets(reset: np.ndarray, n: int) -> np.ndarray:
    r = np.asarray(reset, dtype=np.float64)
    if r.shape[0] != n:
        raise ValueError(f"reset vector has {r.shape[0]} entries, graph has {n} nodes")
    if not np.all(np.isfinite(r)) or (r.size and r.min() < 0):
        raise ValueError("reset vector must be finite and non-negative")
    total = r.sum(axis=0)
    if np.any(total <= 0):
        raise ValueError("reset vector sums to 0; give at least one node positive weight")
    return r / total


def personalized_pagerank(graph: PPRGraph | sp.spmatrix, reset: np.ndarray, *,
                          damping: float = 0.5, tol: float = 1e-12, max_iter: int = 200
                          ) -> np.ndarray:
    """PPR scores (sum 1) for one reset vector of shape (n,). See the module docstring.

    Stops when the L1 change of the normalised iterate is below `tol`; since the error
    contracts by `damping` per step, the remaining error is at most tol·d/(1-d).
    """
    reset = np.asarray(reset, dtype=np.float64)
    if reset.ndim != 1:
        raise ValueError(f"reset must be a 1-D (n,) array, got shape {reset.shape}")
    return _iterate(graph, reset, damping, tol, max_iter)


def personalized_pagerank_batch(graph: PPRGraph | sp.spmatrix, resets: np.ndarray, *,
                                damping: float = 0.5, tol: float = 1e-12, max_iter: int = 200
                                ) -> np.ndarray:
    """PPR for a block of reset vectors (n, b) at once; column j is the answer for resets[:, j].

    Columns are iterated together (one sparse mat-mat product per step) until every column
    has converged, so each column equals `personalized_pagerank` of it to within `tol`.
    """
    resets = np.asarray(resets, dtype=np.float64)
    if resets.ndim != 2:
        raise ValueError(f"resets must be a 2-D (n, b) array, got shape {resets.shape}")
    return _iterate(graph, resets, damping, tol, max_iter)


def _iterate(graph, resets: np.ndarray, damping: float, tol: float, max_iter: int) -> np.ndarray:
    if not isinstance(graph, PPRGraph):
        graph = prepare_ppr(graph)
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    p = np.ascontiguousarray(_normalise_resets(resets, graph.n))
    y = p.copy()
    x_prev = p
    for _ in range(max_iter):
        y = graph.transition @ y
        y *= damping
        y += p
        x = y / y.sum(axis=0)
        if np.abs(x - x_prev).sum(axis=0).max() < tol:
            return x
        x_prev = x
    raise RuntimeError(f"PPR did not converge to tol={tol} in {max_iter} iterations")
