"""PPR kernel against networkx.pagerank and igraph's prpack (what HippoRAG 2 calls)."""

from __future__ import annotations

import igraph as ig
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.retrieve.kernels.ppr import (
    personalized_pagerank,
    personalized_pagerank_batch,
    prepare_ppr,
)
from tests.helpers.synthetic_graphs import random_graph


def nx_ppr(adj: sp.csr_matrix, reset: np.ndarray, damping: float = 0.5) -> np.ndarray:
    g = nx.from_scipy_sparse_array(adj, edge_attribute="weight")
    pr = nx.pagerank(
        g,
        alpha=damping,
        personalization=dict(enumerate(reset)),
        weight="weight",
        tol=1e-15,
        max_iter=10_000,
    )
    return np.array([pr[i] for i in range(adj.shape[0])])


def igraph_ppr(adj: sp.csr_matrix, reset: np.ndarray, damping: float = 0.5) -> np.ndarray:
    upper = sp.triu(adj).tocoo()
    g = ig.Graph(
        n=adj.shape[0], edges=list(zip(upper.row.tolist(), upper.col.tolist())), directed=False
    )
    g.es["weight"] = upper.data.tolist()
    return np.array(
        g.personalized_pagerank(
            damping=damping,
            directed=False,
            weights="weight",
            reset=reset.tolist(),
            implementation="prpack",
        )
    )


def hipporag_like_reset(n_nodes: int, n_passages: int, entity_seeds: np.ndarray, rng) -> np.ndarray:
    """Seed entities with fact-like weights plus every passage at 0.05 x min-max dense score."""
    r = np.zeros(n_nodes)
    r[entity_seeds] = rng.uniform(0.2, 1.0, entity_seeds.size)
    r[:n_passages] += 0.05 * rng.uniform(0, 1, n_passages)
    return r


def assert_same_ranking(ours: np.ndarray, ref: np.ndarray, k: int, tie: float = 1e-9) -> None:
    """Top-k orders agree; positions may swap only between scores equal within `tie`."""
    top = np.argsort(-ours, kind="stable")[:k]
    ref_sorted = np.sort(ref)[::-1][:k]
    np.testing.assert_allclose(ref[top], ref_sorted, atol=tie, rtol=0)


def test_equals_networkx_on_real_mention_graph(musique_mention_graph):
    rng = np.random.default_rng(0)
    adj = musique_mention_graph.adj
    n, n_p = adj.shape[0], musique_mention_graph.n_passages
    degrees = np.diff(adj.indptr)
    assert (degrees == 0).sum() > 0, "want isolated (dangling) nodes in the real graph too"
    op = prepare_ppr(adj)
    for _ in range(3):
        seeds = rng.choice(np.arange(n_p, n), size=5, replace=False)
        reset = hipporag_like_reset(n, n_p, seeds, rng)
        ours = personalized_pagerank(op, reset, damping=0.5)
        ref = nx_ppr(adj, reset)
        assert np.abs(ours - ref).max() <= 1e-8
        assert abs(ours.sum() - 1) < 1e-12


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_equals_networkx_with_isolated_and_zero_weight_nodes(seed):
    rng = np.random.default_rng(seed)
    adj = random_graph(300, 900, seed=seed, isolated=20).tolil()
    adj[0, :] = 0
    adj[:, 0] = 0
    adj = adj.tocoo()
    # node 0 keeps two edges stored with weight 0: strength 0, so it is dangling in
    # networkx and here although it has neighbours
    rows = np.concatenate([adj.row, [0, 1, 0, 5]])
    cols = np.concatenate([adj.col, [1, 0, 5, 0]])
    vals = np.concatenate([adj.data, [0.0, 0.0, 0.0, 0.0]])
    adj = sp.csr_matrix((vals, (rows, cols)), shape=(300, 300))
    assert adj[0].nnz == 2
    reset = rng.uniform(0, 1, 300) * (rng.uniform(0, 1, 300) < 0.3)
    reset[-5:] = 0.7  # some reset mass sits on isolated nodes
    reset[0] = 0.4
    for damping in (0.5, 0.85):
        ref = nx_ppr(adj, reset, damping)
        for method in ("chebyshev", "power"):
            ours = personalized_pagerank(adj, reset, damping=damping, method=method)
            assert np.abs(ours - ref).max() <= 1e-8


