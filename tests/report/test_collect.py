"""`hopbench report` on a fixture of runs: only complete runs, expected table, all three formats."""

import json

import pandas as pd

from hopbench.report.collect import cli, collect


def _run(root, dataset, retriever, h, metrics=None):
    d = root / dataset / retriever / h
    d.mkdir(parents=True)
    (d / "predictions.jsonl").write_text("{}\n")
    if metrics is not None:
        (d / "metrics.json").write_text(json.dumps(metrics))
    return d


def test_collect_only_complete_runs_sorted(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "musique", "dense", "aaa", {"dataset": "musique", "retriever": "dense", "reader": "none",
                                           "n_questions": 100, "recall@2": 0.25, "recall@5": 0.5, "fcr@5": 0.1})
    _run(runs, "hotpotqa", "dense", "bbb", {"dataset": "hotpotqa", "retriever": "dense", "reader": "none",
                                            "n_questions": 100, "recall@2": 0.5, "recall@5": 0.75, "fcr@5": 0.4})
    _run(runs, "musique", "dense", "ccc")  # killed: no metrics.json
    df = collect(runs)
    assert list(df["dataset"]) == ["hotpotqa", "musique"]
    assert list(df["config_hash"]) == ["bbb", "aaa"]
    assert df.loc[1, "recall@5"] == 0.5 and pd.isna(df.loc[1, "em"])


def test_cli_writes_parquet_csv_markdown(tmp_path, capsys):
    runs, results = tmp_path / "runs", tmp_path / "results"
    _run(runs, "musique", "dense", "aaa", {"dataset": "musique", "retriever": "dense", "reader": "none",
                                           "n_questions": 3, "n_retrieval_scored": 3, "recall@2": 1 / 3,
                                           "recall@5": 0.5, "fcr@5": 0.0, "latency_ms_p50": 0.12345})
    assert cli(["--runs-dir", str(runs), "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    assert "| musique   | dense" in out and "33.3" in out and "50.0" in out and "0.12" in out
    assert pd.read_parquet(results / "leaderboard.parquet")["recall@5"].tolist() == [0.5]
    assert pd.read_csv(results / "leaderboard.csv")["config_hash"].tolist() == ["aaa"]
    assert "33.3" in (results / "leaderboard.md").read_text()


def test_no_runs_yet(tmp_path, capsys):
    assert cli(["--runs-dir", str(tmp_path / "none"), "--results-dir", str(tmp_path / "r")]) == 0
    assert "no complete runs yet" in capsys.readouterr().out
