"""`make parity`: every parity check whose authors' checkout is given; the others are skipped, by name.

    OFFICIAL_SRC_QAFD=../QAFD-RAG OFFICIAL_SRC_NEUROPATH=../NeuroPath python -m benchmarks.parity \\
        [--only qafd,neuropath] [--out-dir runs/parity] [--data-dir ../shared/datasets] [--dry-run]

The authors' code is never in this repository. Each method's checkout is named by one variable,
OFFICIAL_SRC_<METHOD> (HIPPORAG, QASA, QAFD, CATRAG, NEUROPATH), in the environment or on the
make command line; its README (benchmarks/parity/<method>/README.md) says which repository and
commit, and how to fetch it. A method without its variable is skipped, and said so; with none
given nothing runs and the exit code is 0. Outputs go to --out-dir/<method>/ (outside the
committed results: a check run does not overwrite the evidence; the READMEs give the commands
that do). Exit code: 1 if a check that ran failed, else 0.

A new method is one more `Check` in CHECKS. Other suites that belong to `make parity` (the
mutation suite) are further lines of the Makefile's parity recipe, after this one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.paths import REPO
from benchmarks.common.suite import chosen, run_commands, suite_env, suite_parser


@dataclass(frozen=True)
class Check:
    """One method's parity check: its authors' repository and the commands it runs."""

    method: str
    repository: str  # owner/name of the authors' code
    commands: object  # (checkout, out folder) -> list of commands (argv lists)

    @property
    def variable(self) -> str:
        return f"OFFICIAL_SRC_{self.method.upper()}"


def _py(module: str, *args) -> list[str]:
    return [sys.executable, "-m", module, *map(str, args)]


def _catrag_src(src: Path) -> Path:
    """The folder holding catrag/CatRAG.py: a checkout's src/, or the folder itself."""
    return src / "src" if (src / "src" / "catrag").is_dir() else src


CHECKS = [
    Check(
        "hipporag",
        "OSU-NLP-Group/HippoRAG",
        lambda src, out: [
            _py(
                "benchmarks.parity.hipporag.compare",
                "--official-src",
                src,
                "--out",
                out / "official_hipporag",
            )
        ],
    ),
    Check(
        "qasa",
        "kinfi4/qasa-graph-rag",
        lambda src, out: [
            [
                str(REPO / "scripts" / "with-neo4j.sh"),
                *_py(
                    "benchmarks.parity.qasa.compare",
                    "--official-src",
                    src,
                    "--work",
                    out / "work",
                    "--out",
                    out / "official_qasa",
                ),
            ]
        ],
    ),
    Check(
        "qafd",
        "Tarzanagh/QAFD-RAG",
        lambda src, out: [
            _py(
                "benchmarks.parity.qafd.compare",
                "--official-src",
                src,
                "--out",
                out / "official_qafd",
                "--fixture",
                out / "official_qafd_fixture.json",
            )
        ],
    ),
    Check(
        "catrag",
        "kwunhang/CatRAG",
        lambda src, out: [  # scripted decisions: the algorithm compared without the local model
            _py("benchmarks.parity.catrag.scripted_run", out / "run", "--dataset", "musique"),
            _py(
                "benchmarks.parity.catrag.compare",
                "--run",
                out / "run",
                "--official-src",
                _catrag_src(src),
                "--out",
                out / "official_catrag",
            ),
        ],
    ),
    Check(
        "neuropath",
        "KennyCaty/NeuroPath",
        lambda src, out: [  # scripted replies that walk the reference's branches
            _py("benchmarks.parity.neuropath.scripted_run", out / "run", "musique"),
            _py(
                "benchmarks.parity.neuropath.compare",
                "--official-src",
                src,
                "--synthetic",
                out / "run",
                "--work",
                out / "work",
                "--out",
                out / "official_neuropath",
            ),
        ],
    ),
]


def plan(checks: list[Check], environ: dict, out_dir: Path) -> tuple[list, list[str], list[str]]:
    """(method, commands) for each check whose checkout is given, one line per skipped check,
    and one line per variable that names no folder (bad input: nothing runs then)."""
    runs, skipped, bad = [], [], []
    for c in checks:
        src = environ.get(c.variable, "").strip()
        if not src:
            skipped.append(
                f"skipped {c.method}: {c.variable} is not set (a checkout of {c.repository})"
            )
        elif not Path(src).is_dir():
            bad.append(f"{c.variable}={src}: not a folder (give a checkout of {c.repository})")
        else:
            runs.append((c.method, c.commands(Path(src).resolve(), out_dir / c.method)))
    return runs, skipped, bad


def main(argv=None) -> int:
    ap = suite_parser(__doc__.split("\n\n")[0], Path("runs") / "parity")
    args = ap.parse_args(argv)
    names = chosen(ap, args.only, [c.method for c in CHECKS])
    checks = [c for c in CHECKS if c.method in names]
    runs, skipped, bad = plan(checks, dict(os.environ), args.out_dir.resolve())
    if bad:
        print("\n".join(bad), file=sys.stderr)
        return 2
    for line in skipped:
        print(line, flush=True)
    env = suite_env(args.data_dir)
    failed = []
    for method, commands in runs:
        print(f"== parity {method}", flush=True)
        if not run_commands(commands, env, args.dry_run):
            failed.append(method)
    ran = [m for m, _ in runs]
    print(
        f"parity: {len(ran)} run ({', '.join(ran) or 'none'}), {len(skipped)} skipped, "
        f"{len(failed)} failed{' (' + ', '.join(failed) + ')' if failed else ''}"
        + (" [dry run]" if args.dry_run else ""),
        flush=True,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
