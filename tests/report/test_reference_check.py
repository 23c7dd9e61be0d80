"""reference_check: which runs are reference rows, and which of their numbers differ."""

from __future__ import annotations

import math

import pandas as pd

from hopbench.report.reference_check import TOLERANCE, compare, summary


def _row(h, em=0.35, f1=0.4, n=100, retriever="hipporag", **more):
    return {
        "dataset": "hotpotqa",
        "retriever": retriever,
        "config_hash": h,
        "n_questions": n,
        "em": em,
        "f1": f1,
        "recall@5": 0.7,
        "latency_ms_p50": 12.0,
        **more,
    }


def test_only_rows_of_the_same_run_are_compared_and_only_metrics_and_counts():
    ref = pd.DataFrame([_row("a"), _row("b"), _row("c", retriever="dense")])
    yours = pd.DataFrame(
        [
            _row("a", latency_ms_p50=99.0),  # latency is the machine's: not compared
            _row("b", em=0.36, n=99),
            _row("c"),  # same hash, other retriever: not the same run
            _row("z"),
        ]
    )
    got = compare(yours, ref)
    assert [c.label for c in got] == ["hotpotqa/hipporag/a", "hotpotqa/hipporag/b"]
    assert got[0].identical
    assert got[1].differences == {"n_questions": (99, 100), "em": (0.36, 0.35)}
    lines = summary(got, len(yours))
    assert lines[0].startswith(
        "reference check: 2 of your 4 run(s) are reference rows; 1 identical, 1 differ"
    )
    assert lines[1] == "  differs: hotpotqa/hipporag/b: n_questions 99 vs 100, em 0.36 vs 0.35"


def test_floats_within_the_tolerance_and_missing_on_both_sides_are_the_same():
    ref = pd.DataFrame([_row("a", f1=0.4, accuracy=math.nan)])
    same = pd.DataFrame([_row("a", f1=0.4 + TOLERANCE / 2, accuracy=math.nan)])
    assert compare(same, ref)[0].identical
    off = pd.DataFrame([_row("a", f1=0.4 + 10 * TOLERANCE, accuracy=0.5)])
    assert set(compare(off, ref)[0].differences) == {"f1", "accuracy"}
    assert compare(pd.DataFrame(), ref) == [] and compare(same, pd.DataFrame()) == []


def test_a_metric_declared_after_the_reference_was_made_is_named_not_a_difference():
    from hopbench.report.reference_check import not_rerun

    ref = pd.DataFrame([_row("a"), _row("b")])
    yours = pd.DataFrame([_row("a", contain_acc=0.5)])  # the reference has no contain_acc column
    got = compare(yours, ref)
    assert got[0].identical and got[0].new == ["contain_acc"]
    assert "not compared (the reference has no column yet): contain_acc" in summary(got, 1)[1]
    # a metric the reference has a column for but left empty on the row still counts
    ref2 = pd.DataFrame([_row("a", contain_acc=float("nan"))])
    assert list(compare(yours, ref2)[0].differences) == ["contain_acc"]
    assert not_rerun(yours, ref) == ["hotpotqa/hipporag/b"]
