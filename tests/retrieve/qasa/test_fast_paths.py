"""The fast pieces of spreading-activation retrieval give what the plain versions give: the
pruned path search equals a full enumeration, passage scoring from the activated entities
equals the P x E product, the top-k ranking equals the full ranking, and the lazy gate gives
the kernel the same activations as the full gate, on the real MuSiQue sub-corpus graph."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.retrieve.kernels._csr import as_csr
from hopbench.retrieve.qasa import paths as path_kernels
from hopbench.retrieve.qasa.passages import (
    entity_passages,
    passage_activation_scores,
    passage_scores_from_entities,
    rank_passages,
    top_passages,
)
from hopbench.retrieve.qasa.spread import (
    UPPER_SLACK,
    Int8Rows,
    LazyGate,
    semantic_gate,
    spreading_activation,
    unit_rows,
)
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from tests.retrieve.qasa import sa_oracle


def enumerate_top_paths(adj, activation, activated, seeds, max_hops=4, top=30):
    """Rule 5 by plain enumeration (the oracle's, with no budget)."""
    return sa_oracle.enumerate_top_paths(
        adj, activation, activated, seeds, max_hops=max_hops, top=top, budget=10**12
    )[0]


def _runs(kg, services, questions, gate):
    r = SpreadingActivationRetriever(gate=gate, top_paths=0)
    r.prepare(kg, services)
    for q in questions:
        _, idx, act, _ = r.seeds(q)
        res = spreading_activation(
            r.adjacency, idx, act, r.gate_vector(services.query_embedding(q))
        )
        yield r, q, idx, res


@pytest.mark.parametrize("gate", [True, False], ids=["gate", "nogate"])
def test_pruned_path_search_equals_full_enumeration_on_real_graph(
    musique_kg, services, musique_sub, gate
):
    n_paths = 0
    for r, q, idx, res in _runs(musique_kg, services, musique_sub.questions, gate):
        for top, hops in ((30, 4), (5, 2), (3, 4)):
            got, complete = path_kernels.top_paths(
                r.adjacency, res.activation, res.activated, idx, max_hops=hops, top=top
            )
            assert complete
            assert got == enumerate_top_paths(
                r.adjacency, res.activation, res.activated, idx, hops, top
            ), q.id
            n_paths += len(got)
    assert n_paths > 50  # not vacuous (84 paths when written)


def test_pruned_path_search_on_hub_graph_with_ties():
    """Random graph with hubs and repeated activation values (ties by node sequence)."""
    rng = np.random.default_rng(7)
    n = 60
    rows = np.concatenate([rng.integers(0, n, 150), np.zeros(40, int), np.ones(30, int)])
    cols = np.concatenate([rng.integers(0, n, 150), rng.integers(0, n, 40), rng.integers(0, n, 30)])
    a = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n)).tocsr()
    a = as_csr(a + a.T)
    for trial in range(20):
        act = rng.choice([0.05, 0.2, 0.5, 1.0], size=n)
        on = rng.random(n) < 0.8
        seeds = rng.choice(n, 3, replace=False)
        got, complete = path_kernels.top_paths(a, act, on, seeds, top=10)
        assert complete and got == enumerate_top_paths(a, act, on, seeds, top=10), trial
    _, complete = path_kernels.top_paths(a, act, on, seeds, top=10, budget=5)
    assert not complete


def test_walk_reach_is_the_best_walk_sum_by_brute_force():
    rng = np.random.default_rng(3)
    n = 9
    a = sp.random(n, n, density=0.3, random_state=4, format="csr")
    a = as_csr((a + a.T).astype(bool).astype(float))
    act = rng.random(n)
    on = rng.random(n) < 0.75
    reach = path_kernels.walk_reach(a, act, on, 3)
    nbrs = {
        v: [int(u) for u in a.indices[a.indptr[v] : a.indptr[v + 1]] if on[u] and u != v]
        for v in range(n)
    }
    for v in np.flatnonzero(on):
        for m in range(4):
            best = 0.0
            for walk in itertools.product(range(n), repeat=m):
                prev, ok = v, True
                for u in walk:
                    ok = ok and u in nbrs[prev]
                    prev = u
                if ok:
                    best = max(best, float(sum(act[list(walk)])))
            assert reach[m, v] == pytest.approx(best, abs=1e-12), (v, m)


