"""Spreading-activation rows of issue #27: the authors' settings against the earlier ones, per dataset.

    python -m benchmarks.studies.sa_rows_report --runs-dir runs [--reference results/reference/leaderboard.csv] \\
        --out benchmarks/studies/results/qasa_rows

Finds, in a runs folder, the reader-less runs of `spreading_activation` (and `_nogate`, `_neo4j`)
on the spaCy graph and pairs them question by question (benchmarks/studies/paired_runs.py: paired bootstrap
for recall, exact McNemar for FCR@5):
  - the authors' settings (defaults) against the earlier ones (`seed_score=cosine seed_norm=mention
    edges=facts`), and each earlier choice alone against the defaults;
  - the defaults against dense (same dataset and question limit);
  - the Neo4j query against memory: identical top-10 lists;
  - MuSiQue's decay x depth sweep in the authors' settings, beside the reference rows the earlier
    code made for the same (decay, depth) (their run folders are gone: unpaired).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import yaml

from benchmarks.studies.paired_runs import METRICS, compare, load

DATASETS = ("musique", "2wikimultihopqa", "hotpotqa", "hover")
DEFAULTS = {"decay": 0.7, "depth": 3, "seed_score": "index", "seed_norm": "all", "edges": "pairs"}
EARLIER = {"seed_score": "cosine", "seed_norm": "mention", "edges": "facts"}


def runs_of(runs_dir: Path, dataset: str, retriever: str) -> list[dict]:
    out = []
    for d in sorted((runs_dir / dataset / retriever).glob("*")):
        if not (d / "metrics.json").exists():
            continue
        cfg = yaml.safe_load((d / "config.yaml").read_text())
        graph = cfg.get("graph") or {}
        if (
            cfg.get("reader", {}).get("name", "none") != "none"
            or graph.get("extractor", "spacy") != "spacy"
        ):
            continue
        out.append(
            {
                "dir": d,
                "hash": d.name,
                "retriever": cfg["retriever"],
                "limit": cfg["dataset"].get("limit"),
                "metrics": json.loads((d / "metrics.json").read_text()),
            }
        )
    return out


def pick(runs: list[dict], **settings) -> dict | None:
    want = dict(DEFAULTS, **settings)
    hits = [r for r in runs if all(r["retriever"].get(k) == v for k, v in want.items())]
    return hits[0] if hits else None


def fmt_p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def fmt(c: dict) -> str:
    return " | ".join(
        f"{100 * c[m]['a']:.1f} ({100 * c[m]['delta']:+.1f}, {fmt_p(c[m]['p'])})" for m in METRICS
    )


TIE_RTOL = 1e-9  # scores this close are one value summed in another order (float64 rounding)


def top10_agreement(a: Path, b: Path) -> tuple[int, int, int]:
    """(identical top-10 lists, questions differing only inside ties, questions in both)."""

    def tops(run):
        rows = {}
        for line in (run / "predictions.jsonl").read_text().splitlines():
            r = json.loads(line)
            rows[r["id"]] = (r["ranked_passage_ids"][:10], r.get("scores", [])[:10])
        return rows

    def same_scores(s, t):
        return len(s) == len(t) and all(
            abs(u - v) <= TIE_RTOL * max(abs(u), abs(v), 1.0) for u, v in zip(s, t)
        )

    x, y = tops(a), tops(b)
    ids = set(x) & set(y)
    same = sum(x[i][0] == y[i][0] for i in ids)
    ties = sum(x[i][0] != y[i][0] and same_scores(x[i][1], y[i][1]) for i in ids)
    return same, ties, len(ids)


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs-dir", type=Path, required=True)
    ap.add_argument("--reference", type=Path, default=Path("results/reference/leaderboard.csv"))
    ap.add_argument("--out", required=True)
    return ap


def paired_section(runs_dir: Path, result: dict) -> list[str]:
    """The pairs of issue #27 per dataset (into `result` too): A against B on the questions
    both ran."""
    md: list[str] = []
    header = "| dataset | A | B | A run | B run | n | " + " | ".join(METRICS) + " |"
    md += ["## Paired comparisons", "", header, "|" + "---|" * (6 + len(METRICS))]
    for ds in DATASETS:
        sa = runs_of(runs_dir, ds, "spreading_activation")
        base = pick(sa)
        if base is None:
            continue
        dense = [r for r in runs_of(runs_dir, ds, "dense") if r["limit"] == base["limit"]]
        pairs = [
            ("authors' settings", base, "earlier settings", pick(sa, **EARLIER)),
            ("edges=facts", pick(sa, edges="facts"), "authors' settings", base),
            (
                "seed_score=cosine seed_norm=mention",
                pick(sa, seed_score="cosine", seed_norm="mention"),
                "authors' settings",
                base,
            ),
            ("authors' settings", base, "dense", dense[0] if dense else None),
        ]
        for name_a, a, name_b, b in pairs:
            if a is None or b is None:
                continue
            c = compare(load(a["dir"]), load(b["dir"]), ("sa_rows", ds, a["hash"], b["hash"]))
            result.setdefault(ds, []).append(
                {"a": name_a, "b": name_b, "a_run": a["hash"], "b_run": b["hash"], "compare": c}
            )
            md.append(
                f"| {ds} | {name_a} | {name_b} | {a['hash']} | {b['hash']} | {c['recall@5']['n']} | {fmt(c)} |"
            )
    return md


def neo4j_section(runs_dir: Path, result: dict) -> list[str]:
    """The Neo4j query's top-10 lists against memory's, gate on and off (into `result` too)."""
    md = [
        "",
        "## Neo4j query against memory (top-10 lists)",
        "",
        f"Identical: same top-10 list. Ties only: the lists differ, but the scores rank by rank agree"
        f" within {TIE_RTOL:g} (relative), so only passages of equal score changed places.",
        "",
        "| dataset | gate | memory run | Neo4j run | identical top-10 | ties only | other |",
        "|---|---|---|---|---|---|---|",
    ]
    for ds in DATASETS:
        for gate, mem_name, db_name in (
            (True, "spreading_activation", "spreading_activation_neo4j"),
            (False, "spreading_activation_nogate", "spreading_activation_neo4j_nogate"),
        ):
            mem, db = (
                pick(runs_of(runs_dir, ds, mem_name)),
                pick(runs_of(runs_dir, ds, db_name)),
            )
            if mem and db:
                same, ties, n = top10_agreement(mem["dir"], db["dir"])
                result.setdefault("neo4j", []).append(
                    {"dataset": ds, "gate": gate, "same": same, "ties_only": ties, "n": n}
                )
                md.append(
                    f"| {ds} | {'on' if gate else 'off'} | {mem['hash']} | {db['hash']} | {same}/{n}"
                    f" | {ties} | {n - same - ties} |"
                )
    return md


def sweep_section(runs_dir: Path, reference: Path, result: dict) -> list[str]:
    """MuSiQue's decay x depth sweep in the authors' settings beside the earlier code's
    reference rows (into `result` too)."""
    md: list[str] = []
    legacy = {}
    if reference.exists():
        for r in csv.DictReader(reference.open()):
            if (
                r["dataset"] == "musique"
                and r["retriever"] == "spreading_activation"
                and r["limit"] == "100.0"
            ):
                legacy[(float(r["param.decay"]), int(float(r["param.depth"])))] = r
    sweep = [
        r
        for r in runs_of(runs_dir, "musique", "spreading_activation")
        if all(r["retriever"].get(k) == DEFAULTS[k] for k in ("seed_score", "seed_norm", "edges"))
    ]
    md += [
        "",
        "## MuSiQue decay x depth, the authors' settings (new) beside the earlier code's reference rows (old)",
        "",
        "| decay | depth | run | R@2 | R@5 | R@10 | FCR@5 | old run | old R@5 | R@5 new − old |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(sweep, key=lambda r: (r["retriever"]["decay"], r["retriever"]["depth"])):
        key = (r["retriever"]["decay"], r["retriever"]["depth"])
        m, old = r["metrics"], legacy.get(key)
        old_cells = (
            (
                f"{old['config_hash']} | {100 * float(old['recall@5']):.1f} | "
                f"{100 * (m['recall@5'] - float(old['recall@5'])):+.1f}"
            )
            if old
            else "- | - | -"
        )
        result.setdefault("sweep", []).append(
            {
                "decay": key[0],
                "depth": key[1],
                "run": r["hash"],
                **{k: m.get(k) for k in ("recall@2", "recall@5", "recall@10", "fcr@5")},
                "old_run": old["config_hash"] if old else None,
                "old_recall@5": float(old["recall@5"]) if old else None,
            }
        )
        md.append(
            f"| {key[0]} | {key[1]} | {r['hash']} | {100 * m['recall@2']:.1f} | {100 * m['recall@5']:.1f} | "
            f"{100 * m['recall@10']:.1f} | {100 * m['fcr@5']:.1f} | {old_cells} |"
        )
    return md


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    md = [
        "# Spreading activation: the authors' settings against the earlier ones (issue #27)",
        "",
        f"`python -m benchmarks.studies.sa_rows_report --runs-dir {args.runs_dir} --out {args.out}`; reader none, "
        "spaCy graph. Cells: A (A − B, p); recall p from a paired bootstrap, FCR@5 p from an exact McNemar "
        "test, uncorrected.",
        "",
    ]
    result: dict = {}
    md += paired_section(args.runs_dir, result)
    md += neo4j_section(args.runs_dir, result)
    md += sweep_section(args.runs_dir, args.reference, result)
    Path(args.out + ".md").write_text("\n".join(md) + "\n")
    Path(args.out + ".json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
