"""QAFD flow diffusion: dual optimality, a scipy.optimize solve of the same QP, and the
paper's sequential random push (Algorithm 2) transcribed as a plain loop."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.csgraph import connected_components

from hopbench.retrieve.qafd.flow import (
    degree_capacities,
    is_bounded,
    push_flow,
    qafd,
    query_aware_weights,
    similarity_transform,
    solve_flow_exact,
    source_mass,
)
from tests.helpers.synthetic_graphs import random_graph


def small_case(seed: int, n: int = 16, n_edges: int = 40):
    rng = np.random.default_rng(seed)
    adj = random_graph(n, n_edges, seed=seed)
    # chain every node to the next so the graph is connected (one component)
    chain = sp.coo_matrix((np.full(n - 1, 0.5), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    adj = (adj + chain + chain.T).tocsr()
    cos = rng.uniform(-0.3, 0.9, n)
    seeds = rng.choice(n, 3, replace=False)
    seed_w = rng.uniform(0.2, 1.0, 3)
    return adj, cos, seeds, seed_w


def dual_objective(w: sp.csr_matrix, T: np.ndarray, delta: np.ndarray):
    lap = (sp.diags(np.asarray(w.sum(axis=1)).ravel()) - w).toarray()

    def f(x):
        return 0.5 * x @ lap @ x + x @ (T - delta), lap @ x + (T - delta)

    return f, lap


def scipy_solve(w, T, delta) -> np.ndarray:
    f, _ = dual_objective(w, T, delta)
    res = minimize(
        f,
        np.zeros(T.size),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * T.size,
        options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 100_000, "maxcor": 50},
    )
    return res.x


def sequential_random_push(w: sp.csr_matrix, T, delta, epsilon, rng) -> np.ndarray:
    """QAFD Algorithm 2 line by line: one node with excess chosen uniformly at random."""
    dense = w.toarray()
    m, x = delta.astype(float).copy(), np.zeros(T.size)
    while np.maximum(m - T, 0).sum() > epsilon:
        v = rng.choice(np.flatnonzero(m > T))
        excess, w_v = m[v] - T[v], dense[v].sum()
        x[v] += excess / w_v
        m[v] = T[v]
        for u in np.flatnonzero(dense[v]):
            m[u] += excess * dense[v, u] / w_v
    return x


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scheme", ["hybrid", "mean", "product"])
def test_matches_scipy_qp_and_satisfies_kkt(seed, scheme):
    adj, cos, seeds, seed_w = small_case(seed)
    eps = 1e-10
    sim_mode = "cos" if scheme == "hybrid" else "normalized"
    res = qafd(
        adj,
        cos,
        seeds,
        seed_w,
        variant="paper",
        alpha=0.4,
        epsilon=eps,
        scheme=scheme,
        sim_mode=sim_mode,
    )
    w = query_aware_weights(adj, similarity_transform(cos, sim_mode), scheme, 1.0, 0.25)
    T = degree_capacities(adj)
    delta = source_mass(T, seeds, seed_w, 0.4)
    assert is_bounded(w, T, delta)
    assert res.converged and res.excess <= eps
    # dual feasibility and complementary slackness
    assert np.all(res.x >= 0)
    assert np.all(res.m <= T + eps)
    active = res.x > 1e-12
    assert active.any() and not active.all()
    assert np.all(np.abs(res.m[active] - T[active]) <= eps)
    # m is Δ - Lx
    _, lap = dual_objective(w, T, delta)
    np.testing.assert_allclose(res.m, delta - lap @ res.x, atol=1e-8)
    ref = scipy_solve(w, T, delta)
    np.testing.assert_allclose(res.x, ref, atol=1e-6 * ref.max(), rtol=0)
    exact = solve_flow_exact(w, T, delta)
    assert exact.converged
    np.testing.assert_allclose(exact.x, ref, atol=1e-6 * ref.max(), rtol=0)
    np.testing.assert_allclose(exact.x, res.x, atol=1e-8 * ref.max(), rtol=0)


@pytest.mark.parametrize("seed", range(3))
def test_simultaneous_sweeps_reach_the_sequential_random_push_optimum(seed):
    adj, cos, seeds, seed_w = small_case(seed + 10, n=14, n_edges=30)
    w = query_aware_weights(adj, cos, "hybrid", 1.0, 0.25)
    T = degree_capacities(adj)
    delta = source_mass(T, seeds, seed_w, 0.5)
    eps = 1e-11
    seq = sequential_random_push(w, T, delta, eps, np.random.default_rng(seed))
    sweep = push_flow(w, T, delta, epsilon=eps)
    assert sweep.converged
    np.testing.assert_allclose(sweep.x, seq, atol=1e-8 * seq.max(), rtol=0)


def test_kkt_on_real_mention_graph(musique_mention_graph):
    rng = np.random.default_rng(5)
    adj = musique_mention_graph.adj
    n, n_p = adj.shape[0], musique_mention_graph.n_passages
    # seeds in the giant component: a seed in a small component overflows its capacity
    # at almost any alpha (see test below), and then no schedule converges
    _, label = connected_components(adj, directed=False)
    giant = label == np.bincount(label).argmax()
    hubs = np.argsort(-np.diff(adj.indptr) * giant)[:200]
    seeds = rng.choice(hubs, 10, replace=False)
    cos = rng.uniform(-0.2, 0.8, n)
    seed_w = rng.uniform(0.1, 1, 10)
    res = qafd(adj, cos, seeds, seed_w, alpha=0.05, epsilon=1e-8)
    w = query_aware_weights(adj, cos, "hybrid", 1.0, 0.25)
    T = degree_capacities(adj)
    assert is_bounded(w, T, source_mass(T, seeds, seed_w, 0.05))
    assert res.converged
    active = res.x > 0
    assert np.all(res.m <= T + 1e-8) and np.all(np.abs(res.m[active] - T[active]) <= 1e-8)
    # locality: the support is a small part of the graph
    assert 10 <= active.sum() < 0.5 * n
    exact = qafd(adj, cos, seeds, seed_w, alpha=0.05, solver="exact")
    assert exact.converged
    np.testing.assert_allclose(exact.x, res.x, atol=1e-6 * res.x.max(), rtol=0)
    assert n_p > 0


def test_seed_in_a_small_component_makes_it_unbounded(musique_mention_graph):
    adj = musique_mention_graph.adj
    _, label = connected_components(adj, directed=False)
    sizes = np.bincount(label)
    small = np.flatnonzero(sizes[label] == 3)[0]  # a node in a 3-node component
    T = degree_capacities(adj)
    delta = source_mass(T, np.array([small]), None, 0.01)  # 1% of the graph's capacity
    assert delta.sum() > T[label == label[small]].sum()
    assert not is_bounded(query_aware_weights(adj, np.zeros(adj.shape[0])), T, delta)
    res = push_flow(query_aware_weights(adj, np.zeros(adj.shape[0])), T, delta, max_sweeps=50)
    assert not res.converged and res.sweeps == 50
    with pytest.raises(ValueError, match="unbounded"):
        solve_flow_exact(query_aware_weights(adj, np.zeros(adj.shape[0])), T, delta)


def test_paper_setting_alpha_50_is_unbounded_and_stops_at_the_push_budget():
    adj, cos, seeds, seed_w = small_case(0)
    T = degree_capacities(adj)
    w = query_aware_weights(adj, cos)
    assert not is_bounded(w, T, source_mass(T, seeds, seed_w, 50.0))
    res = qafd(adj, cos, seeds, seed_w, alpha=50.0, epsilon=0.01, max_pushes=500)
    assert not res.converged and res.pushes == 500
    assert res.excess > 0
    with pytest.raises(ValueError, match="max_pushes"):
        qafd(adj, cos, seeds, seed_w, alpha=50.0)


def test_query_aware_weight_formulas():
    adj = sp.csr_matrix(np.array([[0, 2.0, 0], [2.0, 0, 0.5], [0, 0.5, 0]]))
    s = np.array([0.2, 0.6, -0.4])
    hyb = query_aware_weights(adj, s, "hybrid", a=1.0, b=0.25).toarray()
    assert hyb[0, 1] == pytest.approx(2.0 * (1 + 0.25 * 0.8))
    assert hyb[1, 2] == pytest.approx(0.5 * (1 + 0.25 * 0.2))
    mean = query_aware_weights(adj, s, "mean").toarray()
    assert mean[0, 1] == pytest.approx((2.0 + 0.2 + 0.6) / 3)
    assert mean[1, 2] == pytest.approx((0.5 + 0.6 - 0.4) / 3)
    prod = query_aware_weights(adj, s, "product").toarray()
    assert prod[0, 1] == pytest.approx(2.0 * 0.2 * 0.6)
    assert prod[1, 2] == 0.0  # negative product clipped
    assert np.allclose(hyb, hyb.T) and np.allclose(prod, prod.T)


def test_explicit_capacities_are_rescaled():
    adj, cos, seeds, seed_w = small_case(3)
    deg = np.diff(adj.indptr).astype(float)
    # explicit degrees (e.g. igraph's multigraph degree) give the same result as the CSR's own
    given = qafd(adj, cos, seeds, seed_w, alpha=2.0, max_pushes=300, capacity=deg)
    own = qafd(adj, cos, seeds, seed_w, alpha=2.0, max_pushes=300)
    np.testing.assert_allclose(given.x, own.x, atol=1e-12)


def test_push_budget_takes_largest_excess_first():
    adj, cos, seeds, _ = small_case(1)
    w = query_aware_weights(adj, cos)
    T = degree_capacities(adj)
    delta = source_mass(T, seeds, np.array([1.0, 0.5, 0.25]), 0.4)
    one = push_flow(w, T, delta, max_pushes=1)
    assert one.pushes == 1 and np.flatnonzero(one.x).tolist() == [seeds[0]]


def test_rejects_bad_input():
    adj, cos, seeds, _ = small_case(0)
    with pytest.raises(ValueError, match="variant"):
        qafd(adj, cos, seeds, variant="nope")
    with pytest.raises(ValueError, match="settings"):
        qafd(adj, cos, seeds, bogus=1)
    with pytest.raises(ValueError, match="positive weight"):
        qafd(adj, cos, seeds, np.zeros(3))
    with pytest.raises(ValueError, match="scheme"):
        query_aware_weights(adj, cos, "max")
