"""PPR that stops once its top-k is proved (issue #59): a certified stopping rule.

A retriever returns only the top k candidates (HippoRAG 2: the k best passage nodes, in
order), so iterating until every score is within `tol` does work the ranking never sees.
The bound. `ppr.py` solves (I - dP) y = p with P column-stochastic on non-dangling columns
(zero on dangling ones), so ‖P‖₁ <= 1 and ‖(I - dP)⁻¹‖₁ <= Σ dᵗ = 1/(1-d). For an iterate y
with residual ρ = p - (I - dP) y the error e = y* - y = (I - dP)⁻¹ ρ has ‖e‖₁ <= ε = ‖ρ‖₁/(1-d)
(Chebyshev carries ρ; power iteration y' = p + dPy has ρ' = dP(y' - y), so ε <= d‖y' - y‖₁/(1-d)).
For two different nodes i, j: |e_i| + |e_j| <= ‖e‖₁ <= ε, so if y_i - y_j > ε then y*_i > y*_j.
Hence the top-k set of y is that of y* when min(top k) - max(rest) > ε, and its order too
when every adjacent gap inside the top k exceeds ε. The returned x = y/Σy has the ranking
of y, so the bound on the unnormalised y is the one that counts.
Floating point: before stopping, the residual is recomputed from scratch as p - y + dPy (one
extra mat-vec, counted) so rounding drift in the recursion cannot fake a certificate; ε gets
a margin of 64 ulps of Σ|y| for the rounding of that product itself.

Exact ties (within ε) can never be certified; the solve then runs to the ordinary `tol` and
returns bit for bit what `personalized_pagerank` returns (same recursion, same stop).
Only the top-k ranking is exact: every score, the top k's included, is off by up to ε.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.kernels.ppr import (
    PPRGraph,
    _normalise_resets,
    personalized_pagerank,
    prepare_ppr,
)

STOPS = ("tol", "certified_topk")


@dataclass(frozen=True)
class StoppedPPR:
    """One solve: the scores and how it ended."""

    scores: np.ndarray  # (n,), sum 1; with a certificate only the top-k ranking is exact
    iterations: int  # sparse mat-vecs, the certificate's residual check included
    certified: bool  # True: stopped by the certificate; False: by `tol`, as the default does
    bound: float  # L1 error bound ε of the unnormalised iterate at the stop (nan: `tol` stop)


def topk_is_certified(values: np.ndarray, k: int, bound: float, ordered: bool) -> bool:
    """True when every vector within L1 distance `bound` of `values` has the same top-k set
    (and, when `ordered`, the same order inside it): the gaps argued in the module docstring."""
    n = values.shape[0]
    k = min(k, n)
    if k <= 0:
        return True
    if ordered:
        m = min(k + 1, n)  # the k-th must also clear the (k+1)-th
        top = np.sort(np.partition(values, n - m)[n - m :])[::-1]
        return bool(np.all(top[:-1] - top[1:] > bound)) if m > 1 else True
    if k == n:
        return True
    part = np.partition(values, n - k)
    return bool(part[n - k :].min() - part[: n - k].max() > bound)


def personalized_pagerank_stopped(
    graph: PPRGraph,
    reset: np.ndarray,
    *,
    stop: str = "tol",
    k: int = 10,
    candidates: slice | np.ndarray = slice(None),
    ordered: bool = True,
    damping: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 1000,
    method: str = "auto",
) -> StoppedPPR:
    """PPR of one reset vector (n,) with its iteration count.

    stop="tol": exactly `personalized_pagerank` (same scores, bit for bit).
    stop="certified_topk": stops as soon as the top `k` of `scores[candidates]` (in order when
    `ordered`) provably equals the converged one; falls back to `tol` when it cannot prove it.
    """
    if stop not in STOPS:
        raise ValueError(f"stop must be one of {STOPS}, got {stop!r}")
    if not isinstance(graph, PPRGraph):
        graph = prepare_ppr(graph)
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    reset = np.asarray(reset, dtype=np.float64)
    if reset.ndim != 1:
        raise ValueError(f"reset must be a 1-D (n,) array, got shape {reset.shape}")
    p = np.ascontiguousarray(_normalise_resets(reset, graph.n))
    if method == "auto":
        method = "chebyshev" if graph.scaled is not None else "power"
    check = None
    if stop == "certified_topk":
        check = _Certifier(graph, p, damping, k, candidates, ordered)
    if method == "chebyshev":
        if graph.scaled is None:
            raise ValueError("method='chebyshev' needs a symmetric adjacency; use 'power'")
        return _chebyshev_stopped(graph, p, damping, tol, max_iter, check)
    if method == "power":
        return _power_stopped(graph, p, damping, tol, max_iter, check)
    raise ValueError(f"unknown method {method!r}; use 'auto', 'chebyshev' or 'power'")


class _Certifier:
    """The certificate for one solve: a cheap test on the running bound, then the exact one."""

    def __init__(self, graph: PPRGraph, p, damping: float, k: int, candidates, ordered: bool):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.graph, self.p, self.damping = graph, p, damping
        self.k, self.candidates, self.ordered = k, candidates, ordered
        self.extra_matvecs = 0

    def cheap(self, y: np.ndarray, bound: float) -> bool:
        return topk_is_certified(y[self.candidates], self.k, bound, self.ordered)

    def exact_bound(self, y: np.ndarray) -> float:
        """ε from the residual recomputed from scratch, p - (I - dP) y, plus a rounding margin."""
        self.extra_matvecs += 1
        residual = self.graph.transition @ y
        residual *= self.damping
        residual += self.p
        residual -= y
        margin = 64 * np.finfo(np.float64).eps * np.abs(y).sum()
        return float(np.abs(residual).sum() / (1.0 - self.damping) + margin)

    def proves(self, y: np.ndarray, running_bound: float) -> float | None:
        """The verified bound when the top-k is certified at y, else None."""
        if not self.cheap(y, running_bound):
            return None
        bound = self.exact_bound(y)
        return bound if self.cheap(y, bound) else None


def _power_stopped(graph, p, damping, tol, max_iter, check) -> StoppedPPR:
    """`ppr._power`'s recursion and stop, plus the certificate on y' with ε = d‖y'-y‖₁/(1-d)."""
    y = p.copy()
    x_prev = p
    for it in range(1, max_iter + 1):
        y_old = y
        y = graph.transition @ y
        y *= damping
        y += p
        if check is not None:
            running = damping * float(np.abs(y - y_old).sum()) / (1.0 - damping)
            bound = check.proves(y, running)
            if bound is not None:
                return StoppedPPR(y / y.sum(), it + check.extra_matvecs, True, bound)
        x = y / y.sum(axis=0)
        if np.abs(x - x_prev).sum(axis=0).max() < tol:
            extra = check.extra_matvecs if check is not None else 0
            return StoppedPPR(x, it + extra, False, float("nan"))
        x_prev = x
    raise RuntimeError(f"PPR did not converge to tol={tol} in {max_iter} iterations")


