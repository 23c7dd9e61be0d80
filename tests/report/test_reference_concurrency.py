"""Two `hopbench report --update-reference` at once keep both sides' rows.

Each is a real process; both are slowed down between reading the reference and writing it
(write_results sleeps first), so without a lock both would merge into the same old reference
and the second writer would drop the first one's rows.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd

CHILD = textwrap.dedent("""
    import sys, time
    import hopbench.report.collect as collect
    real = collect.write_results
    def slow_write_results(*a, **k):
        time.sleep(6)
        return real(*a, **k)
    collect.write_results = slow_write_results
    from hopbench.commands.report import main
    sys.exit(main(sys.argv[1:]))
""")


def test_two_updates_at_once_lose_no_rows(tmp_path, run_factory, child_env):
    make_run, DENSE = run_factory
    ref = tmp_path / "reference"
    procs = []
    for dataset, h in (("musique_toy", "d0000000000a"), ("hover_toy", "f0000000000d")):
        runs = tmp_path / f"runs-{dataset}"
        make_run(runs, dataset, "dense", h, DENSE)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    CHILD,
                    "--runs-dir",
                    str(runs),
                    "--reference-dir",
                    str(ref),
                    "--update-reference",
                    "--no-figures",
                    "--resamples",
                    "200",
                ],
                cwd=tmp_path,
                env=child_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sorted(pd.read_parquet(ref / "leaderboard.parquet")["config_hash"]) == [
        "d0000000000a",
        "f0000000000d",
    ]
    assert sorted(set(pd.read_parquet(ref / "breakdown.parquet")["config_hash"])) == [
        "d0000000000a",
        "f0000000000d",
    ]
    assert sum("is being computed by" in o for o in outs) == 1, outs  # the second one waited
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [".reference.lock"]
