"""Spreading activation kernel against a per-node reference loop and a hand-worked example."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.retrieve.qasa.spread import (
    TIE_FACTOR,
    LazyGate,
    _checked_gates,
    _merge_step,
    _seeded,
    _step_input,
    semantic_gate,
    spreading_activation,
    spreading_activation_batch,
)


def reference_qasa(relationships, seeds: dict[int, float], gate, decay, steps, threshold):
    """Plain transcription of the reference Cypher: a dict `resource_map`, one row per
    relationship matched in either direction, deltas from the old map merged after the step;
    "less active" with the kernel's tie factor (values within 1e-12 relative are a tie)."""
    rows_by_node = defaultdict(list)  # one entry per relationship row matched from that node
    for x, y in relationships:
        rows_by_node[x].append(y)
        if x != y:
            rows_by_node[y].append(x)
    resource = dict(seeds)
    for _ in range(steps):
        incoming = defaultdict(float)
        for src, src_res in resource.items():
            if not src_res > threshold:
                continue
            for dst in rows_by_node[src]:
                if dst in resource and not resource[dst] < src_res * TIE_FACTOR:
                    continue
                g = 1.0 if gate is None else gate[dst]
                incoming[dst] += src_res * decay * max(g, 0.0)
        deltas = {v: i for v, i in incoming.items() if i > threshold}
        for v, i in deltas.items():
            resource[v] = resource.get(v, 0.0) + i
    return resource


def counts_matrix(relationships, n) -> sp.csr_matrix:
    r = np.array(relationships)
    m = sp.coo_matrix((np.ones(len(r)), (r[:, 0], r[:, 1])), shape=(n, n)).tocsr()
    return (m + m.T).tocsr()  # undirected relationship counts


def random_case(rng, n=60, n_rel=180):
    rels = [tuple(rng.integers(0, n, 2)) for _ in range(n_rel)]
    rels += rels[:10]  # parallel relationships count twice, as Cypher rows do
    rels += [(v, u) for u, v in rels[10:20]]  # and so do reverse-direction ones
    rels += [(3, 3)]  # a self-loop never passes a_v < a_u
    seeds_idx = rng.choice(n, size=4, replace=False)
    # dyadic activations and decays keep every sum exact, so exact ties (frequent without
    # the gate) compare the same whatever the summation order
    seed_act = np.array([1.0, *rng.integers(1, 8, 2) / 8, rng.choice([0.0, 0.005])])
    gate = np.maximum(0, rng.normal(0.4, 0.3, n))
    gate[rng.choice(n, 5, replace=False)] = 0.0  # entities without description embedding
    return rels, seeds_idx, seed_act, gate


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gated", [True, False])
def test_equals_reference_loop_on_random_graphs(seed, gated):
    rng = np.random.default_rng(seed)
    n = 60
    rels, seeds_idx, seed_act, gate = random_case(rng, n)
    adj = counts_matrix(rels, n)
    for decay, steps, threshold in [(0.75, 3, 0.01), (0.5, 4, 0.05), (1.0, 2, 0.0)]:
        ref = reference_qasa(
            rels,
            dict(zip(seeds_idx.tolist(), seed_act)),
            gate if gated else None,
            decay,
            steps,
            threshold,
        )
        res = spreading_activation(
            adj,
            seeds_idx,
            seed_act,
            gate if gated else None,
            decay=decay,
            steps=steps,
            threshold=threshold,
        )
        assert set(np.flatnonzero(res.activated)) == set(ref)
        for v, a in ref.items():
            assert res.activation[v] == pytest.approx(a, rel=1e-12, abs=1e-15)
        assert np.all(res.activation[~res.activated] == 0)


