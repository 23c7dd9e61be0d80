"""hopbench's NeuroPath against the authors' NeuroPath class, on identical inputs (issue #26).

    HOPBENCH_DATA_DIR=../shared/datasets nice python -m benchmarks.parity.neuropath.compare \\
        --official-src <NeuroPath checkout> --run runs/musique/neuropath/<hash> \\
        [--venv .cache/official-neuropath] [--out benchmarks/parity/neuropath/results/official_neuropath] \\
        [--fixture tests/retrieve/neuropath/fixtures/neuropath_official_top10.json]

1. Makes (once) a virtual environment with the authors' dependencies from PyPI (pins of their
   requirements.txt: langchain_core, numpy, pandas, scipy; faiss-cpu in place of faiss-gpu);
   torch comes from this machine (--system-site-packages). Their code stays in --official-src
   (a checkout outside the repository; its commit is recorded).
2. Reads a hopbench run of `retriever=neuropath` (or a variant with the reference handling) made
   with a real LLM: per question the recorded NER reply and each tracker reply with the path
   list it answered (trace). Replays hopbench's retriever on those replies (no LLM), checking
   that the replay gives the run's own top-10, and keeps every text hopbench embedded.
3. Writes the reference's index files from hopbench's graph in the reference's format and names
   (phrase dict, unique facts, passage-fact and fact-phrase CSR matrices, phrase and passage
   vectors) and runs `NeuroPath.rank_docs` in the venv (worker.py) with the
   same replies (path ids renumbered by path text) and hopbench's vectors as its encoder.
Both sides run with the machine's default threads, as a run does.

4. Compares the top-10 of every question: identical lists, lists that differ only inside exact
   score ties, and the rest with what differs (paths shown per hop, reply handling). Also the
   hop statistics of the run and the time per query of both sides (retrieval only, LLM replayed).

Writes <out>.json and <out>.md, and with --fixture the official top-10 and the replies of the
first --fixture-n questions for tests/retrieve/neuropath/test_neuropath_parity.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks.common import args as common_args
from benchmarks.common import venv as common_venv
from benchmarks.common.checkout import checkout_commit
from benchmarks.common.worker import run_worker

PINS = [
    "langchain_core==0.3.59",
    "numpy==1.26.4",
    "pandas==2.2.3",
    "scipy==1.15.2",
    "faiss-cpu==1.9.0.post1",
]
WORKER = Path(__file__).resolve().parent / "worker.py"
K = 10
# names the worker's NeuroPath(...) call resolves its files to (src/neuropath.py L74-98, L559-625)
CORPUS, INDEX_LLM, VERSION, PHRASE_TYPE = "musique", "hopbench", "v3", "ents_only_lower_preprocess"
RETRIEVER_DIR = "sentence-transformers_all-MiniLM-L6-v2_mean"


def ensure_venv(venv: Path) -> Path:
    return common_venv.ensure_venv(venv, PINS, no_deps=False)


# ---- hopbench's side ----------------------------------------------------------------------------
def load_run(run: Path) -> tuple[dict, list[dict]]:
    cfg = json.loads((run / "config.json").read_text()) if (run / "config.json").exists() else {}
    rows = [
        json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines() if line
    ]
    return cfg, rows


def recorded_replies(trace: dict) -> list[str | None]:
    """The run's LLM reply texts of one question, in request order (NER, then each hop)."""
    out = [trace.get("ner_reply")]
    out += [h["reply_text"] for h in trace.get("hops", []) if "reply_text" in h]
    return out


def compose_run(cfg_path: Path, data_dir: str, cache_dir: str):
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(cfg_path)
    cfg.paths.data_dir = data_dir
    cfg.paths.cache_dir = cache_dir
    return cfg


