"""An empty or cut-short metrics.json (a power cut before its bytes reached the disk) marks no
run complete: a relaunch finishes the run again, `hopbench report` leaves it out with a warning."""

from __future__ import annotations

import json
import logging

import pandas as pd

from hopbench.commands.report import main as report_cli
from hopbench.core.metrics_file import read_metrics
from hopbench.harness.compose import build_dataset, build_retriever, load_config
from hopbench.harness.run_store import RunStore, config_hash
from hopbench.harness.runner import execute, run_dir_for, semantic_config


def _cfg(tmp_path, data_dir, cache_dir, *extra):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique_sub",
            *extra,
        ]
    )


def _store(cfg) -> RunStore:
    return RunStore(
        run_dir_for(
            cfg, config_hash(semantic_config(cfg, build_dataset(cfg), build_retriever(cfg)))
        )
    )


def test_read_metrics(tmp_path):
    p = tmp_path / "metrics.json"
    assert read_metrics(p) is None
    for bad in (b"", b'{"recall@5": 0.', b"\0\0\0\0", b"[1, 2]", b"\xff\xfe"):
        p.write_bytes(bad)
        assert read_metrics(p) is None, bad
    p.write_text('{"n_questions": 3}')
    assert read_metrics(p) == {"n_questions": 3}


def test_an_empty_metrics_json_is_finished_again_from_the_rows(
    tmp_path, data_dir, cache_dir, monkeypatch, caplog
):
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    first = execute(cfg)
    store = _store(cfg)
    rows = store.predictions_path.read_bytes()
    store.metrics_path.write_bytes(b"")  # what a power cut leaves of an unsynced file
    assert not store.complete

    from hopbench.retrieve.baselines.dense import DenseRetriever

    def no_retrieval(*a, **k):
        raise AssertionError("every row is there: nothing is retrieved again")

    monkeypatch.setattr(DenseRetriever, "retrieve", no_retrieval)
    with caplog.at_level(logging.WARNING):
        again = execute(_cfg(tmp_path, data_dir, cache_dir))
    assert "counts as incomplete" in caplog.text
    assert store.complete and store.predictions_path.read_bytes() == rows
    assert {k: again[k] for k in ("recall@2", "recall@5", "n_questions")} == {
        k: first[k] for k in ("recall@2", "recall@5", "n_questions")
    }
    assert json.loads(store.metrics_path.read_text())["recall@5"] == first["recall@5"]


def test_report_leaves_out_a_run_with_a_broken_metrics_json(
    tmp_path, data_dir, cache_dir, capsys, caplog
):
    good, broken = (
        _cfg(tmp_path, data_dir, cache_dir),
        _cfg(tmp_path, data_dir, cache_dir, "top_k=5"),
    )
    execute(good)
    execute(broken)
    _store(broken).metrics_path.write_text('{"recall@5": 0.')
    with caplog.at_level(logging.WARNING):
        code = report_cli(
            [
                "--runs-dir",
                str(tmp_path / "runs"),
                "--results-dir",
                str(tmp_path / "results"),
                "--no-figures",
                "--no-reference",
                "--resamples",
                "200",
            ]
        )
    assert code == 0
    assert str(_store(broken).dir) in caplog.text and "left out of the report" in caplog.text
    df = pd.read_parquet(tmp_path / "results" / "leaderboard.parquet")
    assert list(df["config_hash"]) == [_store(good).dir.name]
