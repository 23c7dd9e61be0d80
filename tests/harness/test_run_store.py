"""RunStore: exclusive runs (a lock that dies with its process), corrupt and doubled rows, and
replacing a finished run only by a complete one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hopbench.harness.run_store import RunBusyError, RunStore, read_rows

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _rows(*ids):
    return [{"id": i, "metrics": {"recall@5": 1.0}} for i in ids]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))


def test_a_corrupt_middle_line_drops_only_itself(tmp_path):
    store = RunStore(tmp_path / "run")
    good = [json.dumps(r) for r in _rows("a", "b", "c")]
    _write(store.predictions_path, [good[0], '{"id": "x", "metr', good[1], "[1, 2]", good[2]])
    rows = store.load_predictions()
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    # the file is repaired, so appending goes on from clean rows
    assert store.predictions_path.read_text().splitlines() == good


def test_doubled_rows_keep_the_first_of_each_id(tmp_path):
    path = tmp_path / "p.jsonl"
    first = [{"id": "a", "v": 1}, {"id": "b", "v": 1}]
    _write(path, [json.dumps(r) for r in first + [{"id": "a", "v": 2}, {"id": "b", "v": 2}]])
    rows, corrupt, dupes = read_rows(path)
    assert rows == first and corrupt == 0 and dupes == 2


def test_torn_last_line_without_newline_is_repaired(tmp_path):
    store = RunStore(tmp_path / "run")
    store.predictions_path.parent.mkdir(parents=True)
    store.predictions_path.write_text(json.dumps({"id": "a"}) + "\n" + json.dumps({"id": "b"}))
    assert [r["id"] for r in store.load_predictions()] == ["a", "b"]
    assert store.predictions_path.read_text().endswith("}\n")


_HOLDER = """
import sys, time
sys.path.insert(0, {src!r})
from hopbench.harness.run_store import RunStore
with RunStore({run!r}).lock():
    print("locked", flush=True)
    time.sleep(60)
"""


def test_the_lock_is_exclusive_and_dies_with_its_process(tmp_path):
    run = tmp_path / "runs" / "d" / "r" / "abc"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER.format(src=SRC, run=str(run))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunBusyError, match=f"pid {holder.pid}"):
            with RunStore(run).lock(wait=False):
                pass
        os.kill(holder.pid, signal.SIGKILL)  # no clean-up code runs: the kernel frees the lock
        holder.wait(10)
        deadline = time.monotonic() + 5
        while True:
            try:
                with RunStore(run).lock(wait=False):
                    break
            except RunBusyError:
                assert time.monotonic() < deadline, "lock not released after SIGKILL"
                time.sleep(0.05)
    finally:
        holder.kill()
        holder.wait()


def test_promote_replaces_only_with_a_complete_run(tmp_path):
    store = RunStore(tmp_path / "d" / "r" / "abc")
    store.append(_rows("old")[0])
    store.write_metrics({"n_questions": 1, "which": "old"})
    staged = store.staging()
    staged.append(_rows("new")[0])
    with pytest.raises(RuntimeError, match="not complete"):
        store.promote(staged)
    assert json.loads(store.metrics_path.read_text())["which"] == "old"
    staged.write_metrics({"n_questions": 1, "which": "new"})
    store.promote(staged)
    assert json.loads(store.metrics_path.read_text())["which"] == "new"
    assert [r["id"] for r in store.load_predictions()] == ["new"]
    assert not staged.dir.exists() and not (store.dir.parent / ".abc.old").exists()


def test_an_interrupted_promote_is_recovered_under_the_lock(tmp_path):
    store = RunStore(tmp_path / "d" / "r" / "abc")
    store.write_metrics({"which": "old"})
    os.replace(store.dir, store.dir.parent / ".abc.old")  # died between the two renames
    with store.lock():
        pass
    assert json.loads(store.metrics_path.read_text())["which"] == "old"