def replay_hopbench(cfg, rows: list[dict], settings: dict):
    from hopbench.harness.compose import build_dataset, build_encoder
    from hopbench.kg import load_or_build
    from hopbench.llm.replay import ReplayLLM
    from hopbench.retrieve.base import Services
    from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever

    dataset = build_dataset(cfg)
    encoder = build_encoder(cfg)
    kg = load_or_build(
        dataset, cfg.graph, encoder=encoder, cache_dir=cfg.paths.cache_dir, descriptions=False
    )  # NeuroPath reads no description vectors
    llm = ReplayLLM()
    services = Services(dataset=dataset, encoder=encoder, llm=llm, graphdb=None)
    r = NeuroPathRetriever(**settings)
    r.prepare(kg, services)
    by_id = {q.id: q for q in dataset.questions}
    out = []
    # two passes: the first embeds every text (the official side looks vectors up), the
    # second is timed with every vector in memory, as the official side's lookups are
    for timed in (False, True):
        for i, row in enumerate(rows):
            q = by_id[row["id"]]
            llm.load(recorded_replies(row["trace"]))
            t = time.perf_counter()
            res = r.retrieve(q, K)
            ms = 1000 * (time.perf_counter() - t)
            rec = {
                "id": q.id,
                "text": q.text,
                "top": [kg.passage_index(p) for p in res.passage_ids],
                "scores": [float(s) for s in res.scores],
                "trace": res.trace,
                "ms": ms,
                "same_as_run": res.passage_ids == row["ranked_passage_ids"][:K],
            }
            if not timed:
                out.append(rec)
            else:
                assert rec["top"] == out[i]["top"], f"replay not deterministic on {q.id}"
                out[i]["ms"] = ms
    return kg, r, dataset, out


# ---- the reference's index files ------------------------------------------------------------------
def export_index(work: Path, kg, retriever, dataset) -> None:
    """hopbench's graph as the reference's files (src/neuropath.py load_index_files L559-625)."""
    index = retriever.index
    ext = f"ner_{INDEX_LLM}"
    stem = f"{CORPUS}_facts_graph_%s_{PHRASE_TYPE}_{ext}.{VERSION}.subset"
    (work / "output").mkdir(parents=True, exist_ok=True)
    vec_dir = work / "data" / "lm_vectors" / RETRIEVER_DIR
    vec_dir.mkdir(parents=True, exist_ok=True)
    n_f, n_p, n_d = len(index.head), len(index.phrases), kg.n_passages
    facts = [
        {"head": index.phrases[h], "relation": r, "tail": index.phrases[t]}
        for h, r, t in zip(index.head, index.relation, index.tail)
    ]
    json.dump(
        facts,
        open(
            work / "output" / f"{CORPUS}_facts_graph_clean_facts_chatgpt_openIE."
            f"{PHRASE_TYPE}_{ext}.{VERSION}.subset.json",
            "w",
        ),
    )
    texts = {p.id: p.text for p in dataset.corpus}
    docs = [
        {"passage": f"{p.title}\n{p.text}" if getattr(p, "title", None) else texts[p.id]}
        for p in dataset.corpus
    ]
    json.dump(
        {"docs": docs},
        open(work / "output" / f"openie_{CORPUS}_results_{ext}_{INDEX_LLM}_{n_d}.json", "w"),
    )
    dump = lambda obj, kind: pickle.dump(obj, open(work / "output" / (stem % kind + ".p"), "wb"))  # noqa: E731
    dump({name: i for i, name in enumerate(index.phrases)}, "phrase_dict")
    dump({(f["head"], f["relation"], f["tail"]): i for i, f in enumerate(facts)}, "fact_dict")
    rows_d = [d for d, ts in enumerate(index.doc_facts) for _ in ts]
    cols_d = [t for ts in index.doc_facts for t in ts]
    doc_facts = sp.csr_matrix((np.ones(len(rows_d)), (rows_d, cols_d)), shape=(n_d, n_f))
    rows_f = list(range(n_f)) * 2
    cols_f = list(index.head) + list(index.tail)
    fact_phrases = sp.csr_matrix((np.ones(len(rows_f)), (rows_f, cols_f)), shape=(n_f, n_p))
    fact_phrases.data[:] = 1.0
    dump({(d, t): 1 for d, t in zip(rows_d, cols_d)}, "doc_to_facts")
    dump({(f, p): 1 for f, p in zip(rows_f, cols_f)}, "facts_to_phrases")
    dump(doc_facts, "doc_to_facts_csr")
    dump(fact_phrases, "facts_to_phrases_csr")
    pickle.dump(
        np.asarray(kg.entity_embeddings, dtype=np.float32),
        open(vec_dir / f"{CORPUS}_kb_node_phrase_embeddings.p", "wb"),
    )
    pickle.dump(
        np.asarray(retriever.passage_emb32, dtype=np.float32),
        open(vec_dir / f"{CORPUS}_doc_embeddings.p", "wb"),
    )


