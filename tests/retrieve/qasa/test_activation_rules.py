"""The shared spreading-activation rules (seeds, passages, paths, top k) on hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.retrieve.kernels.topk import top_k_indices
from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa import paths as path_kernels
from hopbench.retrieve.qasa.passages import passage_activation_scores, rank_passages


def _unit(*xy):
    v = np.array(xy, dtype=float)
    return v / np.linalg.norm(v)


def test_seed_activations_exact_match_and_vector_fallback_by_hand():
    names = {"alpha": 0, "beta": 1}
    desc = np.stack([_unit(1, 0), _unit(0, 1), _unit(1, 1), _unit(-1, 0.2)])
    vecs = {"gamma": _unit(1, 0.1), "delta": _unit(-1, -0.3)}
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.stack([vecs[t] for t in texts])

    # 3 mentions -> k = max(1, 5 // 3) = 1 entity per unmatched mention
    idx, act, detail = rules.seed_activations(
        ["alpha", "gamma", "delta"], names.get, embed, desc, score="cosine", norm="mention"
    )
    assert calls == [["gamma", "delta"]]
    # alpha exact (1.0); gamma's best is entity 0 (cos 0.995) -> 1.0, already 1.0; delta's best is 3
    c = desc @ vecs["delta"]
    assert np.argmax(c) == 3 and c[3] > 0
    assert idx.tolist() == [0, 3] and act.tolist() == [1.0, 1.0]
    assert detail[0]["match"] == "exact"

    # 1 mention -> k = 5 (capped at E = 4); a = max(cos, 0) / max
    idx, act, _ = rules.seed_activations(
        ["gamma"], names.get, embed, desc, score="cosine", norm="mention"
    )
    cos = desc @ vecs["gamma"]
    top = np.argsort(-cos)[:4]
    want = {int(e): max(cos[e], 0) / cos[top].max() for e in top}
    got = dict(zip(idx.tolist(), act.tolist()))
    assert got.keys() == want.keys()
    for e in want:
        assert got[e] == pytest.approx(want[e])
    assert got[3] == 0.0  # negative cosine clamped to 0: defined, but below any threshold


def test_seed_activations_keep_max_over_mentions_and_skip_all_negative():
    desc = np.stack([_unit(1, 0), _unit(0.8, 0.6)])
    vecs = {"m1": _unit(1, 0), "m2": _unit(0, 1), "neg": _unit(-1, -1)}
    embed = lambda ts: np.stack([vecs[t] for t in ts])  # noqa: E731
    # 2 mentions -> k = 2: m1 gives e0 1.0, e1 0.8; m2 gives e1 1.0 (0.6/0.6), e0 0 -> e1 keeps 1.0
    idx, act, _ = rules.seed_activations(
        ["m1", "m2"], {}.get, embed, desc, score="cosine", norm="mention"
    )
    assert dict(zip(idx.tolist(), act.tolist())) == {0: 1.0, 1: 1.0}
    idx, act, _ = rules.seed_activations(
        ["m1", "neg"], {}.get, embed, desc, score="cosine", norm="mention"
    )
    assert dict(zip(idx.tolist(), act.tolist())) == pytest.approx({0: 1.0, 1: 0.8})
    idx, act, _ = rules.seed_activations(
        ["neg"], {}.get, embed, desc, score="cosine", norm="mention"
    )
    assert idx.size == 0 and act.size == 0


def test_authors_seed_scores_index_score_over_the_largest_seed_by_hand():
    desc = np.stack([_unit(1, 0), _unit(0.8, 0.6), _unit(-1, 0)])
    vecs = {"m1 hint": _unit(1, 0), "m2": _unit(0, 1)}
    asked = []

    def embed(ts):
        asked.append(list(ts))
        return np.stack([vecs[t] for t in ts])

    # one unmatched mention searched by its hint, k = 5 capped at 3: (1 + cos) / 2 over the best
    idx, act, detail = rules.seed_activations(["m1"], {}.get, embed, desc, hints=["m1 hint"])
    assert asked == [["m1 hint"]]
    got = dict(zip(idx.tolist(), act.tolist()))
    assert got == pytest.approx({0: 1.0, 1: 0.9, 2: 0.0})  # scores 1, 0.9, 0 over max 1
    assert detail[0]["search_hint"] == "m1 hint"
    # two mentions, k = 2: m2 scores e1 (1 + .6) / 2 = .8 and e0 .5; global max is m1's 1.0
    idx, act, _ = rules.seed_activations(["m1", "m2"], {}.get, embed, desc, hints=["m1 hint", "m2"])
    assert dict(zip(idx.tolist(), act.tolist())) == pytest.approx({0: 1.0, 1: 0.9})
    # m2 alone: its best (0.8) is the largest score, so it becomes 1.0 and e0 0.5 / 0.8
    idx, act, _ = rules.seed_activations(["m2", "x"], {"x": 2}.get, embed, desc)
    assert dict(zip(idx.tolist(), act.tolist())) == pytest.approx({2: 1.0, 1: 0.8, 0: 0.5})
    idx, act, _ = rules.seed_activations(["m2"], {}.get, embed, desc)
    assert act[0] == 1.0 and dict(zip(idx.tolist(), act.tolist()))[0] == pytest.approx(0.5 / 0.8)


# seed_activations' steps (#58)


def test_an_offer_keeps_the_largest_score_and_the_first_detail_at_a_tie():
    best, why = {}, {}
    rules._offer(best, why, 4, 0.5, {"mention": "a"})
    rules._offer(best, why, 4, 0.5, {"mention": "b"})  # a tie: a's detail stays
    rules._offer(best, why, 4, 0.25, {"mention": "c"})
    assert best == {4: 0.5} and why == {4: {"mention": "a"}}
    rules._offer(best, why, 4, 0.75, {"mention": "d"})
    assert best == {4: 0.75} and why == {4: {"mention": "d"}}


def test_vector_scores_by_seed_score_and_norm():
    raw = np.array([0.6, -0.2])
    np.testing.assert_array_equal(rules._vector_scores(raw, "index", "all"), [0.8, 0.4])
    np.testing.assert_array_equal(rules._vector_scores(raw, "cosine", "all"), [0.6, 0.0])
    np.testing.assert_array_equal(rules._vector_scores(raw, "index", "mention"), [1.0, 0.5])
    assert rules._vector_scores(np.array([-0.5, -0.1]), "cosine", "mention") is None


def test_over_the_largest_divides_by_the_largest_or_drops_all():
    best, why = rules._over_the_largest({1: 0.5, 2: 0.25}, {1: "x", 2: "y"})
    assert best == {1: 1.0, 2: 0.5} and why == {1: "x", 2: "y"}
    assert rules._over_the_largest({1: 0.0}, {1: "x"}) == ({}, {})


def test_relation_matrix_pairs_and_facts_by_hand():
    class KG:
        n_entities = 3
        fact_subject = np.array([0, 0, 1, 2, 1])
        fact_object = np.array([1, 1, 0, 2, 2])
        relation = sp.csr_matrix(np.array([[0, 3, 0], [3, 0, 1], [0, 1, 2]], dtype=float))

    pairs = rules.relation_matrix(KG, "pairs").toarray()
    # 0->1 twice and 1->0 once: two ordered pairs; 1->2 one; the self-loop 2->2 dropped
    assert pairs.tolist() == [[0, 2, 0], [2, 0, 1], [0, 1, 0]]
    assert rules.relation_matrix(KG, "facts").toarray().tolist() == [
        [0, 3, 0],
        [3, 0, 1],
        [0, 1, 0],
    ]


def test_passage_scores_and_ranking_by_hand():
    # 4 passages x 3 entities
    context = sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 1], [0, 0, 0], [1, 0, 1]], dtype=float))
    activation = np.array([0.5, 0.3, 0.2])
    activated = np.array([True, True, False])
    scores = passage_activation_scores(context, activation, activated)
    assert scores.tolist() == [0.5, 0.3, 0.0, 0.5]
    dense = np.array([0.1, 0.9, 0.8, 0.4])
    # score > 0: p0 and p3 tie at 0.5 -> dense breaks it (p3 0.4 > p0 0.1), then p1; then p2 by dense
    assert rank_passages(scores, dense).tolist() == [3, 0, 1, 2]


def test_top_paths_by_hand():
    # chain 0-1-2-3 plus 1-4; node 4 not activated; seeds 0 and 3
    edges = [(0, 1), (1, 2), (2, 3), (1, 4)]
    a = sp.lil_matrix((5, 5))
    for u, v in edges:
        a[u, v] = a[v, u] = 1
    a = a.tocsr()
    act = np.array([1.0, 0.5, 0.3, 0.9, 0.8])
    on = np.array([True, True, True, True, False])
    paths, complete = path_kernels.top_paths(a, act, on, np.array([0, 3]), top=30)
    assert complete
    got = {tuple(p): w for p, w in paths}
    # from 0: 0-1 (.75), 0-1-2 (.6), 0-1-2-3 (.675); from 3: 3-2 (.6), 3-2-1 (.5667), 3-2-1-0 is
    # the reverse of 0-1-2-3 and is dropped
    assert got == pytest.approx(
        {(0, 1): 0.75, (0, 1, 2): 0.6, (0, 1, 2, 3): 0.675, (3, 2): 0.6, (3, 2, 1): 1.7 / 3}
    )
    assert [tuple(p) for p, _ in paths][:2] == [(0, 1), (0, 1, 2, 3)]
    short, _ = path_kernels.top_paths(a, act, on, np.array([0, 3]), max_hops=1)
    assert {tuple(p) for p, _ in short} == {(0, 1), (3, 2)}
    _, complete = path_kernels.top_paths(a, act, on, np.array([0, 3]), budget=2)
    assert not complete


def test_fallback_k():
    assert [rules.fallback_k(n) for n in (1, 2, 3, 5, 6, 12)] == [5, 2, 1, 1, 1, 1]


def test_top_k_indices_equals_a_stable_full_sort():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.integers(0, 5, size=rng.integers(1, 40)).astype(float)  # many ties
        k = int(rng.integers(1, 45))
        assert top_k_indices(v, k).tolist() == np.argsort(-v, kind="stable")[:k].tolist()


def test_relationship_path_rows_count_relationships_and_sum_left_to_right_by_hand():
    # 0 = 1 joined in both directions (2 relationships), 1 - 2 one; node 3 not activated
    a = sp.csr_matrix(
        np.array([[0, 2, 0, 0], [2, 0, 1, 1], [0, 1, 0, 0], [0, 1, 0, 0]], dtype=float)
    )
    act = {0: 1.0, 1: 0.5, 2: 0.3}
    rows, complete = path_kernels.relationship_path_rows(a, act, [0])
    assert complete
    got = sorted((p, round(w, 12)) for w, p in rows)
    # 0-1 twice (two relationships), 0-1-2 twice (2 x 1); never through node 3
    assert got == [((0, 1), 0.75), ((0, 1), 0.75), ((0, 1, 2), 0.6), ((0, 1, 2), 0.6)]
    _, complete = path_kernels.relationship_path_rows(a, act, [0], budget=1)
    assert not complete


def test_dedupe_path_rows_drops_reverses_and_prefixes_as_the_authors():
    rows = [
        (["a", "b", "c"], 0.9),
        (["c", "b", "a"], 0.9),
        (["a", "b"], 0.8),
        (["b", "c"], 0.7),
        (["c", "b"], 0.6),
        (["d", "a"], 0.5),
    ]
    # a-b-c kept; its reverse dropped; a-b is a prefix of a-b-c; b-c is not (it is inside, not at
    # an end); c-b is the reverse of b-c; d-a stays
    assert path_kernels.dedupe_path_rows(rows) == [
        (["a", "b", "c"], 0.9),
        (["b", "c"], 0.7),
        (["d", "a"], 0.5),
    ]
