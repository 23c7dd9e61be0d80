"""Atomic writes are durable: the file is synced before its rename, the folder after it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import hopbench.core.atomic as atomic


@pytest.fixture
def disk_events(monkeypatch):
    """Every fsync (by the path of its descriptor) and rename, in order."""
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("rename", f"{src} -> {dst}"))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return events


def test_write_json_syncs_the_file_before_the_rename_and_the_folder_after(tmp_path, disk_events):
    target = tmp_path / "run" / "metrics.json"
    atomic.write_json(target, {"recall@5": 0.5})
    kinds = [k for k, _ in disk_events]
    assert kinds == ["fsync", "rename", "fsync"], disk_events
    tmp_name = disk_events[1][1].split(" -> ")[0]
    assert disk_events[0][1] == tmp_name and Path(tmp_name).parent == target.parent
    assert disk_events[2][1] == str(target.parent)
    assert target.read_text() == '{\n  "recall@5": 0.5\n}\n'


def test_a_failed_block_renames_nothing(tmp_path, disk_events):
    with pytest.raises(RuntimeError), atomic.atomic_path(tmp_path / "x.json") as tmp:
        tmp.write_text("{")
        raise RuntimeError("disk full")
    assert disk_events == [] and list(tmp_path.iterdir()) == []
