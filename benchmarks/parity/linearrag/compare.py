"""hopbench's LinearRAG against DEEP-PolyU/LinearRAG's own code, on identical inputs (issue #56).

    HOPBENCH_DATA_DIR=../shared/datasets nice python3 -m benchmarks.parity.linearrag.compare \\
        --official-src LINEARRAG_CHECKOUT [--dataset musique] [--retriever linearrag_musique] \\
        [--hash-seeds 0,1] [--vectorized] [--venv .cache/official-linearrag] \\
        [--fixture tests/retrieve/linearrag/fixtures/official_musique.json]

1. Makes (once) a virtual environment for their code (--system-site-packages; pins below: the
   igraph they pin and the openai SDK their utils.py imports); their checkout (at 4ecfa25, the
   commit is recorded) is imported from --official-src and never copied here.
2. Runs hopbench's retriever (`retriever=<--retriever>`) to get the inputs both sides share:
   the passages as run.py writes them (``idx:`` prefix), the spaCy NER of every passage and
   the question entities, and one all-MiniLM-L6-v2 vector for every text either side embeds.
3. Runs their `index` and `retrieve` (worker.py) once per PYTHONHASHSEED: their entity and
   sentence sets make the output depend on it, so each run's orders are given to hopbench.
4. Compares, per question, the activated entities (score and tier), the PPR score of every node
   and the top-10; a different top-10 is "inside a tie" when its passages have, in their PPR
   scores, the same scores at every rank (within 1e-12). Times indexing (NER and vectors given)
   and retrieval per question on both sides in the same run.

Writes <out>.json and <out>.md and, with --fixture, their top-10 lists and scores plus the orders
of their run, for tests/retrieve/linearrag/test_official_fixture.py.
"""

from __future__ import annotations

import os

from benchmarks.common.worker import one_thread_by_default, run_worker

one_thread_by_default()

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.common import args as common_args  # noqa: E402
from benchmarks.common import venv as common_venv  # noqa: E402
from benchmarks.common.paths import results_dir  # noqa: E402
from benchmarks.common.report import write_json_and_md  # noqa: E402
from benchmarks.common.timing import loadavg  # noqa: E402
from benchmarks.parity.linearrag.question_vectors import (  # noqa: E402
    THREADS,
    question_side_vectors,
)

COMMIT = "4ecfa25170711da9a0bf2a9a923867cc0f8d3525"
PINS = ["python-igraph==0.11.8", "openai==1.54.5"]
WORKER = Path(__file__).resolve().parent / "worker.py"
K = 10
TIE = 1e-12


def md5_id(text: str, prefix: str) -> str:
    return prefix + hashlib.md5(text.encode()).hexdigest()


# ---- hopbench's side ---------------------------------------------------------------------------
def hopbench_setup(args):
    from hydra import compose, initialize_config_dir

    import hopbench.harness.config_resolvers  # noqa: F401  (registers the retriever schemas)
    from hopbench.core.paths import CONFIG_DIR
    from hopbench.harness.compose import build_dataset, build_encoder, build_retriever
    from hopbench.retrieve.base import Services

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=[
                f"dataset={args.dataset}",
                f"retriever={args.retriever}",
                "progress=false",
                f"paths.data_dir={args.data_dir}",
                f"paths.cache_dir={args.cache_dir}",
            ],
        )
    dataset = build_dataset(cfg)
    encoder = build_encoder(cfg)
    retriever = build_retriever(cfg)
    if args.vectorized:
        retriever.use_vectorized_retrieval = True
    services = Services(dataset=dataset, encoder=encoder)
    t = time.perf_counter()
    retriever.prepare(None, services)
    prepare_s = time.perf_counter() - t
    questions = list(dataset.questions)[: args.limit]
    return cfg, dataset, encoder, retriever, services, questions, prepare_s


def shared_inputs(retriever, encoder, questions):
    """The vector table (text -> vector, first entry wins) and every question's entities; the
    questions' and their entities' vectors by question_vectors.py (one thread, uncached)."""
    g = retriever.graph
    table: dict[str, np.ndarray] = {}
    for texts, vecs in (
        (g.passage_texts, retriever.passage_emb),
        (g.entities, retriever.entity_emb),
        (g.sentences, retriever.sentence_emb),
    ):
        for t, v in zip(texts, vecs):
            table.setdefault(t, np.asarray(v, dtype=np.float32))
    mentions = {}
    for q in questions:
        table.setdefault(q.text, question_side_vectors(encoder, [q.text])[0])
        ents = retriever.question_entities(q.text)
        mentions[q.text] = ents
        for t, v in zip(ents, question_side_vectors(encoder, ents)):
            table.setdefault(t, v)
    return table, mentions


