"""Certified PPR stop: the same top-k as the converged solve, fewer iterations, and the default
unchanged: on synthetic graphs, the MuSiQue mention graph, and (slow) HippoRAG 2's real
resets on every bundled MuSiQue and 2Wiki question."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.retrieve.kernels.ppr import personalized_pagerank, prepare_ppr
from hopbench.retrieve.kernels.ppr_stop import (
    personalized_pagerank_stopped,
    topk_is_certified,
)
from tests.helpers.synthetic_graphs import random_graph

CONVERGED_TOL = 1e-13


def top_order(scores: np.ndarray, k: int, candidates: slice) -> list[int]:
    """The top k of scores[candidates] by score descending, ties by index (the retrievers' rule
    without the dense tie-break, which only matters on exact ties)."""
    part = scores[candidates]
    return np.lexsort((np.arange(part.size), -part))[:k].tolist()


def resets(n: int, n_passages: int, count: int, seed: int = 0):
    """HippoRAG-like resets: 5 entity seeds (nodes >= n_passages) plus every passage (nodes
    below) at 0.05 x U(0, 1)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        r = np.zeros(n)
        r[rng.choice(np.arange(n_passages, n), 5, replace=False)] = rng.uniform(0.2, 1.0, 5)
        r[:n_passages] += 0.05 * rng.uniform(0.0, 1.0, n_passages)
        yield r


def test_certificate_by_hand():
    v = np.array([1.0, 0.9, 0.5, 0.1])
    # an L1 perturbation of size 0.1 ([-0.05, +0.05, 0, 0]) ties the first two: not certified
    assert not topk_is_certified(v, 1, 0.1, ordered=True)
    assert topk_is_certified(v, 1, 0.0999, ordered=True)
    # top-2 as a set needs 0.9 - 0.5 > bound; in order also 1.0 - 0.9 > bound
    assert topk_is_certified(v, 2, 0.3, ordered=False)
    assert not topk_is_certified(v, 2, 0.3, ordered=True)
    assert not topk_is_certified(v, 2, 0.4, ordered=False)
    # k covering every candidate: the set is certain, the order still needs its gaps
    assert topk_is_certified(v, 4, 10.0, ordered=False)
    assert not topk_is_certified(v, 4, 0.1, ordered=True)  # the gaps are 0.1, 0.4, 0.4
    assert topk_is_certified(v, 4, 0.0999, ordered=True)


@pytest.mark.parametrize("method", ["chebyshev", "power"])
def test_tol_stop_is_the_default_solve_bit_for_bit(musique_mention_graph, method):
    g = prepare_ppr(musique_mention_graph.adj)
    for r in resets(g.n, musique_mention_graph.n_passages, 5):
        want = personalized_pagerank(g, r, method=method)
        got = personalized_pagerank_stopped(g, r, stop="tol", method=method)
        assert np.array_equal(got.scores, want)
        assert not got.certified and got.iterations > 0


@pytest.mark.parametrize("method", ["chebyshev", "power"])
@pytest.mark.parametrize("ordered", [True, False])
def test_certified_topk_equals_converged_topk(musique_mention_graph, method, ordered):
    g = prepare_ppr(musique_mention_graph.adj)
    passages, k, saved = slice(0, musique_mention_graph.n_passages), 10, []
    for r in resets(g.n, passages.stop, 20, seed=1):
        full = personalized_pagerank_stopped(g, r, method=method)
        cut = personalized_pagerank_stopped(
            g,
            r,
            stop="certified_topk",
            k=k,
            candidates=passages,
            ordered=ordered,
            method=method,
        )
        converged = personalized_pagerank(g, r, method=method, tol=CONVERGED_TOL)
        want, got = top_order(converged, k, passages), top_order(cut.scores, k, passages)
        assert (got == want) if ordered else (set(got) == set(want))
        assert cut.certified
        # the stated bound holds on the normalised scores too (Σy >= 1, so at most 2ε over Σy)
        assert np.abs(cut.scores - converged).sum() <= 2 * cut.bound + 1e-12
        saved.append(full.iterations - cut.iterations)
    assert min(saved) >= 0 and sum(saved) > 0


