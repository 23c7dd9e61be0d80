"""The same retrievers on two knowledge graphs of one corpus, paired question by question (issue #15).

    python -m benchmarks.studies.compare_graphs --runs-dir runs-openie \\
        --data-dir ../shared/datasets --cache-dir ~/.cache/hopbench \\
        [--dataset musique] [--graphs openie,spacy] [--out benchmarks/studies/results/graph_sources_musique.md]

Reads the complete runs under --runs-dir (`benchmarks/studies/graph_sources_musique.sh` makes them),
labels each graph run by its graph config (`graph.extractor`), and writes one markdown file:

1. the statistics of each graph (`hopbench kg-stats`, loaded from the graph cache);
2. every run: Recall@2/5/10 and FCR@5 with 95% bootstrap intervals and paired tests against
   dense (paired bootstrap for recall, exact McNemar for FCR);
3. per retriever, the first graph against the second (same tests);
4. the gate ablation (spreading_activation against spreading_activation_nogate) on each graph.

When a retriever has several complete runs on one graph (different hyper-parameters), each is
its own row; the graph-vs-graph table pairs runs with equal hyper-parameters only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from benchmarks.common.paths import results_dir
from hopbench.report.leaderboard import stable_seed
from hopbench.report.markdown import fmt_ci, fmt_p
from hopbench.report.run_reader import Run, load_runs, params_label
from hopbench.report.stats import bootstrap_ci, mcnemar_exact_p, paired_bootstrap_p

METRICS = ("recall@2", "recall@5", "recall@10", "fcr@5")
ANSWER = ("em", "f1")  # runs with a reader only
BINARY = {"fcr@5", "em"}  # 0/1 per question: exact McNemar; the others: paired bootstrap
HEAD = {
    "recall@2": "R@2",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "fcr@5": "FCR@5",
    "em": "EM",
    "f1": "F1",
}
GRAPH_FREE = {"dense", "oracle"}
ORDER = [
    "hipporag",
    "hipporag_hb",
    "hipporag1",
    "spreading_activation",
    "spreading_activation_neo4j",
    "spreading_activation_nogate",
    "flow_diffusion",
    "flow_diffusion_code",
    "catrag",
    "catrag_code",
    "neuropath",
]


def graph_label(run: Run) -> str | None:
    """The graph a run used (its `graph.extractor`), None for retrievers that use no graph."""
    if run.retriever in GRAPH_FREE:
        return None
    return (run.config.get("graph") or {}).get("extractor", "spacy")


def paired(a: Run, b: Run, metric: str) -> tuple[float, float, int]:
    """(mean of a - b, p, n) on the questions both scored; McNemar for 0/1 metrics, else bootstrap."""
    sa, sb = a.scores(metric), b.scores(metric)
    ids = sorted(set(sa) & set(sb))
    x, y = np.array([sa[i] for i in ids]), np.array([sb[i] for i in ids])
    if not ids:
        return float("nan"), float("nan"), 0
    if metric in BINARY:
        p = mcnemar_exact_p(x, y)
    else:
        p = paired_bootstrap_p(x, y, seed=stable_seed(a.config_hash, b.config_hash, metric))
    return float(np.mean(x - y)), p, len(ids)


def metrics_of(run: Run) -> tuple[str, ...]:
    return METRICS + (ANSWER if run.reader != "none" else ())


def ci(run: Run, metric: str) -> str:
    if metric not in metrics_of(run):
        return "–"
    v = np.array([x for x in run.scores(metric).values() if x is not None])
    if not len(v):
        return "–"
    lo, hi = bootstrap_ci(v, seed=stable_seed(run.config_hash, metric))
    return fmt_ci(float(v.mean()), lo, hi)


def delta(d: float, p: float) -> str:
    star = "**" if p < 0.05 else ""
    return f"{star}{100 * d:+.1f}{star} (p {fmt_p(p)})"


def load_graph_of(dataset: str, graph: str, data_dir: str, cache_dir: str):
    """The graph a run of `graph=<graph>` on `dataset` uses (from the graph cache; built if missing)."""
    from hopbench.harness.compose import build_dataset, build_encoder, load_config
    from hopbench.kg import load_or_build

    cfg = load_config(
        [
            f"dataset={dataset}",
            f"graph={graph}",
            "progress=false",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
        ]
    )
    return load_or_build(
        build_dataset(cfg), cfg.graph, encoder=build_encoder(cfg), cache_dir=cache_dir
    )


def graph_stats_section(
    dataset: str, graphs: list[str], data_dir: str, cache_dir: str
) -> list[str]:
    from hopbench.kg.openie_file import summarize
    from hopbench.kg.stats import graph_stats

    out = [
        "## The graphs (`hopbench kg-stats`)",
        "",
        "| graph | key | entities | facts | relation edges | synonym edges | context edges | "
        "entities per passage (median) | passages per entity (mean) | relation degree (mean) | "
        "components | isolated passages | passages without facts |",
        "|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    notes = []
    for g in graphs:
        kg = load_graph_of(dataset, g, data_dir, cache_dir)
        s = graph_stats(kg)
        d = s["degree"]
        no_facts = int(np.sum(np.bincount(kg.fact_passage, minlength=kg.n_passages) == 0))
        out.append(
            f"| {g} | {kg.manifest.get('graph_key')} | {s['nodes']['entity']:,} | {s['facts']:,} | "
            f"{s['edges']['relation']:,} | {s['edges']['synonym']:,} | {s['edges']['context']:,} | "
            f"{d['passage']['median']:g} | {d['entity_passages']['mean']:.2f} | "
            f"{d['entity_relation_degree']['mean']:.2f} | {s['components']['count']:,} | "
            f"{s['isolated_passages']['count']:,} | {no_facts:,} |"
        )
        hubs = ", ".join(f"{h['entity']} ({h['passages']})" for h in s["top_hubs"][:5])
        notes.append(f"- {g}: top hubs (passages): {hubs}")
        if s.get("extraction_report"):
            notes.append(f"- {g}: {summarize(s['extraction_report'])}")
    return out + [""] + notes + [""]


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs-dir", required=True)
    ap.add_argument("--dataset", default="musique")
    ap.add_argument(
        "--graphs",
        default="openie,spacy",
        help="two graph configs: first is compared against second",
    )
    ap.add_argument("--data-dir", default="../shared/datasets")
    ap.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "hopbench"))
    ap.add_argument("--out", default=str(results_dir(__file__) / "graph_sources_musique.md"))
    ap.add_argument("--no-graph-stats", action="store_true", help="skip loading the graphs")
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    graphs = args.graphs.split(",")
    if len(graphs) != 2:
        ap.error("--graphs takes two graph configs")

    runs = [r for r in load_runs(args.runs_dir) if r.dataset == args.dataset]
    dense = dense_runs(runs)
    if "none" not in dense:
        print(f"no complete dense run for {args.dataset} under {args.runs_dir}", file=sys.stderr)
        return 2

    def base(r: Run) -> Run:
        """The dense run r is compared with: the same reader's (paired on the questions both ran)."""
        return dense.get(r.reader, dense["none"])

    by_graph = runs_by_graph(runs, graphs)
    lines = [
        f"# Graph sources on {args.dataset}: {graphs[0]} vs {graphs[1]}",
        "",
        "Made by `benchmarks/studies/compare_graphs.py` from the runs under "
        f"`{args.runs_dir}` (`benchmarks/studies/graph_sources_musique.sh`). Subset numbers (HippoRAG's "
        "100-question MuSiQue train subset, 1,890-passage corpus), all-MiniLM-L6-v2 embeddings. "
        "Runs without a reader use no LLM (hipporag's fact filter off); the LLM methods (CatRAG, "
        "NeuroPath) ran on the first 20 questions with `reader=qa` and the bundled local model "
        "(Qwen2.5-Coder-1.5B), and are compared with dense + the same reader on those questions. "
        "Percentages with the half-width of their 95% bootstrap interval; p: exact McNemar for "
        "FCR@5 and EM, paired bootstrap for the others; bold: p < 0.05 (no correction for the "
        "number of tests: read a lone p near 0.05 with care).",
        "",
    ]
    if not args.no_graph_stats:
        lines += graph_stats_section(args.dataset, graphs, args.data_dir, args.cache_dir)
    lines += against_dense_section(dense, graphs, by_graph, base)
    pairs = [
        (a, b)
        for a in by_graph[graphs[0]]
        for b in by_graph[graphs[1]]
        if a.retriever == b.retriever and a.params == b.params and a.reader == b.reader
    ]
    lines += graph_pairs_section(graphs, pairs)
    lines += gate_section(graphs, by_graph)
    lines += summary_section(graphs, by_graph, base, pairs)
    text = "\n".join(lines)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