def write_inputs(work: Path, retriever, ner, questions, mentions, table, settings) -> None:
    work.mkdir(parents=True, exist_ok=True)
    texts = retriever.graph.passage_texts
    inputs = {
        "passages": texts,
        "ner": {
            "passage_hash_id_to_entities": {
                md5_id(t, "passage-"): ents for t, ents in zip(texts, ner.passage_entities)
            },
            "sentence_to_entities": ner.sentence_entities,
        },
        "question_entities": mentions,
        "questions": [
            {"question": q.text, "answer": q.answers[0] if q.answers else ""} for q in questions
        ],
        "settings": settings,
        "k": K,
        "spacy_model": retriever.ner_model,
    }
    (work / "inputs.json").write_text(json.dumps(inputs))
    keys = list(table)
    (work / "vector_texts.json").write_text(json.dumps(keys))
    np.save(work / "vectors.npy", np.stack([table[t] for t in keys]).astype(np.float32))


def run_official(py: Path, args, work: Path, seed: int, vectorized: bool) -> dict:
    tag = f"{'vec' if vectorized else 'bfs'}_{seed}"
    out = work / f"official_{tag}.json"
    run_worker(
        py,
        WORKER,
        [work, out, *(["--vectorized"] if vectorized else [])],
        log=work / f"official_{tag}.log",
        env={"PYTHONHASHSEED": str(seed), "CUDA_VISIBLE_DEVICES": ""},
        pythonpath=[args.official_src],
        what="LinearRAG's code",
    )
    return json.loads(out.read_text())


def hopbench_on_their_orders(retriever, ner, official, table, mentions, questions):
    """hopbench's retrieval on the graph built with their run's entity/sentence orders."""
    from hopbench.retrieve.linearrag.graph import build_graph
    from hopbench.retrieve.linearrag.ner import CorpusEntities

    o = official["orders"]
    theirs = CorpusEntities(ner.passage_entities, o["sentence_entities"])
    texts = retriever.graph.passage_texts
    t = time.perf_counter()
    graph = build_graph(
        texts,
        theirs,
        adjacent_edges=retriever.adjacent_edges,
        entity_order=o["entities"],
        sentence_order=o["sentences"],
        entity_sentence_order=o["entity_sentences"],
    )
    vec = lambda ts: np.stack([table[x] for x in ts]).astype(np.float32)  # noqa: E731
    retriever.use_index(
        graph,
        passage_embeddings=vec(texts),
        entity_embeddings=vec(graph.entities),
        sentence_embeddings=vec(graph.sentences),
        passage_ids=retriever.passage_ids,
    )
    index_s = time.perf_counter() - t
    return run_questions(retriever, table, mentions, questions) | {"index_seconds": index_s}


def run_questions(retriever, table, mentions, questions) -> dict:
    rows, ms = [], []
    for q in questions:
        ents = mentions[q.text]
        m_vec = np.stack([table[e] for e in ents]) if ents else None
        t = time.perf_counter()
        details = retriever.score_question(table[q.text], ents, m_vec)
        res = retriever.ranking(details, K)
        ms.append(1000 * (time.perf_counter() - t))
        rows.append(
            {
                "top": [retriever.passage_ids.index(p) for p in res.passage_ids],
                "scores": res.scores,
                "details": details,
            }
        )
    return {"rows": rows, "ms": ms}


