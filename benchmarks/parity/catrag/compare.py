"""hopbench's catrag_code against the authors' CatRAG code, with identical LLM decisions (issue #33).

    HOPBENCH_DATA_DIR=../shared/datasets nice python3 -m benchmarks.parity.catrag.compare \\
        --run runs/musique/catrag_code/<hash> --official-src <CatRAG checkout>/src \\
        [--venv .cache/official-catrag] [--graph spacy] \\
        [--out benchmarks/parity/catrag/results/official_catrag] [--fixture tests/.../x.json]

1. The recorded decisions: the hopbench run given (``retriever=catrag_code llm=local``) holds,
   per question, the facts its filter kept, the entities its NER named and every neighbour
   score (`hopbench.llm.decision_replay.decisions_from_trace`).
2. The official side: `worker.py` in the virtual environment of
   parity/hipporag/compare.py's recipe (hipporag==2.0.0a4 --no-deps + the same pins; made
   once), with the authors' ``CatRAG.py`` / ``rerank.py`` / ``config_utils.py`` from
   ``--official-src`` (commit ce06b459, never in this repository), on the same OpenIE triples and
   the same all-MiniLM-L6-v2 vectors (`parity/hipporag/compare.export_inputs`, plus the
   processed NER strings), its LLM replaced by the decisions written in its own reply formats.
3. hopbench's side: the run's own top-10 (computed with the live model), and a replay of the
   same retriever with `DecisionReplay` (same decisions, this process), which must reproduce it
   and gives the per-query time beside the official one's.
4. Per question: identical top-10 or not; a difference is classed by what differs first
   (kept facts, anchors, seeds, neighbours the official side asked about that hopbench never
   scored, else the ranking itself), with the official final scores' ties noted.

Writes <out>.json and <out>.md, and with --fixture the official top-10 and the decisions of the
questions compared (the CI parity test replays them).
"""

from __future__ import annotations

from benchmarks.common.worker import one_thread_by_default, run_worker

one_thread_by_default()

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import args as common_args
from benchmarks.common.timing import pct
from benchmarks.parity.hipporag import compare as coh

WORKER = Path(__file__).resolve().parent / "worker.py"
CATRAG_COMMIT = "ce06b459e2987a47342dfd23c71246c70d6de273"
K = coh.K
SCORE_REL_TOL = 1e-5  # float32 (the code) against float64 (hopbench): ~1e-7 relative on PPR scores


def compose(dataset: str, limit, graph: str, data_dir: str, cache_dir: str):
    from hopbench.harness.compose import load_config

    over = [
        f"dataset={dataset}",
        f"graph={graph}",
        "retriever=catrag_code",
        "llm=local",
        "progress=false",
        f"paths.data_dir={data_dir}",
        f"paths.cache_dir={cache_dir}",
    ]
    if limit:
        over.append(f"dataset.limit={limit}")
    return load_config(over)


