"""The metric declarations: what each view shows (pinned, since leaderboard.md and its Holm family
depend on it), which questions a metric applies to, and the checks on a declaration."""

import pytest

from hopbench.evaluate import metric_registry as reg
from hopbench.evaluate.metric_registry import (
    BINARY,
    CONTINUOUS,
    RETRIEVAL,
    Metric,
    Outcome,
    backfilled,
    register,
)


def test_the_declared_metrics_and_where_they_are_shown():
    assert reg.names() == [
        "recall@1",
        "recall@2",
        "recall@5",
        "recall@10",
        "fcr@2",
        "fcr@5",
        "fcr@10",
        "mrr@10",
        "ndcg@10",
        "recall@512t",
        "recall@1024t",
        "recall@2048t",
        "em",
        "f1",
        "contain_acc",
        "jsr@5",
        "jsr_contain@5",
        "accuracy",
    ]
    assert reg.shown_in(reg.LEADERBOARD) == [
        "recall@2",
        "recall@5",
        "recall@10",
        "fcr@5",
        "em",
        "f1",
        "jsr@5",
        "jsr_contain@5",
        "accuracy",
    ]
    assert [reg.get(m).header for m in reg.shown_in(reg.LEADERBOARD)] == [
        "R@2",
        "R@5",
        "R@10",
        "FCR@5",
        "EM",
        "F1",
        "JSR@5",
        "JSRc@5",
        "Acc",
    ]
    assert reg.shown_in(reg.BREAKDOWN) == [
        "recall@5",
        "fcr@5",
        "mrr@10",
        "ndcg@10",
        "em",
        "f1",
        "accuracy",
    ]
    assert reg.shown_in(reg.FIGURES) == ["recall@5", "f1", "accuracy"]
    assert reg.shown_in(reg.SUMMARY) == ["recall@2", "recall@5", "fcr@5", "em", "f1"]
    assert reg.family_ks("recall") == [1, 2, 5, 10]
    assert reg.family_ks("recall_tokens") == [512, 1024, 2048]
    assert reg.paper_columns() == [
        "recall@2",
        "recall@5",
        "recall@1024t",
        "recall@10",
        "fcr@5",
        "em",
        "f1",
        "contain_acc",
        "jsr@5",
        "jsr_contain@5",
        "accuracy",
    ]
    continuous = {m.name for m in reg.declared() if m.kind == CONTINUOUS}
    assert continuous == {
        "recall@1",
        "recall@2",
        "recall@5",
        "recall@10",
        "mrr@10",
        "ndcg@10",
        "recall@512t",
        "recall@1024t",
        "recall@2048t",
        "f1",
    }
    assert {m.name for m in reg.declared() if not m.legacy} == {
        "mrr@10",
        "ndcg@10",
        "recall@512t",
        "recall@1024t",
        "recall@2048t",
        "contain_acc",
    }


def _o(**kw):
    base = dict(
        ranked=["a", "b"],
        gold_passages=["a", "b"],
        gold_complete=True,
        answer=None,
        gold_answers=["Paris"],
    )
    return Outcome(**{**base, **kw})


def test_needs_decide_which_metrics_a_question_gets():
    assert set(reg.score(_o())) == {
        "recall@1",
        "recall@2",
        "recall@5",
        "recall@10",
        "fcr@2",
        "fcr@5",
        "fcr@10",
        "mrr@10",
        "ndcg@10",
    }
    qa = reg.score(_o(answer="Paris", gold_complete=False))
    assert set(qa) == {"em", "f1", "contain_acc"}
    budgeted = reg.score(_o(passage_tokens={"a": 600, "b": 400}))
    assert budgeted["recall@512t"] == 0.0  # a passage that does not fit whole is not shown
    assert budgeted["recall@1024t"] == budgeted["recall@2048t"] == 1.0
    assert reg.retrieval_scored(budgeted) and "recall@1024t" not in reg.score(_o())
    # a method's notes in the reader's context are paid first: 500 + 600 > 1024
    noted = reg.score(_o(passage_tokens={"a": 600, "b": 400}, notes_tokens=500))
    assert noted["recall@1024t"] == 0.0 and noted["recall@2048t"] == 1.0
    claim = reg.score(_o(answer="SUPPORTED", kind="claim", label="SUPPORTED"))
    assert (
        claim["accuracy"] == claim["jsr@5"] == claim["jsr_contain@5"] == 1.0 and "em" not in claim
    )
    assert "accuracy" not in reg.score(_o(answer="SUPPORTED", kind="claim", label=None))
    assert "contain_acc" not in claim  # a claim's label is not an answer: Accuracy scores it
    assert reg.retrieval_scored(reg.score(_o())) and not reg.answer_scored(reg.score(_o()))
    assert reg.answer_scored(claim) and not reg.retrieval_scored(qa)


def test_a_row_gets_only_the_new_metrics_it_lacks():
    row = {
        "ranked_passage_ids": ["x", "a"],
        "gold_passage_ids": ["a"],
        "gold_complete": True,
        "answer": "Paris",
        "gold_answers": ["Paris"],
        "kind": "qa",
        "metrics": {"recall@1": 0.25},
    }
    got = backfilled(row)
    assert got["recall@1"] == 0.25 and got["mrr@10"] == 0.5 and "ndcg@10" in got
    assert "em" not in got and "recall@2" not in got  # legacy metrics: only what the run wrote
    assert "mrr@10" not in backfilled({**row, "gold_complete": False})


def test_declarations_are_checked():
    with pytest.raises(ValueError, match="kind"):
        Metric("x", lambda o: 0.0, kind="ordinal", needs=(RETRIEVAL,), label="X")
    with pytest.raises(ValueError, match="needs"):
        Metric("x", lambda o: 0.0, kind=BINARY, needs=("gold",), label="X")
    with pytest.raises(ValueError, match="show"):
        Metric("x", lambda o: 0.0, kind=BINARY, needs=(RETRIEVAL,), label="X", show=("paper",))
    with pytest.raises(ValueError, match="declared twice"):
        register(Metric("em", lambda o: 0.0, kind=BINARY, needs=(RETRIEVAL,), label="EM"))
    assert reg.get("em").label == "EM"  # the first declaration stands
