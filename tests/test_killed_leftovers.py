"""A `force=true` rerun killed by a real SIGKILL (the child kills itself right after its first
row, so no cleanup code runs) leaves a staging folder; the next launch of the run removes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

KILL_AFTER_FIRST_ROW = textwrap.dedent("""
    import os, signal, sys
    import hopbench.harness.run_store as rs
    real = rs.RunStore.append
    def append(self, row):
        real(self, row)
        os.kill(os.getpid(), signal.SIGKILL)
    rs.RunStore.append = append
    from hopbench.run import entry
    sys.argv = ["hopbench"] + sys.argv[1:]
    entry()
""")


def test_a_killed_force_rerun_leaves_a_staging_folder_the_next_launch_removes(
    tmp_path, data_dir, cache_dir, child_env
):
    runs = tmp_path / "runs"
    base = [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={runs}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
    ]
    ok = subprocess.run(
        [sys.executable, "-m", "hopbench.run", *base],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ok.returncode == 0, ok.stderr
    [run] = runs.glob("musique_sub/dense/*/metrics.json")
    finished = run.parent
    before = {p.name: p.read_bytes() for p in finished.iterdir()}
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_FIRST_ROW, *base, "force=true"],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    staged = finished.parent / f".{finished.name}.rerun"
    assert (staged / "predictions.jsonl").read_text().count("\n") == 1
    again = subprocess.run(
        [sys.executable, "-m", "hopbench.run", *base],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert not staged.exists()
    assert {p.name: p.read_bytes() for p in finished.iterdir()} == before  # the finished run stands
    assert sorted(p.name for p in finished.parent.iterdir()) == [
        f".{finished.name}.lock",
        finished.name,
    ]


def test_a_new_force_rerun_starts_afresh(tmp_path, data_dir, cache_dir, child_env):
    """A stale staging folder is not resumed by the next force=true: it may hold rows of older code."""
    runs = tmp_path / "runs"
    base = [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={runs}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
    ]
    assert (
        subprocess.run(
            [sys.executable, "-m", "hopbench.run", *base],
            cwd=tmp_path,
            env=child_env,
            capture_output=True,
            timeout=600,
        ).returncode
        == 0
    )
    [finished] = [p.parent for p in runs.glob("musique_sub/dense/*/metrics.json")]
    staged = finished.parent / f".{finished.name}.rerun"
    staged.mkdir()
    (staged / "predictions.jsonl").write_text('{"id": "2hop__150763_14904", "stale": true}\n')
    res = subprocess.run(
        [sys.executable, "-m", "hopbench.run", *base, "force=true"],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    assert not staged.exists()
    assert '"stale"' not in (finished / "predictions.jsonl").read_text()
    assert (finished / "predictions.jsonl").read_text().count("\n") == 3
