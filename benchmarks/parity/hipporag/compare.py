"""hopbench's HippoRAG 2 against the official package, on the same triples and the same vectors (issue #15).

    HOPBENCH_DATA_DIR=../shared/datasets HOPBENCH_CACHE_DIR=~/.cache/hopbench \\
        nice python3 -m benchmarks.parity.hipporag.compare [--dataset musique] [--graphs spacy,openie] \\
        [--official-src HIPPORAG_CHECKOUT] [--venv .cache/official-hipporag] [--hash-seeds 0,1] \\
        [--out benchmarks/parity/hipporag/results/official_hipporag]

1. Makes (once) a virtual environment with the official package, `hipporag==2.0.0a4`, installed
   with --no-deps, plus the light pure-Python/wheel dependencies its code paths here import
   (igraph 0.11.8 as it pins, texttable, tenacity, the openai SDK); torch, transformers, numpy,
   pandas, pyarrow and httpx come from this machine's site-packages (--system-site-packages), so nothing
   of several GB is downloaded. vllm, gritlm and litellm, imported at module level but never
   called offline, get empty placeholder modules (worker.py). The package is never a hopbench
   dependency. With --official-src, the package is installed from that folder (a checkout of
   OSU-NLP-Group/HippoRAG at the 2.0.0a4 release) in place of the PyPI pin.
2. For each triple source (graph=spacy: hopbench's spaCy extraction; graph=openie: HippoRAG's
   published gpt-3.5 OpenIE file as hopbench reads it), writes the extraction as a HippoRAG 2
   OpenIE file (`hopbench kg-export`'s format) and the all-MiniLM-L6-v2 vectors of every text
   either side embeds (passages, entity names, fact strings, questions), taken from hopbench's
   graph of `graph.construction=hipporag2` and its encoder: both sides use identical vectors.
3. Runs the official `HippoRAG.index` and its retrieval loop (fact filter bypassed: the 5
   candidate facts are kept) once per PYTHONHASHSEED (it breaks exact ties by hash order), and
   hopbench's `retriever=hipporag retriever.seeding.filter=false` (the faithful construction) and
   `retriever=hipporag_hb` (hopbench's construction) in this process.
4. Compares the graphs (node and edge counts by type, node names, every edge weight), the
   top-10 of every question (identical lists; for the others, whether the difference lies
   entirely inside an exact score tie: the tied choice is replayed in hopbench's arithmetic and
   must then give the official top-10), Recall@2/5/10 and FCR@5 with paired bootstrap / exact
   McNemar tests, and the p50 retrieval time per question of both at one thread.

Writes <out>.json and <out>.md; the worker's inputs and the official package's own files (its
embedding stores, graph pickle) go to <cache-dir>/official-hipporag/. Threads:
OMP/MKL/OPENBLAS_NUM_THREADS default to 1 here and in
the worker (set before numpy is imported), so build the graphs beforehand (the runs of
benchmarks/parity/hipporag/faithful_musique.sh do) rather than at one thread.
"""

from __future__ import annotations

import os

from benchmarks.common.worker import ONE_THREAD, one_thread_by_default, run_worker

one_thread_by_default()

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks.common import args as common_args
from benchmarks.common import venv as common_venv
from benchmarks.common.paths import REPO, results_dir
from benchmarks.common.report import render_only, write_json_and_md
from benchmarks.common.timing import loadavg, pct
from hopbench.report.leaderboard import stable_seed
from hopbench.report.stats import bootstrap_ci, mcnemar_exact_p, paired_bootstrap_p