def test_passage_scores_from_entities_equal_the_product(musique_kg, services, musique_sub):
    ent_passages = entity_passages(musique_kg.context)
    for gate in (True, False):
        for r, _q, _, res in _runs(musique_kg, services, musique_sub.questions, gate):
            want = passage_activation_scores(r.context, res.activation, res.activated)
            got = passage_scores_from_entities(ent_passages, res.activation, res.activated)
            assert got.tolist() == want.tolist()  # same floats: same summation order


def test_top_passages_equal_the_full_ranking():
    rng = np.random.default_rng(11)
    for trial in range(200):
        n = int(rng.integers(1, 40))
        scores = rng.choice([0.0, 0.0, 0.3, 0.5, 1.2], size=n)  # ties and unscored passages
        dense = rng.choice([0.1, 0.2, 0.7], size=n)
        k = int(rng.integers(1, n + 3))
        asked = []

        def dense_of(rows, dense=dense, asked=asked):
            asked.append(rows)
            return dense if rows is None else dense[rows]

        top, full = top_passages(scores, dense_of, k)
        assert top.tolist() == rank_passages(scores, dense)[:k].tolist(), trial
        assert (full is None) == ((scores > 0).sum() >= k)


def test_lazy_gate_gives_the_full_gate_activations_on_real_graph(musique_kg, services, musique_sub):
    kg = musique_kg
    adj = as_csr(kg.relation)
    unit = unit_rows(kg.description_embeddings)
    r = SpreadingActivationRetriever(top_paths=0)
    r.prepare(kg, services)
    n_spread = 0
    for q in musique_sub.questions:
        q_emb = services.query_embedding(q)
        _, idx, act, _ = r.seeds(q)
        for depth, threshold in ((3, 0.01), (4, 0.001), (2, 0.0)):
            full = spreading_activation(
                adj,
                idx,
                act,
                semantic_gate(kg.description_embeddings, q_emb),
                steps=depth,
                threshold=threshold,
            )
            for lazy in (LazyGate(unit, q_emb), LazyGate(unit, q_emb, Int8Rows(unit))):
                got = spreading_activation(adj, idx, act, lazy, steps=depth, threshold=threshold)
                assert np.array_equal(got.activated, full.activated), q.id
                assert np.array_equal(got.first_step, full.first_step), q.id
                np.testing.assert_allclose(got.activation, full.activation, rtol=1e-13, atol=0)
            n_spread += int(full.activated.sum()) - idx.size
    assert n_spread >= 50  # nodes reached beyond the seeds, all settings and questions


def test_lazy_gate_values_and_bound():
    rng = np.random.default_rng(5)
    e = rng.standard_normal((50, 16))
    e[3] = 0.0
    q = rng.standard_normal(16)
    g = LazyGate(unit_rows(e), q, Int8Rows(unit_rows(e)))
    nodes = np.arange(50)
    np.testing.assert_allclose(g.take(nodes), semantic_gate(e, q), atol=1e-14)
    assert (g.upper(nodes) >= g.take(nodes)).all()
    assert g.upper(nodes).max() <= semantic_gate(e, q).max() + 0.05  # a bound, but a useful one
    assert g.take(np.array([3]))[0] == 0.0


def test_int8_rows_bound_the_float64_cosine(musique_kg, services, musique_sub):
    """Int8Rows.upper + UPPER_SLACK >= the exact cosine for every row and question, and is
    close to it (the bound is only useful if few extra nodes reach the exact gate)."""
    unit = unit_rows(musique_kg.description_embeddings)
    rng = np.random.default_rng(3)
    spiky = unit_rows(rng.standard_normal((40, unit.shape[1])) ** 9)  # one huge component per row
    for rows in (unit, spiky, np.vstack([unit, -unit])):
        q8 = Int8Rows(rows)
        everything = np.arange(rows.shape[0])
        for q in musique_sub.questions:
            qv = np.asarray(services.query_embedding(q), dtype=np.float64)
            qv = qv / np.linalg.norm(qv)
            exact = rows @ qv
            ub = q8.upper(everything, qv.astype(np.float32))
            assert (ub + UPPER_SLACK >= exact).all(), q.id
            assert (ub - exact).max() <= 2 * q8.err.max() + 1e-4