def dense_runs(runs: list[Run]) -> dict[str, Run]:
    """Reader -> its dense run (the one with the most questions)."""
    dense: dict[str, Run] = {}
    for r in runs:
        if r.retriever == "dense" and (
            r.reader not in dense or len(r.predictions) > len(dense[r.reader].predictions)
        ):
            dense[r.reader] = r
    return dense


def runs_by_graph(runs: list[Run], graphs: list[str]) -> dict[str, list[Run]]:
    """The runs on each of `graphs`, no-reader runs first, then in the table's retriever order."""
    by_graph: dict[str, list[Run]] = {g: [] for g in graphs}
    for r in runs:
        g = graph_label(r)
        if g in by_graph:
            by_graph[g].append(r)
    for g in graphs:
        by_graph[g].sort(
            key=lambda r: (
                r.reader != "none",
                ORDER.index(r.retriever) if r.retriever in ORDER else 99,
                r.retriever,
                params_label(r.params),
            )
        )
    return by_graph


def against_dense_section(dense: dict, graphs: list[str], by_graph: dict, base) -> list[str]:
    """Every run's scores, and its differences from the dense run of its reader."""
    cols = METRICS + ANSWER
    deltas = ("recall@5", "recall@10", "fcr@5", "f1")
    lines = ["## Every run against dense", ""]
    for reader, d in sorted(dense.items()):
        lines.append(
            f"Dense, reader {reader}: config `{d.config_hash}`, n = {len(d.scores('recall@5'))}: "
            + ", ".join(f"{HEAD[m]} {ci(d, m)}" for m in metrics_of(d))
        )
        lines.append("")
    lines += [
        "| retriever | graph | reader | params | config | n | "
        + " | ".join(HEAD[m] for m in cols)
        + " | "
        + " | ".join(f"Δ{HEAD[m]} vs dense" for m in deltas)
        + " |",
        "|:--|:--|:--|:--|:--|--:|" + "--:|" * len(cols) + ":--|" * len(deltas),
    ]
    for g in graphs:
        for r in by_graph[g]:
            ds = [delta(*paired(r, base(r), m)[:2]) if m in metrics_of(r) else "–" for m in deltas]
            lines.append(
                f"| {r.retriever} | {g} | {r.reader} | {_short(params_label(r.params))} | {r.config_hash} | "
                f"{len(r.scores('recall@5'))} | "
                + " | ".join(ci(r, m) for m in cols)
                + " | "
                + " | ".join(ds)
                + " |"
            )
    lines.append("")
    return lines


