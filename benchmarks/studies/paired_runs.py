"""Paired comparison of finished runs, question by question (issue #32: old and new QAFD rows).

    python -m benchmarks.studies.paired_runs NAME=RUN_DIR ... --pairs A:B,A:C [--out benchmarks/studies/results/x]

Each RUN_DIR is a hopbench run folder (predictions.jsonl). For every pair A:B and metric,
the mean of A − B over the questions both score, with a paired bootstrap p (recall) or an
exact McNemar p (FCR@5), as the leaderboard computes them (hopbench.report.stats).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from hopbench.report.leaderboard import stable_seed
from hopbench.report.stats import mcnemar_exact_p, paired_bootstrap_p

METRICS = ("recall@2", "recall@5", "recall@10", "fcr@5")


def load(run: Path) -> dict[str, dict]:
    rows = {}
    with open(run / "predictions.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            rows[r["id"]] = r.get("metrics") or {}
    return rows


def compare(a: dict, b: dict, seed_parts: tuple) -> dict:
    out = {}
    for m in METRICS:
        ids = sorted(i for i in set(a) & set(b) if m in a[i] and m in b[i])
        x = np.array([a[i][m] for i in ids], dtype=float)
        y = np.array([b[i][m] for i in ids], dtype=float)
        p = (
            paired_bootstrap_p(x, y, seed=stable_seed(*seed_parts, m))
            if m.startswith("recall")
            else mcnemar_exact_p(x, y)
        )
        out[m] = {
            "a": float(x.mean()),
            "b": float(y.mean()),
            "delta": float((x - y).mean()),
            "p": float(p),
            "n": len(ids),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="NAME=RUN_DIR")
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    runs = {k: Path(v) for k, v in (s.split("=", 1) for s in args.runs)}
    rows = {k: load(v) for k, v in runs.items()}
    res = []
    lines = [
        "| A − B | n | " + " | ".join(f"{m}: A, B, Δ (p)" for m in METRICS) + " |",
        "|:--|--:|" + ":--|" * len(METRICS),
    ]
    for pair in args.pairs.split(","):
        a, b = pair.split(":")
        c = compare(rows[a], rows[b], (a, b))
        res.append({"a": a, "b": b, "a_run": str(runs[a]), "b_run": str(runs[b]), **c})
        lines.append(
            f"| {a} − {b} | {c['recall@5']['n']} | "
            + " | ".join(
                f"{100 * c[m]['a']:.1f}, {100 * c[m]['b']:.1f}, {100 * c[m]['delta']:+.1f} ({c[m]['p']:.3g})"
                for m in METRICS
            )
            + " |"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).with_suffix(".json").write_text(json.dumps(res, indent=1))
        Path(args.out).with_suffix(".md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
