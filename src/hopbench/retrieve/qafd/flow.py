"""QAFD: query-aware flow diffusion, solved by the dual push algorithm (vectorised).

Source: QAFD-RAG, ICLR 2026 tex (Tarzanagh/QAFD-RAG ``ICLR2026/iclr2026_main.tex``,
the weight variants eqn:weight_mean/product/hybrid, the dual eqn:dual:prob and Algorithm
2, label alg:single_seed_query_diffusion) and docs/methods/qafd.md. With query-aware edge weights w̄
(`query_aware_weights`), weighted Laplacian L = D - W̄, sink capacities T and source
mass Δ, the dual problem is

    min_{x >= 0}  F(x) = ½ xᵀ L x + xᵀ (T - Δ),       m = Δ - L x,   ∇F = T - m.

Algorithm 2 repeatedly picks one node v with excess (m_v > T_v) at random and pushes:
x_v += (m_v - T_v) / w_v, m_v = T_v, and each neighbour u gets (m_v - T_v)·w̄_vu / w_v,
until Σ_v max(0, m_v - T_v) <= ε. That push is exact coordinate minimisation of F in x_v.

Vectorised schedule (what `push_flow` does): every node with excess pushes at once in a
sweep, each computing its push from the mass at the start of the sweep (a projected
Jacobi step, restricted to coordinates whose gradient is negative). It reaches the same
optimum: L is a Z-matrix (off-diagonals <= 0), x starts at 0 and only grows, and a
pushing node v ends the sweep with m_v = T_v + (mass received from neighbours that pushed
in the same sweep) >= T_v, so no push ever overshoots (∂F/∂x_v stays <= 0 where x_v grew).
Hence x^k <= x* for every k (x^k is a sub-solution of the LCP), x^k is non-decreasing and
bounded, and its limit is a fixed point, i.e. a solution of the KKT conditions x >= 0,
m <= T, x_v (T_v - m_v) = 0; F is strictly convex on the feasible directions whenever
each connected component holds less source mass than capacity, so that solution is the
unique x*. (Monotone convergence of Jacobi-type iterations for LCPs with Z-matrices:
Cottle, Pang & Stone, *The Linear Complementarity Problem*, §5.) The tests check the
result against a ``scipy.optimize`` solve of the same QP and against a sequential random
push loop. Jacobi sweeps have a slow tail on near-bipartite graphs (thousands of sweeps
to 1e-8); `solve_flow_exact` reaches the same optimum by growing the support and solving
L_SS x_S = (Δ - T)_S (Chandrasekaran's Z-matrix LCP algorithm), for bounded problems.

Boundedness: if a connected component's source mass exceeds its total capacity
(Σ_C Δ > Σ_C T), mass can never all be absorbed, F is unbounded below along x = c·1_C,
and no push schedule terminates. The paper's own setting Δ_s = α·ΣT with α = 50 (and
the code's α = 2 or 50) is always in that regime, so in practice the result is x after
a fixed budget of pushes (`max_pushes`, the code's ``max_iterations``); `FlowResult`
says whether the ε criterion was met. `is_bounded` checks it up front.

Named variants (`QAFD_VARIANTS`, used by `qafd`; retriever flow_diffusion_joint):
- "paper": Hybrid weights w̄ = H_uv·(a + b(s_u + s_v)) with a = 1, b = 1/4, s = cosine,
  T_v = deg(v), Δ = α·ΣT split over seeds by seed weight, x₀ = 0, full step.
The authors' own computations are elsewhere: kernels/qafd_code.py (their multi-hop retrieval
code, `IGraphQAFD`) and kernels/qafd_seed_flow.py (the per-seed diffusion of their answering
pipeline). An earlier "code" variant here approximated the former and was removed (issue #32).
deg(v) is read as the number of distinct neighbours in the CSR; pass `capacity=` to `qafd`
to use other degrees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from hopbench.retrieve.kernels._csr import as_csr, gather_rows


@dataclass
class FlowResult:
    """x: node scores (dual variables); m: final mass; converged: Σ pushable excess <= ε."""

    x: np.ndarray
    m: np.ndarray
    converged: bool
    sweeps: int
    pushes: int
    excess: float  # Σ max(0, m - T) over nodes that can push
    stuck_excess: float  # excess on nodes whose query-aware degree is 0 (they cannot push)


def similarity_transform(cos: np.ndarray, mode: str = "cos") -> np.ndarray:
    """s = H(h(v), h(q)) from the cosine: "cos" as is (the paper), "relu" = max(0, cos), or
    "normalized" = max(0, (cos + 1)/2) (the QAFD code's default)."""
    cos = np.asarray(cos, dtype=np.float64)
    if mode == "cos":
        return cos
    if mode == "relu":
        return np.maximum(0.0, cos)
    if mode == "normalized":
        return np.maximum(0.0, (cos + 1.0) / 2.0)
    raise ValueError(f"unknown similarity mode {mode!r}; use 'cos', 'relu' or 'normalized'")


def node_query_cosine(node_emb: np.ndarray, query_emb: np.ndarray) -> np.ndarray:
    """cos(h(v), h(q)) for every node; zero rows (no embedding) get 0."""
    e = np.asarray(node_emb, dtype=np.float64)
    q = np.asarray(query_emb, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1)
    norms[norms == 0] = 1.0
    return (e @ q) / norms / (np.linalg.norm(q) or 1.0)


def _reweight(
    base: np.ndarray, su: np.ndarray, sv: np.ndarray, scheme: str, a: float, b: float
) -> np.ndarray:
    if scheme == "hybrid":
        out = base * (a + b * (su + sv))
    elif scheme == "mean":
        out = (base + su + sv) / 3.0
    elif scheme == "product":
        out = base * su * sv
    else:
        raise ValueError(f"unknown weight scheme {scheme!r}; use 'hybrid', 'mean' or 'product'")
    return np.maximum(out, 0.0, out=out)


def query_aware_weights(
    adj: sp.spmatrix, node_sim: np.ndarray, scheme: str = "hybrid", a: float = 1.0, b: float = 0.25
) -> sp.csr_matrix:
    """w̄(q,u,v) on the edges of `adj` (whose values play H_uv), QAFD Eq. 5a-c:
    "hybrid" H_uv·(a + b(s_u + s_v)); "mean" (H_uv + s_u + s_v)/3; "product" H_uv·s_u·s_v.
    Negative results (possible with raw cosine) are clipped to 0 so L stays a Laplacian."""
    w = as_csr(adj).copy()
    s = np.asarray(node_sim, dtype=np.float64)
    if s.shape != (w.shape[0],):
        raise ValueError(f"node_sim must have shape ({w.shape[0]},), got {s.shape}")
    rows = np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
    w.data = _reweight(w.data, s[rows], s[w.indices], scheme, a, b)
    return w


def degree_capacities(
    adj: sp.spmatrix, *, min_degree: float = 0.0, total: float | None = None
) -> np.ndarray:
    """T_v = max(deg(v), min_degree) with deg = number of distinct neighbours (unweighted,
    as igraph/networkx ``degree``); rescaled to sum to `total` when given (the code uses 10)."""
    a = as_csr(adj)
    deg = np.diff(a.indptr).astype(np.float64)
    cap = np.maximum(deg, min_degree)
    if total is not None:
        if cap.sum() <= 0:
            raise ValueError("cannot rescale capacities: every node has degree 0")
        cap = total * cap / cap.sum()
    return cap


def source_mass(
    capacity: np.ndarray,
    seeds: np.ndarray,
    seed_weights: np.ndarray | None,
    alpha: float,
    *,
    drop_below: float = 0.0,
) -> np.ndarray:
    """Δ = α·ΣT split over the seeds in proportion to their weights (weights < drop_below
    dropped first, as the code drops those < 1e-5). Equal weights when None."""
    seeds = np.asarray(seeds, dtype=np.int64)
    sw = np.ones(seeds.size) if seed_weights is None else np.asarray(seed_weights, float).copy()
    if sw.shape != seeds.shape:
        raise ValueError(f"{seeds.size} seeds but {sw.size} seed weights")
    if np.any(sw < 0) or not np.all(np.isfinite(sw)):
        raise ValueError("seed weights must be finite and non-negative")
    sw[sw < drop_below] = 0.0
    if sw.sum() <= 0:
        raise ValueError("no seed has positive weight")
    delta = np.zeros(capacity.shape[0])
    np.add.at(delta, seeds, alpha * capacity.sum() * sw / sw.sum())
    return delta


def is_bounded(weights: sp.spmatrix, capacity: np.ndarray, source: np.ndarray) -> bool:
    """True when every connected component (of positive-weight edges) holds strictly less
    source mass than capacity, i.e. the dual has a finite optimum and pushing terminates."""
    w = as_csr(weights)
    w = w.multiply(w > 0).tocsr()
    _, labels = connected_components(w, directed=False)
    k = labels.max() + 1 if labels.size else 0
    mass = np.bincount(labels, weights=source, minlength=k)
    cap = np.bincount(labels, weights=capacity, minlength=k)
    has_mass = mass > 0
    return bool(np.all(mass[has_mass] < cap[has_mass]))


def push_flow(
    weights: sp.spmatrix,
    capacity: np.ndarray,
    source: np.ndarray,
    *,
    epsilon: float = 1e-6,
    step_size: float = 1.0,
    x0: np.ndarray | None = None,
    max_pushes: int | None = None,
    max_sweeps: int = 100_000,
    node_sim: np.ndarray | None = None,
    scheme: str = "hybrid",
    a: float = 1.0,
    b: float = 0.25,
) -> FlowResult:
    """Dual push on symmetric weights (see module docstring), all excess nodes per sweep.

    Stops when Σ pushable excess <= ε, or after `max_pushes` node-pushes (the last sweep
    pushes only the largest excesses that fit in the budget) or `max_sweeps` sweeps.
    With step_size = 1 and x0 = None, x is the dual variable; otherwise x accumulates
    step_size·excess/w_v on top of x0 while mass still moves in full (the code's variant).
    With `node_sim` given, `weights` holds H_uv and w̄ is computed on demand for the rows
    being pushed (as the paper does: "update only the edge weights encountered during
    traversal"), equal to passing `query_aware_weights(weights, node_sim, scheme, a, b)`.
    Every step touches only the nodes with excess and their edges, never the whole graph.
    """
    w = (
        weights
        if isinstance(weights, sp.csr_matrix) and weights.has_canonical_format
        else as_csr(weights, "weights")
    )
    n = w.shape[0]
    T = np.asarray(capacity, dtype=np.float64)
    m = np.asarray(source, dtype=np.float64).copy()
    if T.shape != (n,) or m.shape != (n,):
        raise ValueError(f"capacity and source must have shape ({n},)")
    s = None if node_sim is None else np.asarray(node_sim, dtype=np.float64)
    if s is not None and s.shape != (n,):
        raise ValueError(f"node_sim must have shape ({n},), got {s.shape}")
    x = np.zeros(n) if x0 is None else np.asarray(x0, dtype=np.float64).copy()
    stuck = np.zeros(n, dtype=bool)  # found to have query-aware degree 0: cannot push
    cand = np.flatnonzero(m > T)  # every node with excess, kept up to date locally
    pushes = sweeps = 0
    converged = False
    while sweeps < max_sweeps:
        cand = cand[~stuck[cand]]
        exc = m[cand] - T[cand]
        if exc.sum() <= epsilon:
            converged = True
            break
        active, e = cand, exc
        if max_pushes is not None:
            budget = max_pushes - pushes
            if budget <= 0:
                break
            if active.size > budget:
                pick = np.argpartition(-exc, budget - 1)[:budget]
                active, e = active[pick], exc[pick]
        owner, nbr, wt = gather_rows(w, active)
        if s is not None:
            wt = _reweight(wt, s[active][owner], s[nbr], scheme, a, b)
        wdeg = np.bincount(owner, weights=wt, minlength=active.size)
        dead = wdeg <= 0
        if dead.any():
            stuck[active[dead]] = True
            e = np.where(dead, 0.0, e)
            wdeg = np.where(dead, 1.0, wdeg)
        ratio = e / wdeg
        x[active] += step_size * ratio
        m[active] -= e
        np.add.at(m, nbr, wt * ratio[owner])
        pushes += int((~dead).sum())
        sweeps += 1
        touched = np.unique(np.concatenate([cand, nbr]))
        cand = touched[m[touched] > T[touched]]
    excess_all = np.maximum(m - T, 0.0)
    cand = cand[~stuck[cand]]
    return FlowResult(
        x=x,
        m=m,
        converged=converged,
        sweeps=sweeps,
        pushes=pushes,
        excess=float(np.maximum(m[cand] - T[cand], 0).sum()),
        stuck_excess=float(excess_all[stuck].sum()),
    )


def solve_flow_exact(
    weights: sp.spmatrix,
    capacity: np.ndarray,
    source: np.ndarray,
    *,
    tol: float = 1e-12,
    max_rounds: int = 10_000,
) -> FlowResult:
    """The same optimum as `push_flow` (step 1, no warm start), by support growth:
    S ← S ∪ {v : m_v > T_v}; solve L_SS x_S = (Δ - T)_S; repeat until no node has excess.

    This is Chandrasekaran's algorithm for an LCP with a Z-matrix (x grows monotonically to
    the least solution, at most n rounds; in practice about as many rounds as the support
    is deep), each round one sparse SPD solve on the support. Only for bounded problems
    (`is_bounded`); use `push_flow` with a push budget otherwise.
    """
    from scipy.sparse.linalg import spsolve

    w = (
        weights
        if isinstance(weights, sp.csr_matrix) and weights.has_canonical_format
        else as_csr(weights, "weights")
    )
    n = w.shape[0]
    T = np.asarray(capacity, dtype=np.float64)
    delta = np.asarray(source, dtype=np.float64)
    if not is_bounded(w, T, delta):
        raise ValueError(
            "flow problem is unbounded: some component holds more source mass "
            "than capacity; use push_flow with max_pushes"
        )
    wdeg = np.asarray(w.sum(axis=1)).ravel()
    scale = tol * max(1.0, float(np.abs(delta).max()), float(np.abs(T).max()))
    in_support = np.zeros(n, dtype=bool)
    x = np.zeros(n)
    m = delta.copy()
    rounds = 0
    while rounds < max_rounds:
        grow = (m - T > scale) & ~in_support & (wdeg > 0)
        if not grow.any():
            break
        in_support |= grow
        sup = np.flatnonzero(in_support)
        lap = (sp.diags(wdeg[sup]) - w[sup][:, sup]).tocsc()
        x[:] = 0.0
        x[sup] = np.atleast_1d(spsolve(lap, delta[sup] - T[sup]))
        # m = Δ - L x, computed on the rows that x touches
        owner, nbr, wt = gather_rows(w, sup)
        m = delta.copy()
        m[sup] -= wdeg[sup] * x[sup]
        m += np.bincount(nbr, weights=wt * x[sup][owner], minlength=n)
        rounds += 1
    exc = np.maximum(m - T, 0.0)
    can_push = wdeg > 0
    excess = float(exc[can_push].sum())
    return FlowResult(
        x=x,
        m=m,
        converged=excess <= scale * n,
        sweeps=rounds,
        pushes=int(in_support.sum()),
        excess=excess,
        stuck_excess=float(exc[~can_push].sum()),
    )


QAFD_VARIANTS: dict[str, dict] = {
    "paper": {
        "scheme": "hybrid",
        "a": 1.0,
        "b": 0.25,
        "sim_mode": "cos",
        "min_degree": 0.0,
        "capacity_total": None,
        "drop_below": 0.0,
        "step_size": 1.0,
    },
}


def qafd(
    adj: sp.spmatrix,
    node_cos: np.ndarray,
    seeds: np.ndarray,
    seed_weights: np.ndarray | None = None,
    *,
    variant: str = "paper",
    alpha: float = 50.0,
    epsilon: float = 0.01,
    max_pushes: int | None = None,
    max_sweeps: int = 100_000,
    solver: str = "push",
    capacity: np.ndarray | None = None,
    **overrides,
) -> FlowResult:
    """One QAFD diffusion: weights, capacities, source mass, warm start, push (see module doc).

    node_cos: cosine of every node's embedding with the (sub-)query embedding; the variant
    decides how it becomes s_v. `overrides` replace single settings of the variant.
    solver: "push" (Algorithm 2, vectorised sweeps) or "exact" (`solve_flow_exact`, same
    optimum, bounded problems with step_size 1 and no warm start only).
    capacity: degrees to use for T instead of the CSR's neighbour counts (then floored at
    the variant's min_degree and rescaled as the variant says).
    max_pushes: budget of node-pushes, required when alpha >= 1 (then Σ Δ >= Σ T and the
    problem is unbounded); the QAFD code's ``max_iterations=500`` is 500 single pushes.
    """
    if variant not in QAFD_VARIANTS:
        raise ValueError(f"unknown QAFD variant {variant!r}; use one of {sorted(QAFD_VARIANTS)}")
    cfg = {**QAFD_VARIANTS[variant], **overrides}
    unknown = set(cfg) - set(QAFD_VARIANTS["paper"])
    if unknown:
        raise ValueError(f"unknown QAFD settings {sorted(unknown)}")
    a = as_csr(adj)
    s = similarity_transform(node_cos, cfg["sim_mode"])
    if capacity is None:
        T = degree_capacities(a, min_degree=cfg["min_degree"], total=cfg["capacity_total"])
    else:
        T = np.maximum(np.asarray(capacity, dtype=np.float64), cfg["min_degree"])
        if T.shape != (a.shape[0],):
            raise ValueError(f"capacity must have shape ({a.shape[0]},), got {T.shape}")
        if cfg["capacity_total"] is not None:
            T = cfg["capacity_total"] * T / T.sum()
    delta = source_mass(T, seeds, seed_weights, alpha, drop_below=cfg["drop_below"])
    if solver == "exact":
        if cfg["step_size"] != 1.0:
            raise ValueError("solver='exact' solves the dual QP; it has no warm start or step size")
        return solve_flow_exact(
            query_aware_weights(a, s, cfg["scheme"], cfg["a"], cfg["b"]), T, delta
        )
    if solver != "push":
        raise ValueError(f"unknown solver {solver!r}; use 'push' or 'exact'")
    if max_pushes is None and delta.sum() >= T.sum():
        raise ValueError(
            f"QAFD with alpha={alpha} injects at least the graph's total capacity, "
            "so no push schedule converges (see flow.py); set max_pushes (the "
            "QAFD code stops after 500 pushes) or use alpha < 1"
        )
    return push_flow(
        a,
        T,
        delta,
        epsilon=epsilon,
        step_size=cfg["step_size"],
        max_pushes=max_pushes,
        max_sweeps=max_sweeps,
        node_sim=s,
        scheme=cfg["scheme"],
        a=cfg["a"],
        b=cfg["b"],
    )
