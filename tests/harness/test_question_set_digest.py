"""A run records its question set (ids and gold) in metrics.json, taken from the dataset, and the
report finds its rows to be exactly that set (issue #54.3)."""

from __future__ import annotations

import json
import logging

import pytest

from hopbench.core.errors import DataError
from hopbench.core.question_set import QUESTION_SET_DIGEST
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from hopbench.report.run_reader import load_runs


def test_a_run_records_the_question_set_its_rows_are(tmp_path, data_dir, cache_dir, caplog):
    runs = tmp_path / "runs"
    cfg = load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique_sub",
        ]
    )
    metrics = execute(cfg)
    assert metrics[QUESTION_SET_DIGEST].startswith("sha256:")
    with caplog.at_level(logging.WARNING):
        [run] = load_runs(runs)
    assert QUESTION_SET_DIGEST not in caplog.text  # recorded, and the rows match it
    assert len(run.predictions) == metrics["n_questions"] == 3

    # a gold passage id changed in a row (its scores unchanged): not the recorded set
    pred = run.dir / "predictions.jsonl"
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    rows[0]["gold_passage_ids"] = rows[0]["gold_passage_ids"][::-1] + ["x"]
    rows[0]["gold_complete"] = False  # so that no retrieval score applies and none is compared
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=QUESTION_SET_DIGEST):
        load_runs(runs)
