"""Where a benchmark script is, where its results go, and how to start it as a module.

Results live beside the scripts that make them (`<room>/results/`), so a room carries its
evidence with it; defaults are relative to the repository, never to one machine's folders.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"


def results_dir(script: str) -> Path:
    """The `results/` folder of the room a script (its `__file__`) lives in."""
    return Path(script).resolve().parent / "results"


def module_name(script: str | Path) -> str:
    """`benchmarks.parity.hipporag.worker` for that file: what `python -m` starts."""
    rel = Path(script).resolve().with_suffix("").relative_to(REPO)
    return ".".join(rel.parts)


def command_line(argv: list[str]) -> str:
    """How this process was started, as `python -m <module> args` (argv[0], the script's absolute
    path, would put this machine's folders into the results)."""
    return " ".join(["python", "-m", module_name(argv[0]), *argv[1:]])