# openai (with its jiter, distro and sniffio): the official code imports the SDK, which hopbench itself
# no longer installs
PINS = [
    "hipporag==2.0.0a4",
    "igraph==0.11.8",
    "texttable==1.7.0",
    "tenacity==8.5.0",
    "openai==2.54.0",
    "jiter==0.19.0",
    "distro==1.9.0",
    "sniffio==1.3.1",
]
WORKER = Path(__file__).resolve().parent / "worker.py"
LLM_NAME = "bypassed"  # the worker's BaseConfig.llm_name (names the OpenIE file it reads)
K = 10
REPEATS = 3  # timed passes over the questions (HOPBENCH_TIMING_REPEATS for the worker)
METRICS = ("recall@2", "recall@5", "recall@10", "fcr@5")
HEAD = {"recall@2": "R@2", "recall@5": "R@5", "recall@10": "R@10", "fcr@5": "FCR@5"}


# ---- the official package's environment --------------------------------------------------------
def ensure_venv(venv: Path, official_src: Path | None = None) -> Path:
    """The venv with the pins; `official_src` (a HippoRAG checkout) replaces the PyPI release."""
    pins = [str(Path(official_src).resolve()), *PINS[1:]] if official_src else PINS
    return common_venv.ensure_venv(venv, pins, no_deps=True)


def offline_env(hash_seed: str) -> dict:
    """What the official package's workers run with: one thread, no network, no progress bars."""
    return {
        "PYTHONHASHSEED": hash_seed,
        **ONE_THREAD,
        "TOKENIZERS_PARALLELISM": "false",
        "OPENAI_API_KEY": "sk-offline",
        "TQDM_DISABLE": "1",
        "HOPBENCH_TIMING_REPEATS": str(REPEATS),
    }


def run_official(py: Path, work: Path, hash_seed: str) -> dict:
    run_worker(
        py,
        WORKER,
        [work],
        log=work / f"official_{hash_seed}.log",
        env=offline_env(hash_seed),
        what=f"the official package (PYTHONHASHSEED={hash_seed})",
        tail=15,
    )
    return json.loads((work / f"official_{hash_seed}.json").read_text())


# ---- hopbench's side -------------------------------------------------------------------------
def compose(dataset: str, graph: str, retriever: str, data_dir: str, cache_dir: str):
    from hopbench.harness.compose import load_config

    return load_config(
        [
            f"dataset={dataset}",
            f"graph={graph}",
            f"retriever={retriever}",
            "retriever.seeding.filter=false",
            "progress=false",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
        ]
    )


def run_hopbench(cfg, dataset, kg, encoder) -> dict:
    from hopbench.harness.compose import build_retriever
    from hopbench.harness.run_store import config_hash
    from hopbench.harness.runner import semantic_config
    from hopbench.retrieve.base import Services

    retriever = build_retriever(cfg)
    services = Services(dataset=dataset, encoder=encoder, llm=None, graphdb=None)
    retriever.prepare(kg, services)
    questions = list(dataset.questions)
    services.encode_questions(questions)
    for q in questions[:5]:  # warm-up
        retriever.retrieve(q, K)
    rows, times = timed_retrievals(
        retriever,
        questions,
        lambda res: {"top": [kg.passage_index(p) for p in res.passage_ids], "trace": res.trace},
    )
    return {
        "rows": rows,
        "ms": times,
        "retriever": retriever,
        "services": services,
        "config_hash": config_hash(semantic_config(cfg, dataset, retriever)),
    }


def timed_retrievals(retriever, questions: list, row) -> tuple[list, list[float]]:
    """REPEATS passes over the questions, as the workers time them: a question's time (ms) is
    its median over the passes; `row(result)` of the first pass gives the rows."""
    rows, times = [], [[] for _ in questions]
    for rep in range(REPEATS):
        for i, q in enumerate(questions):
            t = time.perf_counter()
            res = retriever.retrieve(q, K)
            times[i].append(1000 * (time.perf_counter() - t))
            if rep == 0:
                rows.append(row(res))
    return rows, [float(np.median(t)) for t in times]


