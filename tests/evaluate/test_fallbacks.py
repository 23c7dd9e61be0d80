"""n_fallback / fallback_rate / fallback_steps over prediction rows, and the high-rate warning."""

from __future__ import annotations

import math

import pytest

from hopbench.evaluate.fallbacks import WARN_RATE, fallback_summary, fallback_warning, is_high


def _row(trace=None, reader_trace=None) -> dict:
    row = {"id": "q", "trace": trace or {}}
    if reader_trace is not None:
        row["reader_trace"] = reader_trace
    return row


def test_counts_questions_not_entries_and_steps_per_question():
    rows = [
        _row(
            {
                "fallback": [
                    {"step": "fact_filter", "reason": "bad"},
                    {"step": "dense_fallback", "reason": "no fact survived the filter"},
                ]
            }
        ),
        _row(
            {
                "fallback": [
                    {"step": "neighbour_scores", "reason": "a"},
                    {"step": "neighbour_scores", "reason": "b"},
                ]
            }
        ),
        _row({}, {"fallback": [{"step": "qa_answer", "reason": "never matched"}]}),
        _row({"seeds": [1]}, {"reader": "qa"}),
        _row({"fallback": []}),
    ]
    s = fallback_summary(rows)
    assert s["n_fallback"] == 3 and s["fallback_rate"] == pytest.approx(3 / 5)
    assert s["fallback_steps"] == {
        "dense_fallback": 1,
        "fact_filter": 1,
        "neighbour_scores": 1,
        "qa_answer": 1,
    }


def test_no_fallback_and_no_rows():
    assert fallback_summary([_row({"seeds": []})]) == {
        "n_fallback": 0,
        "fallback_rate": 0.0,
        "fallback_steps": {},
    }
    assert fallback_summary([])["fallback_rate"] is None


def test_rows_from_before_the_list_field_count_as_dense():
    s = fallback_summary([_row({"fallback": "no seed entity"}), _row({})])
    assert s == {"n_fallback": 1, "fallback_rate": 0.5, "fallback_steps": {"dense_fallback": 1}}


def test_warning_only_above_the_threshold():
    assert WARN_RATE == 0.1
    assert not is_high(WARN_RATE) and is_high(WARN_RATE + 1e-9)
    assert not is_high(None) and not is_high(math.nan) and not is_high("x")
    m = {
        "n_questions": 20,
        "n_fallback": 7,
        "fallback_rate": 0.35,
        "fallback_steps": {"fact_filter": 5, "dense_fallback": 7},
    }
    line = fallback_warning(m)
    assert line.startswith(
        "7 of 20 questions (35%, above 10%) fell back (fact_filter 5, dense_fallback 7)"
    )
    assert fallback_warning({**m, "fallback_rate": 0.05}) is None
    assert fallback_warning({}) is None