def test_hand_worked_five_node_example():
    # A=0, B=1, C=2, D=3, E=4; edges A-B, A-C, B-C, C-D, D-E; seed A = 1.0
    # delta = 0.5, theta = 0.1, gates A .9, B .8, C .5, D 1.0, E .1, T = 3
    adj = counts_matrix([(0, 1), (0, 2), (1, 2), (2, 3), (3, 4)], 5)
    gate = np.array([0.9, 0.8, 0.5, 1.0, 0.1])
    # step 1: sources {A}. B (undefined) gets .5*.8*1.0 = .4; C gets .5*.5*1.0 = .25
    # step 2: sources A 1, B .4, C .25.  B <- A only (A not < .4; C .25 not > B .4):
    #         I_B = .5*.8*1.0 = .4 -> B = .8.  C <- A and B: I_C = .5*.5*(1.0+.4) = .35 -> .6.
    #         D (undefined) <- C: I_D = .5*1.0*.25 = .125 > .1 -> D = .125.  A gets nothing.
    # step 3: sources A 1, B .8, C .6, D .125.  I_B = .5*.8*1.0 = .4 -> 1.2;
    #         I_C = .5*.5*(1.0+.8) = .45 -> 1.05; I_D = .5*1.0*.6 = .3 -> .425;
    #         E <- D: I_E = .5*.1*.125 = .00625 <= .1, so E stays undefined.
    res = spreading_activation(adj, [0], [1.0], gate, decay=0.5, steps=3, threshold=0.1)
    np.testing.assert_allclose(res.activation, [1.0, 1.2, 1.05, 0.425, 0.0], rtol=1e-12)
    assert res.activated.tolist() == [True, True, True, True, False]
    assert res.first_step.tolist() == [0, 1, 1, 2, -1]
    # ungated, same graph:
    # step 1: B = C = .5.  step 2: B <- A (C .5 is not > B .5): B = 1.0; C likewise 1.0;
    #         D <- C: .25.  step 3: A, B, C are all 1.0, so none feeds another (not <);
    #         D <- C: .5*1.0 -> .75; E <- D: .5*.25 = .125 > .1 -> E = .125.
    res = spreading_activation(adj, [0], [1.0], None, decay=0.5, steps=3, threshold=0.1)
    np.testing.assert_allclose(res.activation, [1.0, 1.0, 1.0, 0.75, 0.125], rtol=1e-12)
    assert res.first_step.tolist() == [0, 1, 1, 2, 3]


def test_defined_at_zero_is_activated_but_cannot_spread():
    adj = counts_matrix([(0, 1), (1, 2)], 4)
    res = spreading_activation(adj, [0, 3], [0.0, 1.0], None, decay=0.7, steps=3, threshold=0.01)
    assert res.activated.tolist() == [True, False, False, True]
    assert res.activation.tolist() == [0.0, 0.0, 0.0, 1.0]


def test_batch_equals_single_questions():
    rng = np.random.default_rng(42)
    n = 200
    rels = [tuple(rng.integers(0, n, 2)) for _ in range(700)]
    adj = counts_matrix(rels, n)
    cases = [random_case(rng, n)[1:] for _ in range(8)]
    gates = np.stack([c[2] for c in cases], axis=1)
    seeds = [(c[0], c[1]) for c in cases]
    batch = spreading_activation_batch(adj, seeds, gates, decay=0.7, steps=3, threshold=0.01)
    for j, (idx, act, gate) in enumerate(cases):
        one = spreading_activation(adj, idx, act, gate, decay=0.7, steps=3, threshold=0.01)
        np.testing.assert_array_equal(batch.activation[:, j], one.activation)
        np.testing.assert_array_equal(batch.activated[:, j], one.activated)
        np.testing.assert_array_equal(batch.first_step[:, j], one.first_step)


def test_semantic_gate_is_clipped_cosine():
    rng = np.random.default_rng(0)
    e = rng.normal(size=(6, 4))
    e[2] = 0.0
    q = rng.normal(size=4)
    cos = (e @ q) / (np.linalg.norm(e, axis=1) + 1e-300) / np.linalg.norm(q)
    np.testing.assert_allclose(semantic_gate(e, q), np.maximum(cos, 0), atol=1e-12)
    qs = rng.normal(size=(3, 4))
    np.testing.assert_allclose(semantic_gate(e, qs)[:, 1], semantic_gate(e, qs[1]), atol=1e-12)
    assert semantic_gate(e, q)[2] == 0


def test_rejects_bad_input():
    adj = counts_matrix([(0, 1)], 3)
    with pytest.raises(ValueError, match="repeat"):
        spreading_activation(adj, [0, 0], [1.0, 0.5])
    with pytest.raises(ValueError, match="out of range"):
        spreading_activation(adj, [5], [1.0])
    with pytest.raises(ValueError, match="gates must have shape"):
        spreading_activation_batch(adj, [([0], [1.0])], np.ones((2, 1)))


