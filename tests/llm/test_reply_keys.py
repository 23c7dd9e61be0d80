"""Which runs `hopbench replies export` takes by default (reply_keys.complete_runs): the runs
`hopbench report` reads, so a reply file never files a copy's or another folder's replies
under a run's label."""

from __future__ import annotations

import json
import shutil

from hopbench.llm.reply_keys import complete_runs


def _run(runs, dataset, retriever, config_hash):
    folder = runs / dataset / retriever / config_hash
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl").write_text('{"question_id": "q1"}\n', encoding="utf-8")
    (folder / "metrics.json").write_text(json.dumps({"config_hash": config_hash}), "utf-8")
    return folder


def test_a_backup_copy_of_a_run_is_not_exported_as_a_second_run(tmp_path):
    run = _run(tmp_path / "runs", "musique", "hipporag", "abc123")
    shutil.copytree(run, run.with_name("abc123.bak"))
    assert complete_runs(tmp_path / "runs") == [run]


def test_a_run_linked_from_outside_the_runs_folder_is_not_exported(tmp_path):
    runs = tmp_path / "runs"
    kept = _run(runs, "musique", "dense", "def456")
    outside = _run(tmp_path / "elsewhere", "musique", "hipporag", "abc123")
    (runs / "musique" / "hipporag").mkdir()
    (runs / "musique" / "hipporag" / "abc123").symlink_to(outside, target_is_directory=True)
    assert complete_runs(runs) == [kept]
