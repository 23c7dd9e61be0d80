"""Which baseline run a run is paired with (`choose_baseline`)."""

from __future__ import annotations

from pathlib import Path

from hopbench.report.leaderboard import choose_baseline
from hopbench.report.run_reader import Run


def _run(
    name: str,
    retriever: str,
    ids: range,
    *,
    reader: str = "qa",
    llm: str = "qwen-1.5b",
    finished: str = "2026-12-01T10:00:00+0000",
) -> Run:
    config = {"embedding": {"model": "minilm"}, "llm": {"name": "local", "model": llm}}
    metrics = {
        "dataset": "musique",
        "retriever": retriever,
        "reader": reader,
        "config_hash": name,
        "finished_at": finished,
    }
    return Run(
        Path("/runs/musique") / retriever / name,
        metrics,
        config,
        [{"id": f"q{i}", "metrics": {}} for i in ids],
    )


def test_the_baseline_with_the_same_questions_beats_a_newer_superset():
    run = _run("catrag20", "catrag", range(20))
    dense20 = _run("dense20", "dense", range(20), finished="2026-12-01T09:00:00+0000")
    dense100 = _run("dense100", "dense", range(100), finished="2026-12-01T18:00:00+0000")
    assert choose_baseline(run, [dense100, run, dense20], "dense") is dense20
    # ... and the 100-question run still pairs with the 100-question baseline
    run100 = _run("catrag100", "catrag", range(100))
    assert choose_baseline(run100, [dense100, run100, dense20], "dense") is dense100


def test_more_shared_questions_beat_an_exact_but_smaller_set():
    run = _run("catrag50", "catrag", range(50))
    dense20 = _run("dense20", "dense", range(20))
    dense100 = _run("dense100", "dense", range(100))
    assert choose_baseline(run, [dense20, dense100], "dense") is dense100


def test_the_reader_llm_must_match_before_the_question_overlap():
    run = _run("catrag", "catrag", range(20), llm="qwen-1.5b")
    other_llm = _run(
        "dense7b", "dense", range(20), llm="qwen-7b", finished="2026-12-01T20:00:00+0000"
    )
    same_llm = _run("dense15", "dense", range(10), llm="qwen-1.5b")
    assert choose_baseline(run, [other_llm, same_llm], "dense") is same_llm


def test_the_newest_breaks_a_full_tie_and_a_baseline_run_pairs_with_itself():
    old = _run("old", "dense", range(20), finished="2026-12-01T09:00:00+0000")
    new = _run("new", "dense", range(20), finished="2026-12-01T11:00:00+0000")
    run = _run("sa", "spreading_activation", range(20))
    assert choose_baseline(run, [old, new], "dense") is new
    assert choose_baseline(old, [old, new], "dense") is old
    assert choose_baseline(run, [old], "catrag") is None