def write_vectors(work: Path, table: dict[str, np.ndarray]) -> None:
    texts = list(table)
    np.savez(
        work / "vectors.npz",
        texts=np.array(texts, dtype=object).astype(str),
        vecs=np.stack([np.asarray(table[t], dtype=np.float32) for t in texts]),
    )


def run_official(py: Path, src: Path, work: Path) -> dict:
    # threads as in a run (the default): faiss's near-name search can order near-equal
    # scores differently at one thread
    run_worker(
        py,
        WORKER,
        [src, work],
        log=work / "official.log",
        env={"TOKENIZERS_PARALLELISM": "false"},
        pythonpath=[src],
        what="the official code",
    )
    return json.loads((work / "official.json").read_text())


# ---- comparison -----------------------------------------------------------------------------------
def recorded_requests(cache_dir: Path, rows: list[dict]) -> dict[str, list[tuple[str, list]]]:
    """Per question, (schema name, message texts) of each retrieval call in order, from the
    requests the response cache stored under the row's `llm_keys`, passed or failed (None: not
    stored, e.g. a reply that failed its check before failed requests were kept)."""
    db = sqlite3.connect(f"file:{cache_dir / 'llm' / 'responses.sqlite'}?mode=ro", uri=True)
    out = {}
    tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    failed_requests = "failed_requests" in tables  # failed replies' requests (newer caches)
    try:
        for row in rows:
            calls = []
            for call, key in zip(
                row["trace"].get("llm_calls", []), row["trace"].get("llm_keys", [])
            ):
                hit = db.execute("SELECT request FROM responses WHERE key = ?", (key,)).fetchone()
                if hit is None and failed_requests:
                    hit = db.execute(
                        "SELECT request FROM failed_requests WHERE key = ?", (key,)
                    ).fetchone()
                msgs = json.loads(hit[0]).get("messages") if hit else None
                calls.append((call.get("schema"), [m["content"] for m in msgs] if msgs else None))
            out[row["id"]] = calls
    finally:
        db.close()
    return out


def same_prompts(official_calls: list[dict], ours: list[tuple[str, list]]) -> dict:
    """How many of the official side's calls got exactly the message texts hopbench sent."""
    ner = [m for s, m in ours if s == "neuropath_ner"]
    tracker = [m for s, m in ours if s == "neuropath_tracker"]
    out = {"same": 0, "different": 0, "not_recorded": 0}
    for call in official_calls:
        pool, i = (ner, 0) if call["call"] == "ner" else (tracker, call.get("hop", 1) - 1)
        msgs = pool[i] if i < len(pool) else None
        if msgs is None or "prompt_sha" not in call:
            out["not_recorded"] += 1
        else:
            digest = hashlib.sha256("\x00".join(msgs).encode("utf-8")).hexdigest()
            out["same" if digest == call["prompt_sha"] else "different"] += 1
    return out


def compare_coref(official: list, ours: list, embeddings, top_k: int = 5) -> dict:
    """Per phrase: the same near names in the same order, or a difference inside an exact tie
    (names in one list only all have the cosine of the top_k-th nearest phrase, itself
    included; names in another order have equal cosines: which of tied names makes faiss's cut,
    and in which order, is faiss's choice), or a difference."""
    emb = np.array(embeddings, dtype=np.float32, copy=True)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    counts = {"identical": 0, "ties": 0, "different": 0}
    for i, (a, b) in enumerate(zip(official, ours)):
        if list(a) == list(b):
            counts["identical"] += 1
            continue
        cos = emb @ emb[i]
        if set(a) == set(b):  # the same names in another order: swapped names score the same
            tied = all(abs(cos[j] - cos[k]) < 1e-6 for j, k in zip(a, b))
        else:  # names in one list only: each at the cut
            cut = np.sort(cos)[-top_k]
            tied = all(abs(cos[j] - cut) < 1e-6 for j in set(a) ^ set(b))
        counts["ties" if tied else "different"] += 1
    counts["different"] += abs(len(official) - len(ours))
    return counts


