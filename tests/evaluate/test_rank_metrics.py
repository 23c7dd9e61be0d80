"""MRR@10 and nDCG@10 (binary relevance over the gold passages): hand-worked cases, a direct
formula on random rankings, and scikit-learn's ndcg_score as an independent reference."""

import math
import random

import numpy as np
import pytest

from hopbench.data.schema import Question
from hopbench.evaluate.metrics import mrr_at_k, ndcg_at_k
from hopbench.evaluate.score import score_question


def test_mrr_by_hand():
    assert mrr_at_k(["g1", "x", "g2"], ["g1", "g2"], 10) == 1.0
    assert mrr_at_k(["x", "y", "g2", "g1"], ["g1", "g2"], 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x"] * 10 + ["g1"], ["g1"], 10) == 0.0  # rank 11 is outside the top 10
    assert mrr_at_k([f"x{i}" for i in range(9)] + ["g1"], ["g1"], 10) == pytest.approx(0.1)
    assert mrr_at_k([], ["g1"], 10) == 0.0


def test_ndcg_by_hand():
    # gold at ranks 2 and 4 of two gold passages: DCG = 1/log2(3) + 1/log2(5), IDCG = 1 + 1/log2(3)
    got = ndcg_at_k(["x", "g1", "y", "g2"], ["g1", "g2"], 10)
    assert got == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert got == pytest.approx(0.6509, abs=1e-4)
    assert ndcg_at_k(["g2", "g1", "x"], ["g1", "g2"], 10) == pytest.approx(
        1.0
    )  # order among gold is free
    # 12 gold passages, all of the top 10 gold: the ideal holds only 10 of them
    gold = [f"g{i}" for i in range(12)]
    assert ndcg_at_k(gold, gold, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], ["g1"], 10) == 0.0
    assert ndcg_at_k(["g1", "g1", "x"], ["g1", "g2"], 10) == pytest.approx(
        1 / (1 + 1 / math.log2(3))
    )  # a repeat counts once


def _random_case(rng: random.Random):
    corpus = [f"p{i}" for i in range(30)]
    gold = rng.sample(corpus, rng.randint(1, 6))
    ranked = rng.sample(corpus, rng.randint(0, 15))
    return ranked, gold


def test_mrr_and_ndcg_match_the_direct_formula_on_random_cases():
    rng = random.Random(0)
    for _ in range(500):
        ranked, gold = _random_case(rng)
        rel = [1.0 if p in gold else 0.0 for p in ranked[:10]]
        first = next((i + 1 for i, r in enumerate(rel) if r), None)
        assert mrr_at_k(ranked, gold, 10) == pytest.approx(0.0 if first is None else 1 / first)
        dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rel))
        idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
        assert ndcg_at_k(ranked, gold, 10) == pytest.approx(dcg / idcg)


def test_ndcg_matches_scikit_learn():
    ndcg_score = pytest.importorskip("sklearn.metrics").ndcg_score
    rng = random.Random(1)
    for _ in range(300):
        ranked, gold = _random_case(rng)
        missing = [g for g in gold if g not in ranked]
        # every item sklearn sees, with strictly decreasing scores in ranked order; ten fillers
        # between the ranking and the gold it missed keep those out of sklearn's top 10
        items = ranked + [f"filler{i}" for i in range(10)] + missing
        y_true = np.array([[1.0 if p in gold else 0.0 for p in items]])
        y_score = np.array([[float(len(items) - i) for i in range(len(items))]])
        assert ndcg_at_k(ranked, gold, 10) == pytest.approx(ndcg_score(y_true, y_score, k=10))


def test_scoring_names_them_for_questions_with_complete_gold_only():
    q = Question(id="q", text="?", answers=["Paris"], gold_passage_ids=["a", "b"])
    m = score_question(q, ["x", "a", "b"], None)
    assert m["mrr@10"] == 0.5
    assert m["ndcg@10"] == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    )
    unmapped = Question(
        id="q", text="?", answers=["Paris"], gold_passage_ids=["a"], gold_complete=False
    )
    assert "mrr@10" not in score_question(unmapped, ["a"], "Paris")
