"""The per-seed QAFD diffusion against an independent transcription of the authors' loop.

The reference below follows QAFD-RAG's ``QueryAwareWeightedFlowDiffusion`` step by step on a
networkx graph (dict masses, a scan of every graph node each iteration, Python float sums),
written from the description in kernels/qafd_seed_flow.py, not from the kernel's code.
"""

from __future__ import annotations

import random
from collections import defaultdict

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.retrieve.qafd.seed_flow import (
    SeedFlowDiffusion,
    capacities,
    keep_cluster,
    node_norms_of,
    node_similarity,
)


def reference(
    g: nx.Graph,
    emb: dict,
    q: np.ndarray,
    source,
    *,
    alpha,
    confidence=0.7,
    eps=0.02,
    step=0.2,
    max_iterations=500,
):
    def sim(a, b):
        a, b = list(map(float, a)), list(map(float, b))
        dot = sum(x * y for x, y in zip(a, b))
        m1, m2 = sum(x * x for x in a) ** 0.5, sum(y * y for y in b) ** 0.5
        return 0.0 if m1 == 0 or m2 == 0 else max(0.0, (dot / (m1 * m2) + 1) / 2)

    def weight(u, v):
        w = g[u][v].get("weight", 1.0)
        if w <= 0:
            return 0.0
        return w * (1.0 + (sim(emb[u], q) + sim(emb[v], q)) / 2.0 * 0.5)

    cap = {v: max(g.degree(v), 1) for v in g.nodes()}
    tot = sum(cap.values())
    cap = {v: 10.0 * c / tot for v, c in cap.items()}
    mass = defaultdict(float)
    mass[source] = alpha * sum(cap.values()) * (1.0 + confidence)
    x = defaultdict(float)
    x[source] = 1.0
    for _ in range(2):
        new = defaultdict(float)
        for v, val in list(x.items()):
            if val > 0:
                nb = list(g.neighbors(v))
                for u in nb:
                    new[u] += val / len(nb)
        comb = defaultdict(float)
        comb[source] = 1.0
        for v in set(new) | {source}:
            comb[v] = (comb.get(v, 0.0) + new.get(v, 0.0)) / 2.0
        x = comb
    rng = random.Random(42)
    it = 0
    while it < max_iterations:
        it += 1
        over = [v for v in g.nodes() if mass[v] > cap[v] + eps]
        if not over:
            break
        v = rng.choice(over)
        nb = list(g.neighbors(v))
        wi = sum(weight(v, u) for u in nb) if nb else 0
        excess = mass[v] - cap[v]
        if nb and wi != 0 and excess > 0:
            x[v] += step * excess / (wi + 1e-8)
            mass[v] = cap[v]
            for u in nb:
                w = weight(v, u)
                if w > 0:
                    mass[u] += excess * w / (wi + 1e-8)
        if it % 10 == 0 and sum(max(0, mass[u] - cap[u]) for u in g.nodes()) < eps:
            break
    return {v: val for v, val in x.items() if val > 0}


