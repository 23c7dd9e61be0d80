"""Which folders `hopbench report` takes as runs (issue #54.6): only those inside the runs
folder, named by the config hash the run recorded, each hash once."""

from __future__ import annotations

import logging
import shutil

from hopbench.commands.report import main as cli
from hopbench.report.run_reader import load_runs

DENSE = ("musique_toy", "dense", "d0000000000a")


def _report(runs, tmp_path, capsys) -> tuple[int, list[str]]:
    args = ["--runs-dir", str(runs), "--results-dir", str(tmp_path / "r"), "--no-figures"]
    code = cli([*args, "--resamples", "50"])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("hopbench report")]
    return code, err


def test_a_backup_copy_of_a_run_is_not_a_second_row(toy_runs, caplog):
    """`<hash>.bak` holds the same run: it is left out (with a word), not compared with itself."""
    backup = toy_runs / "musique_toy" / "dense" / "d0000000000a.bak"
    shutil.copytree(toy_runs.joinpath(*DENSE), backup)
    with caplog.at_level(logging.WARNING):
        runs = load_runs(toy_runs)
    assert [r.dir.name for r in runs] == ["d0000000000a", "5a0000000001"]
    assert str(backup) in caplog.text and "d0000000000a" in caplog.text


def test_a_run_folder_linked_from_outside_is_not_read(toy_runs, tmp_path, caplog):
    outside = tmp_path / "elsewhere" / "musique_toy" / "dense"
    outside.mkdir(parents=True)
    shutil.move(str(toy_runs.joinpath(*DENSE)), outside / "d0000000000a")
    toy_runs.joinpath(*DENSE).symlink_to(outside / "d0000000000a", target_is_directory=True)
    with caplog.at_level(logging.WARNING):
        runs = load_runs(toy_runs)
    assert [r.retriever for r in runs] == ["spreading_activation"]
    assert str(toy_runs.joinpath(*DENSE)) in caplog.text and "outside" in caplog.text


def test_a_dataset_folder_linked_from_outside_is_not_read(toy_runs, tmp_path):
    other = tmp_path / "other_runs"
    shutil.copytree(toy_runs / "musique_toy", other / "hotpot_toy")
    (toy_runs / "hotpot_toy").symlink_to(other / "hotpot_toy", target_is_directory=True)
    assert [r.dir.parts[-3] for r in load_runs(toy_runs)] == ["musique_toy", "musique_toy"]


def test_a_file_of_a_run_linked_from_outside_is_not_read(toy_runs, tmp_path, caplog):
    run = toy_runs.joinpath(*DENSE)
    shutil.move(str(run / "predictions.jsonl"), tmp_path / "predictions.jsonl")
    (run / "predictions.jsonl").symlink_to(tmp_path / "predictions.jsonl")
    with caplog.at_level(logging.WARNING):
        runs = load_runs(toy_runs)
    assert [r.retriever for r in runs] == ["spreading_activation"]
    assert "outside" in caplog.text


def test_two_folders_with_one_hash_are_refused(toy_runs, tmp_path, capsys):
    """The same run twice (a copy under another retriever folder, or a link inside the runs
    folder) would be paired with itself: the report stops and names both folders."""
    run = toy_runs.joinpath(*DENSE)
    copy = toy_runs / "musique_toy" / "dense_old" / "d0000000000a"
    shutil.copytree(run, copy)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1
    assert str(run) in err[0] and str(copy) in err[0] and "d0000000000a" in err[0]


def test_a_link_inside_the_runs_folder_to_another_run_is_a_duplicate(toy_runs, tmp_path, capsys):
    (toy_runs / "musique_toy" / "dense_alias").symlink_to(
        toy_runs / "musique_toy" / "dense", target_is_directory=True
    )
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1 and "d0000000000a" in err[0]


def test_a_runs_folder_that_is_itself_a_link_is_read(toy_runs, tmp_path):
    link = tmp_path / "runs_link"
    link.symlink_to(toy_runs, target_is_directory=True)
    assert len(load_runs(link)) == 2