class _Chebyshev:
    """`ppr._chebyshev`'s recursion for K u = S^-1/2 p, K = I - dB, one step at a time."""

    def __init__(self, graph: PPRGraph, p: np.ndarray, damping: float):
        self.graph, self.p, self.damping = graph, p, damping
        self.s_half = graph.sqrt_strength
        live = ~graph.dangling
        f = np.zeros_like(p)
        f[live] = p[live] / self.s_half[live]
        self.sigma = 1.0 / damping
        self.rho = 1.0 / self.sigma
        self.u = np.zeros_like(f)
        self.r = f.copy()
        self.step = self.r.copy()
        self.tmp = np.empty_like(f)

    def advance(self) -> None:
        self.u += self.step
        kd = self.graph.scaled @ self.step
        kd *= self.damping
        self.r -= self.step
        self.r += kd
        rho_next = 1.0 / (2.0 * self.sigma - self.rho)
        self.step *= rho_next * self.rho
        np.multiply(self.r, 2.0 * rho_next / self.damping, out=self.tmp)
        self.step += self.tmp
        self.rho = rho_next

    def residual_bound(self) -> float:
        """‖S^1/2 r‖₁/(1-d): the running bound on ‖y - y*‖₁ (as ppr._chebyshev computes it)."""
        np.multiply(self.s_half, self.r, out=self.tmp)
        return float(np.abs(self.tmp, out=self.tmp).sum(axis=0) / (1.0 - self.damping))

    def unnormalised(self) -> np.ndarray:
        y = self.s_half * self.u
        y[self.graph.dangling] = self.p[self.graph.dangling]
        return y


def _chebyshev_stopped(graph, p, damping, tol, max_iter, check) -> StoppedPPR:
    if damping == 0.0:
        return StoppedPPR(p.copy(), 0, False, float("nan"))
    solver = _Chebyshev(graph, p, damping)
    for it in range(1, max_iter + 1):
        solver.advance()
        if check is not None:
            y = solver.unnormalised()
            bound = check.proves(y, solver.residual_bound())
            if bound is not None:
                return StoppedPPR(y / y.sum(), it + check.extra_matvecs, True, bound)
        if (it % 4 == 0 or it == max_iter) and 2.0 * solver.residual_bound() < tol:
            y = solver.unnormalised()
            extra = check.extra_matvecs if check is not None else 0
            return StoppedPPR(y / y.sum(axis=0), it + extra, False, float("nan"))
    raise RuntimeError(f"PPR did not converge to tol={tol} in {max_iter} iterations")


def ppr_scores(
    graph: PPRGraph,
    reset: np.ndarray,
    *,
    stop: str,
    k: int,
    candidates: slice,
    damping: float,
    tol: float,
    trace: dict,
    method: str = "auto",
) -> np.ndarray:
    """The retrievers' one PPR call behind their `ppr_stop` setting: `personalized_pagerank`
    itself for "tol" (the authors' computation, the trace untouched), else the certified solve,
    with what it did (mat-vecs, certified or not, the bound) as the question's `trace["ppr"]`."""
    if stop == "tol":
        return personalized_pagerank(graph, reset, damping=damping, tol=tol, method=method)
    solved = personalized_pagerank_stopped(
        graph, reset, stop=stop, k=k, candidates=candidates, damping=damping, tol=tol, method=method
    )
    trace["ppr"] = {
        "stop": stop,
        "matvecs": solved.iterations,
        "certified": solved.certified,
        "bound": solved.bound if solved.certified else None,
    }
    return solved.scores


def check_stop(stop: str) -> str:
    """A retriever's `ppr_stop` setting, refused early with the accepted values."""
    if stop not in STOPS:
        raise HopbenchError(f"retriever.ppr_stop must be one of {', '.join(STOPS)}, got {stop!r}")
    return stop