def test_equals_reference_loop_on_real_mention_graph(musique_mention_graph):
    rng = np.random.default_rng(9)
    upper = sp.triu(musique_mention_graph.adj, k=1).tocoo()
    rels = list(zip(upper.row.tolist(), upper.col.tolist()))
    n = musique_mention_graph.adj.shape[0]
    adj = counts_matrix(rels, n)
    hubs = np.argsort(-np.diff(adj.indptr))[:300]
    for _ in range(3):
        seeds = rng.choice(hubs, 3, replace=False)
        act = np.array([1.0, 0.8, 0.55])
        gate = np.maximum(0.0, rng.normal(0.3, 0.25, n))
        ref = reference_qasa(rels, dict(zip(seeds.tolist(), act)), gate, 0.7, 3, 0.01)
        res = spreading_activation(adj, seeds, act, gate)
        assert len(ref) > 50
        assert set(np.flatnonzero(res.activated).tolist()) == set(ref)
        got = res.activation[list(ref)]
        np.testing.assert_allclose(got, list(ref.values()), rtol=1e-12)


def test_values_one_ulp_apart_are_a_tie():
    """Issue #27: two nodes equal in exact arithmetic whose float sums differ in the last bit
    must not feed each other (a plain `<` let rounding add 0.4038 to "montana" on MuSiQue)."""
    a = 0.5769075340003951
    b = np.nextafter(a, 1.0)  # one ulp above: the same value, summed along another route
    adj = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    res = spreading_activation(
        adj, np.array([0, 1]), np.array([a, b]), None, decay=0.7, steps=1, threshold=0.01
    )
    np.testing.assert_array_equal(res.activation, [a, b])  # exactly unchanged: no flow either way
    clear = 2 * a  # a real difference still flows
    res = spreading_activation(
        adj, np.array([0, 1]), np.array([a, clear]), None, decay=0.7, steps=1, threshold=0.01
    )
    np.testing.assert_allclose(res.activation, [a + 0.7 * clear, clear], rtol=1e-15)


# spreading_activation_batch's steps (#58)


def test_gates_are_checked_against_the_questions():
    gate = LazyGate(np.eye(3), np.ones(3))
    assert _checked_gates(gate, 3, 1) == [gate]  # one LazyGate: one question
    assert _checked_gates(None, 3, 2) is None
    assert _checked_gates(np.ones((3, 2), dtype=np.float32), 3, 2).dtype == np.float64
    with pytest.raises(ValueError, match="one LazyGate per question: 1 for 2"):
        _checked_gates([gate], 3, 2)


def test_seeds_are_defined_at_step_zero_and_nothing_else_is():
    act, defined, first = _seeded([([2, 0], [0.5, 1.0]), ([], [])], 3)
    np.testing.assert_array_equal(act, [[1.0, 0.0], [0.0, 0.0], [0.5, 0.0]])
    np.testing.assert_array_equal(defined, act > 0)
    np.testing.assert_array_equal(first, [[0, -1], [-1, -1], [0, -1]])
    with pytest.raises(ValueError, match="question 0: 2 seeds but 1 activations"):
        _seeded([([0, 1], [1.0])], 3)


def test_step_input_is_the_same_floats_whichever_aggregation_runs():
    rels, seeds_idx, seed_act, _ = random_case(np.random.default_rng(4), n=40, n_rel=200)
    small = counts_matrix(rels, 40)  # most keys touched: the bincount over all n*b
    big = counts_matrix(rels, 4000)  # the same edges among 4000 nodes: np.unique over the few
    out = []
    for adj in (small, big):
        act, defined, _ = _seeded([(seeds_idx, seed_act)], adj.shape[0])
        src = np.flatnonzero(act.reshape(-1) > 0.01)
        out.append(_step_input(adj, src, act.reshape(-1), defined.reshape(-1), 1))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1].tobytes() == out[1][1].tobytes()
    # >= 5 edge terms (8 * 5 >= 40 nodes) and < 500 (all of A: 8 * 500 = 4000): one of each
    assert out[0][0].size >= 5 and counts_matrix(rels, 40).nnz < 500


def test_merge_adds_to_defined_nodes_and_dates_the_new_ones():
    act, defined, first = (
        np.array([0.5, 0.0, 0.0]),
        np.array([True, False, True]),
        np.array([0, -1, 0]),
    )
    fresh = _merge_step(act, defined, first, np.array([0, 1]), np.array([0.25, 0.125]), 2)
    np.testing.assert_array_equal(fresh, [1])
    np.testing.assert_array_equal(act, [0.75, 0.125, 0.0])
    np.testing.assert_array_equal(defined, [True, True, True])
    np.testing.assert_array_equal(first, [0, 2, 0])
