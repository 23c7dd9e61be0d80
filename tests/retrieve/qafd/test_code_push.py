"""kernels/qafd_code.py against a plain-Python transcription of QAFD-RAG's IGraphQAFD loop
(scalar arithmetic, one neighbour at a time, the global-generator draw), on small multigraphs.
Tolerance: x must agree exactly (the kernel promises the code's bits)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hopbench.kg.hipporag2_igraph import multigraph
from hopbench.retrieve.qafd.code_push import (
    _Similarities,
    code_flow_diffusion,
    push_weights,
    rank_passages,
    seed_weights,
    sink_capacity,
)


def _cos(v1, v2):
    dot = np.dot(v1, v2)
    m1, m2 = np.linalg.norm(v1), np.linalg.norm(v2)
    if m1 == 0 or m2 == 0:
        return 0.0
    raw = dot / (m1 * m2)
    return max(0.0, (raw + 1.0) / 2.0)


def reference(n, edges, weights, source, emb, q, alpha, eps, max_it, step=0.2, seed=42):
    """IGraphQAFD with the igraph calls spelled out: neighbours sorted with one entry per
    parallel edge, degree = their number, a pair's weight = its last-added edge's."""
    nbrs = {v: [] for v in range(n)}
    last = {}
    for (a, b), w in zip(edges, weights):
        nbrs[a].append(b)
        nbrs[b].append(a)
        last[frozenset((a, b))] = w
    for v in nbrs:
        nbrs[v].sort()

    def w_struct(i, j):
        return last[frozenset((i, j))]

    cache = {}

    def w_qa(i, j):
        if (i, j) not in cache:
            w = w_struct(i, j)
            cache[(i, j)] = 0.0 if w <= 0 else w * _cos(emb[i], q) * _cos(emb[j], q)
        return cache[(i, j)]

    sw = np.copy(source).astype(np.float64)
    sw[sw < 1e-5] = 0.0
    sw /= np.sum(sw)
    x = sw.copy()
    for _ in range(2):
        x_new = np.zeros(n)
        for i in range(n):
            if x[i] > 0 and nbrs[i]:
                spread = x[i] / len(nbrs[i])
                for j in nbrs[i]:
                    x_new[j] += spread
        x = (sw + x_new) / 2.0
    cap = np.zeros(n)
    for i in range(n):
        cap[i] = max(len(nbrs[i]), 1.0)
    cap = 10.0 * cap / np.sum(cap)
    total = np.sum(cap)
    mass = np.zeros(n)
    for i in range(n):
        if sw[i] > 0:
            mass[i] = alpha * total * sw[i]
    random.seed(seed)
    it = pushes = 0
    while it < max_it:
        it += 1
        over = np.nonzero(mass > (cap + eps))[0]
        if len(over) == 0:
            break
        v = int(random.choice(over))
        if nbrs[v]:
            wq = 0.0
            for j in nbrs[v]:
                wq += w_qa(v, j)
            ex = mass[v] - cap[v]
            if wq != 0 and ex > 0:
                ws = 0.0
                for j in nbrs[v]:
                    ws += w_struct(v, j)
                if ws == 0:
                    ws = wq
                x[v] += step * ex / (ws + 1e-8)
                mass[v] = cap[v]
                for j in nbrs[v]:
                    if w_qa(v, j) > 0:
                        mass[j] += ex * w_qa(v, j) / (wq + 1e-8)
                pushes += 1
        if it % 10 == 0 and np.sum(np.maximum(0, mass - cap)) < eps:
            break
    return x, it, pushes


def random_case(rng, n):
    m = int(rng.integers(n, 4 * n))
    edges = []
    while len(edges) < m:
        a, b = (int(v) for v in rng.integers(0, n, 2))
        if a != b:
            edges.append((a, b))
            if rng.random() < 0.4:  # the reverse direction too: a parallel edge, as HippoRAG adds
                edges.append((b, a))
    weights = [
        float(rng.choice([1.0, 2.0, 3.0]))
        if rng.random() < 0.7
        else float(np.float32(rng.uniform(0.8, 1)))
        for _ in edges
    ]
    emb = rng.normal(size=(n, 8)).astype(np.float32)
    q = rng.normal(size=8).astype(np.float32)
    source = np.zeros(n)
    seeds = rng.choice(n, size=max(1, n // 4), replace=False)
    source[seeds] = rng.random(len(seeds))
    source[rng.integers(0, n)] += 1e-6  # below the threshold
    return edges, weights, emb, q, source


@pytest.mark.parametrize("alpha,max_it", [(0.5, 10_000), (2.0, 500), (2.0, 37)])
def test_push_loop_matches_the_transcription(alpha, max_it):
    rng = np.random.default_rng(7)
    for case in range(25):
        n = int(rng.integers(3, 40))
        edges, weights, emb, q, source = random_case(rng, n)
        src = np.array([a for a, _ in edges])
        dst = np.array([b for _, b in edges])
        g = multigraph(n, src, dst, np.array(weights))
        res = code_flow_diffusion(
            g, source, emb, q, alpha=alpha, epsilon=0.01, max_iterations=max_it
        )
        x, it, pushes = reference(n, edges, weights, source, emb, q, alpha, 0.01, max_it)
        assert np.array_equal(res.x, x), (case, np.abs(res.x - x).max())
        assert (res.iterations, res.pushes) == (it, pushes)


def test_draws_depend_only_on_the_question():
    """The generator is reseeded per call: running other questions first changes nothing."""
    rng = np.random.default_rng(3)
    edges, weights, emb, q, source = random_case(rng, 30)
    g = multigraph(
        30, np.array([a for a, _ in edges]), np.array([b for _, b in edges]), np.array(weights)
    )
    first = code_flow_diffusion(g, source, emb, q).x
    random.seed(1)
    code_flow_diffusion(g, np.roll(source, 3), emb, q)
    assert np.array_equal(code_flow_diffusion(g, source, emb, q).x, first)


def test_multigraph_reads_igraph_as_igraph_does():
    """neighbours ascending with one entry per parallel edge, degree counting them, and the
    weight of a pair = the weight `get_eid` returns (igraph's own answer, not a rule copied)."""
    ig = pytest.importorskip("igraph")
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(2, 25))
        edges, weights, *_ = random_case(rng, n)
        g = ig.Graph(n=n, edges=edges, directed=False)
        g.es["weight"] = weights
        mg = multigraph(
            n, np.array([a for a, _ in edges]), np.array([b for _, b in edges]), np.array(weights)
        )
        for v in range(n):
            row = slice(mg.indptr[v], mg.indptr[v + 1])
            assert mg.indices[row].tolist() == g.neighbors(v)
            assert mg.degree[v] == g.degree(v)
            for u, w in zip(mg.indices[row].tolist(), mg.weight[row].tolist()):
                assert w == g.es[g.get_eid(v, u)]["weight"]


