"""Where a Hydra sweep's time goes, point by point, from the runs it wrote (issue #59).

    python -m benchmarks.speed.sweep_time --runs-dir /tmp/sweep_before \
        [--settings retriever.decay,retriever.depth] [--wall-seconds S]

Each run folder's metrics.json holds its wall seconds (load included), prepare seconds (graph,
vectors, encodings) and the question loop's wall and CPU seconds; config.yaml holds the swept
settings. Prints a Markdown table, one row per point that finished, with totals; the CPU
seconds do not depend on how busy the shared machine was, the wall seconds do. `--wall-seconds`
is the whole multirun's elapsed time measured outside (interpreter start and Hydra included).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml


def setting(config: dict, dotted: str):
    node = config
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def points(runs_dir: Path, settings: list[str]) -> list[dict]:
    """One dict per finished run folder under runs_dir (metrics.json written)."""
    out = []
    for metrics_path in sorted(runs_dir.rglob("metrics.json")):
        m = json.loads(metrics_path.read_text())
        config = yaml.safe_load((metrics_path.parent / "config.yaml").read_text()) or {}
        out.append(
            {
                **{s: setting(config, s) for s in settings},
                "questions": m.get("n_questions"),
                "wall_s": m.get("wall_seconds"),
                "prepare_s": m.get("prepare_seconds"),
                "loop_s": m.get("loop_seconds"),
                "loop_cpu_s": m.get("loop_cpu_seconds"),
                "finished_at": m.get("finished_at"),
            }
        )
    return sorted(out, key=lambda p: p["finished_at"] or "")


def table(rows: list[dict], settings: list[str]) -> str:
    cols = [*settings, "questions", "wall_s", "prepare_s", "loop_s", "loop_cpu_s", "finished_at"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c]) for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    total = {
        c: sum(r[c] or 0.0 for r in rows) for c in ("wall_s", "prepare_s", "loop_s", "loop_cpu_s")
    }
    lines.append(
        "| total | "
        + " | " * (len(settings) - 1)
        + f"{sum(r['questions'] or 0 for r in rows)} | "
        + " | ".join(f"{total[c]:.1f}" for c in ("wall_s", "prepare_s", "loop_s", "loop_cpu_s"))
        + " | |"
    )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs-dir", type=Path, required=True)
    ap.add_argument("--settings", default="retriever.decay,retriever.depth")
    ap.add_argument("--wall-seconds", type=float, default=None)
    args = ap.parse_args(argv)
    settings = args.settings.split(",")
    rows = points(args.runs_dir, settings)
    print(f"{len(rows)} points finished under {args.runs_dir}")
    if args.wall_seconds is not None:
        print(f"multirun elapsed (measured outside): {args.wall_seconds:.1f} s")
    print()
    print(table(rows, settings))


if __name__ == "__main__":
    main()
