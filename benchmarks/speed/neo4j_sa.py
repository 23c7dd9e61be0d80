"""Spreading activation inside Neo4j (one Cypher query) vs in memory, and the gate's effect.

    HOPBENCH_NEO4J_PORT=17688 nice python -m benchmarks.speed.neo4j_sa \
        [--datasets musique,2wiki]  (2wiki needs its 6,119-passage graph built first)
        [--limit-2wiki 200] [--depth 3] [--cache-dir DIR]

Needs a running server (`make neo4j-up`, port from HOPBENCH_NEO4J_PORT) and builds the graphs
on first use (cached by content hash). Per dataset graph:

* export: a forced full export (seconds), then `ensure_exported` on the exported database
  (the per-run cost once the database holds the graph);
* per question, depth T, gate on and off, both query forms: the Neo4j round trip alone
  (`run_query`: seeds, T steps, gate, passage ranking, top-10) and the in-memory
  `SpreadingActivationRetriever.retrieve` minus the spaCy mention step both share (timed
  separately per question), so both sides start from the question's mentions;
* the gate ratio inside Neo4j: ungated / gated query time (QASA reports 1.5x to 4.9x faster
  with the gate), per question (median) and of the means; with the activated-entity counts.

Both implementations must agree (top-10 checked per question, reported). Results go to
benchmarks/speed/results/neo4j_sa.{json,md}. Start-up time: benchmarks/speed/neo4j_startup.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks.common.paths import REPO, results_dir
from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.graphdb.connection import GraphDBSettings, connect
from hopbench.graphdb.export import ensure_exported, export_graph
from hopbench.kg import load_or_build
from hopbench.retrieve.base import Services
from hopbench.retrieve.qasa.activation_rules import relation_matrix
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.qasa.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever
from hopbench.retrieve.question import question_mentions  # noqa

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))
K = 10


def load(name: str, limit_2wiki: int):
    if name == "musique":
        return load_dataset(
            "musique",
            "musique",
            DATA / "musique/musique_train.json",
            DATA / "musique/musique_train_corpus.json",
        )
    if name == "2wiki":
        return load_dataset(
            "2wikimultihopqa",
            "2wiki_linearrag",
            DATA / "2wikimultihopqa/2wikimultihopqa_questions.json",
            DATA / "2wikimultihopqa/2wikimultihopqa_corpus.json",
            limit=limit_2wiki,
        )
    raise SystemExit(f"unknown dataset {name!r} (musique, 2wiki)")


def pct(xs, p):
    return float(np.percentile(xs, p)) if xs else float("nan")


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, 1000 * (time.perf_counter() - t0)


def bench_dataset(name, args, encoder, db):
    ds = load(name, args.limit_2wiki)
    t0 = time.perf_counter()
    kg = load_or_build(ds, None, encoder=encoder, cache_dir=args.cache_dir)
    build_s = time.perf_counter() - t0
    services = Services(dataset=ds, encoder=encoder)
    services.encode_questions(ds.questions)
    _ = services.passage_embeddings
    pairs = partial(relation_matrix, edges="pairs")  # QASA's rule, as its retriever passes it
    report = export_graph(db, kg, pair_counts=pairs)
    _, check_ms = timed(ensure_exported, db, kg, pair_counts=pairs)
    out = {
        "dataset": ds.name,
        "questions": len(ds.questions),
        "entities": kg.n_entities,
        "passages": kg.n_passages,
        "relation_pairs": report.relations,
        "context_edges": report.mentions,
        "graph_load_or_build_s": build_s,
        "export_s": report.seconds,
        "export_check_ms": check_ms,
        "depth": args.depth,
        "configs": [],
    }
    print(
        f"{name}: {kg.n_entities} entities, {kg.n_passages} passages, {report.relations} relation pairs; "
        f"export {report.seconds:.1f} s, export check {check_ms:.0f} ms",
        flush=True,
    )

    mentions = {q.id: question_mentions(q.text) for q in ds.questions}  # warm spaCy
    for gate in (True, False):
        mem = SpreadingActivationRetriever(gate=gate, depth=args.depth, top_paths=0)
        mem.prepare(kg, services)
        mem_ms, mention_ms, mem_top = [], [], {}
        for q in ds.questions:
            mentions[q.id], m_ms = timed(question_mentions, q.text)
            r, ms = timed(mem.retrieve, q, K)
            mem_ms.append(ms - m_ms)
            mention_ms.append(m_ms)
            mem_top[q.id] = r.passage_ids
        for form in args.forms:
            neo = SpreadingActivationNeo4jRetriever(gate=gate, depth=args.depth, form=form)
            neo.prepare(kg, services, db=db)
            params = {q.id: neo.parameters(q, K) for q in ds.questions}
            neo.run_query(params[ds.questions[0].id])  # plan once
            q_ms, activated, agree = [], [], 0
            for q in ds.questions:
                res, ms = timed(neo.run_query, params[q.id])
                q_ms.append(ms)
                activated.append(len(res["activation"]))
                agree += [r["id"] for r in res["ranked"][:K]] == mem_top[q.id]
            row = {
                "gate": gate,
                "form": form,
                "neo4j_query_ms": q_ms,
                "in_memory_ms": mem_ms,
                "mentions_ms": mention_ms,
                "activated": activated,
                "top10_agree": agree,
            }
            out["configs"].append(row)
            print(
                f"  gate={gate!s:5} form={form:8} neo4j p50 {pct(q_ms, 50):7.1f} ms  in memory p50 "
                f"{pct(mem_ms, 50):6.2f} ms  ratio {pct(q_ms, 50) / pct(mem_ms, 50):6.1f}x  "
                f"activated mean {np.mean(activated):.0f}  top-10 agree {agree}/{len(ds.questions)}",
                flush=True,
            )
    for form in args.forms:
        on = next(c for c in out["configs"] if c["gate"] and c["form"] == form)
        off = next(c for c in out["configs"] if not c["gate"] and c["form"] == form)
        per_q = [b / a for a, b in zip(on["neo4j_query_ms"], off["neo4j_query_ms"])]
        out.setdefault("gate_ratio", {})[form] = {
            "median_per_question": statistics.median(per_q),
            "ratio_of_means": float(np.mean(off["neo4j_query_ms"]) / np.mean(on["neo4j_query_ms"])),
            "activated_mean_gate": float(np.mean(on["activated"])),
            "activated_mean_nogate": float(np.mean(off["activated"])),
        }
        g = out["gate_ratio"][form]
        print(
            f"  gate ratio ({form}): ungated/gated median {g['median_per_question']:.2f}x, "
            f"of means {g['ratio_of_means']:.2f}x",
            flush=True,
        )
    return out


def markdown(results, cmd, env) -> str:
    lines = ["# Spreading activation in Neo4j vs in memory", "", f"`{cmd}` ({env})", ""]
    for r in results:
        lines += [
            f"### {r['dataset']}: {r['questions']} questions, {r['entities']:,} entities, "
            f"{r['passages']:,} passages, {r['relation_pairs']:,} relation pairs, "
            f"{r['context_edges']:,} context edges; T = {r['depth']}",
            "",
            f"- export {r['export_s']:.1f} s; check of an exported database {r['export_check_ms']:.0f} ms",
            "",
            "| gate | form | Neo4j query p50 ms | p95 ms | mean ms | in memory p50 ms | p95 ms | "
            "ratio p50 (Neo4j / memory) | spaCy mentions p50 ms | activated (mean) | top-10 agree |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in r["configs"]:
            q, m = c["neo4j_query_ms"], c["in_memory_ms"]
            lines.append(
                f"| {'on' if c['gate'] else 'off'} | {c['form']} | {pct(q, 50):.1f} | {pct(q, 95):.1f} | "
                f"{np.mean(q):.1f} | {pct(m, 50):.2f} | {pct(m, 95):.2f} | {pct(q, 50) / pct(m, 50):.2f}x | "
                f"{pct(c['mentions_ms'], 50):.1f} | {np.mean(c['activated']):.0f} | "
                f"{c['top10_agree']}/{len(q)} |"
            )
        lines += [
            "",
            "| form | gate speed-up in Neo4j: median per question (ungated / gated) | ratio of means | "
            "activated with gate | without |",
            "|---|---|---|---|---|",
        ]
        for form, g in r["gate_ratio"].items():
            lines.append(
                f"| {form} | {g['median_per_question']:.2f}x | {g['ratio_of_means']:.2f}x | "
                f"{g['activated_mean_gate']:.0f} | {g['activated_mean_nogate']:.0f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="musique,2wiki")
    ap.add_argument("--limit-2wiki", type=int, default=200)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--forms", default="apoc,portable")
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("HOPBENCH_CACHE_DIR", Path.home() / ".cache" / "hopbench")),
    )
    ap.add_argument("--out", type=Path, default=results_dir(__file__) / "neo4j_sa")
    args = ap.parse_args()
    args.forms = args.forms.split(",")
    port = os.environ.get("HOPBENCH_NEO4J_PORT", "7687")
    db = connect(GraphDBSettings(uri=f"bolt://127.0.0.1:{port}", query_timeout=None))
    encoder = Encoder(cache_dir=args.cache_dir, show_progress=False)
    env = (
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {os.cpu_count()} cpus shared, "
        f"load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}"
    )
    results = [bench_dataset(n, args, encoder, db) for n in args.datasets.split(",")]
    db.close()
    cmd = "nice python -m benchmarks.speed.neo4j_sa " + " ".join(sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(
        json.dumps({"command": cmd, "env": env, "results": results}, indent=1)
    )
    args.out.with_suffix(".md").write_text(markdown(results, cmd.strip(), env))
    print(f"wrote {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
