"""A full disk is one line naming the path and exit 2, not a double traceback (issue #28,
item 13). A real tmpfs, filled up, under the runs folder (needs root to mount: skipped otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.fixture
def full_disk(tmp_path):
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        (mnt / "runs").mkdir()
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_is_one_line_and_exit_2(full_disk, tmp_path, data_dir, cache_dir, child_env):
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={full_disk / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique_sub",
            f"hydra.run.dir={tmp_path / 'hydra'}",
        ],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 2, res.stderr[-3000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("hopbench: error:")]
    assert (
        len(errors) == 1 and str(full_disk) in errors[0] and "No space left on device" in errors[0]
    ), res.stderr[-3000:]
    assert "Traceback" not in res.stderr + res.stdout
    assert not list(full_disk.glob("runs/**/metrics.json"))
