"""hopbench's `flow_diffusion_code` against QAFD-RAG's own ``run_igraph_qafd``, same graph, seeds, vectors (issue #32).

    HOPBENCH_DATA_DIR=../shared/datasets nice python3 -m benchmarks.parity.qafd.compare \\
        --official-src <QAFD-RAG checkout> [--runs musique:spacy:100,2wikimultihopqa:spacy:200] \\
        [--venv .cache/official-qafd] [--out benchmarks/parity/qafd/results/official_qafd]

QAFD-RAG is not on PyPI: `--official-src` is a copy of Tarzanagh/QAFD-RAG (at least
``src/passage_entity/graph_adapter.py``; its commit goes in the results), kept outside the
repository. Its code needs igraph only: the venv is made with --system-site-packages plus
``igraph==0.11.8`` (the version HippoRAG 2.0.0a4 pins, as in parity/hipporag/compare.py).

For each dataset:graph:questions, hopbench builds (or loads) the graph of
`graph.construction=hipporag2` and runs `retriever=flow_diffusion_code` with the fact filter off
(no LLM: HippoRAG 2's 10 candidate facts are kept, as parity/hipporag/compare.py does). The
worker gets: HippoRAG 2's igraph edges as hopbench reads them from that graph
(kg/hipporag2_igraph.py `directed_entries`: parallel edges, in insertion order, with weights),
each vertex's float32 vector, each question's seed weights (hopbench's HippoRAG 2 reset, which
parity/hipporag/compare.py checked against the official package) and its float32 vector. It
runs the authors' file unchanged. Compared: x at every vertex (max |Δx|), the top-10 per
question (identical lists; otherwise whether they differ only inside an exact score tie), and
the time per question of both (hopbench: the kernel alone, as the official call, and the whole
`retrieve`), one thread each.
"""

from __future__ import annotations

from benchmarks.common.worker import ONE_THREAD, one_thread_by_default, run_worker

one_thread_by_default()

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import args as common_args
from benchmarks.common import venv as common_venv
from benchmarks.common.paths import REPO, results_dir
from benchmarks.common.report import render_only, write_json_and_md
from benchmarks.common.timing import loadavg, pct
from benchmarks.parity.hipporag import compare as cohr
from benchmarks.parity.hipporag.compare import compose

PINS = ["igraph==0.11.8", "texttable==1.7.0"]  # + the hipporag room's PINS with --check-graph
WORKER = Path(__file__).resolve().parent / "worker.py"
K = 10
FIXTURE_QUESTIONS = 10  # questions per run kept in the test fixture


def ensure_venv(venv: Path) -> Path:
    return common_venv.ensure_venv(venv, PINS, no_deps=True)


def official_commit(src: Path) -> str:
    f = src / "COMMIT"
    return f.read_text().strip() if f.exists() else "unrecorded"


def hopbench_side(dataset_name: str, graph: str, limit: int, args) -> dict:
    from hopbench.harness.compose import build_dataset, build_encoder, build_retriever
    from hopbench.harness.run_store import config_hash
    from hopbench.harness.runner import semantic_config
    from hopbench.kg import load_or_build
    from hopbench.kg.hipporag2_igraph import directed_entries
    from hopbench.retrieve.base import Services
    from hopbench.retrieve.qafd.code_push import rank_passages

    cfg = compose(dataset_name, graph, "flow_diffusion_code", args.data_dir, args.cache_dir)
    dataset = build_dataset(cfg)
    encoder = build_encoder(cfg)
    kg = load_or_build(dataset, cfg.graph, encoder=encoder, cache_dir=args.cache_dir)
    r = build_retriever(cfg)
    services = Services(dataset=dataset, encoder=encoder, llm=None, graphdb=None)
    t = time.perf_counter()
    r.prepare(kg, services)
    prepare_s = time.perf_counter() - t
    questions = list(dataset.questions)[:limit]
    services.encode_questions(questions)
    rows, xs, seeds, qv = [], [], [], []
    for q in questions:
        reset, dense, trace = r.seeding.reset_vector(q)
        qe = np.asarray(services.query_embedding(q), dtype=np.float32)
        if reset is None:
            raise SystemExit(f"{q.id}: no seed (dense fallback); the comparison needs seeds")
        t = time.perf_counter()
        res = r.diffuse(reset, qe)
        order, scores = rank_passages(res.x[kg.n_entities :])
        kernel_ms = 1000 * (time.perf_counter() - t)
        t = time.perf_counter()
        full = r.retrieve(q, K)
        retrieve_ms = 1000 * (time.perf_counter() - t)
        top = [int(i) for i in order[:K]]
        if [kg.passage_ids[i] for i in top] != full.passage_ids:
            raise SystemExit(f"{q.id}: retrieve() and the kernel disagree")
        rows.append(
            {
                "id": q.id,
                "top": top,
                "scores": [float(scores[i]) for i in order[: K + 1]],
                "kernel_ms": kernel_ms,
                "retrieve_ms": retrieve_ms,
                "iterations": res.iterations,
                "pushes": res.pushes,
                "converged": res.converged,
            }
        )
        xs.append(res.x)
        nz = np.flatnonzero(reset)
        seeds.append((nz, reset[nz]))
        qv.append(qe)
    return {
        "cfg": cfg,
        "kg": kg,
        "retriever": r,
        "rows": rows,
        "x": np.stack(xs),
        "seeds": seeds,
        "queries": np.stack(qv),
        "prepare_s": prepare_s,
        "entries": directed_entries(kg),
        "config_hash": config_hash(semantic_config(cfg, dataset, r)),
        "dataset": dataset,
    }