def _graph(seed: int, n: int = 40, p: float = 0.12, self_loop: bool = True):
    rng = np.random.default_rng(seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for u in range(n):
        for v in range(u + 1, n):
            if rng.random() < p:
                g.add_edge(u, v, weight=float(rng.integers(1, 4)))
    if self_loop:
        g.add_edge(3, 3, weight=2.0)
    g.add_edge(0, 1, weight=0.0)  # a zero weight: the edge is there, the push skips it
    emb = rng.normal(size=(n, 8))
    emb[5] = 0.0  # a zero vector: s = 0
    q = rng.normal(size=8)
    rows, cols, data = [], [], []
    for u, v, d in g.edges(data=True):
        rows += [u, v] if u != v else [u]
        cols += [v, u] if u != v else [u]
        data += [d["weight"]] * (2 if u != v else 1)
    a = sp.csr_matrix((data, (rows, cols)), shape=(n, n))  # explicit zeros stay stored
    return g, a, emb, q


@pytest.mark.parametrize("alpha", [50.0, 0.5, 0.05])
@pytest.mark.parametrize("graph_seed", [0, 1, 2])
def test_matches_the_reference_transcription(alpha, graph_seed):
    g, a, emb, q = _graph(graph_seed)
    fd = SeedFlowDiffusion(a, node_similarity(emb, q), alpha=alpha)
    for source in (0, 3, 7):
        want = reference(g, dict(enumerate(emb)), q, source, alpha=alpha)
        got = fd.run(source)
        assert set(got.nodes.tolist()) == set(want)
        np.testing.assert_allclose(
            [want[v] for v in got.nodes.tolist()], got.flow, rtol=1e-9, atol=0
        )
        assert list(got.flow) == sorted(got.flow, reverse=True)


def test_settings_and_clusters():
    g, a, emb, q = _graph(0)
    cap = capacities(a)
    assert cap.sum() == pytest.approx(10.0)
    deg = dict(g.degree())
    assert cap[3] / cap[2] == pytest.approx(
        max(deg[3], 1) / max(deg[2], 1)
    )  # self-loop counts twice
    big = SeedFlowDiffusion(a, node_similarity(emb, q), alpha=50.0).run(2)
    assert big.iterations == 500 and not big.converged  # α = 50 is never absorbed
    small = SeedFlowDiffusion(a, node_similarity(emb, q), alpha=0.05).run(2)
    assert small.converged
    # the warm start alone reaches the seed's neighbours: a cluster, its max x >= 0.5 at the seed
    assert keep_cluster(small, 0.1) and small.nodes[0] == 2
    assert not keep_cluster(small, 10.0)
    lonely = nx.Graph()
    lonely.add_nodes_from(range(3))
    lonely.add_edge(1, 2, weight=1.0)
    solo = SeedFlowDiffusion(
        sp.csr_matrix(nx.to_scipy_sparse_array(lonely, nodelist=range(3))), np.zeros(3), alpha=0.5
    ).run(0)
    assert solo.nodes.tolist() == [0] and not keep_cluster(solo, 0.0)


@pytest.mark.parametrize("graph_seed", [0, 1, 2])
def test_the_deduplicating_merge_gives_the_same_diffusions(graph_seed):
    """A non-canonical CSR (a neighbour stored twice) takes the path that deduplicates the nodes
    newly holding mass before merging them in; on a canonical graph both paths must agree with
    each other and with the transcription, draw for draw."""
    g, a, emb, q = _graph(graph_seed)
    fast = SeedFlowDiffusion(a, node_similarity(emb, q), alpha=50.0)
    careful = SeedFlowDiffusion(a, node_similarity(emb, q), alpha=50.0)
    careful._distinct_neighbours = False
    for source in (0, 3, 7):
        f, c = fast.run(source), careful.run(source)
        assert (f.nodes.tolist(), f.flow.tolist(), f.pushes) == (
            c.nodes.tolist(),
            c.flow.tolist(),
            c.pushes,
        )
        want = reference(g, dict(enumerate(emb)), q, source, alpha=50.0)
        assert set(f.nodes.tolist()) == set(want)
    indptr, indices = np.array([0, 3, 5, 7, 8]), np.array([1, 1, 2, 0, 2, 0, 1, 0])
    dup = sp.csr_matrix((np.ones(8), indices, indptr), shape=(4, 4))
    assert not dup.has_canonical_format
    assert not SeedFlowDiffusion(dup, np.full(4, 0.5))._distinct_neighbours


def test_norms_computed_once_give_the_same_similarities_bit_for_bit():
    rng = np.random.default_rng(3)
    emb = rng.normal(size=(50, 16)).astype(np.float32)
    emb[7] = 0.0
    q = rng.normal(size=16)
    once = node_similarity(emb, q, node_norms_of(emb))
    assert once.tobytes() == node_similarity(emb, q).tobytes() and once[7] == 0.0
