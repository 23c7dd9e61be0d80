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

Solving it. With c = d·(1ᵀ_dangling x) + (1 - d) the fixed point reads (I - dP) x = c p, so
x ∝ y with (I - dP) y = p, and we return y / Σy.
- method "chebyshev" (default; needs a symmetric adjacency A): with y = S z (S = diag(s))
  the system is (S - dA) z = p, symmetric. Scaling by S^½ gives (I - dB) u = S^-½ p with
  B = S^-½ A S^-½, whose spectrum lies in [-1, 1], so I - dB has eigenvalues in
  [1-d, 1+d]: known bounds, so Chebyshev iteration applies (Saad, *Iterative Methods for
  Sparse Linear Systems*, Alg. 12.1) with no inner products, converging by
  (1 - √(1-d²))/d per step (0.27 at d = 0.5, against 0.5 for power iteration). Dangling
  nodes decouple: y_v = p_v. It stops when the L1 residual of (I - dP) y = p, which the
  recursion carries for free, bounds the error of y/Σy below `tol` (‖(I-dP)⁻¹‖₁ <= 1/(1-d)).
- method "power": y ← p + dP y (one sparse mat-vec per step), stopped on the L1 change of
  y/Σy; works for non-symmetric input too.
The batched forms run the same recursion on a dense (n, b) block with one sparse
mat-mat product per step, so many questions share each pass over the graph.

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
    """Per-graph precomputation, reused by every query."""

    transition: sp.csr_matrix  # P[v, u] = w_uv / s_u (columns of dangling nodes are zero)
    scaled: sp.csr_matrix | None  # B = S^-1/2 A S^-1/2 when A is symmetric, else None
    sqrt_strength: np.ndarray  # s^1/2 (0 on dangling nodes)
    dangling: np.ndarray  # bool (n,), s_u == 0
    n: int


def prepare_ppr(
    adj: sp.spmatrix, *, self_loops: str = "once", check_symmetric: bool = True
) -> PPRGraph:
    """Transition matrices of a symmetric weighted adjacency (CSR), computed once per graph.

    `adj[u, v]` is the total weight between u and v (parallel edges already summed, as
    igraph sums them). Weights must be finite and >= 0. With check_symmetric=False a
    non-symmetric matrix is accepted (a directed graph, adj[u, v] = weight of u -> v) and
    only method="power" is available.
    """
    a = sp.csr_matrix(adj, dtype=np.float64, copy=True)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {a.shape}")
    a.sum_duplicates()
    if a.nnz and (not np.all(np.isfinite(a.data)) or a.data.min() < 0):
        raise ValueError("adjacency weights must be finite and non-negative")
    symmetric = a.nnz == 0 or abs(a - a.T).max() <= 1e-12 * max(1.0, a.data.max())
    if check_symmetric and not symmetric:
        raise ValueError(
            "adjacency is not symmetric; PPR here is for undirected graphs "
            "(symmetrise it, e.g. adj + adj.T, or pass check_symmetric=False)"
        )
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
    sqrt_s = np.sqrt(np.where(dangling, 0.0, strength))
    scaled = None
    if symmetric:
        inv_sqrt = np.sqrt(inv)
        scaled = sp.csr_matrix(sp.diags(inv_sqrt) @ a @ sp.diags(inv_sqrt))
        scaled.sort_indices()
    return PPRGraph(
        transition=transition, scaled=scaled, sqrt_strength=sqrt_s, dangling=dangling, n=a.shape[0]
    )


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


def personalized_pagerank(
    graph: PPRGraph | sp.spmatrix,
    reset: np.ndarray,
    *,
    damping: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 1000,
    method: str = "auto",
) -> np.ndarray:
    """PPR scores (sum 1) for one reset vector of shape (n,). See the module docstring.

    tol bounds the L1 error of the result; method: "chebyshev", "power", or "auto"
    (Chebyshev when the graph is symmetric).
    """
    reset = np.asarray(reset, dtype=np.float64)
    if reset.ndim != 1:
        raise ValueError(f"reset must be a 1-D (n,) array, got shape {reset.shape}")
    return _solve(graph, reset, damping, tol, max_iter, method)