def graph_pairs_section(graphs: list[str], pairs: list[tuple[Run, Run]]) -> list[str]:
    """The first graph against the second, per retriever with the same settings and reader."""
    cols = METRICS + ANSWER
    lines = [
        f"## {graphs[0]} against {graphs[1]}, per retriever (same hyper-parameters and reader)",
        "",
        "| retriever | reader | params | " + " | ".join(f"Δ{HEAD[m]}" for m in cols) + " | n |",
        "|:--|:--|:--|" + ":--|" * len(cols) + "--:|",
    ]
    for a, b in pairs:
        res = [paired(a, b, m) if m in metrics_of(a) else None for m in cols]
        lines.append(
            f"| {a.retriever} | {a.reader} | {_short(params_label(a.params))} | "
            + " | ".join(delta(x[0], x[1]) if x else "–" for x in res)
            + f" | {res[0][2]} |"
        )
    lines.append("")
    return lines


def gate_section(graphs: list[str], by_graph: dict[str, list[Run]]) -> list[str]:
    """Spreading activation with its gate against without, on each graph (settings otherwise
    the same)."""
    lines = [
        "## The gate (spreading_activation against spreading_activation_nogate)",
        "",
        "| graph | " + " | ".join(f"Δ{HEAD[m]}" for m in METRICS) + " |",
        "|:--|" + ":--|" * len(METRICS),
    ]
    for g in graphs:
        gate = [r for r in by_graph[g] if r.retriever == "spreading_activation"]
        nogate = [r for r in by_graph[g] if r.retriever == "spreading_activation_nogate"]
        for a in gate:
            for b in nogate:
                if {k: v for k, v in a.params.items() if k != "gate"} == {
                    k: v for k, v in b.params.items() if k != "gate"
                }:
                    lines.append(
                        f"| {g} | "
                        + " | ".join(delta(*paired(a, b, m)[:2]) for m in METRICS)
                        + " |"
                    )
    lines.append("")
    return lines


def summary_section(
    graphs: list[str], by_graph: dict[str, list[Run]], base, pairs: list[tuple[Run, Run]]
) -> list[str]:
    """The tables above read out: which differences are significant (p < 0.05), nothing else."""
    out = ["## What is significant (p < 0.05, read from the tables above)", ""]
    for g in graphs:
        for m in ("recall@5", "recall@10", "fcr@5"):
            up, down = [], []
            for r in by_graph[g]:
                d, p, _ = paired(r, base(r), m)
                if p < 0.05:
                    (up if d > 0 else down).append(f"{r.retriever} ({100 * d:+.1f})")
            out.append(
                f"- {g}, {HEAD[m]} vs dense: better: {', '.join(up) or 'none'}; "
                f"worse: {', '.join(down) or 'none'}"
            )
    for m in METRICS + ANSWER:
        sig = [
            f"{a.retriever} ({100 * d:+.1f})"
            for a, b in pairs
            if m in metrics_of(a)
            for d, p, _ in [paired(a, b, m)]
            if p < 0.05
        ]
        out.append(
            f"- {graphs[0]} vs {graphs[1]}, {HEAD[m]}: {', '.join(sig) or 'no significant change'}"
        )
    out.append("")
    return out


def _short(label: str, width: int = 60) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


if __name__ == "__main__":
    sys.exit(main())
