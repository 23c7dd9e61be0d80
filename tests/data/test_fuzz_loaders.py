"""Fuzzing the dataset loaders (issue #54): seeded random truncations, bit flips, spliced
bytes, huge and deep values, type swaps and bad encodings of real files of every format
(`tests/data/fuzz_loaders.py`). Every case ends in a dataset that keeps the contract or in one
printable line of at most 1,000 characters naming the file, never a traceback; the cases run
in a child process whose resident memory must stay under `RSS_BOUND`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the child imports tests.data.fuzz_loaders from here

SEED = 54
CASES = 3000
# Measured on the 2-core test machine (2026-12-06): ~115 MB at most (Python and the loaders
# take ~75 MB; the largest case is a 3 MB string or a 200,000-element list) and ~6 s of CPU
# for 3,000 cases. A watchdog in the child ends it (exit 3) once it passes the bound.
RSS_BOUND = 400_000_000
CPU_SECONDS_BOUND = 60


def test_every_mutated_file_loads_or_is_one_line(data_dir, child_env):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.data.fuzz_loaders",
            f"--data-dir={data_dir}",
            f"--seed={SEED}",
            f"--cases={CASES}",
            f"--rss-bound={RSS_BOUND}",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=child_env,
        timeout=600,
    )
    assert proc.returncode in (0, 1), (proc.stdout + proc.stderr)[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    failures = "\n\n".join(f"{f['what']}\n{f['failure']}" for f in summary["failures"])
    assert summary["n_failures"] == 0, f"{summary['n_failures']} failures, the first:\n{failures}"
    assert sum(summary["outcomes"].values()) == CASES
    # both outcomes happen: the mutations neither all break the files nor all miss
    assert summary["outcomes"]["loaded"] > CASES // 10 and summary["outcomes"]["refused"] > 0
    assert summary["max_rss"] < RSS_BOUND and summary["cpu_seconds"] < CPU_SECONDS_BOUND


def test_each_kind_of_mutation_gives_bytes_and_a_seed_repeats_the_draws():
    """mutate's kinds are one function each (#58); a (seed, case) pair must still name one
    mutation, or a failure found by a long run could not be replayed."""
    from tests.data.fuzz_loaders import _MUTATIONS, mutate

    raw = b'[{"id": "q1", "text": "a b", "answers": ["c"]}]'
    for kind, mutation in _MUTATIONS.items():
        for seed in range(20):
            what, data = mutation(raw, random.Random(seed))
            assert isinstance(what, str) and isinstance(data, bytes), kind
    draws = [mutate(raw, random.Random(seed)) for seed in range(200)]
    assert draws == [mutate(raw, random.Random(seed)) for seed in range(200)]
    assert len({what.split()[0] for what, _ in draws}) >= 10  # the kinds are all reachable