def personalized_pagerank_batch(
    graph: PPRGraph | sp.spmatrix,
    resets: np.ndarray,
    *,
    damping: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 1000,
    method: str = "auto",
    block: int | None = None,
) -> np.ndarray:
    """PPR for a block of reset vectors (n, b) at once; column j is the answer for resets[:, j].

    All columns follow the same recursion (one sparse mat-mat product per step) until the
    slowest has converged, so each column equals `personalized_pagerank` of it within `tol`.
    `block` solves the columns in chunks of that many: on this machine scipy's mat-mat
    product gains little over mat-vecs while the (n, b) vector updates outgrow the cache,
    so chunks (even block=1) can be faster; benchmarks/speed/kernels.py measures it.
    """
    resets = np.asarray(resets, dtype=np.float64)
    if resets.ndim != 2:
        raise ValueError(f"resets must be a 2-D (n, b) array, got shape {resets.shape}")
    if block is None or block >= resets.shape[1]:
        return _solve(graph, resets, damping, tol, max_iter, method)
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    if not isinstance(graph, PPRGraph):
        graph = prepare_ppr(graph)
    return np.concatenate(
        [
            _solve(graph, resets[:, s : s + block], damping, tol, max_iter, method)
            for s in range(0, resets.shape[1], block)
        ],
        axis=1,
    )


def _solve(graph, resets, damping, tol, max_iter, method) -> np.ndarray:
    if not isinstance(graph, PPRGraph):
        graph = prepare_ppr(graph)
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    p = np.ascontiguousarray(_normalise_resets(resets, graph.n))
    if method == "auto":
        method = "chebyshev" if graph.scaled is not None else "power"
    if method == "chebyshev":
        if graph.scaled is None:
            raise ValueError("method='chebyshev' needs a symmetric adjacency; use 'power'")
        return _chebyshev(graph, p, damping, tol, max_iter)
    if method == "power":
        return _power(graph, p, damping, tol, max_iter)
    raise ValueError(f"unknown method {method!r}; use 'auto', 'chebyshev' or 'power'")


def _power(graph: PPRGraph, p: np.ndarray, damping: float, tol: float, max_iter: int) -> np.ndarray:
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


def _chebyshev(
    graph: PPRGraph, p: np.ndarray, damping: float, tol: float, max_iter: int
) -> np.ndarray:
    s_half = graph.sqrt_strength if p.ndim == 1 else graph.sqrt_strength[:, None]
    live = ~graph.dangling
    f = np.zeros_like(p)
    f[live] = p[live] / s_half[live]  # right-hand side S^-1/2 p on non-dangling nodes
    if damping == 0.0:
        return p.copy()
    # Chebyshev for K u = f, K = I - dB, spectrum in [1 - d, 1 + d]: centre 1, half-width d
    sigma = 1.0 / damping
    rho = 1.0 / sigma
    u = np.zeros_like(f)
    r = f.copy()
    step = r.copy()  # d_0 = r_0 / centre
    tmp = np.empty_like(f)
    for k in range(1, max_iter + 1):
        u += step
        kd = graph.scaled @ step  # r -= (I - dB) step, in place
        kd *= damping
        r -= step
        r += kd
        rho_next = 1.0 / (2.0 * sigma - rho)
        step *= rho_next * rho
        np.multiply(r, 2.0 * rho_next / damping, out=tmp)
        step += tmp
        rho = rho_next
        if k % 4 == 0 or k == max_iter:
            # residual of (I - dP) y = p is S^1/2 r; ‖y - y*‖₁ <= ‖S^1/2 r‖₁ / (1 - d), and the
            # normalised error is at most twice that over Σy (>= Σp = 1)
            np.multiply(s_half, r, out=tmp)
            res = np.abs(tmp, out=tmp).sum(axis=0) / (1.0 - damping)
            if np.max(2.0 * res) < tol:
                break
    else:
        raise RuntimeError(f"PPR did not converge to tol={tol} in {max_iter} iterations")
    y = s_half * u
    y[graph.dangling] = p[graph.dangling]
    return y / y.sum(axis=0)