def export_inputs(work: Path, dataset, cfg, kg, services) -> list[str]:
    """The OpenIE file, passage texts, questions and vectors the worker reads; returns the docs."""
    from hopbench.kg.extraction_run import extract_corpus, make_extractor
    from hopbench.kg.openie_file import openie_document
    from hopbench.kg.settings import resolve_settings

    corpus = list(dataset.corpus)
    settings = resolve_settings(cfg.graph)
    extractor = make_extractor(settings)
    if hasattr(extractor, "check_corpus"):
        extractor.check_corpus(corpus)
    records = extract_corpus(corpus, extractor, cfg.paths.cache_dir)
    doc = openie_document(corpus, records)
    work.mkdir(parents=True, exist_ok=True)
    (work / f"openie_results_ner_{LLM_NAME}.json").write_text(json.dumps(doc), encoding="utf-8")
    docs = [d["passage"] for d in doc["docs"]]
    queries = [q.text for q in dataset.questions]
    (work / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    (work / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    table: dict[str, np.ndarray] = {}

    def add(texts, vecs):
        for t, v in zip(texts, vecs, strict=True):
            if t in table and not np.array_equal(table[t], v):
                raise SystemExit(f"two different vectors for the text {t[:60]!r}")
            table[t] = np.asarray(v, dtype=np.float32)

    add(docs, kg.passage_embeddings)
    add(kg.entity_names, kg.entity_embeddings)
    add(kg.fact_texts(), kg.fact_embeddings)
    add(queries, [services.query_embedding(q) for q in dataset.questions])
    texts = list(table)
    np.savez(
        work / "vectors.npz", texts=np.array(texts), vectors=np.stack([table[t] for t in texts])
    )
    return docs


# ---- the graphs ---------------------------------------------------------------------------------
def hopbench_counts(kg) -> dict:
    m = kg.manifest.get("counts", {})
    pairs = {
        (min(s, o), max(s, o))
        for s, o in zip(kg.fact_subject.tolist(), kg.fact_object.tolist())
        if s != o
    }
    syn = sp.triu(kg.synonym, k=1).tocoo()
    syn_pairs = set(zip(syn.row.tolist(), syn.col.tolist()))
    return {
        "vertices": kg.n_nodes,
        "entities": kg.n_entities,
        "passages": kg.n_passages,
        "facts": kg.n_facts,
        "fact_pairs": len(pairs),
        "synonym_pairs": len(syn_pairs),
        "fact_and_synonym_pairs": len(pairs & syn_pairs),
        "passage_entity_edges": int(kg.context.nnz),
        "directed_synonym_entries": m.get("directed_synonym_entries"),
    }


def compare_edges(work: Path, kg, docs: list[str]) -> dict:
    """Every official igraph edge (parallel edges summed) against hopbench's PPR adjacency."""
    z = np.load(work / "official_edges.npz", allow_pickle=False)
    kinds, contents = z["kind"].tolist(), z["content"].tolist()
    doc_index = {d: i for i, d in enumerate(docs)}
    to_ours = np.full(len(kinds), -1, dtype=np.int64)
    unmatched = {"entity": 0, "passage": 0}
    for v, (kind, content) in enumerate(zip(kinds, contents)):
        i = kg.entity_index(content) if kind == "entity" else doc_index.get(content)
        if i is None:
            unmatched[kind] += 1
            continue
        to_ours[v] = i if kind == "entity" else kg.n_entities + i
    src, dst, w = to_ours[z["src"]], to_ours[z["dst"]], z["weight"]
    ok = (src >= 0) & (dst >= 0)
    n = kg.n_nodes
    off = sp.coo_matrix((w[ok], (src[ok], dst[ok])), shape=(n, n)).tocsr()
    off = (off + off.T).tocsr()  # an undirected edge counts in both directions, as in PPR
    ours = kg.adjacency(relation=2.0, synonym=2.0, context=1.0).astype(np.float64)
    diff = (off - ours).tocsr()
    diff.eliminate_zeros()
    off_pat, our_pat = off.copy(), ours.copy()
    off_pat.data[:] = 1
    our_pat.data[:] = 1
    only_off = sp.triu((off_pat - our_pat) > 0, k=1).nnz
    only_ours = sp.triu((our_pat - off_pat) > 0, k=1).nnz
    return {
        "official_vertices_unmatched": unmatched,
        "official_entity_names": sum(k == "entity" for k in kinds),
        "same_entity_names": unmatched["entity"] == 0
        and sum(k == "entity" for k in kinds) == kg.n_entities,
        "pairs_official": int(sp.triu(off, k=1).nnz),
        "pairs_hopbench": int(sp.triu(ours, k=1).nnz),
        "pairs_only_official": int(only_off),
        "pairs_only_hopbench": int(only_ours),
        "max_abs_weight_difference": float(np.abs(diff.data).max()) if diff.nnz else 0.0,
        "pairs_weight_differs_over_1e-6": int(sp.triu(abs(diff) > 1e-6, k=1).nnz),
    }


# ---- the rankings -------------------------------------------------------------------------------
def tie_analysis(i: int, q, off_row: dict, hop: dict, kg) -> dict:
    """Why hopbench's faithful top-10 and the official one differ on question i.

    `tie` when the official's choice is one of the choices an exact tie allows in hopbench's own
    arithmetic (the same top-5 facts up to facts of exactly the 5th score; then the same top-5
    seeds up to entities of exactly the 5th weight) and replaying that choice gives exactly the
    official top-10; otherwise `not a tie`, with what differs."""
    from hopbench.retrieve.hipporag.hipporag import fact_scores, passage_reset, phrase_seed_weights
    from hopbench.retrieve.kernels import personalized_pagerank

    r = hop["retriever"]
    q_emb = hop["services"].query_embedding(q)
    scores = fact_scores(r.fact_emb, q_emb)
    fact_of = {t: f for f, t in enumerate(kg.fact_texts())}
    off_facts = [fact_of.get(t) for t in off_row["facts"]]
    out: dict = {"question": q.id}
    if None in off_facts:
        return {**out, "kind": "not a tie", "why": "an official fact is not a hopbench fact"}
    k = r.seeding.linking_top_k
    fifth = np.sort(scores)[::-1][k - 1]
    ours_facts = [kg_fact_index(fact_of, c) for c in hop["trace"]["candidate_facts"]]
    if set(off_facts) != set(ours_facts):
        differ = set(off_facts) ^ set(ours_facts)
        if not all(scores[f] == fifth for f in differ):
            return {**out, "kind": "not a tie", "why": "different top facts, not tied"}
        out["fact_tie"] = True
    w_all = phrase_seed_weights(
        np.array(off_facts), scores, kg.fact_subject, kg.fact_object, r.passage_counts, 0
    )
    w_top = phrase_seed_weights(
        np.array(off_facts),
        scores,
        kg.fact_subject,
        kg.fact_object,
        r.passage_counts,
        r.top_phrases,
    )
    off_seeds = [kg.entity_index(n) for n in off_row["seeds"]]
    if None in off_seeds:
        return {**out, "kind": "not a tie", "why": "an official seed is not a hopbench entity"}
    ours_seeds = set(np.flatnonzero(w_top).tolist())
    if set(off_seeds) != ours_seeds:
        fifth_w = np.sort(w_all)[::-1][min(r.top_phrases, np.count_nonzero(w_all)) - 1]
        differ = set(off_seeds) ^ ours_seeds
        if not all(w_all[e] == fifth_w for e in differ):
            return {**out, "kind": "not a tie", "why": "different seeds, not tied"}
        out["seed_tie"] = True
    ent = np.zeros(kg.n_entities)
    ent[off_seeds] = w_all[off_seeds]
    dense = r.seeding.passage_emb @ np.asarray(q_emb, dtype=np.float64)
    reset = np.concatenate([ent, passage_reset(dense, r.passage_node_weight)])
    p = personalized_pagerank(r.ppr, reset, damping=r.damping, tol=r.ppr_tol)[kg.n_entities :]
    replay = np.lexsort((-dense, -p))[:K].tolist()
    out["replay_matches_official"] = replay == off_row["top"][:K]
    if out["replay_matches_official"] and (out.get("fact_tie") or out.get("seed_tie")):
        out["kind"] = "tie"
    elif out["replay_matches_official"]:
        out["kind"] = "not a tie"
        out["why"] = "same facts and seeds, different PPR ranking"
    else:
        s = off_row["scores"][: K + 1]
        out["kind"] = "not a tie"
        out["why"] = (
            "official final scores tied"
            if len(set(s)) < len(s)
            else "replaying the official choice does not give its top-10"
        )
    return out


def kg_fact_index(fact_of: dict, cand: list) -> int:
    s, r, o = cand[:3]
    return fact_of[str((s, r, o))]


def recall_rows(dataset, kg, tops: list[list[int]]) -> dict[str, dict[str, float]]:
    from hopbench.evaluate.score import score_question

    out = {}
    for q, top in zip(dataset.questions, tops, strict=True):
        out[q.id] = score_question(q, [kg.passage_ids[i] for i in top[:K]], None)
    return out


def summary(scores: dict[str, dict[str, float]], seed_parts: tuple) -> dict:
    res = {}
    for m in METRICS:
        v = np.array([s[m] for s in scores.values() if m in s])
        lo, hi = bootstrap_ci(v, seed=stable_seed(*seed_parts, m))
        res[m] = {"mean": float(v.mean()), "ci": [float(lo), float(hi)], "n": len(v)}
    return res


def paired(a: dict, b: dict, metric: str, seed_parts: tuple) -> dict:
    ids = sorted(set(a) & set(b))
    x = np.array([a[i][metric] for i in ids if metric in a[i]])
    y = np.array([b[i][metric] for i in ids if metric in b[i]])
    p = (
        paired_bootstrap_p(x, y, seed=stable_seed(*seed_parts, metric))
        if metric.startswith("recall")
        else mcnemar_exact_p(x, y)
    )
    return {"delta": float(np.mean(x - y)), "p": float(p), "n": len(ids)}


# ---- one triple source ---------------------------------------------------------------------------
def compare_graph(graph: str, args, py: Path) -> dict:
    from hopbench.harness.compose import build_dataset, build_encoder
    from hopbench.kg import load_or_build

    cfg_f = compose(args.dataset, graph, "hipporag", args.data_dir, args.cache_dir)
    cfg_h = compose(args.dataset, graph, "hipporag_hb", args.data_dir, args.cache_dir)
    dataset = build_dataset(cfg_f)
    encoder = build_encoder(cfg_f)
    kg_f = load_or_build(dataset, cfg_f.graph, encoder=encoder, cache_dir=args.cache_dir)
    kg_h = load_or_build(dataset, cfg_h.graph, encoder=encoder, cache_dir=args.cache_dir)
    hop_f = run_hopbench(cfg_f, dataset, kg_f, encoder)
    hop_h = run_hopbench(cfg_h, dataset, kg_h, encoder)
    work = Path(args.work_dir) / f"{args.dataset}_{graph}"
    docs = export_inputs(work, dataset, cfg_f, kg_f, hop_f["services"])
    official = {s: run_official(py, work, s) for s in args.hash_seeds}
    s0 = args.hash_seeds[0]
    off0 = official[s0]

    questions = list(dataset.questions)
    ours_top = [row["top"][:K] for row in hop_f["rows"]]
    off_top = {s: [row["top"][:K] for row in o["questions"]] for s, o in official.items()}
    identical = {s: sum(a == b for a, b in zip(ours_top, off_top[s])) for s in args.hash_seeds}
    self_identical = {
        f"{a}-{b}": sum(x == y for x, y in zip(off_top[a], off_top[b]))
        for a in args.hash_seeds
        for b in args.hash_seeds
        if a < b
    }
    differing = [
        tie_analysis(
            i, q, off0["questions"][i], {**hop_f, "trace": hop_f["rows"][i]["trace"]}, kg_f
        )
        for i, q in enumerate(questions)
        if ours_top[i] != off_top[s0][i]
    ]
    same_sets = sum(set(a) == set(b) for a, b in zip(ours_top, off_top[s0]))

    sc = {
        "hopbench hipporag (hipporag2 construction)": recall_rows(dataset, kg_f, ours_top),
        "hopbench hipporag_hb (hopbench construction)": recall_rows(
            dataset, kg_h, [r["top"] for r in hop_h["rows"]]
        ),
    }
    for s in args.hash_seeds:
        sc[f"official hipporag 2.0.0a4 (PYTHONHASHSEED={s})"] = recall_rows(
            dataset, kg_f, off_top[s]
        )
    names = list(sc)
    pairs = [(names[0], names[2]), (names[1], names[0]), (names[1], names[2])]
    return {
        "graph": graph,
        "dataset": args.dataset,
        "n_questions": len(questions),
        "hopbench_config_hashes": {
            "hipporag": hop_f["config_hash"],
            "hipporag_hb": hop_h["config_hash"],
        },
        "graph_keys": {
            "hipporag2": kg_f.manifest.get("graph_key"),
            "hopbench": kg_h.manifest.get("graph_key"),
        },
        "counts": {
            "official": {k: v for k, v in off0["graph"].items() if k != "graph_info"},
            "official_graph_info": off0["graph"]["graph_info"],
            "hopbench_hipporag2": hopbench_counts(kg_f),
            "hopbench_construction": hopbench_counts(kg_h),
        },
        "counts_by_hash_seed": {
            s: {
                k: o["graph"][k]
                for k in (
                    "vertices",
                    "edges",
                    "fact_pairs",
                    "synonym_pairs",
                    "passage_entity_edges",
                )
            }
            for s, o in official.items()
        },
        "edges": compare_edges(work, kg_f, docs),
        "top10_identical": identical,
        "top10_same_set": same_sets,
        "official_self_identical": self_identical,
        "differing": differing,
        "differing_kinds": {
            k: sum(d["kind"] == k for d in differing) for k in ("tie", "not a tie")
        },
        "recall": {n: summary(v, (graph, n)) for n, v in sc.items()},
        "paired": [
            {"a": a, "b": b, **{m: paired(sc[a], sc[b], m, (graph, a, b)) for m in METRICS}}
            for a, b in pairs
        ],
        "ms": {
            "hopbench hipporag": pct(hop_f["ms"]),
            "hopbench hipporag_hb": pct(hop_h["ms"]),
            **{f"official (PYTHONHASHSEED={s})": pct(o["ms"]) for s, o in official.items()},
        },
        "official_versions": off0["versions"],
        "official_threads": off0["threads"],
    }


# ---- the report --------------------------------------------------------------------------------
def top10_lines(g: dict) -> list[str]:
    """How many top-10 lists are identical to the official's, and why the others differ."""
    L: list[str] = []
    seeds = list(g["top10_identical"])
    L += [
        "Top-10 identical to the official's: "
        + ", ".join(
            f"{g['top10_identical'][s]}/{g['n_questions']} (PYTHONHASHSEED={s})" for s in seeds
        )
        + f"; same top-10 set (PYTHONHASHSEED={seeds[0]}): {g['top10_same_set']}/{g['n_questions']}. "
        + "The official against itself: "
        + ", ".join(
            f"{v}/{g['n_questions']} identical between seeds {k}"
            for k, v in g["official_self_identical"].items()
        )
        + ".",
        "",
    ]
    dk = g["differing_kinds"]
    L.append(
        f"Of the {len(g['differing'])} differing lists (PYTHONHASHSEED={seeds[0]}): {dk['tie']} lie entirely "
        f"inside an exact tie (replaying the official's tied choice gives its top-10), {dk['not a tie']} do not"
        + (
            ": "
            + "; ".join(
                f"{d['question']}: {d['why']}" for d in g["differing"] if d["kind"] != "tie"
            )
            if dk["not a tie"]
            else ""
        )
        + "."
    )
    kinds = [
        ("fact ties" if d.get("fact_tie") else "seed ties")
        for d in g["differing"]
        if d["kind"] == "tie"
    ]
    if kinds:
        L.append(
            f"Ties: {kinds.count('fact ties')} at the 5th fact, {kinds.count('seed ties')} at the 5th seed entity "
            f"(entities of exactly the 5th seed weight; HippoRAG keeps the one its set's hash order puts first): "
            + ", ".join(d["question"] for d in g["differing"] if d["kind"] == "tie")
            + "."
        )
    return L


def score_tables(g: dict) -> list[str]:
    """Recall of each side, the paired differences and the retrieval times."""
    L = [
        "",
        "| | n | " + " | ".join(HEAD[m] for m in METRICS) + " |",
        "|:--|--:|" + "--:|" * len(METRICS),
    ]
    for name, s in g["recall"].items():
        L.append(
            f"| {name} | {s['recall@5']['n']} | "
            + " | ".join(
                f"{100 * s[m]['mean']:.1f} [{100 * s[m]['ci'][0]:.1f}, {100 * s[m]['ci'][1]:.1f}]"
                for m in METRICS
            )
            + " |"
        )
    L += [
        "",
        "| paired | " + " | ".join(f"Δ{HEAD[m]} (p)" for m in METRICS) + " |",
        "|:--|" + ":--|" * len(METRICS),
    ]
    for p in g["paired"]:
        L.append(
            f"| {p['a']} − {p['b']} | "
            + " | ".join(f"{100 * p[m]['delta']:+.1f} ({p[m]['p']:.3g})" for m in METRICS)
            + " |"
        )
    L += [
        "",
        "| retrieval time per question | p50 ms | p90 ms | mean ms |",
        "|:--|--:|--:|--:|",
    ]
    for name, t in g["ms"].items():
        L.append(f"| {name} | {t['p50']:.1f} | {t['p90']:.1f} | {t['mean']:.1f} |")
    return L


def graph_section(g) -> list[str]:
    """The markdown lines of one `g` of markdown()."""
    L: list[str] = []
    c = g["counts"]
    o, f, h = c["official"], c["hopbench_hipporag2"], c["hopbench_construction"]
    L += [
        f"## graph={g['graph']} (triples: {SOURCES.get(g['graph'], g['graph'])})",
        "",
        "| | official | hopbench hipporag2 | hopbench construction |",
        "|:--|--:|--:|--:|",
    ]
    for key, label in (
        ("vertices", "nodes"),
        ("entities", "entity nodes"),
        ("passages", "passage nodes"),
        ("facts", "facts (embedded)"),
        ("fact_pairs", "fact pairs"),
        ("synonym_pairs", "synonym pairs"),
        ("fact_and_synonym_pairs", "pairs with both"),
        ("passage_entity_edges", "passage-entity edges"),
        ("directed_synonym_entries", "directed synonym entries"),
    ):
        L.append(f"| {label} | {_n(o.get(key))} | {_n(f.get(key))} | {_n(h.get(key))} |")
    L.append(
        f"| igraph edges (a fact or synonym pair has one per direction) | {_n(o['edges'])} | | |"
    )
    e = g["edges"]
    L += [
        "",
        f"hopbench configs: hipporag `{g['hopbench_config_hashes']['hipporag']}` (graph "
        f"`{g['graph_keys']['hipporag2']}`), hipporag_hb `{g['hopbench_config_hashes']['hipporag_hb']}` "
        f"(graph `{g['graph_keys']['hopbench']}`): the run folders of "
        "benchmarks/parity/hipporag/faithful_musique.sh.",
    ]
    L += [
        "",
        f"Every edge weight, official igraph (parallel edges summed) against hopbench's PPR adjacency "
        f"(2 x relation + 2 x synonym + 1 x context): {e['pairs_official']:,} vs {e['pairs_hopbench']:,} "
        f"node pairs, {e['pairs_only_official']} only official, {e['pairs_only_hopbench']} only hopbench, "
        f"{e['pairs_weight_differs_over_1e-6']} with weights differing by more than 1e-6 (max "
        f"{e['max_abs_weight_difference']:.3g}); official nodes without a hopbench node: "
        f"{e['official_vertices_unmatched']}; entity names identical: {e['same_entity_names']}.",
        "",
    ]
    L += top10_lines(g)
    L += score_tables(g)
    L.append("")
    return L


def markdown(res: dict) -> str:
    L = [
        "# HippoRAG 2: hopbench against the official package (issue #15)",
        "",
        "Made by `benchmarks/parity/hipporag/compare.py` "
        f"({res['started']}; load average {res['loadavg_start']} at the start, {res['loadavg_end']} at the end, "
        "on a 2-core machine shared with other jobs). Official: `hipporag==2.0.0a4` "
        f"({', '.join(f'{k} {v}' for k, v in res['graphs'][0]['official_versions'].items())}), installed "
        "--no-deps in its own virtual environment, its DSPy fact filter bypassed (the 5 candidate facts are kept), "
        "fed hopbench's triples as an OpenIE file and hopbench's all-MiniLM-L6-v2 vectors for every text it embeds. "
        "hopbench: `retriever=hipporag retriever.seeding.filter=false` (graph.construction=hipporag2) and "
        "`retriever=hipporag_hb retriever.seeding.filter=false` (graph.construction=hopbench). "
        "Subset numbers: HippoRAG's 100-question MuSiQue train subset, 1,890-passage corpus. "
        "Times: retrieval per question "
        "(question embedding precomputed on both sides), one thread (OMP/MKL/OPENBLAS_NUM_THREADS=1), "
        f"after a warm-up; a question's time is its median over {REPEATS} passes.",
        "",
    ]
    for g in res["graphs"]:
        L += graph_section(g)
    L += ["p: paired bootstrap for recall, exact McNemar for FCR@5; intervals: 95% bootstrap.", ""]
    return "\n".join(L)


SOURCES = {
    "spacy": "hopbench's spaCy extraction",
    "openie": "HippoRAG's published gpt-3.5-turbo-1106 OpenIE file, as graph=openie reads it",
}


def _n(v) -> str:
    return "–" if v is None else f"{v:,}" if isinstance(v, int) else str(v)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="musique", help="the dataset to compare on")
    ap.add_argument("--graphs", default="spacy,openie", help="comma-separated graphs to compare on")
    ap.add_argument(
        "--official-src",
        type=Path,
        default=None,
        help="a checkout of OSU-NLP-Group/HippoRAG at 2.0.0a4, installed in place of the PyPI pin",
    )
    ap.add_argument(
        "--venv",
        default=str(REPO / ".cache" / "official-hipporag"),
        help="the official package's virtual environment (made on first use)",
    )
    ap.add_argument(
        "--work-dir",
        default=None,
        help="inputs and outputs of the official package (default <cache-dir>/official-hipporag: "
        "they hold corpus text, so not in the repository)",
    )
    ap.add_argument(
        "--hash-seeds",
        default="0,1",
        help="comma-separated PYTHONHASHSEED values the official side is run with",
    )
    common_args.add_data_and_cache_args(ap)
    ap.add_argument(
        "--out",
        default=str(results_dir(__file__) / "official_hipporag"),
        help="writes OUT.json and OUT.md",
    )
    ap.add_argument("--render-only", action="store_true", help="rewrite <out>.md from <out>.json")
    args = ap.parse_args()
    out = Path(args.out)
    if args.render_only:
        render_only(out, markdown)
        return 0
    args.hash_seeds = args.hash_seeds.split(",")
    args.work_dir = args.work_dir or str(Path(args.cache_dir) / "official-hipporag")
    py = ensure_venv(Path(args.venv), args.official_src)
    res = {
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "loadavg_start": loadavg(),
        "threads": {
            k: os.environ.get(k)
            for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        },
        "graphs": [],
    }
    for g in args.graphs.split(","):
        print(f"== graph={g}", flush=True)
        res["graphs"].append(compare_graph(g, args, py))
    res["loadavg_end"] = loadavg()
    write_json_and_md(out, res, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