def classify(hb: dict, off: dict) -> dict:
    if "top" not in off:
        return {
            "status": "official_failed",
            "detail": off.get("error") or off.get("missing_vectors"),
        }
    a, b = hb["top"], off["top"]
    if a == b:
        return {"status": "identical"}
    # inside ties: same score at each differing position, the same multiset of scores
    sa, sb = np.round(hb["scores"], 6), np.round(off["scores"], 6)
    diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
    tied = all(abs(sa[i] - sb[i]) < 1e-6 for i in diff) and sorted(sa) == sorted(sb)
    tied = tied and all(sum(abs(sa - sa[i]) < 1e-6) > 1 for i in diff)
    return {"status": "ties" if tied else "different", "positions": diff}


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Run the authors' NeuroPath class on hopbench's graph, vectors and recorded "
        "replies, and compare each question's top-10 with the hopbench run's."
    )
    common_args.add_official_args(
        ap,
        "neuropath",
        "a checkout of KennyCaty/NeuroPath outside the repository (its commit is recorded)",
    )
    ap.add_argument(
        "--run",
        type=Path,
        action="append",
        default=[],
        help="a run with the local model's replies (the first one gives the fixture)",
    )
    ap.add_argument(
        "--synthetic",
        type=Path,
        action="append",
        default=[],
        help="a run made with scripted replies that walk the reference's branches "
        "(second hops, bad ids, missing keys): reported apart, never a fixture",
    )
    ap.add_argument(
        "--work",
        type=Path,
        default=Path.home() / ".cache" / "hopbench" / "official-neuropath",
        help="where the index files in the official format are written",
    )
    common_args.add_data_and_cache_args(ap)
    common_args.add_out_arg(ap, __file__, "official_neuropath")
    ap.add_argument(
        "--fixture", type=Path, help="write the official top-10 of a sample here, for the CI test"
    )
    ap.add_argument(
        "--fixture-n", type=int, default=10, help="questions per run in the fixture sample"
    )
    ap.add_argument(
        "--beside",
        default="nothing else recorded",
        help="what else ran on the machine (for the md)",
    )
    args = ap.parse_args()
    if not args.run and not args.synthetic:
        ap.error("give at least one --run or --synthetic")
    py = ensure_venv(args.venv)
    results = {
        "official_src_commit": checkout_commit(args.official_src),
        "runs": [],
        "loadavg_start": round(os.getloadavg()[0], 2),
        "beside": args.beside,
    }
    sample: list[dict] = []
    for run in args.run:
        results["runs"].append(compare_run(run, args, py, sample, "local model"))
    for run in args.synthetic:
        results["runs"].append(
            {**compare_run(run, args, py, sample, "scripted"), "synthetic": True}
        )
    results["loadavg_end"] = round(os.getloadavg()[0], 2)
    if args.fixture:
        write_fixture(args.fixture, sample, results)
    json.dump(results, open(args.out.with_suffix(".json"), "w"), indent=1)
    args.out.with_suffix(".md").write_text(markdown(results))
    print(args.out.with_suffix(".md").read_text())
    return 0


SETTING_KEYS = (
    "handling",
    "prompts",
    "official_src",
    "max_hop",
    "filter_k",
    "coref_top_k",
    "coref_threshold",
    "dense_pool",
    "pruning",
    "completion",
    "one_shot",
    "tracker_max_tokens",
)