def test_ranking_is_the_codes():
    x = np.array([0.0, 3.0, 1.0, 3.0, 0.0])
    order, scores = rank_passages(x)
    assert order.tolist() == np.argsort(x / x.sum())[::-1].tolist()
    assert scores.sum() == pytest.approx(1.0)
    order, scores = rank_passages(np.zeros(3))
    assert np.allclose(scores, 1 / 3)


# code_flow_diffusion's steps (#58)


def test_seed_weights_drop_the_small_and_sum_to_one():
    sw = seed_weights(np.array([3.0, 1e-6, 1.0, 0.0]), 1e-5, 4)
    assert sw.tolist() == [0.75, 0.0, 0.25, 0.0]
    assert seed_weights(np.array([1e-6, 0.0]), 1e-5, 2).tolist() == [0.5, 0.5]  # none: uniform


def test_sink_capacity_counts_an_isolated_node_as_degree_one_and_sums_to_ten():
    cap = sink_capacity(np.array([3, 0, 1]))
    assert cap.tolist() == [6.0, 2.0, 2.0]


def test_push_weights_are_float32_query_aware_and_zero_for_nonpositive_edges():
    g = multigraph(4, np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([2.0, -1.0, 1.0]))
    emb = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=np.float32)
    sim = _Similarities(emb, np.array([1, 0], dtype=np.float32))  # s_0 = s_1 = 1, s_2 = 0.5
    nbrs, qw, w_qa, w_struct = push_weights(g, 0, sim)
    assert nbrs.tolist() == [1, 2] and qw.dtype == np.float32 and w_qa.dtype == np.float32
    assert qw.tolist() == [2.0, 0.0]  # 2 * 1 * 1; the edge of weight -1 carries nothing
    assert (w_qa, w_struct) == (2.0, 1.0)  # but it still counts in the structural sum
    nbrs, qw, w_qa, w_struct = push_weights(g, 3, sim)  # isolated: no entries, never pushes
    assert nbrs.size == 0 and qw.size == 0 and w_qa == 0 and w_struct == 0
