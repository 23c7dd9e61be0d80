"""Speed of the retrieval kernels, as ratios against references timed in the same run.

    nice python -m benchmarks.speed.kernels graph     # per-query latency on a 2Wiki graph
    nice python -m benchmarks.speed.kernels scaling   # synthetic graphs, 10k .. 1M edges

`graph`: PPR per query (ours vs igraph prpack, which HippoRAG 2 calls, vs networkx) with
identical top-k passage rankings checked, batched PPR throughput, spreading activation
per query and batched (vs a plain-Python dict transcription of the QASA Cypher), QAFD per
query (vs the code's scheme: a sequential random push scanning for excess nodes).
Until the project's knowledge graph exists the graph is the title-mention stand-in
(`tests/helpers/synthetic_graphs.py`, `title_mention_graph`) over the 2Wiki corpus, seeded by
the entities each question mentions; point `bench_on_graph(adj, queries, ...)` at the real
KG's CSR later. Gates, cosines and dense scores are random stand-ins (they only decide how
far activation and flow spread); the real ones come with the KG and the encoder.

Results: benchmarks/speed/results/kernels_<part>.{json,md}. Run under `nice`; each part takes
a few minutes on 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import igraph as ig
import networkx as nx
import numpy as np
import scipy
import scipy.sparse as sp

from benchmarks.common.args import add_out_dir_arg
from benchmarks.common.paths import REPO, results_dir
from hopbench.core.atomic import write_json, write_text
from hopbench.retrieve.kernels.ppr import (
    personalized_pagerank,
    personalized_pagerank_batch,
    prepare_ppr,
)
from hopbench.retrieve.qafd.flow import (
    degree_capacities,
    is_bounded,
    push_flow,
    qafd,
    query_aware_weights,
    source_mass,
)
from hopbench.retrieve.qasa.spread import (
    spreading_activation,
    spreading_activation_batch,
)
from tests.helpers.synthetic_graphs import random_graph, title_mention_graph

RESULTS = results_dir(__file__)
DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))


# ---------------------------------------------------------------- timing helpers
class Timings(np.ndarray):
    """Wall-clock seconds per call, with the process CPU seconds per call in `.cpu`."""


def time_calls(fn, args_list) -> Timings:
    wall, cpu = [], []
    for args in args_list:
        c, t = time.process_time(), time.perf_counter()
        fn(*args)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = np.array(wall).view(Timings)
    out.cpu = np.array(cpu)
    return out


def stats_ms(t: np.ndarray) -> dict:
    """Wall-clock p50/p95 (latency on this shared machine) and CPU p50 (all threads of the
    process: igraph's prpack runs OpenMP threads, so its CPU time can exceed its wall time)."""
    out = {
        "n": int(t.size),
        "p50_ms": float(np.median(t) * 1e3),
        "p95_ms": float(np.percentile(t, 95) * 1e3),
        "mean_ms": float(np.mean(t) * 1e3),
    }
    if getattr(t, "cpu", None) is not None:
        out["cpu_p50_ms"] = float(np.median(t.cpu) * 1e3)
    return out


# ---------------------------------------------------------------- references
def igraph_from_csr(adj: sp.csr_matrix) -> ig.Graph:
    upper = sp.triu(adj).tocoo()
    g = ig.Graph(
        n=adj.shape[0], edges=np.column_stack([upper.row, upper.col]).tolist(), directed=False
    )
    g.es["weight"] = upper.data.tolist()
    return g


def igraph_ppr(g: ig.Graph, reset: np.ndarray) -> np.ndarray:
    return np.array(
        g.personalized_pagerank(
            damping=0.5,
            directed=False,
            weights="weight",
            reset=reset.tolist(),
            implementation="prpack",
        )
    )


def nx_ppr(g: nx.Graph, reset: np.ndarray) -> np.ndarray:
    pr = nx.pagerank(
        g, alpha=0.5, personalization=dict(enumerate(reset.tolist())), weight="weight", tol=1e-10
    )
    return np.array([pr[i] for i in range(len(reset))])


def python_spread(nbrs, seeds, seed_act, gate, decay=0.7, steps=3, threshold=0.01):
    """Dict transcription of the QASA Cypher (the shape a per-node implementation has)."""
    res = dict(zip(seeds, seed_act))
    for _ in range(steps):
        inc = defaultdict(float)
        for u, au in res.items():
            if au > threshold:
                for v, c in nbrs[u]:
                    if v not in res or res[v] < au:
                        inc[v] += c * au * decay * gate[v]
        for v, i in inc.items():
            if i > threshold:
                res[v] = res.get(v, 0.0) + i
    return res


def python_push(nbrs, wdeg, T, delta, budget, epsilon, seed=42):
    """The QAFD code's loop: scan for excess nodes, push one chosen at random (IGraphQAFD)."""
    rng = random.Random(seed)
    m, x = delta.copy(), np.zeros_like(delta)
    for _ in range(budget):
        cand = np.flatnonzero((m > T + epsilon) & (wdeg > 0))
        if cand.size == 0:
            break
        v = int(rng.choice(cand))
        exc = m[v] - T[v]
        x[v] += exc / wdeg[v]
        m[v] = T[v]
        for u, w in nbrs[v]:
            m[u] += exc * w / wdeg[v]
    return x


def adjacency_lists(adj: sp.csr_matrix):
    return [
        list(
            zip(
                adj.indices[adj.indptr[i] : adj.indptr[i + 1]].tolist(),
                adj.data[adj.indptr[i] : adj.indptr[i + 1]].tolist(),
            )
        )
        for i in range(adj.shape[0])
    ]


def topk_agree(ours: np.ndarray, ref: np.ndarray, k: int, tie: float = 1e-9) -> bool:
    """Same top-k order, allowing swaps only between scores tied within `tie`."""
    top = np.argsort(-ours, kind="stable")[:k]
    return bool(np.all(np.abs(ref[top] - np.sort(ref)[::-1][:k]) <= tie))


# ---------------------------------------------------------------- the per-graph benchmark
def make_query_inputs(n: int, n_passages: int, queries, seed: int = 0):
    """Per question: HippoRAG-like reset (seed weights + 0.05 x dense stand-in on every
    passage), a gate vector and node-query cosines (random stand-ins)."""
    rng = np.random.default_rng(seed)
    out = []
    for seeds, weights in queries:
        reset = np.zeros(n)
        reset[seeds] = weights
        reset[:n_passages] += 0.05 * rng.uniform(0, 1, n_passages)
        gate = np.maximum(0.0, rng.normal(0.15, 0.2, n))
        cos = rng.uniform(-0.1, 0.7, n)
        out.append(
            {
                "seeds": np.asarray(seeds),
                "weights": np.asarray(weights, float),
                "reset": reset,
                "gate": gate,
                "cos": cos,
            }
        )
    return out


def bench_on_graph(
    adj: sp.csr_matrix,
    queries,
    *,
    n_passages: int,
    k: int = 10,
    n_reference: int = 20,
    batch: int = 64,
    flow_budget: int = 2000,
    flow_alpha: float = 50.0,
    label: str = "graph",
    with_networkx: bool = True,
) -> dict:
    """Time every kernel on one graph. queries: list of (seed node indices, seed weights).
    n_passages: nodes [0, n_passages) are passages (ranked for the PPR check)."""
    adj = sp.csr_matrix(adj, dtype=np.float64)
    n = adj.shape[0]
    qs = make_query_inputs(n, n_passages, queries)
    ref_qs = qs[:n_reference]
    out = {
        "graph": label,
        "nodes": n,
        "undirected_edges": int(sp.triu(adj).nnz),
        "queries": len(qs),
    }

    out.update(
        ppr_section(adj, qs, n_passages, k=k, batch=batch, nx_qs=ref_qs if with_networkx else [])
    )
    out["spread"] = spread_section(adj, qs, n_reference, batch)
    out["flow"] = flow_section(adj, qs, ref_qs, flow_alpha, flow_budget)
    return out


def ppr_section(adj, qs, n_passages: int, *, k: int, batch: int, nx_qs: list) -> dict:
    """PPR: ours against igraph prpack (every query) and networkx (`nx_qs`), one at a time and
    batched; top-k passage agreement and the largest difference from igraph."""
    t = time.perf_counter()
    op = prepare_ppr(adj)
    prepare_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    g_ig = igraph_from_csr(adj)
    igraph_build_ms = (time.perf_counter() - t) * 1e3
    g_nx = nx.from_scipy_sparse_array(adj, edge_attribute="weight") if nx_qs else None
    personalized_pagerank(op, qs[0]["reset"])  # warm-up
    igraph_ppr(g_ig, qs[0]["reset"])
    ours_t = time_calls(lambda r: personalized_pagerank(op, r), [(q["reset"],) for q in qs])
    ig_t = time_calls(lambda r: igraph_ppr(g_ig, r), [(q["reset"],) for q in qs])
    nx_t = time_calls(lambda r: nx_ppr(g_nx, r), [(q["reset"],) for q in nx_qs])
    agree_ig = agree_nx = 0
    max_diff_ig = 0.0
    for i, q in enumerate(qs):
        ours = personalized_pagerank(op, q["reset"])
        ref = igraph_ppr(g_ig, q["reset"])
        max_diff_ig = max(max_diff_ig, float(np.abs(ours - ref).max()))
        agree_ig += topk_agree(ours[:n_passages], ref[:n_passages], k)
        if i < len(nx_qs):
            agree_nx += topk_agree(ours[:n_passages], nx_ppr(g_nx, q["reset"])[:n_passages], k)
    resets = np.stack([q["reset"] for q in qs], axis=1)
    t = time.perf_counter()
    for s in range(0, len(qs), batch):
        personalized_pagerank_batch(op, resets[:, s : s + batch])
    batch_s = time.perf_counter() - t
    t = time.perf_counter()
    for s in range(0, len(qs), batch):
        personalized_pagerank_batch(op, resets[:, s : s + batch], block=8)
    block8_s = time.perf_counter() - t
    ppr = {
        "ours": stats_ms(ours_t),
        "igraph_prpack": stats_ms(ig_t),
        "networkx": stats_ms(nx_t) if len(nx_t) else None,
        "speedup_vs_igraph_p50": float(np.median(ig_t) / np.median(ours_t)),
        "cpu_ratio_igraph_over_ours": float(np.median(ig_t.cpu) / np.median(ours_t.cpu)),
        "speedup_vs_networkx_p50": float(np.median(nx_t) / np.median(ours_t))
        if len(nx_t)
        else None,
        f"top{k}_passages_identical_to_igraph": f"{agree_ig}/{len(qs)}",
        f"top{k}_passages_identical_to_networkx": f"{agree_nx}/{len(nx_qs)}",
        "max_abs_diff_vs_igraph": max_diff_ig,
        "batched_questions_per_s": len(qs) / batch_s,
        "batch_size": batch,
        "batched_block8_questions_per_s": len(qs) / block8_s,
        "single_questions_per_s": float(1.0 / ours_t.mean()),
        "igraph_questions_per_s": float(1.0 / ig_t.mean()),
    }
    return {"ppr_prepare_ms": prepare_ms, "igraph_build_ms": igraph_build_ms, "ppr": ppr}


def spread_section(adj, qs, n_reference: int, batch: int) -> dict:
    """Spreading activation (seeds at activation 1, QASA defaults), gated and not, one at a time
    and batched, against a plain-Python reference that must compute the same activations."""
    counts = adj.copy()
    counts.data = np.ones_like(counts.data)
    counts = sp.csr_matrix(counts)
    nbrs_counts = adjacency_lists(counts)
    args = [(q["seeds"], np.ones(q["seeds"].size), q["gate"]) for q in qs]
    spreading_activation(counts, *args[0])
    sa_t = time_calls(lambda s, a, g: spreading_activation(counts, s, a, g), args)
    sa_ng_t = time_calls(lambda s, a, g: spreading_activation(counts, s, a, None), args)
    py_t = time_calls(
        lambda s, a, g: python_spread(nbrs_counts, s.tolist(), a.tolist(), g), args[:n_reference]
    )
    for s_, a_, g_ in args[:n_reference]:  # the reference computes the same activations
        ref = python_spread(nbrs_counts, s_.tolist(), a_.tolist(), g_)
        ours = spreading_activation(counts, s_, a_, g_)
        assert set(np.flatnonzero(ours.activated).tolist()) == set(ref)
        assert all(abs(ours.activation[v] - x) <= 1e-9 * max(1.0, x) for v, x in ref.items())
    activated = [int(spreading_activation(counts, *a).activated.sum()) for a in args]
    gates = np.stack([q["gate"] for q in qs], axis=1)
    t = time.perf_counter()
    for s in range(0, len(qs), batch):
        spreading_activation_batch(
            counts, [(a[0], a[1]) for a in args[s : s + batch]], gates[:, s : s + batch]
        )
    sa_batch_s = time.perf_counter() - t
    return {
        "ours_gated": stats_ms(sa_t),
        "ours_ungated": stats_ms(sa_ng_t),
        "python_dict_reference": stats_ms(py_t),
        "speedup_vs_python_p50": float(np.median(py_t) / np.median(sa_t[:n_reference])),
        "mean_activated_nodes": float(np.mean(activated)),
        "batched_questions_per_s": len(qs) / sa_batch_s,
        "batch_size": batch,
    }


def flow_section(adj, qs, ref_qs, flow_alpha: float, flow_budget: int) -> dict:
    """QAFD: the paper setting (alpha = 50, unbounded, a push budget) against a sequential
    Python push, and a bounded setting by the exact solver and by pushes."""
    wq = [query_aware_weights(adj, q["cos"], "hybrid", 1.0, 0.25) for q in ref_qs]
    T = degree_capacities(adj)
    fd_t = time_calls(
        lambda q: qafd(
            adj,
            q["cos"],
            q["seeds"],
            q["weights"],
            alpha=flow_alpha,
            epsilon=0.01,
            max_pushes=flow_budget,
        ),
        [(q,) for q in qs],
    )
    py_args = []
    for q, w in zip(ref_qs, wq):
        py_args.append(
            (
                adjacency_lists(w),
                np.asarray(w.sum(axis=1)).ravel(),
                source_mass(T, q["seeds"], q["weights"], flow_alpha),
            )
        )
    py_fd = time_calls(
        lambda nb, wdeg, delta: python_push(nb, wdeg, T, delta, flow_budget, 0.01), py_args
    )
    ours_ref = time_calls(
        lambda q, w: push_flow(
            w,
            T,
            source_mass(T, q["seeds"], q["weights"], flow_alpha),
            epsilon=0.01,
            max_pushes=flow_budget,
        ),
        list(zip(ref_qs, wq)),
    )
    small_alpha = 0.002
    bounded = [
        q
        for q, w in zip(ref_qs, wq)
        if is_bounded(w, T, source_mass(T, q["seeds"], q["weights"], small_alpha))
    ]
    ex_t = time_calls(
        lambda q: qafd(adj, q["cos"], q["seeds"], q["weights"], alpha=small_alpha, solver="exact"),
        [(q,) for q in bounded],
    )
    pu_t = time_calls(
        lambda q: qafd(adj, q["cos"], q["seeds"], q["weights"], alpha=small_alpha, epsilon=1e-6),
        [(q,) for q in bounded],
    )
    return {
        "paper_alpha": flow_alpha,
        "push_budget": flow_budget,
        "ours_push_budget_incl_weights": stats_ms(fd_t),
        "ours_push_budget_kernel_only": stats_ms(ours_ref),
        "python_sequential_push_same_budget": stats_ms(py_fd),
        "speedup_vs_python_p50": float(np.median(py_fd) / np.median(ours_ref)),
        "bounded_alpha": small_alpha,
        "bounded_queries": f"{len(bounded)}/{len(ref_qs)}",
        "bounded_exact": stats_ms(ex_t) if len(bounded) else None,
        "bounded_push_eps1e-6": stats_ms(pu_t) if len(bounded) else None,
    }


# ---------------------------------------------------------------- parts
def twowiki_graph_and_queries(limit: int):
    corpus = json.loads((DATA / "2wikimultihopqa" / "2wikimultihopqa_corpus.json").read_text())
    questions = json.loads(
        (DATA / "2wikimultihopqa" / "2wikimultihopqa_questions.json").read_text()
    )
    g = title_mention_graph([p["title"] for p in corpus], [p["text"] for p in corpus])
    queries = []
    for q in questions:
        seeds = g.mentions(q["question"])
        if seeds.size:
            queries.append((seeds, np.ones(seeds.size)))
        if len(queries) == limit:
            break
    return g, queries


def part_graph(args) -> dict:
    g, queries = twowiki_graph_and_queries(args.queries)
    res = bench_on_graph(
        g.adj,
        queries,
        n_passages=g.n_passages,
        label="2Wiki title-mention stand-in (6,119 passages)",
    )
    return res


def part_scaling(args) -> dict:
    rows = []
    for edges in args.sizes:
        n = max(1000, edges // 4)
        adj = random_graph(n, edges, seed=edges)
        rng = np.random.default_rng(edges)
        deg = np.diff(adj.indptr)
        cand = np.flatnonzero(deg > 0)
        queries = [
            (rng.choice(cand, 5, replace=False), rng.uniform(0.2, 1, 5))
            for _ in range(args.scaling_queries)
        ]
        res = bench_on_graph(
            adj,
            queries,
            n_passages=n // 2,
            n_reference=3,
            batch=16,
            label=f"random {edges} edges",
            with_networkx=False,
        )
        rows.append(res)
        print(
            f"  {edges:>8} edges: PPR {res['ppr']['ours']['p50_ms']:.2f} ms "
            f"(igraph {res['ppr']['igraph_prpack']['p50_ms']:.2f}), spread "
            f"{res['spread']['ours_gated']['p50_ms']:.2f} ms, flow "
            f"{res['flow']['ours_push_budget_incl_weights']['p50_ms']:.2f} ms",
            flush=True,
        )
    return {"rows": rows}


# ---------------------------------------------------------------- reporting
def environment() -> dict:
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "igraph": ig.__version__,
        "networkx": nx.__version__,
        "cpus": os.cpu_count(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "loadavg_at_start": os.getloadavg(),
        "nice": os.nice(0),
        "when_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }


def _row(name, ours, ref_name="", ref=None) -> str:
    def cell(st, key, fmt="{:.2f}"):
        return fmt.format(st[key]) if st and key in st else ""

    ratio = f"{ref['p50_ms'] / ours['p50_ms']:.2f}x" if ref else ""
    cpu_ratio = (
        f"{ref['cpu_p50_ms'] / ours['cpu_p50_ms']:.2f}x" if ref and ours.get("cpu_p50_ms") else ""
    )
    return (
        f"| {name} | {cell(ours, 'p50_ms')} | {cell(ours, 'p95_ms')} | {cell(ours, 'cpu_p50_ms')} | "
        f"{ref_name} | {cell(ref, 'p50_ms')} | {cell(ref, 'cpu_p50_ms')} | {ratio} | {cpu_ratio} |"
    )


def graph_markdown(r: dict) -> str:
    p, s, f = r["ppr"], r["spread"], r["flow"]
    lines = [
        (
            f"### {r['graph']}: {r['nodes']} nodes, {r['undirected_edges']} undirected edges, "
            f"{r['queries']} questions"
        ),
        "",
        (
            "| kernel | p50 ms | p95 ms | CPU p50 ms | reference | ref p50 ms | ref CPU p50 ms | "
            "ratio ref/ours (wall) | ratio (CPU) |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
        _row("PPR (ours)", p["ours"], "igraph prpack", p["igraph_prpack"]),
        _row(
            "PPR (ours)", p["ours"], f"networkx tol 1e-10 ({p['networkx']['n']} q)", p["networkx"]
        ),
        _row(
            "spreading activation, gated",
            s["ours_gated"],
            f"Python dict loop ({s['python_dict_reference']['n']} q)",
            s["python_dict_reference"],
        ),
        _row("spreading activation, ungated", s["ours_ungated"]),
        _row(
            f"QAFD push alpha={f['paper_alpha']}, budget {f['push_budget']} (kernel)",
            f["ours_push_budget_kernel_only"],
            "sequential random push, same budget",
            f["python_sequential_push_same_budget"],
        ),
        _row("QAFD incl. query-aware weights", f["ours_push_budget_incl_weights"]),
    ]
    if f["bounded_exact"]:
        lines.append(
            _row(
                f"QAFD bounded alpha={f['bounded_alpha']} ({f['bounded_queries']} q), exact",
                f["bounded_exact"],
                "push to eps 1e-6",
                f["bounded_push_eps1e-6"],
            )
        )
    lines += [
        "",
        (
            f"- PPR top-10 passages identical to igraph: {p['top10_passages_identical_to_igraph']}, "
            f"to networkx: {p['top10_passages_identical_to_networkx']}; max |ours - igraph| = "
            f"{p['max_abs_diff_vs_igraph']:.2e}"
        ),
        (
            f"- PPR throughput: single {p['single_questions_per_s']:.0f} q/s, batched (b={p['batch_size']}) "
            f"{p['batched_questions_per_s']:.0f} q/s (in blocks of 8: "
            f"{p['batched_block8_questions_per_s']:.0f} q/s), igraph {p['igraph_questions_per_s']:.0f} q/s; "
            f"prepare {r['ppr_prepare_ms']:.1f} ms once (igraph graph build {r['igraph_build_ms']:.1f} ms)"
        ),
        (
            f"- spreading activation batched (b={s['batch_size']}): {s['batched_questions_per_s']:.0f} q/s "
            f"(single {1e3 / s['ours_gated']['mean_ms']:.0f} q/s); mean activated nodes "
            f"{s['mean_activated_nodes']:.0f}"
        ),
        "",
    ]
    return "\n".join(lines)


def scaling_markdown(rows) -> str:
    lines = [
        (
            "| edges | nodes | PPR ours p50 ms (CPU) | igraph prpack p50 ms (CPU) | ratio wall (CPU) | "
            "PPR q/s single / batched b=16 / blocks of 8 | spread p50 ms (CPU) | activated | "
            "QAFD push p50 ms (CPU) | QAFD exact p50 ms |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, s, f = r["ppr"], r["spread"], r["flow"]
        ex = f"{f['bounded_exact']['p50_ms']:.2f}" if f["bounded_exact"] else "n/a"
        po, pi = p["ours"], p["igraph_prpack"]
        sg, fp = s["ours_gated"], f["ours_push_budget_incl_weights"]
        lines.append(
            f"| {r['undirected_edges']} | {r['nodes']} | {po['p50_ms']:.2f} ({po['cpu_p50_ms']:.2f}) | "
            f"{pi['p50_ms']:.2f} ({pi['cpu_p50_ms']:.2f}) | {p['speedup_vs_igraph_p50']:.2f}x "
            f"({p['cpu_ratio_igraph_over_ours']:.2f}x) | {p['single_questions_per_s']:.0f} / "
            f"{p['batched_questions_per_s']:.0f} / {p['batched_block8_questions_per_s']:.0f} | "
            f"{sg['p50_ms']:.2f} ({sg['cpu_p50_ms']:.2f}) | {s['mean_activated_nodes']:.0f} | "
            f"{fp['p50_ms']:.2f} ({fp['cpu_p50_ms']:.2f}) | {ex} |"
        )
    lines += [
        "",
        (
            "QAFD push: paper setting (Hybrid weights, alpha = 50, unbounded) with a budget of "
            f"{rows[0]['flow']['push_budget']} node-pushes; exact: bounded alpha = "
            f"{rows[0]['flow']['bounded_alpha']} by support growth. Spreading activation: 5 random "
            "seeds at activation 1, random gates, QASA defaults."
        ),
        "",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("part", choices=["graph", "scaling"])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000, 300_000, 1_000_000]
    )
    ap.add_argument("--scaling-queries", type=int, default=10)
    add_out_dir_arg(ap, __file__)
    args = ap.parse_args(argv)
    env = environment()
    t0 = time.perf_counter()
    if args.part == "graph":
        res = part_graph(args)
        md = graph_markdown(res)
    else:
        res = part_scaling(args)
        md = scaling_markdown(res["rows"])
    res["environment"] = env
    res["wall_s"] = time.perf_counter() - t0
    omp = f"OMP_NUM_THREADS={env['OMP_NUM_THREADS']} " if env["OMP_NUM_THREADS"] else ""
    cmd = f"{omp}nice python -m benchmarks.speed.kernels {' '.join(sys.argv[1:] if argv is None else argv)}"
    header = (
        f"# Kernel benchmark: {args.part}\n\n`{cmd}` ({env['when_utc']} UTC, {env['cpus']} cpus "
        f"shared, load {env['loadavg_at_start'][0]:.2f}, OMP_NUM_THREADS={env['OMP_NUM_THREADS']}, "
        f"numpy {env['numpy']}, scipy "
        f"{env['scipy']}, igraph {env['igraph']})\n\n"
    )
    print(header + md)
    write_json(args.out_dir / f"kernels_{args.part}.json", res)
    write_text(args.out_dir / f"kernels_{args.part}.md", header + md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