def test_equals_igraph_prpack_scores_and_rankings(musique_mention_graph):
    rng = np.random.default_rng(7)
    adj = musique_mention_graph.adj
    n, n_p = adj.shape[0], musique_mention_graph.n_passages
    op = prepare_ppr(adj)
    for _ in range(3):
        reset = hipporag_like_reset(n, n_p, rng.choice(np.arange(n_p, n), 5, replace=False), rng)
        ours = personalized_pagerank(op, reset)
        ref = igraph_ppr(adj, reset)
        assert np.abs(ours - ref).max() <= 1e-8
        assert_same_ranking(ours[:n_p], ref[:n_p], k=200)  # HippoRAG ranks passages


def test_self_loops_twice_reproduces_igraph():
    rng = np.random.default_rng(11)
    adj = random_graph(80, 300, seed=11, isolated=3).tolil()
    for v in (2, 9, 30):
        adj[v, v] = rng.uniform(0.5, 2.0)
    adj = adj.tocsr()
    reset = rng.uniform(0, 1, 80)
    ref = igraph_ppr(adj, reset)
    assert (
        np.abs(personalized_pagerank(prepare_ppr(adj, self_loops="twice"), reset) - ref).max()
        <= 1e-8
    )
    # networkx counts a self-loop once, which is our default
    assert np.abs(personalized_pagerank(adj, reset) - nx_ppr(adj, reset)).max() <= 1e-8
    assert np.abs(personalized_pagerank(adj, reset) - ref).max() > 1e-4


def test_batched_equals_column_by_column(musique_mention_graph):
    rng = np.random.default_rng(3)
    adj = musique_mention_graph.adj
    n, n_p = adj.shape[0], musique_mention_graph.n_passages
    op = prepare_ppr(adj)
    resets = np.stack(
        [
            hipporag_like_reset(n, n_p, rng.choice(np.arange(n_p, n), 5, replace=False), rng)
            for _ in range(16)
        ],
        axis=1,
    )
    batch = personalized_pagerank_batch(op, resets)
    chunked = personalized_pagerank_batch(op, resets, block=5)
    for j in range(resets.shape[1]):
        one = personalized_pagerank(op, resets[:, j], tol=1e-13)
        assert np.abs(batch[:, j] - one).max() <= 1e-10
        assert np.abs(chunked[:, j] - one).max() <= 1e-10
    assert np.abs(nx_ppr(adj, resets[:, 3]) - batch[:, 3]).max() <= 1e-8


def test_directed_graph_with_power_method_equals_networkx_digraph():
    rng = np.random.default_rng(4)
    adj = sp.csr_matrix(sp.triu(random_graph(120, 400, seed=4, isolated=5)))  # u -> v, u < v
    reset = rng.uniform(0, 1, 120)
    op = prepare_ppr(adj, check_symmetric=False)
    g = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph, edge_attribute="weight")
    pr = nx.pagerank(
        g,
        alpha=0.5,
        personalization=dict(enumerate(reset)),
        weight="weight",
        tol=1e-15,
        max_iter=10_000,
    )
    ref = np.array([pr[i] for i in range(120)])
    assert np.abs(personalized_pagerank(op, reset) - ref).max() <= 1e-8
    with pytest.raises(ValueError, match="symmetric"):
        personalized_pagerank(op, reset, method="chebyshev")


def test_rejects_bad_input():
    adj = random_graph(10, 20, seed=0)
    with pytest.raises(ValueError, match="sums to 0"):
        personalized_pagerank(adj, np.zeros(10))
    with pytest.raises(ValueError, match="10 nodes"):
        personalized_pagerank(adj, np.ones(9))
    with pytest.raises(ValueError, match="not symmetric"):
        prepare_ppr(sp.csr_matrix(np.triu(adj.toarray())))
    with pytest.raises(ValueError, match="non-negative"):
        personalized_pagerank(adj, -np.ones(10))
