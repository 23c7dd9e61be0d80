"""A report killed by a real SIGKILL while writing a figure (the child kills itself right after
the temporary file is written, so no cleanup code runs) leaves a .tmp file; the next report
into the same folder removes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from hopbench.commands.report import main as report_cli

KILL_IN_SAVEFIG = textwrap.dedent("""
    import os, signal, sys
    from matplotlib.figure import Figure
    real = Figure.savefig
    def savefig(self, fname, *a, **k):
        real(self, fname, *a, **k)            # the temporary file is written ...
        os.kill(os.getpid(), signal.SIGKILL)  # ... and never renamed
    Figure.savefig = savefig
    from hopbench.commands.report import main as cli
    sys.exit(cli(sys.argv[1:]))
""")


def test_a_killed_report_leaves_temporary_figures_the_next_report_removes(
    toy_runs, tmp_path, child_env
):
    results = tmp_path / "results"
    args = [
        "--runs-dir",
        str(toy_runs),
        "--results-dir",
        str(results),
        "--no-reference",
        "--resamples",
        "200",
    ]
    res = subprocess.run(
        [sys.executable, "-c", KILL_IN_SAVEFIG, *args],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == -signal.SIGKILL, res.stderr
    left = list((results / "figures").glob(".*.tmp"))
    assert len(left) == 1
    assert report_cli(args) == 0
    assert list(results.rglob(".*.tmp")) == []
    assert list((results / "figures").glob("*.png"))
