"""The graph retrievers on a real knowledge graph: per-query latency, PPR against igraph prpack
and networkx with the same graph and resets, batched throughput.

    OMP_NUM_THREADS=1 nice python -m benchmarks.speed.retrievers \
        [--dataset 2wikimultihopqa] [--questions 200] [--nx-questions 10]

1. Per-query latency (wall p50/p95 and CPU p50) of `retrieve()` for every graph retriever and
   dense, on the same questions, after a warm-up. For spreading activation the parts are
   split in (a) question analysis (spaCy mentions, encoding the unmatched ones) and (b)
   retrieval proper given the mentions (seeds, gate + propagation, ranking, trace paths), (b)
   also timed for the pipeline before the speed work (sa_reference.py), same run, same mentions.
2. PPR: the HippoRAG 2 reset vectors of the same questions, solved by ours, by igraph's prpack
   (what HippoRAG calls) and by networkx (first --nx-questions), on the same (E+P) graph with
   HippoRAG's effective weights; top-10 passage rankings compared.
3. Batched throughput: `retrieve_batch` (64 questions a call) against the one-by-one loop, for
   hipporag and spreading activation (questions/s, seeding included).

The graph is built (or loaded) exactly as `python -m hopbench.run dataset=...` does, from the
same cache. Results: benchmarks/speed/results/retrievers_<dataset>.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from benchmarks.common.args import add_out_dir_arg
from benchmarks.speed.kernels import (
    igraph_from_csr,
    igraph_ppr,
    nx_ppr,
    stats_ms,
    time_calls,
    topk_agree,
)
from hopbench.core.atomic import write_json, write_text
from hopbench.harness.compose import build_dataset, build_encoder, build_retriever, load_config
from hopbench.kg import load_or_build
from hopbench.retrieve.base import Services
from hopbench.retrieve.kernels.ppr import personalized_pagerank
from hopbench.retrieve.question import question_mentions  # noqa

RETRIEVERS = [
    "dense",
    "hipporag",
    "hipporag1",
    "spreading_activation",
    "spreading_activation_nogate",
    "flow_diffusion_joint",
    "flow_diffusion_code",
]


def compose_cfg(dataset: str, retriever: str, extra=()):
    return load_config(
        [f"dataset={dataset}", f"retriever={retriever}", "progress=false", "llm=none", *extra]
    )


def load_avg() -> str:
    return "%.1f %.1f %.1f" % os.getloadavg()


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="2wikimultihopqa")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--nx-questions", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument(
        "--sa-only",
        action="store_true",
        help="only the spreading-activation rows and split (no PPR, no batched section)",
    )
    add_out_dir_arg(ap, __file__)
    return ap


def main() -> None:
    ap = parser()
    args = ap.parse_args()

    cfg = compose_cfg(args.dataset, "dense")
    dataset = build_dataset(cfg)
    encoder = build_encoder(cfg)
    t = time.perf_counter()
    kg = load_or_build(dataset, cfg.graph, encoder=encoder, cache_dir=cfg.paths.cache_dir)
    load_s = time.perf_counter() - t
    services = Services(dataset=dataset, encoder=encoder)
    qs = dataset.questions[: args.questions]
    services.encode_questions(qs)
    _ = services.passage_embeddings
    out = {
        "dataset": args.dataset,
        "questions": len(qs),
        "entities": kg.n_entities,
        "passages": kg.n_passages,
        "facts": kg.n_facts,
        "relation_edges": int(kg.relation.nnz // 2),
        "graph_load_s": load_s,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "load_before": load_avg(),
        "python": platform.python_version(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
    }
    print(
        f"{args.dataset}: {kg.n_entities} entities, {kg.n_passages} passages, {kg.n_facts} facts; "
        f"{len(qs)} questions [load {load_avg()}]",
        flush=True,
    )

    latency, retrievers = latency_section(args, qs, kg, services)
    out["latency"] = latency

    # spreading activation split: (a) question analysis, (b) retrieval proper given the mentions,
    # with (b) by part and the pre-speed-work pipeline (sa_reference) timed on the same mentions
    out["spreading_activation_split"] = {}
    for name in ("spreading_activation", "spreading_activation_nogate"):
        out["spreading_activation_split"][name] = split_timings(retrievers[name], qs, kg)
        sp_ = out["spreading_activation_split"][name]
        print(
            f"  {name}: analysis p50 {sp_['analysis']['total']['p50_ms']:.2f} ms, retrieval p50 "
            f"{sp_['retrieval']['total']['p50_ms']:.2f} ms (reference "
            f"{sp_['reference']['retrieval_total']['p50_ms']:.2f} ms), "
            f"same top-10 {sp_['same_top10_as_reference']} [load {load_avg()}]",
            flush=True,
        )

    if args.sa_only:
        out["load_after"] = load_avg()
        write_json(args.out_dir / f"retrievers_{args.dataset}_sa.json", out)
        write_text(args.out_dir / f"retrievers_{args.dataset}_sa.md", render(out))
        print(render(out))
        return

    out["ppr"] = ppr_section(retrievers["hipporag"], kg, qs, args.nx_questions)

    out["batched"] = batched_section(retrievers, qs, args.batch)
    out["load_after"] = load_avg()

    write_json(args.out_dir / f"retrievers_{args.dataset}.json", out)
    write_text(args.out_dir / f"retrievers_{args.dataset}.md", render(out))
    print(render(out))


def latency_section(args, qs, kg, services) -> tuple[dict, dict]:
    """1. per-query latency of every retriever (the spreading-activation ones with --sa-only),
    after its prepare and a warm-up; returns the figures and the prepared retrievers."""
    latency, retrievers = {}, {}
    for name in (
        [n for n in RETRIEVERS if n.startswith("spreading")] if args.sa_only else RETRIEVERS
    ):
        r = build_retriever(compose_cfg(args.dataset, name))
        t = time.perf_counter()
        r.prepare(kg, services)
        prep = time.perf_counter() - t
        for q in qs[:3]:
            r.retrieve(q, 10)
        tm = time_calls(lambda q, r=r: r.retrieve(q, 10), [(q,) for q in qs])
        latency[name] = {**stats_ms(tm), "prepare_s": prep}
        retrievers[name] = r
        print(
            f"  {name:30s} p50 {latency[name]['p50_ms']:8.2f} ms  p95 {latency[name]['p95_ms']:8.2f} ms"
            f"  (prepare {prep:.1f}s) [load {load_avg()}]",
            flush=True,
        )
    return latency, retrievers


def ppr_section(hr, kg, qs, nx_questions: int) -> dict:
    """2. PPR: ours against igraph prpack and networkx, on the same graph and resets (HippoRAG's
    retriever `hr` gives both): times, and how far the results agree."""
    resets = [rv for rv, _, _ in (hr.seeding.reset_vector(q) for q in qs) if rv is not None]
    adj = hr.adjacency
    E = kg.n_entities
    g_ig = igraph_from_csr(adj)
    import networkx as nx

    g_nx = nx.from_scipy_sparse_array(adj, edge_attribute="weight")
    personalized_pagerank(hr.ppr, resets[0])
    igraph_ppr(g_ig, resets[0])
    ours_t = time_calls(
        lambda r: personalized_pagerank(hr.ppr, r, damping=0.5), [(r,) for r in resets]
    )
    ig_t = time_calls(lambda r: igraph_ppr(g_ig, r), [(r,) for r in resets])
    nx_t = time_calls(lambda r: nx_ppr(g_nx, r), [(r,) for r in resets[:nx_questions]])
    agree_ig = agree_nx = 0
    diff_ig = diff_nx = 0.0
    for i, r in enumerate(resets):
        ours = personalized_pagerank(hr.ppr, r, damping=0.5)
        ref = igraph_ppr(g_ig, r)
        diff_ig = max(diff_ig, float(np.abs(ours - ref).max()))
        agree_ig += topk_agree(ours[E:], ref[E:], 10)
        if i < nx_questions:
            refn = nx_ppr(g_nx, r)
            diff_nx = max(diff_nx, float(np.abs(ours - refn).max()))
            agree_nx += topk_agree(ours[E:], refn[E:], 10)
    ppr = {
        "ours": stats_ms(ours_t),
        "igraph_prpack": stats_ms(ig_t),
        "networkx": stats_ms(nx_t),
        "ratio_igraph_over_ours_p50": float(np.median(ig_t) / np.median(ours_t)),
        "cpu_ratio_igraph_over_ours_p50": float(np.median(ig_t.cpu) / np.median(ours_t.cpu)),
        "ratio_networkx_over_ours_p50": float(np.median(nx_t) / np.median(ours_t)),
        "top10_identical_igraph": f"{agree_ig}/{len(resets)}",
        "top10_identical_networkx": f"{agree_nx}/{min(len(resets), nx_questions)}",
        "max_abs_diff_igraph": diff_ig,
        "max_abs_diff_networkx": diff_nx,
        "nodes": int(adj.shape[0]),
        "undirected_edges": int((adj.nnz + adj.diagonal().astype(bool).sum()) // 2),
    }
    print(
        f"  PPR ours p50 {ppr['ours']['p50_ms']:.2f} ms, igraph {ppr['igraph_prpack']['p50_ms']:.2f} ms, "
        f"networkx {ppr['networkx']['p50_ms']:.1f} ms; top10 identical igraph {agree_ig}/{len(resets)} "
        f"networkx {ppr['top10_identical_networkx']} [load {load_avg()}]",
        flush=True,
    )
    return ppr


def batched_section(retrievers: dict, qs, batch_size: int) -> dict:
    """3. batched throughput (seeding included) against one question at a time, and whether
    the rankings are the same."""
    batched = {}
    for name in ("hipporag", "spreading_activation", "spreading_activation_nogate"):
        r = retrievers[name]
        t = time.perf_counter()
        for q in qs:
            r.retrieve(q, 10)
        single = len(qs) / (time.perf_counter() - t)
        t = time.perf_counter()
        for s in range(0, len(qs), batch_size):
            r.retrieve_batch(qs[s : s + batch_size], 10)
        batch = len(qs) / (time.perf_counter() - t)
        same = all(
            a.passage_ids == b.passage_ids
            for a, b in zip(
                r.retrieve_batch(qs[:batch_size], 10),
                (r.retrieve(q, 10) for q in qs[:batch_size]),
            )
        )
        batched[name] = {
            "single_q_per_s": single,
            "batched_q_per_s": batch,
            "batch": batch_size,
            "same_rankings": same,
        }
        print(
            f"  {name}: single {single:.1f} q/s, batched {batch:.1f} q/s, same rankings {same}",
            flush=True,
        )
    return batched


def split_timings(r, qs, kg) -> dict:
    """Per question, in the order a run does them: (a) spaCy mentions + encoding the unmatched
    ones (the model itself, no cache), then (b) `retrieve_with_mentions` and its parts. The
    reference pipeline is timed in a second pass over the same questions and mentions, each
    call again right after that question's spaCy parse, so both meet the caches a run leaves
    (timing them alternately would let the reference's full-graph scans evict the new
    pipeline's data before every call)."""
    from sa_reference import reference_parts

    parts = {k: [] for k in ("spacy", "encode")}
    new = {k: [] for k in ("seeds", "gate_and_propagate", "rank", "paths", "total")}
    ref = {k: [] for k in ("seeds", "gate_and_propagate", "rank", "paths", "retrieval_total")}
    cpu_new, cpu_ref = [], []
    r.desc_search._memo.clear()  # the latency loop above saw these questions; start cold
    all_mentions, got_ids = [], []
    for q in qs:
        t0 = time.perf_counter()
        mentions = question_mentions(q.text)
        t1 = time.perf_counter()
        unmatched = [m for m in mentions if kg.entity_index(m) is None]
        if unmatched:
            r.vectors.encoder.model.encode(
                unmatched, normalize_embeddings=True, convert_to_numpy=True
            )
        t2 = time.perf_counter()
        r.vectors.warm(unmatched)  # memoised (as in a run); not timed
        parts["spacy"].append(t1 - t0)
        parts["encode"].append(t2 - t1)
        t3, c3 = time.perf_counter(), time.process_time()
        got = r.retrieve_with_mentions(q, mentions, 10)
        new["total"].append(time.perf_counter() - t3)
        cpu_new.append(time.process_time() - c3)
        for key, dt in r.last_parts.items():
            new[key].append(dt)
        all_mentions.append(mentions)
        got_ids.append(got.passage_ids)
    same = 0
    for q, mentions, ids in zip(qs, all_mentions, got_ids):
        question_mentions(q.text)  # the run's cache state before retrieval
        c4 = time.process_time()
        rp, order = reference_parts(r, q, mentions, 10)
        cpu_ref.append(time.process_time() - c4)
        for key, dt in rp.items():
            ref[key].append(dt)
        same += ids == [kg.passage_ids[i] for i in order]
    analysis = {k: stats_ms(np.array(v)) for k, v in parts.items()}
    analysis["total"] = stats_ms(np.array(parts["spacy"]) + np.array(parts["encode"]))
    retrieval = {k: stats_ms(np.array(v)) for k, v in new.items()}
    reference = {k: stats_ms(np.array(v)) for k, v in ref.items()}
    ratios = {
        k: float(np.median(ref[k]) / np.median(new[k]))
        for k in ("seeds", "gate_and_propagate", "rank", "paths")
    }
    ratios["retrieval_total"] = float(np.median(ref["retrieval_total"]) / np.median(new["total"]))
    whole = np.array(parts["spacy"]) + np.array(parts["encode"]) + np.array(new["total"])
    return {
        "analysis": analysis,
        "retrieval": retrieval,
        "reference": reference,
        "ratio_reference_over_new_p50": ratios,
        "whole_query": stats_ms(whole),
        "cpu_p50_ms": {
            "retrieval": 1e3 * float(np.median(cpu_new)),
            "reference": 1e3 * float(np.median(cpu_ref)),
        },
        "same_top10_as_reference": f"{same}/{len(qs)}",
        "seed_search_fallbacks": r.desc_search.n_fallbacks,
    }


def split_lines(name: str, sp_: dict) -> list[str]:
    """One spreading-activation retriever's split: question analysis, retrieval by part, the
    reference pipeline beside it."""
    lines = [
        "",
        f"{name}, one query split in (a) question analysis and (b) retrieval proper given the "
        f"mentions, each (b) timed right after its question's analysis as in a run; reference = the "
        f"pipeline before the speed work, same run, same mentions, timed in a second pass the same way "
        f"(same top-10: {sp_['same_top10_as_reference']}):",
        "",
        "| part | p50 ms | p95 ms | reference p50 ms | reference / new |",
        "|---|---|---|---|---|",
    ]
    for k in ("spacy", "encode", "total"):
        v = sp_["analysis"][k]
        lines.append(f"| (a) {k} | {v['p50_ms']:.3f} | {v['p95_ms']:.3f} | | |")
    for k in ("seeds", "gate_and_propagate", "rank", "paths", "total"):
        v = sp_["retrieval"][k]
        rk = "retrieval_total" if k == "total" else k
        lines.append(
            f"| (b) {k} | {v['p50_ms']:.3f} | {v['p95_ms']:.3f} | {sp_['reference'][rk]['p50_ms']:.3f} "
            f"| {sp_['ratio_reference_over_new_p50'][rk]:.1f}x |"
        )
    lines.append(
        f"| (b) total, mean | {sp_['retrieval']['total']['mean_ms']:.3f} | | "
        f"{sp_['reference']['retrieval_total']['mean_ms']:.3f} | |"
    )
    w = sp_["whole_query"]
    lines.append(f"| (a)+(b) whole query | {w['p50_ms']:.3f} | {w['p95_ms']:.3f} | | |")
    c = sp_["cpu_p50_ms"]
    lines += [
        "",
        f"CPU time p50 of (b): {c['retrieval']:.2f} ms, reference {c['reference']:.2f} ms "
        f"(wall time on a loaded machine overstates both); seed-search scan fallbacks: "
        f"{sp_['seed_search_fallbacks']}.",
    ]
    return lines


def ppr_lines(q: dict) -> list[str]:
    """The PPR section: ours against igraph prpack and networkx on the same resets."""
    lines = [
        "",
        f"## PPR on the HippoRAG graph ({q['nodes']} nodes), same resets",
        "",
        "| solver | p50 ms | p95 ms | CPU p50 ms | n |",
        "|---|---|---|---|---|",
    ]
    for k in ("ours", "igraph_prpack", "networkx"):
        lines.append(
            f"| {k} | {q[k]['p50_ms']:.2f} | {q[k]['p95_ms']:.2f} | {q[k].get('cpu_p50_ms', 0):.2f} | {q[k]['n']} |"
        )
    lines += [
        "",
        f"- igraph/ours p50 wall {q['ratio_igraph_over_ours_p50']:.2f}x, CPU "
        f"{q['cpu_ratio_igraph_over_ours_p50']:.2f}x; "
        f"networkx/ours {q['ratio_networkx_over_ours_p50']:.0f}x",
        f"- top-10 passages identical: igraph {q['top10_identical_igraph']}, networkx {q['top10_identical_networkx']}; "
        f"max |ours - igraph| {q['max_abs_diff_igraph']:.2e}, max |ours - networkx| {q['max_abs_diff_networkx']:.2e}",
    ]
    return lines


def render(o: dict) -> str:
    cmd = (
        f"OMP_NUM_THREADS=1 nice python -m benchmarks.speed.retrievers "
        f"--dataset {o['dataset']} --questions {o['questions']}"
    )
    lines = [
        f"# Retriever benchmark: {o['dataset']}",
        "",
        f"`{cmd}` ({o['started']}, 2 shared cores, load {o['load_before']} -> {o['load_after']}, "
        f"OMP_NUM_THREADS={o['OMP_NUM_THREADS']})",
        "",
        f"Graph: {o['entities']} entities, {o['passages']} passages, {o['facts']} facts, "
        f"{o['relation_edges']} relation edges; loaded in {o['graph_load_s']:.1f} s. "
        f"{o['questions']} questions.",
        "",
        "## Per-query latency of `retrieve()` (top 10)",
        "",
        "| retriever | p50 ms | p95 ms | CPU p50 ms | prepare s |",
        "|---|---|---|---|---|",
    ]
    for name, s in o["latency"].items():
        lines.append(
            f"| {name} | {s['p50_ms']:.2f} | {s['p95_ms']:.2f} | {s.get('cpu_p50_ms', 0):.2f} | {s['prepare_s']:.1f} |"
        )
    for name, sp_ in o.get("spreading_activation_split", {}).items():
        lines += split_lines(name, sp_)
    if "ppr" not in o:
        return "\n".join(lines) + "\n"
    lines += ppr_lines(o["ppr"])
    lines += [
        "",
        "## Batched throughput (seeding included)",
        "",
        "| retriever | one by one q/s | batched q/s | batch | same rankings |",
        "|---|---|---|---|---|",
    ]
    for k, v in o["batched"].items():
        lines.append(
            f"| {k} | {v['single_q_per_s']:.1f} | {v['batched_q_per_s']:.1f} | {v['batch']} | {v['same_rankings']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