def compare_run(run: Path, args, py: Path, sample: list[dict], source: str) -> dict:
    cfg = compose_run(run / "config.yaml", args.data_dir, args.cache_dir)
    _, rows = load_run(run)
    settings = {k: cfg.retriever[k] for k in SETTING_KEYS if k in cfg.retriever}
    if settings.get("prompts") == "official":
        settings["official_src"] = str(args.official_src)
    kg, retriever, dataset, hb = replay_hopbench(cfg, rows, settings)
    work = args.work / run.name
    work.mkdir(parents=True, exist_ok=True)
    export_index(work, kg, retriever, dataset)
    questions = []
    for row in rows:
        hops = [
            {"paths": x["paths"], "reply_text": x["reply_text"]}
            for x in row["trace"].get("hops", [])
            if "reply_text" in x
        ]
        questions.append(
            {
                "id": row["id"],
                "text": row["question"],
                "ner_reply": row["trace"].get("ner_reply"),
                "hops": hops,
            }
        )
    json.dump(questions, open(work / "questions.json", "w"))
    json.dump({"one_shot": bool(settings.get("one_shot"))}, open(work / "settings.json", "w"))
    table = dict(retriever.vectors._memo)
    for _ in range(3):
        write_vectors(work, table)
        off = run_official(py, args.official_src, work)
        missing = sorted({t for r in off["rows"] for t in r.get("missing_vectors", [])})
        if not missing:
            break
        print(
            f"{len(missing)} texts only the official side embeds; encoding them and rerunning",
            flush=True,
        )
        table.update(zip(missing, retriever.services.encoder.encode(missing)))
    requests = recorded_requests(Path(args.cache_dir), rows)
    per_q = []
    for h, o, row in zip(hb, off["rows"], rows):
        c = classify(h, o)
        prompts = same_prompts(o.get("calls") or [], requests.get(row["id"], []))
        per_q.append(
            {
                "id": h["id"],
                **c,
                "hopbench_top": h["top"],
                "official_top": o.get("top"),
                "hopbench_ms": h["ms"],
                "official_ms": 1000 * o["seconds"],
                "replay_same_as_run": h["same_as_run"],
                "calls": o.get("calls"),
                "prompts": prompts,
                "hop_stats": row["trace"].get("hop_stats"),
            }
        )
    coref_same = off["coref"] == retriever.coref_others  # sets and their order
    prompt_counts = {
        k: sum(q["prompts"][k] for q in per_q) for k in ("same", "different", "not_recorded")
    }
    coref_counts = compare_coref(off["coref"], retriever.coref_others, kg.entity_embeddings)
    counts = {
        s: sum(q["status"] == s for q in per_q)
        for s in ("identical", "ties", "different", "official_failed")
    }
    hstats = [q["hop_stats"] for q in per_q if q["hop_stats"]]
    res = {
        "run": str(run),
        "config_hash": run.name,
        "dataset": cfg.dataset.name,
        "retriever": cfg.retriever.name,
        "settings": settings,
        "n_questions": len(per_q),
        "counts": counts,
        "coreference_sets_identical": coref_same,
        "coreference_sets": coref_counts,
        "prompts": prompt_counts,
        "replay_same_as_run": sum(q["replay_same_as_run"] for q in per_q),
        "hopbench_ms_p50": float(np.median([q["hopbench_ms"] for q in per_q])),
        "official_ms_p50": float(np.median([q["official_ms"] for q in per_q])),
        "official_init_s": off["init_seconds"],
        "run_metrics": retriever.run_metrics([{"trace": r["trace"]} for r in rows]),
        "n_with_stats": len(hstats),
        "questions": per_q,
    }
    res["fixture_settings"] = {k: v for k, v in settings.items() if k != "official_src"}
    sample += pick_sample(rows, per_q, kg, args.fixture_n, source, run.name)
    return res


def pick_sample(rows, per_q, kg, n, source: str, run: str) -> list[dict]:
    """Up to n identical questions, taken in turn from each kind of outcome (tracker calls,
    failure reasons, NER empty), so the fixture covers every branch the run reached."""
    groups: dict[str, list] = {}
    for row, q in zip(rows, per_q):
        st = q["hop_stats"] or {}
        if q["status"] == "identical":
            key = json.dumps(
                [st.get("tracker_calls"), st.get("failure_reasons"), st.get("ner_entities") == 0]
            )
            groups.setdefault(key, []).append((row, q))
    picked = []
    while len(picked) < n and any(groups.values()):
        for key in sorted(groups):
            if groups[key] and len(picked) < n:
                picked.append(groups[key].pop(0))
    return [
        {
            "id": row["id"],
            "source": source,
            "run": run,
            "replies": recorded_replies(row["trace"]),
            "official_top10": [kg.passage_ids[i] for i in q["official_top"]],
            "status": q["status"],
        }
        for row, q in picked
    ]