# ---- comparison ---------------------------------------------------------------------------------
def compare_rows(hop: dict, official: dict, retriever) -> dict:
    g = retriever.graph
    names = official["names"]
    n_e = g.n_entities
    ent_index = {e: i for i, e in enumerate(g.entities)}
    identical = inside_ties = 0
    other, act_mismatch = [], []
    from hopbench.retrieve.kernels.ppr import personalized_pagerank

    max_ppr = max_reset = max_act = max_kernel = 0.0
    for i, (h, o) in enumerate(zip(hop["rows"], official["questions"])):
        d = h["details"]
        if "activated" in o:
            mine = {g.entities[e]: v for e, v in d["activated"].items()}
            if set(mine) != set(o["activated"]) or any(
                mine[e][1] != o["activated"][e][1] for e in mine
            ):
                act_mismatch.append(i)
            else:
                for e, (s, _t) in o["activated"].items():
                    max_act = max(max_act, abs(float(mine[e][0]) - s))
            node = np.zeros(len(d["ppr"]))
            for name, score in o["ppr"].items():
                kind, key = names[name]
                node[ent_index[key] if kind == "entity" else n_e + key] = score
            max_ppr = max(max_ppr, float(np.abs(node - d["ppr"]).max()))
            reset = np.zeros(len(d["ppr"]))
            for name, w in o["reset"].items():
                kind, key = names[name]
                reset[ent_index[key] if kind == "entity" else n_e + key] = w
            max_reset = max(max_reset, float(np.abs(reset - d["reset_raw"]).max()))
            # the PPR kernel alone: hopbench's solve of their own reset against their prpack
            theirs = np.where(np.isnan(reset) | (reset < 0), 0.0, reset)
            kernel = personalized_pagerank(
                retriever.ppr, theirs, damping=retriever.damping, tol=1e-12
            )
            max_kernel = max(max_kernel, float(np.abs(kernel - node).max()))
            off_scores = node[n_e:]
        else:
            off_scores = None
        if h["top"] == o["top"]:
            identical += 1
            continue
        if off_scores is not None and np.allclose(
            off_scores[h["top"]], off_scores[o["top"]], rtol=0, atol=TIE
        ):
            inside_ties += 1
        else:
            other.append(i)
    return {
        "questions": len(hop["rows"]),
        "identical_top10": identical,
        "differ_inside_ties": inside_ties,
        "differ_otherwise": other,
        "activation_mismatch": act_mismatch,
        "max_abs_activation_diff": max_act,
        "max_abs_reset_diff": max_reset,
        "max_abs_ppr_diff": max_ppr,
        "max_abs_ppr_diff_same_reset": max_kernel,
    }


