"""`make bench`: the speed suite, each benchmark in a process of its own, on the bundled data.

    python -m benchmarks.speed [--quick] [--only dense,kernels_scaling] [--out-dir runs/bench] \\
        [--data-dir ../shared/datasets] [--dry-run]

The suite is what runs on the CPU with the bundled data alone: no LLM, no Neo4j, no authors'
code (those benchmarks have their commands in README.md). --quick gives each a small size (a
few minutes in all on 2 cores); without it each runs at the size of its committed results
(tens of minutes to hours). Outputs go to --out-dir, not to results/: a suite run does not
overwrite the committed figures (README.md has the command behind each of those).
Exit code: 1 if a benchmark failed, else 0.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.suite import chosen, run_commands, suite_env, suite_parser


@dataclass(frozen=True)
class Bench:
    """One speed benchmark: its module, arguments at full size and at --quick size (None: not
    in the quick suite, e.g. it builds a knowledge graph first when none is cached)."""

    name: str
    module: str
    full: tuple[str, ...]
    quick: tuple[str, ...] | None
    out: str  # how it takes the output location: "--out-dir", "--out FILE", or "" (prints only)


SUITE = [
    Bench(
        "report", "report", (), ("--questions", "300", "--resamples", "2000", "--repeats", "1"), ""
    ),
    Bench(
        "question_encoding",
        "question_encoding",
        ("--questions", "100", "--repeats", "3"),
        ("--questions", "20", "--repeats", "1"),
        "--out-dir",
    ),
    Bench("dense", "dense", (), ("--datasets", "musique", "--max-passages", "300"), "--out FILE"),
    Bench(
        "kernels_scaling",
        "kernels",
        ("scaling",),
        ("scaling", "--sizes", "10000", "30000", "--scaling-queries", "3"),
        "--out-dir",
    ),
    Bench("concurrency_fake", "concurrency", ("fake",), None, "--out-dir"),  # embeds 2Wiki first
    Bench("kernels_graph", "kernels", ("graph",), None, "--out-dir"),
    Bench("stage_profile", "stage_profile", ("--questions", "1000"), None, "--out-dir"),
    Bench(
        "retrievers",
        "retrievers",
        ("--dataset", "2wikimultihopqa", "--questions", "200"),
        None,
        "--out-dir",
    ),
]


def command(b: Bench, quick: bool, out_dir: Path) -> list[str]:
    """The benchmark's command line, its outputs sent to out_dir."""
    cmd = [sys.executable, "-m", f"benchmarks.speed.{b.module}", *(b.quick if quick else b.full)]
    if b.out == "--out-dir":
        cmd += ["--out-dir", str(out_dir)]
    elif b.out == "--out FILE":
        cmd += ["--out", str(out_dir / f"{b.name}.json")]
    return cmd


def main(argv=None) -> int:
    ap = suite_parser(__doc__.split("\n\n")[0], Path("runs") / "bench")
    ap.add_argument("--quick", action="store_true", help="small sizes: minutes, not hours")
    args = ap.parse_args(argv)
    names = chosen(ap, args.only, [b.name for b in SUITE])
    out_dir = args.out_dir.resolve()
    env = suite_env(args.data_dir)
    failed = []
    for b in SUITE:
        if b.name not in names:
            continue
        if args.quick and b.quick is None:
            print(f"== {b.name}: not in the quick suite (without --quick it runs)", flush=True)
            continue
        print(f"== {b.name}", flush=True)
        if not args.dry_run:
            out_dir.mkdir(parents=True, exist_ok=True)
        if not run_commands([command(b, args.quick, out_dir)], env, args.dry_run):
            failed.append(b.name)
    print(
        f"bench: {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; outputs in {out_dir}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
