"""Per-question scoring and run aggregation."""

import pytest

from hopbench.data.schema import Question
from hopbench.evaluate.score import aggregate, score_question


def _q(**kw):
    base = dict(id="q", text="?", answers=["Paris"], gold_passage_ids=["a", "b"])
    base.update(kw)
    return Question(**base)


def test_retrieval_only_has_no_answer_keys():
    m = score_question(_q(), ["a", "x", "b"], None)
    assert m["recall@2"] == 0.5 and m["recall@5"] == 1.0 and m["fcr@2"] == 0.0 and m["fcr@5"] == 1.0
    assert "em" not in m and "jsr@5" not in m


def test_jsr_needs_full_chain_and_exact_answer():
    assert score_question(_q(), ["a", "b"], "Paris")["jsr@5"] == 1.0
    assert score_question(_q(), ["a", "x"], "Paris")["jsr@5"] == 0.0
    m = score_question(_q(), ["a", "b"], "It is Paris.")
    assert m["jsr@5"] == 0.0 and m["jsr_contain@5"] == 1.0


def test_unmapped_gold_is_excluded_from_retrieval_but_scored_for_answers():
    m = score_question(_q(gold_complete=False), ["a", "b"], "Paris")
    assert "recall@5" not in m and "jsr@5" not in m and m["em"] == 1.0


def test_claims_score_label_accuracy():
    q = _q(kind="claim", label="SUPPORTED", answers=["SUPPORTED"])
    assert score_question(q, ["a", "b"], "SUPPORTED")["accuracy"] == 1.0
    assert "em" not in score_question(q, ["a", "b"], "SUPPORTED")


def test_claim_jsr_is_full_chain_and_right_label():
    q = _q(kind="claim", label="NOT_SUPPORTED", answers=["NOT_SUPPORTED"])
    assert score_question(q, ["a", "b"], "NOT_SUPPORTED")["jsr@5"] == 1.0
    assert score_question(q, ["a", "b"], "SUPPORTED")["jsr@5"] == 0.0
    assert score_question(q, ["a", "x"], "NOT_SUPPORTED")["jsr@5"] == 0.0
    assert "jsr@5" not in score_question(
        _q(kind="claim", label="SUPPORTED", gold_complete=False), ["a", "b"], "SUPPORTED"
    )


def test_aggregate_means_over_scored_questions_and_latency_percentiles():
    rows = [
        {"metrics": score_question(_q(), ["a", "b"], None), "latency_ms": 1.0},
        {"metrics": score_question(_q(), ["x", "y"], None), "latency_ms": 3.0},
        {"metrics": score_question(_q(gold_complete=False), ["x"], None), "latency_ms": 5.0},
    ]
    agg = aggregate(rows)
    assert agg["n_questions"] == 3 and agg["n_retrieval_scored"] == 2
    assert agg["recall@2"] == 0.5 and agg["fcr@5"] == 0.5
    assert agg["em"] is None and agg["f1"] is None and agg["jsr@5"] is None
    assert agg["latency_ms_mean"] == pytest.approx(3.0) and agg["latency_ms_p50"] == 3.0
    assert agg["latency_ms_p95"] == pytest.approx(4.8)
