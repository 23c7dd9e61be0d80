"""Paired comparison of two spreading-activation runs (e.g. the authors' settings vs the earlier ones).

    python -m benchmarks.studies.compare_sa_rows RUN_DIR_NEW RUN_DIR_OLD [...pairs]

Per question Recall@2/5/10 and FCR@5 from each run's predictions.jsonl (gold passages all in the
corpus only), the mean difference and its paired-bootstrap p value (recall) or exact McNemar p
(FCR), as the leaderboard computes them (`hopbench.report.stats`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from hopbench.report.stats import mcnemar_exact_p, paired_bootstrap_p


def per_question(run: Path) -> dict[str, dict[str, float]]:
    out = {}
    for line in (run / "predictions.jsonl").read_text().splitlines():
        r = json.loads(line)
        if not r.get("gold_complete") or not r.get("gold_passage_ids"):
            continue
        gold, ranked = set(r["gold_passage_ids"]), r["ranked_passage_ids"]
        m = {f"recall@{k}": len(gold & set(ranked[:k])) / len(gold) for k in (2, 5, 10)}
        m["fcr@5"] = float(gold <= set(ranked[:5]))
        out[r["id"]] = m
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="run folders in pairs: NEW OLD [NEW OLD ...]")
    args = ap.parse_args(argv).runs
    if len(args) % 2:
        ap.error("give the run folders in pairs (NEW OLD)")
    for new, old in zip(args[::2], args[1::2]):
        a, b = per_question(Path(new)), per_question(Path(old))
        ids = sorted(set(a) & set(b))
        print(f"{new} vs {old} ({len(ids)} questions)")
        for metric in ("recall@2", "recall@5", "recall@10", "fcr@5"):
            x = np.array([a[i][metric] for i in ids])
            y = np.array([b[i][metric] for i in ids])
            p = mcnemar_exact_p(x, y) if metric == "fcr@5" else paired_bootstrap_p(x, y)
            print(
                f"  {metric}: {100 * x.mean():.1f} vs {100 * y.mean():.1f} "
                f"({100 * (x.mean() - y.mean()):+.1f}, p={p:.3f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