def read_run(run: Path) -> tuple[dict, list[dict]]:
    import yaml

    cfg = yaml.safe_load((run / "config.yaml").read_text())
    rows = [
        json.loads(line)
        for line in (run / "predictions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return cfg, rows


def run_official(py: Path, work: Path, src: Path, hash_seed: str = "0") -> dict:
    """The authors' CatRAG on the inputs in `work`; the package the worker assembles from their
    files goes to work/pkg, which is on the worker's PYTHONPATH from its start."""
    pkg = work / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    run_worker(
        py,
        WORKER,
        [work, src],
        log=work / f"official_catrag_{hash_seed}.log",
        env=coh.offline_env(hash_seed),
        pythonpath=[pkg],
    )
    return json.loads((work / f"official_catrag_{hash_seed}.json").read_text())


def add_vectors(work: Path, texts: list[str], encoder) -> None:
    """Adds the vectors of the processed NER strings the official ner_query embeds."""
    table = vectors_of(work)
    new = sorted({t for t in texts if t and t not in table})
    if new:
        for t, v in zip(new, encoder.encode(new), strict=True):
            table[t] = np.asarray(v, dtype=np.float32)
    keys = list(table)
    np.savez(work / "vectors.npz", texts=np.array(keys), vectors=np.stack([table[t] for t in keys]))


def replay_hopbench(cfg, dataset, kg, encoder, decisions) -> dict:
    from hopbench.harness.compose import build_retriever
    from hopbench.llm.decision_replay import DecisionReplay
    from hopbench.retrieve.base import Services

    retriever = build_retriever(cfg)
    llm = DecisionReplay(decisions)
    services = Services(dataset=dataset, encoder=encoder, llm=llm, graphdb=None)
    retriever.prepare(kg, services)
    questions = list(dataset.questions)
    services.encode_questions(questions)
    rows, ms = coh.timed_retrievals(
        retriever,
        questions,
        lambda res: {
            "top": [kg.passage_index(p) for p in res.passage_ids],
            "scores": list(res.scores),
            "trace": res.trace,
        },
    )
    return {
        "rows": rows,
        "ms": ms,
        "undecided": len(llm.undecided),
        "services": services,
    }


def anchor_tie(hop_trace: dict, off: dict, vectors: dict) -> bool:
    """The two sides linked a question entity to different nodes whose vectors are bit-equal
    (e.g. "kim jong il" and "kim jong   il": the same tokens), an exact tie in ner_query's argmax."""
    ours, theirs = set(hop_trace.get("linked_nodes", [])), set(off.get("anchors", []))
    if ours == theirs or not all(n in vectors for n in ours | theirs):
        return False
    return {vectors[n].tobytes() for n in ours} == {vectors[n].tobytes() for n in theirs}


def classify(hop_trace: dict, off: dict, fact_passages: dict, vectors: dict) -> str:
    """What differs first between the two sides on one question (both ran the same decisions)."""
    from hopbench.kg.graph import ENTITY_PREFIX

    if [str(tuple(f)) for f in hop_trace.get("facts", [])] != off["facts"]:
        return "kept facts differ"
    if anchor_tie(hop_trace, off, vectors):
        return "anchor tie: a question entity's nearest nodes have identical vectors, each side links another"
    hop_w = {s[0][len(ENTITY_PREFIX) :]: s[1] for s in hop_trace.get("seeds", [])}
    off_w = off["seeds"]
    if set(hop_w) != set(off_w):
        if len(hop_w) != len(off_w):
            return f"seeds differ: {len(hop_w)} on hopbench's side, {len(off_w)} on the code's"
        if np.allclose(sorted(hop_w.values()), sorted(off_w.values()), rtol=1e-5, atol=0):
            return "seed tie: entities of equal weight at the 5-seed cut, each side keeps another"
        return "seeds differ"
    hop_stage1, off_stage1 = hop_trace.get("stage1_seeds", []), off.get("asked_seeds", [])
    if set(off_stage1) != set(hop_stage1):
        fifth = sorted(hop_w.values(), reverse=True)[min(5, len(hop_w)) - 1]
        if all(
            np.isclose(hop_w.get(n, -1), fifth, rtol=1e-5)
            for n in set(off_stage1) ^ set(hop_stage1)
        ):
            return "stage-I tie: nodes of equal reset weight at the 5th place, the code orders them by insertion"
        return "stage-I nodes differ"
    if off.get("undecided"):
        return "the code scored neighbours hopbench did not list (neighbour list differs)"
    if any(len(fact_passages.get(f, ())) > 1 for f in off["facts"]):
        return "a kept fact found verbatim in several passages: the code boosts each, hopbench the first"
    return "same decisions, seeds and nodes; the adapted edge weights differ"


def vectors_of(work: Path) -> dict:
    """{text: vector} of the vectors both sides were given."""
    z = np.load(work / "vectors.npz", allow_pickle=False)
    return {str(t): v for t, v in zip(z["texts"], z["vectors"], strict=True)}


def fact_passages_of(work: Path) -> dict:
    """{str(processed triple): passages holding it} from the OpenIE file given to the code."""
    from hopbench.kg.hipporag2 import text_processing, valid_triples

    doc = json.loads((work / f"openie_results_ner_{coh.LLM_NAME}.json").read_text(encoding="utf-8"))
    out: dict = {}
    for i, d in enumerate(doc["docs"]):
        for t in valid_triples(d["extracted_triples"]):
            out.setdefault(str(tuple(text_processing(x) for x in t)), set()).add(i)
    return out


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--run",
        required=True,
        type=Path,
        help="hopbench run dir of retriever=catrag_code with an LLM",
    )
    common_args.add_official_args(
        ap, "catrag", "folder holding catrag/CatRAG.py (kwunhang/CatRAG ce06b459: its src/)"
    )
    ap.add_argument("--graph", default="spacy", help="hopbench graph the run used (spacy, openie)")
    common_args.add_data_and_cache_args(ap)
    ap.add_argument(
        "--work-dir", type=Path, default=None, help="inputs and outputs of the official side"
    )
    common_args.add_out_arg(ap, __file__, "official_catrag")
    ap.add_argument(
        "--fixture",
        type=Path,
        default=None,
        help="write the official top-10 of a sample here, for the CI test",
    )
    return ap


def question_rows(questions, by_id, hop, off, tops, work: Path) -> list[dict]:
    """Per question: run and official top-K identical (same set), the replay equal to the run;
    the PPR scores side by side where the top is the same; why, where they differ."""
    run_top, off_top = tops
    fact_passages = fact_passages_of(work)
    vectors = vectors_of(work)
    per_q = []
    for i, q in enumerate(questions):
        same = run_top[i] == off_top[i]
        o = off["questions"][i]
        row = {
            "id": q.id,
            "identical": same,
            "replay_equals_run": hop["rows"][i]["top"][:K] == run_top[i],
            "same_set": set(run_top[i]) == set(off_top[i]),
        }
        if same and not o["dense"]:  # the PPR scores of the same passages, side by side
            ours = np.array(
                by_id[q.id].get("scores") or hop["rows"][i]["scores"][:K], dtype=np.float64
            )
            theirs = np.array(o["scores"][:K])
            row["max_abs_score_diff"] = float(np.max(np.abs(ours - theirs)))
            row["max_rel_score_diff"] = float(np.max(np.abs(ours - theirs) / np.abs(theirs)))
            if row["max_rel_score_diff"] > SCORE_REL_TOL:
                row["why"] = classify(hop["rows"][i]["trace"], o, fact_passages, vectors)
        if not same:
            row["why"] = classify(hop["rows"][i]["trace"], o, fact_passages, vectors)
            s = o["scores"][: K + 1]
            row["official_scores_tied"] = len(set(np.round(s, 15))) < len(s)
            row["first_difference"] = next(j for j in range(K) if run_top[i][j] != off_top[i][j])
        per_q.append(row)
    return per_q


def main() -> int:
    ap = parser()
    args = ap.parse_args()

    from hopbench.harness.compose import build_dataset, build_encoder
    from hopbench.kg import load_or_build
    from hopbench.kg.hipporag2 import text_processing
    from hopbench.llm.decision_replay import decisions_from_trace

    run_cfg, run_rows = read_run(args.run)
    ds_name = run_cfg["dataset"]["name"]
    limit = run_cfg["dataset"].get("limit")
    cfg = compose(ds_name, limit, args.graph, args.data_dir, args.cache_dir)
    dataset = build_dataset(cfg)
    encoder = build_encoder(cfg)
    kg = load_or_build(
        dataset, cfg.graph, encoder=encoder, cache_dir=args.cache_dir, descriptions=False
    )  # CatRAG (HippoRAG 2) reads no description vectors
    by_id = {r["id"]: r for r in run_rows}
    questions = [q for q in dataset.questions if q.id in by_id]
    dataset.questions = questions
    decisions = {q.text: decisions_from_trace(by_id[q.id]["trace"]) for q in questions}

    work = args.work_dir or Path(args.cache_dir) / "official-catrag" / f"{ds_name}_{args.graph}"
    hop = replay_hopbench(cfg, dataset, kg, encoder, decisions)
    coh.export_inputs(work, dataset, cfg, kg, hop["services"])
    ner_texts = [text_processing(e) for d in decisions.values() for e in d["entities"]]
    add_vectors(work, ner_texts, encoder)
    (work / "decisions.json").write_text(json.dumps(decisions), encoding="utf-8")
    py = coh.ensure_venv(args.venv)
    off = run_official(py, work, args.official_src)

    run_top = [
        [kg.passage_index(p) for p in by_id[q.id]["ranked_passage_ids"][:K]] for q in questions
    ]
    off_top = [r["top"][:K] for r in off["questions"]]
    per_q = question_rows(questions, by_id, hop, off, (run_top, off_top), work)
    sc = {
        "hopbench catrag_code (run)": coh.recall_rows(dataset, kg, run_top),
        "official CatRAG (ce06b459), same decisions": coh.recall_rows(dataset, kg, off_top),
    }
    names = list(sc)
    res = {
        "dataset": ds_name,
        "graph": args.graph,
        "n_questions": len(questions),
        "run": str(args.run),
        "run_config_hash": args.run.name,
        "decisions": decision_source(run_cfg),
        "official_commit": CATRAG_COMMIT,
        "official_src": str(args.official_src),
        "top10_identical": sum(r["identical"] for r in per_q),
        "top10_same_set": sum(r["same_set"] for r in per_q),
        "replay_equals_run": sum(r["replay_equals_run"] for r in per_q),
        "hopbench_replay_undecided_neighbours": hop["undecided"],
        "official_replay": off["replay"],
        "official_undecided": off["undecided"][:50],
        "differing": [r for r in per_q if not r["identical"]],
        "score_rel_tol": SCORE_REL_TOL,
        "identical_scores_differ": [r for r in per_q if r["identical"] and "why" in r],
        "max_abs_score_diff_identical": max(
            (r.get("max_abs_score_diff", 0.0) for r in per_q), default=0.0
        ),
        "official_dense_fallbacks": sum(r["dense"] for r in off["questions"]),
        "recall": {n: coh.summary(v, (args.graph, n)) for n, v in sc.items()},
        "paired": {
            m: coh.paired(sc[names[0]], sc[names[1]], m, (args.graph, "catrag"))
            for m in coh.METRICS
        },
        "ms": {
            "hopbench catrag_code (replayed decisions)": pct(hop["ms"]),
            "official CatRAG (replayed decisions)": pct(off["ms"]),
        },
        "official_graph": off["graph"],
        "hopbench_graph": coh.hopbench_counts(kg),
        "official_versions": off["versions"],
        "official_index_seconds": off["index_seconds"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(res), encoding="utf-8")
    if args.fixture:
        write_fixture(args.fixture, (ds_name, args.graph), questions, kg, off, decisions)
    print(markdown(res))
    return 0


def write_fixture(path: Path, where: tuple, questions, kg, off: dict, decisions: dict) -> None:
    """The official top-K, scores and the decisions replayed, per question (`where`: dataset and
    graph), for tests/retrieve/catrag/test_catrag_parity.py."""
    ds_name, graph = where
    fx = {
        "dataset": ds_name,
        "graph": graph,
        "official_commit": CATRAG_COMMIT,
        "k": K,
        "questions": [
            {
                "id": q.id,
                "text": q.text,
                "official_top10": [kg.passage_ids[j] for j in off["questions"][i]["top"][:K]],
                "official_scores": off["questions"][i]["scores"][:K],
                "decisions": decisions[q.text],
            }
            for i, q in enumerate(questions)
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fx, indent=1), encoding="utf-8")


def decision_source(run_cfg: dict) -> str:
    """Who made the run's decisions: its LLM's model, or the scripted rules of scripted_run.py."""
    model = (run_cfg.get("llm") or {}).get("model")
    if model:
        return f"LLM {model}"
    return "scripted rule-based decisions of benchmarks/parity/catrag/scripted_run.py, no model"


def markdown(res: dict) -> str:
    n = res["n_questions"]
    lines = [
        f"# catrag_code vs the authors' CatRAG code ({res['dataset']}, graph={res['graph']})",
        "",
        f"Official code: kwunhang/CatRAG `{res['official_commit'][:8]}` (`CatRAG.py`, `rerank.py`, "
        "`config_utils.py`, kept outside the repository) on hipporag 2.0.0a4's modules; both sides on the "
        "same OpenIE triples and all-MiniLM-L6-v2 vectors, and the same LLM decisions: those of the "
        f"hopbench run `{res['run_config_hash']}` (retriever=catrag_code, {res['decisions']}), written in the "
        "official reply formats for the authors' parsers.",
        "",
        "| | count |",
        "|---|---|",
        f"| questions compared | {n} |",
        f"| identical top-10 | {res['top10_identical']} |",
        f"| same top-10 set | {res['top10_same_set']} |",
        f"| largest PPR score difference on identical lists | {res['max_abs_score_diff_identical']:.2e} |",
        f"| dense fallbacks (no kept fact), official side | {res['official_dense_fallbacks']} |",
        f"| hopbench replay == hopbench run (determinism) | {res['replay_equals_run']} |",
        f"| official neighbours without a recorded score (code default 4) | {res['official_replay']['undecided']} "
        f"of {res['official_replay']['neighbours']} |",
        "",
    ]
    if res["differing"]:
        lines += [
            "## Questions whose top-10 differs",
            "",
            "| question | first differing rank | why | official scores tied |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {d['id']} | {d['first_difference'] + 1} | {d['why']} | {d['official_scores_tied']} |"
            for d in res["differing"]
        ]
        lines.append("")
    if res.get("identical_scores_differ"):
        lines += [
            f"## Identical top-10, PPR scores apart by more than {res['score_rel_tol']:g} relative",
            "",
            "| question | largest relative difference | why |",
            "|---|---|---|",
        ]
        lines += [
            f"| {d['id']} | {d['max_rel_score_diff']:.2e} | {d['why']} |"
            for d in res["identical_scores_differ"]
        ]
        lines.append("")
    lines += ["## Recall", "", "| side | R@2 | R@5 | R@10 | FCR@5 |", "|---|---|---|---|---|"]
    for name, r in res["recall"].items():
        lines.append(
            f"| {name} | " + " | ".join(f"{100 * r[m]['mean']:.1f}" for m in coh.METRICS) + " |"
        )
    lines += [
        "",
        "## Retrieval time per query (decisions replayed, no model; median of 3 passes, one thread)",
        "",
        "| side | p50 ms | p90 ms |",
        "|---|---|---|",
    ]
    for name, t in res["ms"].items():
        lines.append(
            f"| {name} | {t.get('p50', float('nan')):.1f} | {t.get('p90', float('nan')):.1f} |"
        )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