def export(work: Path, hop: dict, order_check: bool = False) -> None:
    work.mkdir(parents=True, exist_ok=True)
    kg, r = hop["kg"], hop["retriever"]
    src, dst, w = hop["entries"]
    np.savez(
        work / "graph.npz",
        n=kg.n_nodes,
        src=src,
        dst=dst,
        weight=w,
        passages=np.arange(kg.n_entities, kg.n_nodes),
    )
    np.save(work / "nodes.npy", r.node_emb)
    ptr = np.cumsum([0] + [len(i) for i, _ in hop["seeds"]])
    np.savez(
        work / "questions.npz",
        idx=np.concatenate([i for i, _ in hop["seeds"]]),
        val=np.concatenate([v for _, v in hop["seeds"]]),
        ptr=ptr,
        queries=hop["queries"],
    )
    (work / "settings.json").write_text(
        json.dumps(
            {
                "alpha": r.alpha,
                "epsilon": r.epsilon,
                "max_iterations": r.max_iterations,
                "step_size": r.step_size,
                "weight_scheme": r.weight_scheme,  # the config's: a mismatch fails parity
                "random_seed": r.random_seed,
                "order_check": order_check,
            }
        )
    )


def run_official(py: Path, src: Path, work: Path) -> dict:
    run_worker(
        py,
        WORKER,
        [src, work],
        log=work / "official.log",
        env=ONE_THREAD,
        what="the official code",
        tail=15,
    )
    out = json.loads((work / "official.json").read_text())
    out["x"] = np.load(work / "official_x.npy")
    return out