def test_exact_tie_falls_back_to_the_default_solve():
    # a star: the centre seeded, its 4 leaves symmetric, so the leaves tie exactly
    adj = sp.csr_matrix(
        (np.ones(8), ([0, 0, 0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 0, 0, 0, 0])), shape=(5, 5)
    )
    g = prepare_ppr(adj)
    r = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    got = personalized_pagerank_stopped(g, r, stop="certified_topk", k=2, candidates=slice(1, None))
    assert not got.certified
    assert np.array_equal(got.scores, personalized_pagerank(g, r))


def test_directed_graph_with_power_method():
    adj = random_graph(400, 1600, seed=3)
    directed = sp.csr_matrix(sp.triu(adj))  # keep one direction of each edge
    g = prepare_ppr(directed, check_symmetric=False)
    passages = slice(0, 100)
    for r in resets(g.n, 100, 10, seed=2):
        cut = personalized_pagerank_stopped(g, r, stop="certified_topk", k=5, candidates=passages)
        converged = personalized_pagerank(g, r, tol=CONVERGED_TOL, method="power")
        assert top_order(cut.scores, 5, passages) == top_order(converged, 5, passages)


def test_rejects_bad_options(musique_mention_graph):
    g = prepare_ppr(musique_mention_graph.adj)
    r = np.ones(g.n)
    with pytest.raises(ValueError, match="stop must be one of"):
        personalized_pagerank_stopped(g, r, stop="early")
    with pytest.raises(ValueError, match="k must be >= 1"):
        personalized_pagerank_stopped(g, r, stop="certified_topk", k=0)
    with pytest.raises(ValueError, match="reset must be a 1-D"):
        personalized_pagerank_stopped(g, np.ones((g.n, 2)))


# ---- HippoRAG 2's real resets: every bundled question of the dataset ----------------------
def prepared_hipporag(dataset: str, data_dir, cache_dir):
    """HippoRAG 2 (graph=spacy, filter off) as `python -m hopbench.run` prepares it."""
    from hopbench.harness.compose import prepared_retriever

    cfg, data, retriever = prepared_retriever(
        [
            f"dataset={dataset}",
            "retriever=hipporag",
            "graph=spacy",
            "progress=false",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
            "retriever.seeding.filter=false",
        ]
    )
    return int(cfg.top_k), data, retriever


def hipporag_reset(retriever, question):
    """(reset or None, dense cosine, trace): the reset vector of the retriever's seeding."""
    return retriever.seeding.reset_vector(question)


@pytest.mark.slow
@pytest.mark.parametrize(
    "dataset",
    # 2Wiki builds its full graph, which no other test needs: `make test-heavy` runs it
    ["musique", pytest.param("2wikimultihopqa", marks=pytest.mark.heavy)],
)
def test_hipporag_topk_equals_converged_on_every_question(dataset, data_dir, cache_dir):
    """The returned passages (the retriever's rule: PPR score, then dense cosine, then index)
    are the converged solve's on every question that reaches PPR, with fewer mat-vecs."""
    from hopbench.retrieve.ranking import order_by

    k, data, hr = prepared_hipporag(dataset, data_dir, cache_dir)
    passages, solved, fewer, differ = slice(hr.E, None), 0, 0, []
    for q in data.questions:
        reset, dense, _ = hipporag_reset(hr, q)
        if reset is None:  # the dense fallback: no PPR to stop
            continue
        common = {"damping": hr.damping, "tol": hr.ppr_tol}
        cut = personalized_pagerank_stopped(
            hr.ppr, reset, stop="certified_topk", k=k, candidates=passages, **common
        )
        full = personalized_pagerank_stopped(hr.ppr, reset, **common)
        converged = personalized_pagerank(hr.ppr, reset, damping=hr.damping, tol=CONVERGED_TOL)
        got = order_by(cut.scores[passages], dense)[:k]
        if not np.array_equal(got, order_by(converged[passages], dense)[:k]):
            differ.append(q.id)
        solved += 1
        fewer += cut.iterations < full.iterations
    assert not differ, f"top-{k} differs from the converged one on {differ}"
    assert solved > 0.9 * len(data.questions)
    assert fewer > 0.5 * solved
