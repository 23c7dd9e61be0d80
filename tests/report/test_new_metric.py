"""Adding a metric takes one declaration (CONTRIBUTING.md, "Adding a metric"): two toy metrics
declared through the registry reach scoring, the run's metrics.json, the paired test of their
kind, the leaderboard's columns and markdown, the breakdown and the figures' metric list, for
runs written after the declaration and, computed from their rows, for runs written before it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hopbench.commands.report import main as cli
from hopbench.data.schema import Question
from hopbench.evaluate import metric_registry
from hopbench.evaluate.metric_registry import (
    BINARY,
    BREAKDOWN,
    CONTINUOUS,
    FIGURES,
    LEADERBOARD,
    RETRIEVAL,
    Metric,
    register,
)
from hopbench.evaluate.score import score_question
from hopbench.report.leaderboard import stable_seed
from hopbench.report.plots import quality_metrics
from hopbench.report.stats import mcnemar_exact_p, paired_bootstrap_p, paired_test_for

from .conftest import DENSE, QUESTIONS, SPREAD

RESAMPLES = 2_000


def precision_at_3(o) -> float:
    """Share of the top 3 that is gold (a toy: continuous)."""
    return len(set(o.ranked[:3]) & set(o.gold_passages)) / 3


def first_is_gold(o) -> float:
    """The top passage is gold (a toy: binary)."""
    return float(bool(o.ranked) and o.ranked[0] in o.gold_passages)


TOYS = [
    Metric(
        "precision@3",
        precision_at_3,
        kind=CONTINUOUS,
        needs=(RETRIEVAL,),
        label="Precision@3",
        short="P@3",
        show=(LEADERBOARD, BREAKDOWN, FIGURES),
    ),
    Metric("first_gold", first_is_gold, kind=BINARY, needs=(RETRIEVAL,), label="Top-1 gold"),
]


@pytest.fixture
def declared(monkeypatch):
    """The toy metrics declared for this test only (the registry is restored afterwards)."""
    monkeypatch.setattr(metric_registry, "_METRICS", dict(metric_registry._METRICS))
    register(*TOYS)


def _per_question(table, fn):
    out = []
    for qid, _, gold, answers in QUESTIONS:
        o = metric_registry.Outcome(table[qid][0], gold, True, table[qid][1], answers)
        out.append(fn(o))
    return out


def test_a_declared_metric_is_scored_and_tested_by_its_kind(declared):
    q = Question(id="q", text="?", answers=["Paris"], gold_passage_ids=["a", "b"])
    m = score_question(q, ["a", "x", "b"], None)
    assert m["precision@3"] == pytest.approx(2 / 3) and m["first_gold"] == 1.0
    assert "first_gold" not in score_question(Question(id="q", text="?", answers=["P"]), ["a"], "P")
    assert paired_test_for("precision@3") == "paired_bootstrap"
    assert paired_test_for("first_gold") == "mcnemar"
    assert "precision@3" in quality_metrics()


def test_a_declared_metric_reaches_every_table(toy_runs, declared, run_factory, tmp_path):
    # toy_runs were written before the declaration: the report scores them from their rows; a
    # run written after it carries the metric in its rows and metrics.json
    old = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    assert "precision@3" not in (old / "predictions.jsonl").read_text()
    make_run, _ = run_factory
    late = make_run(tmp_path / "late_runs", "musique_toy", "dense", "d0000000000b", DENSE)
    assert "precision@3" in json.loads((late / "metrics.json").read_text())
    assert all(
        "first_gold" in json.loads(line)["metrics"]
        for line in (late / "predictions.jsonl").read_text().splitlines()
    )

    results = tmp_path / "results"
    assert (
        cli(
            [
                "--runs-dir",
                str(toy_runs),
                "--results-dir",
                str(results),
                "--no-reference",
                "--resamples",
                str(RESAMPLES),
                "--no-figures",
            ]
        )
        == 0
    )
    df = pd.read_csv(results / "leaderboard.csv").set_index("retriever")
    for col in (
        "precision@3",
        "precision@3_lo",
        "precision@3_hi",
        "p_precision@3",
        "delta_precision@3",
        "p_adj_precision@3",
        "first_gold",
        "p_first_gold",
    ):
        assert col in df.columns, col
    assert "p_adj_first_gold" not in df.columns  # not a headline metric: outside the Holm family

    dense, spread = _per_question(DENSE, precision_at_3), _per_question(SPREAD, precision_at_3)
    assert df.loc["dense", "precision@3"] == pytest.approx(7 / 18)
    assert df.loc["spreading_activation", "precision@3"] == pytest.approx(7 / 9)
    assert df.loc["spreading_activation", "delta_precision@3"] == pytest.approx(7 / 18)
    seed = stable_seed("5a0000000001", "d0000000000a")
    assert df.loc["spreading_activation", "p_precision@3"] == pytest.approx(
        paired_bootstrap_p(spread, dense, n_resamples=RESAMPLES, seed=seed)
    )
    assert df.loc["spreading_activation", "p_first_gold"] == pytest.approx(
        mcnemar_exact_p(_per_question(SPREAD, first_is_gold), _per_question(DENSE, first_is_gold))
    )

    md = (results / "leaderboard.md").read_text()
    assert "| P@3" in md and "Top-1 gold" not in md  # headline: a column; the other csv only
    assert "precision@3 by hops" in (results / "breakdown.md").read_text()
    long = pd.read_csv(results / "leaderboard_long.csv")
    assert {"precision@3", "first_gold"} <= set(long["metric"])


def test_a_binary_declaration_that_scores_a_fraction_is_refused(monkeypatch):
    monkeypatch.setattr(metric_registry, "_METRICS", dict(metric_registry._METRICS))
    register(Metric("wrong_kind", precision_at_3, kind=BINARY, needs=(RETRIEVAL,), label="Wrong"))
    q = Question(id="q", text="?", answers=["Paris"], gold_passage_ids=["a", "b"])
    with pytest.raises(ValueError, match="declared binary"):
        score_question(q, ["a", "x", "y"], None)