def write_fixture(path: Path, sample: list[dict], results: dict) -> None:
    settings = {json.dumps(r["fixture_settings"], sort_keys=True) for r in results["runs"]}
    if len(settings) != 1:
        raise SystemExit("--fixture: the runs compared have different retriever settings")
    path.parent.mkdir(parents=True, exist_ok=True)
    json.dump(
        {
            "about": "top-10 of the authors' NeuroPath (KennyCaty/NeuroPath "
            f"{results['official_src_commit'][:7]}) on hopbench's spaCy MuSiQue graph and "
            "vectors, fed the replies below: the local model's (source 'local model') or "
            "scripted ones that walk the reference's branches (source 'scripted'); "
            "written by benchmarks/parity/neuropath/compare.py",
            "settings": json.loads(settings.pop()),
            "questions": sample,
        },
        open(path, "w"),
        indent=1,
    )


def markdown(results: dict) -> str:
    out = [
        "# hopbench NeuroPath vs the authors' NeuroPath class (identical inputs)",
        "",
        f"Official code: KennyCaty/NeuroPath at `{results['official_src_commit']}` (kept outside the "
        "repository), run in its own virtual environment (--venv); hopbench's spaCy graph of each run's "
        "dataset exported in its index format, hopbench's all-MiniLM-L6-v2 vectors as its encoder, and the local "
        "model's recorded replies (Qwen2.5-Coder-1.5B) fed to both sides, path ids renumbered by text.",
        "",
        "Replaced on the official side, and only that: its LLM client (answers with the recorded "
        "replies), its embedding model (a lookup of hopbench's vectors; a text hopbench did not embed "
        "is reported), faiss-gpu (faiss-cpu's flat index), and the file-name parse in "
        "`load_index_files` (L560-566), which fails for every model name at this commit because the "
        "name appears twice in the file name since L65. Time per query: retrieval only with replies "
        "replayed and vectors looked up (hopbench timed on a second pass with its vectors in memory), "
        f"machine default threads; load average {results.get('loadavg_start', '?')} at the start and "
        f"{results.get('loadavg_end', '?')} at the end on 2 cores "
        f"({results.get('beside', 'what else ran is not recorded')}), "
        "so only the ratio within a run means anything.",
        "",
    ]
    for r in results["runs"]:
        c = r["counts"]
        source = (
            "scripted replies that walk the reference's branches (not model output)"
            if r.get("synthetic")
            else "the local model's recorded replies"
        )
        out += [
            f"## {r.get('dataset', 'musique')} / {r['retriever']} ({r['config_hash']}, "
            f"{r['n_questions']} questions, {source})",
            "",
            "| identical top-10 | differ only inside exact ties | other differences | official side failed |",
            "|---|---|---|---|",
            f"| {c['identical']} | {c['ties']} | {c['different']} | {c['official_failed']} |",
            "",
            f"- coreference sets identical: {r['coreference_sets_identical']}"
            + (
                f" ({r['coreference_sets']['identical']:,} phrases identical, "
                f"{r['coreference_sets']['ties']} differ only inside exact ties of the cosine, "
                f"{r['coreference_sets']['different']} otherwise)"
                if "coreference_sets" in r
                else ""
            )
            + (
                f"; prompt texts (system and user messages) byte-identical to the official "
                f"side's on {r['prompts']['same']} LLM calls, different on "
                f"{r['prompts']['different']}, not recorded on {r['prompts']['not_recorded']}"
                if "prompts" in r
                else ""
            )
            + "; hopbench replay gives "
            f"the run's own top-10 on {r['replay_same_as_run']}/{r['n_questions']} questions",
            f"- time per query (retrieval only, replies replayed, p50): hopbench "
            f"{r['hopbench_ms_p50']:.1f} ms, official {r['official_ms_p50']:.1f} ms "
            f"(ratio {r['official_ms_p50'] / max(r['hopbench_ms_p50'], 1e-9):.2f}); official "
            f"initialisation {r['official_init_s']:.1f} s",
            "",
        ]
        m = r["run_metrics"]
        if m:
            out += ["Hop statistics of the run:", "", "| statistic | value |", "|---|---|"]
            out += [f"| {k} | {v} |" for k, v in m.items()]
            out += [""]
        diffs = [q for q in r["questions"] if q["status"] not in ("identical",)]
        if diffs:
            out += ["Questions that are not identical:", ""]
            for q in diffs:
                out += [
                    f"- `{q['id']}`: {q['status']} {q.get('positions', q.get('detail', ''))}; "
                    f"calls {q['calls']}"
                ]
            out += [""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