def check_graph(spec: str, hop: dict, args, py: Path) -> dict:
    """hopbench's reading of HippoRAG 2's igraph (kg/hipporag2_igraph.py) against the igraph the
    official HippoRAG 2 package builds from the same triples and vectors (parity/hipporag's
    worker, run in the same venv): vertex order, neighbour lists with multiplicity, and the weight
    `get_eid` gives each pair."""
    from hopbench.kg.hipporag2_igraph import multigraph

    kg, r = hop["kg"], hop["retriever"]
    dataset = hop["dataset"]
    r.services.encode_questions(list(dataset.questions))
    work = Path(args.work_dir) / (spec.replace(":", "_") + "_hipporag")
    docs = cohr.export_inputs(work, dataset, hop["cfg"], kg, r.services)
    cohr.run_official(py, work, "0")
    z = np.load(work / "official_edges.npz", allow_pickle=False)
    kinds, contents = z["kind"].tolist(), z["content"].tolist()
    doc_index = {d: i for i, d in enumerate(docs)}
    to_ours = np.array(
        [
            kg.entity_index(c) if k == "entity" else kg.n_entities + doc_index[c]
            for k, c in zip(kinds, contents)
        ],
        dtype=np.int64,
    )
    off = multigraph(
        kg.n_nodes, to_ours[z["src"]], to_ours[z["dst"]], z["weight"].astype(np.float64)
    )
    ours = r.graph
    same_rows = bool(
        np.array_equal(off.indptr, ours.indptr) and np.array_equal(off.indices, ours.indices)
    )
    dw = np.abs(off.weight - ours.weight) if same_rows else np.array([np.inf])
    return {
        "vertex_order_identical": bool(np.array_equal(to_ours, np.arange(kg.n_nodes))),
        "official_edges": int(len(z["src"])),
        "hopbench_edges": int(len(hop["entries"][0])),
        "neighbour_lists_identical": same_rows,
        "max_abs_pair_weight_difference": float(dw.max()),
        "pairs_weight_differs_over_1e-6": int((dw > 1e-6).sum() // 2),
    }


def inside_tie(
    ours: list[int], off: list[int], off_scores: list[float], our_scores: list[float]
) -> bool:
    """Differences only among passages of exactly equal score (as the official scores them)."""
    if sorted(ours) != sorted(off) and off_scores[K - 1] != off_scores[min(K, len(off_scores) - 1)]:
        return False
    for a, b, sa, sb in zip(ours, off, our_scores, off_scores):
        if a != b and sa != sb:
            return False
    return True


def compare(spec: str, args, py: Path) -> tuple[dict, dict]:
    dataset_name, graph, limit = spec.split(":")
    hop = hopbench_side(dataset_name, graph, int(limit), args)
    work = Path(args.work_dir) / f"{dataset_name}_{graph}"
    export(work, hop, order_check=dataset_name in args.order_check)
    t = time.perf_counter()
    if (
        args.reuse_official and (work / "official.json").exists()
    ):  # inputs just rewritten: must be the same
        off = json.loads((work / "official.json").read_text())
        off["x"] = np.load(work / "official_x.npy")
    else:
        off = run_official(py, Path(args.official_src), work)
    worker_s = time.perf_counter() - t
    rows = hop["rows"]
    n = len(rows)
    dx = np.abs(hop["x"] - off["x"])
    identical = [rows[i]["top"] == off["questions"][i]["top"][:K] for i in range(n)]
    ties = [
        i
        for i in range(n)
        if not identical[i]
        and inside_tie(
            rows[i]["top"],
            off["questions"][i]["top"][:K],
            off["questions"][i]["scores"],
            rows[i]["scores"],
        )
    ]
    kg = hop["kg"]
    src, dst, w = hop["entries"]
    res = {
        "dataset": dataset_name,
        "graph": graph,
        "n_questions": n,
        "config_hash": hop["config_hash"],
        "graph_key": kg.manifest.get("graph_key"),
        "nodes": kg.n_nodes,
        "entities": kg.n_entities,
        "passages": kg.n_passages,
        "igraph_edges": len(src),
        "top10_identical": int(sum(identical)),
        "differ_inside_tie": len(ties),
        "differ_not_tie": [rows[i]["id"] for i in range(n) if not identical[i] and i not in ties],
        "max_abs_dx": float(dx.max()),
        "max_rel_dx": float((dx / np.maximum(np.abs(off["x"]), 1e-300)).max()),
        "questions_x_bitwise_equal": int(
            sum(np.array_equal(hop["x"][i], off["x"][i]) for i in range(n))
        ),
        "iterations": pct([r["iterations"] for r in rows]),
        "pushes": pct([r["pushes"] for r in rows]),
        "converged": int(sum(r["converged"] for r in rows)),
        "ms": {
            "official run_igraph_qafd": pct([q["ms"] for q in off["questions"]]),
            "hopbench kernel (code_flow_diffusion + ranking)": pct([r["kernel_ms"] for r in rows]),
            "hopbench retrieve (seeds + kernel)": pct([r["retrieve_ms"] for r in rows]),
        },
        "official_order_check": off.get("order_check"),
        "hopbench_prepare_s": hop["prepare_s"],
        "worker_s": worker_s,
        "official_versions": off["versions"],
    }
    if dataset_name in args.check_graph:
        res["graph_vs_hipporag_package"] = check_graph(spec, hop, args, py)
    res["speed_ratio_official_over_kernel_p50"] = (
        res["ms"]["official run_igraph_qafd"]["p50"]
        / res["ms"]["hopbench kernel (code_flow_diffusion + ranking)"]["p50"]
    )
    fixture = {
        "dataset": dataset_name,
        "graph": graph,
        "graph_key": kg.manifest.get("graph_key"),
        "official_commit": official_commit(Path(args.official_src)).splitlines()[2:3],
        "questions": [],
    }
    for i in range(min(FIXTURE_QUESTIONS, n)):
        o = off["questions"][i]
        x = off["x"][i]
        keep = (
            range(kg.n_nodes) if kg.n_nodes <= 1000 else np.argsort(-x, kind="stable")[:50].tolist()
        )
        fixture["questions"].append(
            {
                "id": rows[i]["id"],
                "top10": [kg.passage_ids[j] for j in o["top"][:K]],
                "top10_scores": o["scores"][:K],
                "x": {node_name(kg, j): float(x[j]) for j in keep},
            }
        )
    return res, fixture


def node_name(kg, j: int) -> str:
    return (
        "e:" + kg.entity_names[j] if j < kg.n_entities else "p:" + kg.passage_ids[j - kg.n_entities]
    )


def _commit_line(text: str) -> str:
    """The commit hash from `git log -1` output (its third line's second word), else the text."""
    lines = text.splitlines()
    return lines[2].split()[1] if len(lines) > 2 else text


def markdown(res: dict) -> str:
    L = [
        "# QAFD: hopbench `flow_diffusion_code` against QAFD-RAG's own `run_igraph_qafd` (issue #32)",
        "",
        f"Made by `benchmarks/parity/qafd/compare.py` ({res['started']}; load average {res['loadavg_start']} at "
        f"the start, {res['loadavg_end']} at the end, on a 2-core machine shared with other helpers' jobs). "
        "Official: Tarzanagh/QAFD-RAG `src/passage_entity/graph_adapter.py` "
        f"({_commit_line(res['official_commit'])}), "
        "run unchanged in its own virtual environment (igraph 0.11.8), called with `flow_diffusion_code`'s "
        "settings (α 2, ε 0.01, 500 iterations, the weight scheme the config names, step 0.2, seed 42: "
        "QAFD-RAG's config.py at 17e5372). Both sides get the same inputs, so this is parity of the push "
        "loop given hopbench's seeds (the authors' `_graph_search` is not run): "
        "HippoRAG 2's igraph edges (graph.construction=hipporag2, parallel edges in insertion order), the "
        "all-MiniLM-L6-v2 float32 vectors of every vertex and question, and each question's HippoRAG 2 seed "
        "weights (linking_top_k 10, fact filter off). Times: one thread, per question; the official time is "
        "the `run_igraph_qafd` call, hopbench's is the kernel plus ranking (same work) and the whole "
        "`retrieve` (seeds too).",
        "",
    ]
    L += [
        "| run | questions | top-10 identical | differ inside exact tie | differ otherwise | x bitwise equal | "
        "max abs Δx | max rel Δx | iterations p50 / p90 | converged |",
        "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for g in res["runs"]:
        L.append(
            f"| {g['dataset']} / {g['graph']} | {g['n_questions']} | {g['top10_identical']} | "
            f"{g['differ_inside_tie']} | {len(g['differ_not_tie'])} | {g['questions_x_bitwise_equal']} | "
            f"{g['max_abs_dx']:.3g} | {g['max_rel_dx']:.3g} | {g['iterations']['p50']:.0f} / "
            f"{g['iterations']['p90']:.0f} | {g['converged']}/{g['n_questions']} |"
        )
    L += [
        "",
        "| run | official run_igraph_qafd p50 ms | hopbench kernel p50 ms | hopbench retrieve p50 ms | "
        "official / hopbench kernel |",
        "|:--|--:|--:|--:|--:|",
    ]
    for g in res["runs"]:
        m = g["ms"]
        L.append(
            f"| {g['dataset']} / {g['graph']} | {m['official run_igraph_qafd']['p50']:.1f} | "
            f"{m['hopbench kernel (code_flow_diffusion + ranking)']['p50']:.1f} | "
            f"{m['hopbench retrieve (seeds + kernel)']['p50']:.1f} | "
            f"{g['speed_ratio_official_over_kernel_p50']:.1f}x |"
        )
    L += [
        "",
        "Graphs: "
        + "; ".join(
            f"{g['dataset']}/{g['graph']} `{g['graph_key']}`: {g['nodes']:,} vertices "
            f"({g['entities']:,} entities), {g['igraph_edges']:,} igraph edges; hopbench "
            f"config `{g['config_hash']}`"
            for g in res["runs"]
        )
        + ".",
        "",
        *[
            f"Graph check ({g['dataset']}/{g['graph']}), hopbench's reading of HippoRAG 2's igraph against the one "
            "the official `hipporag==2.0.0a4` package builds from the same triples and vectors: "
            "vertex order identical "
            f"{c['vertex_order_identical']}, {c['official_edges']:,} vs {c['hopbench_edges']:,} edges, neighbour lists "
            f"(with parallel edges) identical {c['neighbour_lists_identical']}, pair weights as `get_eid` reads them: "
            f"max difference {c['max_abs_pair_weight_difference']:.3g}, "
            f"{c['pairs_weight_differs_over_1e-6']} pairs over 1e-6.\n"
            for g in res["runs"]
            if (c := g.get("graph_vs_hipporag_package"))
        ],
        "Random draws: QAFD-RAG's `IGraphQAFD.__init__` calls `random.seed(42)` for every question, so "
        "its draws never depend on earlier questions; hopbench uses a `random.Random(42)` per question, "
        "which is the same sequence. Reproducing a run-wide generator is therefore not needed and costs "
        "no agreement. "
        + " ".join(
            f"Checked on {g['dataset']}: the official code run again over the questions in reverse order gives "
            f"the same x on {c['x_identical_in_reverse_order']}/{c['questions']} questions."
            for g in res["runs"]
            if (c := g.get("official_order_check"))
        ),
        "",
    ]
    return "\n".join(L)


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--official-src",
        required=True,
        help="a checkout of Tarzanagh/QAFD-RAG outside the repository (its commit is recorded)",
    )
    ap.add_argument(
        "--runs",
        default="musique:spacy:100,2wikimultihopqa:spacy:200",
        help="comma-separated dataset:graph:questions to compare",
    )
    ap.add_argument(
        "--venv",
        default=str(REPO / ".cache" / "official-qafd"),
        help="the official side's virtual environment (made on first use)",
    )
    ap.add_argument("--work-dir", default=None, help="inputs and outputs of the official side")
    common_args.add_data_and_cache_args(ap)
    ap.add_argument(
        "--out",
        default=str(results_dir(__file__) / "official_qafd"),
        help="writes OUT.json and OUT.md",
    )
    ap.add_argument(
        "--fixture-run",
        default="musique_sub:spacy:3",
        help="the run whose official outputs become the test fixture (also compared)",
    )
    ap.add_argument(
        "--fixture",
        default=str(REPO / "tests" / "retrieve" / "data" / "official_qafd_musique_sub.json"),
        help="where the fixture run's official outputs are written, for the CI test",
    )
    ap.add_argument("--render-only", action="store_true", help="rewrite <out>.md from <out>.json")
    ap.add_argument(
        "--reuse-official",
        action="store_true",
        help="use the official outputs already in the work dir (same inputs) instead of rerunning",
    )
    ap.add_argument(
        "--order-check",
        default="musique",
        help="datasets on which the official code also runs the questions in reverse order",
    )
    ap.add_argument(
        "--check-graph",
        default="",
        help="datasets (comma-separated) whose igraph is also built by the official HippoRAG 2 "
        "package (its pins installed in the same venv) and compared with hopbench's reading",
    )
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    out = Path(args.out)
    if args.render_only:
        render_only(out, markdown)
        return 0
    args.work_dir = args.work_dir or str(Path(args.cache_dir) / "official-qafd")
    args.check_graph = [d for d in args.check_graph.split(",") if d]
    args.order_check = [d for d in args.order_check.split(",") if d]
    if args.check_graph:
        PINS[:] = sorted(set(PINS) | set(cohr.PINS))
    py = ensure_venv(Path(args.venv))
    res = {
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "loadavg_start": loadavg(),
        "official_commit": official_commit(Path(args.official_src)),
        "runs": [],
    }
    specs = [args.fixture_run] if args.fixture_run else []
    for spec in specs + [s for s in args.runs.split(",") if s and s != args.fixture_run]:
        print(f"== {spec}", flush=True)
        r, fixture = compare(spec, args, py)
        res["runs"].append(r)
        print(json.dumps(r, indent=1), flush=True)
        if spec == args.fixture_run:
            Path(args.fixture).parent.mkdir(parents=True, exist_ok=True)
            Path(args.fixture).write_text(json.dumps(fixture, indent=1) + "\n")
    res["loadavg_end"] = loadavg()
    write_json_and_md(out, res, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