def git_commit(src: str) -> str:
    return subprocess.run(
        ["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def markdown(res: dict) -> str:
    lines = [
        "# LinearRAG: hopbench against the authors' code",
        "",
        f"DEEP-PolyU/LinearRAG at `{res['commit'][:7]}`, run unchanged (worker.py) with igraph "
        f"{res['official_versions']['igraph']}; dataset `{res['dataset']}`, retriever "
        f"`{res['retriever']}` ({res['settings']}); NER `{res['ner_model']}`; vectors "
        f"all-MiniLM-L6-v2 given to both sides. Load average {res['loadavg']}. "
        "Made by `python -m benchmarks.parity.linearrag.compare` (its docstring).",
        "",
        "| run | questions | identical top-10 | differ inside ties | differ otherwise "
        "| activation mismatches | max activation diff | max reset diff | max PPR diff "
        "| max PPR diff, their reset |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in res["runs"].items():
        lines.append(
            f"| {name} | {c['questions']} | {c['identical_top10']} | {c['differ_inside_ties']} "
            f"| {len(c['differ_otherwise'])} | {len(c['activation_mismatch'])} "
            f"| {c['max_abs_activation_diff']:.1e} | {c['max_abs_reset_diff']:.1e} "
            f"| {c['max_abs_ppr_diff']:.1e} | {c['max_abs_ppr_diff_same_reset']:.1e} |"
        )
    lines += ["", "Their own output across hash seeds (top-10 identical between seeds):", ""]
    for k, v in res["official_self"].items():
        lines.append(f"- seeds {k}: {v} of {res['n_questions']}")
    lines += [
        f"- hopbench in its own order (first appearance) against their seed "
        f"{res['hash_seeds'][0]}: {res['own_order_identical']} of {res['n_questions']}",
        "",
        "| side | index (s; NER and vectors given) | retrieval per question (ms, mean) |",
        "|---|---|---|",
    ]
    for side, t in res["timing"].items():
        lines.append(f"| {side} | {t['index_s']:.2f} | {t['ms_per_question']:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--official-src", required=True, help="a checkout of DEEP-PolyU/LinearRAG")
    ap.add_argument("--dataset", default="musique")
    ap.add_argument("--retriever", default="linearrag_musique")
    ap.add_argument("--limit", type=int, default=None, help="first N questions (default all)")
    ap.add_argument("--hash-seeds", default="0,1")
    ap.add_argument("--vectorized", action="store_true", help="their use_vectorized_retrieval")
    ap.add_argument("--venv", default=".cache/official-linearrag")
    ap.add_argument("--work-dir", default=".cache/official-linearrag-work")
    ap.add_argument("--out", default=None)
    ap.add_argument("--fixture", default=None)
    common_args.add_data_and_cache_args(ap)
    args = ap.parse_args()
    seeds = [int(s) for s in args.hash_seeds.split(",")]
    commit = git_commit(args.official_src)
    if commit != COMMIT:
        raise SystemExit(f"{args.official_src} is at {commit}, expected {COMMIT}")
    py = common_venv.ensure_venv(Path(args.venv), PINS, no_deps=False)

    cfg, dataset, encoder, retriever, services, questions, prepare_s = hopbench_setup(args)
    ner = retriever.corpus_ner_output
    table, mentions = shared_inputs(retriever, encoder, questions)
    mode = "vec" if args.vectorized else "bfs"
    work = Path(args.work_dir) / f"{args.dataset}_{args.retriever}_{mode}"
    settings = {
        k: getattr(retriever, k)
        for k in (
            "max_iterations",
            "iteration_threshold",
            "passage_ratio",
            "top_k_sentence",
            "passage_node_weight",
            "damping",
        )
    }
    write_inputs(work, retriever, ner, questions, mentions, table, settings)
    own = run_questions(retriever, table, mentions, questions)
    official = {s: run_official(py, args, work, s, args.vectorized) for s in seeds}
    runs, hop0 = {}, None
    for s in seeds:
        hop = hopbench_on_their_orders(retriever, ner, official[s], table, mentions, questions)
        hop0 = hop0 or hop
        runs[f"{mode}, hash seed {s}"] = compare_rows(hop, official[s], retriever)
    o0 = official[seeds[0]]
    n = len(questions)
    res = {
        "commit": commit,
        "dataset": args.dataset,
        "retriever": args.retriever,
        "settings": settings,
        "ner_model": retriever.ner_model,
        "vectorized": args.vectorized,
        "hash_seeds": seeds,
        "n_questions": n,
        "loadavg": loadavg(),
        "official_versions": {k: o0[k] for k in ("igraph", "numpy", "torch", "python")},
        "runs": runs,
        "official_self": {
            f"{a}-{b}": sum(
                x["top"] == y["top"]
                for x, y in zip(official[a]["questions"], official[b]["questions"])
            )
            for a in seeds
            for b in seeds
            if a < b
        },
        "own_order_identical": sum(
            r["top"] == o["top"] for r, o in zip(own["rows"], o0["questions"])
        ),
        "timing": {
            "LinearRAG (theirs)": {
                "index_s": o0["index_seconds"],
                "ms_per_question": 1000 * o0["retrieve_seconds"] / n,
            },
            "hopbench": {
                "index_s": hop0["index_seconds"],
                "ms_per_question": float(np.mean(hop0["ms"])),
            },
        },
        "hopbench_prepare_s_with_ner_and_vectors": prepare_s,
    }
    out = (
        Path(args.out)
        if args.out
        else results_dir(__file__) / f"official_linearrag_{args.dataset}_{mode}"
    )
    write_json_and_md(out, res, markdown)
    if args.fixture:
        write_fixture(Path(args.fixture), args, retriever, ner, o0, questions, seeds[0])


def write_fixture(path: Path, args, retriever, ner, official, questions, seed) -> None:
    """Their top-10 and scores per question, and the orders of their run given as indices of
    hopbench's own (first-appearance) orders, so the test rebuilds their graph without them."""
    g_ent = {e: i for i, e in enumerate(retriever.own_graph.entities)}
    g_sent = {s: i for i, s in enumerate(retriever.own_graph.sentences)}
    o = official["orders"]
    their_sent = {s: i for i, s in enumerate(o["sentences"])}
    data = {
        "commit": COMMIT,
        "dataset": args.dataset,
        "retriever": args.retriever,
        "vectorized": args.vectorized,
        "python_hash_seed": seed,
        "ner_model": retriever.ner_model,
        "question_vector_threads": THREADS,
        "entity_order": [g_ent[e] for e in o["entities"]],
        "sentence_order": [g_sent[s] for s in o["sentences"]],
        "sentence_entities": {
            str(g_sent[s]): [g_ent[e] for e in ents]
            for s, ents in o["sentence_entities"].items()
            if ents != ner.sentence_entities[s]
        },
        "entity_sentences": {  # where their order is not by their sentence index
            str(g_ent[e]): [g_sent[s] for s in sents]
            for e, sents in o["entity_sentences"].items()
            if (pos := [their_sent[s] for s in sents]) != sorted(pos)
        },
        "questions": [
            {
                "id": q.id,
                "top": [retriever.passage_ids[p] for p in row["top"]],
                "scores": row["scores"],
            }
            for q, row in zip(questions, official["questions"])
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
