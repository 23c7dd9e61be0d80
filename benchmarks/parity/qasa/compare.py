"""hopbench's spreading activation against the authors' QASARetriever run by their own code (issue #27).

    HOPBENCH_NEO4J_PORT=7701 HOPBENCH_DATA_DIR=../shared/datasets nice python \\
        -m benchmarks.parity.qasa.compare --official-src <qasa-graph-rag checkout> \\
        [--venv .cache/official-qasa] [--datasets musique,2wiki] [--limit-2wiki 200] \\
        [--depths 1,2,3,4] [--out benchmarks/parity/qasa/results/official_qasa]

1. The authors' code (kinfi4/qasa-graph-rag; its commit is recorded) runs in its own virtual
   environment (`ensure_venv`: neo4j, google-genai, pydantic, numpy from PyPI; never a hopbench
   dependency) through benchmarks/parity/qasa/worker.py, against the Neo4j server of the
   `graphdb` config (configs/graphdb/local.yaml: uri, user, password from
   HOPBENCH_NEO4J_PASSWORD), on hopbench's graph exported in THEIR schema, with hopbench's
   MiniLM vectors for the question and each search hint.
2. Mentions: a deterministic source identical on both sides, hopbench's spaCy mentions
   (`question_mentions`), each its own search hint. This checks the algorithm; it is not the
   authors' LLM step (recording it with the local model was out of time).
3. hopbench's side: `SpreadingActivationRetriever` in its defaults (the authors' settings), its
   seeds and kernel run exactly as `retrieve_with_mentions` runs them, full activation map kept.
4. Per question and configuration: the activated key sets, the largest activation difference,
   the top-30 entities and the authors' raw top-30 path rows (their ORDER BY ... LIMIT 30, before
   their de-duplication) against the same rule applied to hopbench's activations
   (`kernels.paths.relationship_path_rows`), equal except inside exact ties at the cut; their query latency
   gated vs ungated at every depth (p50/p95, activated-set sizes), timed inside their code.

Writes <out>.json and <out>.md, and with --fixture a small sample for tests/retrieve.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import args as common_args
from benchmarks.common.checkout import checkout_commit
from benchmarks.common.paths import REPO, command_line
from benchmarks.common.worker import run_worker
from benchmarks.speed.neo4j_sa import load
from hopbench.retrieve.qasa.paths import relationship_path_rows

WORKER = Path(__file__).resolve().parent / "worker.py"
PINS = [
    "neo4j==6.1.0",
    "google-genai==1.61.0",
    "google-api-core==2.29.0",
    "pydantic==2.10.4",
    "pandas==3.0.0",
    "python-dotenv==1.2.1",
    "numpy",
    "tqdm",
]
TOP = 30
TOL = (
    1e-6  # their gate and seed scores are float32 (built-in cosine, index scores): ties within this
)


def ensure_venv(venv: Path) -> Path:
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", *PINS], check=True)
    return py


def graphdb_settings():
    from omegaconf import OmegaConf

    from hopbench.graphdb.connection import GraphDBSettings

    cfg = OmegaConf.load(REPO / "configs" / "graphdb" / "local.yaml")
    return GraphDBSettings.from_config(OmegaConf.to_container(cfg, resolve=True))


# ---- the authors' rules replayed on hopbench's activations ------------------------------------
def same_top(a: list, b: list, key, value, top: int = TOP, tol: float = TOL) -> dict:
    """Two top lists (each sorted by value descending): equal except inside ties at the cut?
    Entries strictly above the cut value must agree as multisets; at the cut, only counts."""
    if not a and not b:
        return {"equal": True, "tie_only": False}
    cut = min(
        value(a[min(top, len(a)) - 1]) if a else 0.0, value(b[min(top, len(b)) - 1]) if b else 0.0
    )
    above_a = sorted(key(x) for x in a[:top] if value(x) > cut + tol)
    above_b = sorted(key(x) for x in b[:top] if value(x) > cut + tol)
    equal = [key(x) for x in a[:top]] == [key(x) for x in b[:top]]
    ok = above_a == above_b and len(a[:top]) == len(b[:top])
    return {"equal": equal, "tie_only": ok and not equal, "differs": not ok}


def compare_question(off: dict, hop_act: dict[str, float], hop_seeds: list[str], adj, kg) -> dict:
    out = {}
    oa = off.get("activation")
    if oa is not None:
        ka, kb = set(oa), set(hop_act)
        out["same_keys"] = ka == kb
        out["only_official"], out["only_hopbench"] = len(ka - kb), len(kb - ka)
        common = ka & kb
        out["max_abs_diff"] = max((abs(oa[k] - hop_act[k]) for k in common), default=0.0)
    out["same_seeds"] = sorted(off["seeds"]) == sorted(hop_seeds)
    hop_ent = sorted(hop_act.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    off_ent = off["entities"]
    out["entities"] = same_top(off_ent, hop_ent, key=lambda x: x[0], value=lambda x: x[1])
    out["n_activated"] = [off.get("n_activated"), len(hop_act)]
    if "raw_paths" in off and oa is not None:
        idx = {kg.entity_names[i]: i for i in range(kg.n_entities)}
        act = {idx[n]: a for n, a in hop_act.items()}
        rows, complete = relationship_path_rows(adj, act, [idx[s] for s in hop_seeds])
        out["paths_complete"] = complete
        if complete:
            rows.sort(key=lambda r: -r[0])
            mine = [[[kg.entity_names[v] for v in p], w] for w, p in rows[:TOP]]
            out["paths"] = same_top(
                off["raw_paths"], mine, key=lambda x: tuple(x[0]), value=lambda x: x[1]
            )
            out["n_path_rows"] = len(rows)
    return out


# ---- hopbench's side ---------------------------------------------------------------------------
def hopbench_activations(kg, services, questions, mentions, gate: bool, depth: int):
    from hopbench.retrieve.qasa.spread import spreading_activation
    from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever

    r = SpreadingActivationRetriever(gate=gate, depth=depth, top_paths=0)
    r.prepare(kg, services)
    out = {}
    for q in questions:
        q_emb = services.query_embedding(q)
        _, idx, act, _ = r.seeds(q, mentions[q.id])
        res = spreading_activation(
            r.adjacency,
            idx,
            act,
            r.lazy_gate(q_emb),
            decay=r.decay,
            steps=r.depth,
            threshold=r.threshold,
        )
        on = np.flatnonzero(res.activated)
        out[q.id] = (
            {kg.entity_names[i]: float(res.activation[i]) for i in on},
            [kg.entity_names[i] for i in idx],
        )
    return out, r.adjacency


def export_inputs(work: Path, kg, services, questions, mentions) -> None:
    work.mkdir(parents=True, exist_ok=True)
    desc = np.asarray(kg.description_embeddings, dtype=np.float32)
    has = (np.linalg.norm(desc.astype(np.float64), axis=1) > 0).tolist()
    rel: dict[tuple[int, int], list[str]] = {}
    for s, r, o in zip(kg.fact_subject.tolist(), kg.fact_relation, kg.fact_object.tolist()):
        texts = rel.setdefault((s, o), [])
        if r not in texts:
            texts.append(r)
    pairs = [[s, o, " | ".join(t)] for (s, o), t in rel.items()]
    (work / "graph.json").write_text(
        json.dumps(
            {
                "names": kg.entity_names,
                "descriptions": kg.entity_descriptions,
                "has_emb": has,
                "pairs": pairs,
            }
        )
    )
    np.save(work / "description_embeddings.npy", desc)
    texts, vecs = [], []
    from hopbench.retrieve.text_vectors import TextVectors

    tv = TextVectors(services.encoder)
    hints = sorted({m for q in questions for m in mentions[q.id]})
    for q in questions:
        texts.append(q.text)
        vecs.append(np.asarray(services.query_embedding(q), dtype=np.float32))
    if hints:
        texts += hints
        vecs += list(np.asarray(tv(hints), dtype=np.float32))
    (work / "texts.json").write_text(json.dumps(texts))
    np.save(work / "text_vectors.npy", np.stack(vecs))
    (work / "questions.json").write_text(
        json.dumps(
            [
                {
                    "id": q.id,
                    "text": q.text,
                    "entities": [{"name": m, "search_hint": m} for m in mentions[q.id]],
                }
                for q in questions
            ]
        )
    )


def pct(xs, p):
    return float(np.percentile(xs, p)) if xs else float("nan")


def run_dataset(name: str, args, py: Path, encoder, settings) -> dict:
    from hopbench.kg import load_or_build
    from hopbench.retrieve.base import Services
    from hopbench.retrieve.question import question_mentions

    ds = load(name, args.limit_2wiki)
    kg = load_or_build(ds, None, encoder=encoder, cache_dir=args.cache_dir)
    services = Services(dataset=ds, encoder=encoder)
    services.encode_questions(ds.questions)
    questions = [q for q in ds.questions if not args.only or q.id in args.only.split(",")]
    mentions = {q.id: question_mentions(q.text) for q in questions}
    work = Path(args.work) / name
    export_inputs(work, kg, services, questions, mentions)
    t0 = time.perf_counter()
    done = work / f"official_{args.seed_search}.json"
    if not (args.reuse and done.exists()):
        run_official(py, work, args, settings)
    official = json.loads(done.read_text())
    res = {
        "dataset": ds.name,
        "questions": len(questions),
        "entities": kg.n_entities,
        "relates_to": official["loaded"].get(
            "relates_to", len(json.loads((work / "graph.json").read_text())["pairs"])
        ),
        "worker_s": time.perf_counter() - t0,
        "query_changes": official["query_changes"],
        "runs": [],
    }
    for run in official["runs"]:
        depth, gate = run["depth"], run["gate"]
        hop, adj = hopbench_activations(kg, services, questions, mentions, gate, depth)
        keep = depth == args.keep_maps
        per_q = [compare_row(row, hop, adj, kg, keep) for row in run["rows"]]
        summ = summarise_run(run, per_q, keep)
        res["runs"].append({**summ, "per_question": per_q})
        print_summary(name, summ, keep)
    if args.fixture:
        write_fixture(Path(args.fixture), name, official, mentions, args.keep_maps)
    return res


def run_official(py: Path, work: Path, args, settings) -> None:
    """Their retriever on the exported graph and questions (worker.py, in their venv), every
    depth with and without the gate; it writes official_<seed search>.json into `work`."""
    env = {"PYTHONHASHSEED": "0"}
    if settings.password:
        env["HOPBENCH_NEO4J_PASSWORD"] = settings.password
    run_worker(
        py,
        WORKER,
        [
            "--work",
            str(work),
            "--official-src",
            args.official_src,
            "--uri",
            settings.uri,
            "--user",
            settings.user,
            "--configs",
            args.depths,
            "--keep-maps",
            str(args.keep_maps),
            "--seed-search",
            args.seed_search,
            *(["--skip-load"] if args.skip_load else []),
        ],
        log=None,
        env=env,
        pythonpath=[args.official_src],
    )


def compare_row(row: dict, hop: dict, adj, kg, keep: bool) -> dict:
    """One question of one configuration against hopbench's (activation maps and raw paths only
    at the depth whose maps are kept)."""
    if "error" in row:
        return {"id": row["id"], "error": row["error"]}
    act, seeds = hop[row["id"]]
    if not keep:
        row = {k: v for k, v in row.items() if k not in ("activation", "raw_paths")}
    return {"id": row["id"], **compare_question(row, act, seeds, adj, kg)}


def summarise_run(run: dict, per_q: list[dict], keep: bool) -> dict:
    """One configuration's counts: their times and activation sizes, and how many questions
    agree on seeds, entities and (at the kept depth) maps and paths."""
    ok = [x for x in per_q if "error" not in x]
    ms = [r["ms"] for r in run["rows"] if "error" not in r]
    sizes = [r["n_activated"] for r in run["rows"] if r.get("n_activated") is not None]
    summ = {
        "depth": run["depth"],
        "gate": run["gate"],
        "n": len(per_q),
        "errors": len(per_q) - len(ok),
        "load": run.get("load"),
        "official_ms_p50": pct(ms, 50),
        "official_ms_p95": pct(ms, 95),
        "official_ms_mean": float(np.mean(ms)),
        "activated_mean": float(np.mean(sizes)) if sizes else None,
        "activated_p50": pct(sizes, 50),
        "same_seeds": sum(x["same_seeds"] for x in ok),
        "entities_equal": sum(x["entities"]["equal"] for x in ok),
        "entities_tie_only": sum(x["entities"]["tie_only"] for x in ok),
        "entities_differ": sum(x["entities"].get("differs", False) for x in ok),
    }
    ss = [x for x in ok if x["same_seeds"]]  # questions whose seeds agree: the propagation itself
    summ.update(
        {
            "same_seed_questions": len(ss),
            "entities_differ_same_seeds": sum(x["entities"].get("differs", False) for x in ss),
        }
    )
    if keep:
        summ.update(
            {
                "same_keys_same_seeds": sum(x.get("same_keys", False) for x in ss),
                "max_abs_diff_same_seeds": max(
                    (x.get("max_abs_diff", 0.0) for x in ss), default=0.0
                ),
                "paths_differ_same_seeds": sum(
                    x["paths"].get("differs", False) for x in ss if "paths" in x
                ),
            }
        )
        summ.update(
            {
                "same_keys": sum(x.get("same_keys", False) for x in ok),
                "max_abs_diff": max((x.get("max_abs_diff", 0.0) for x in ok), default=0.0),
                "paths_compared": sum("paths" in x for x in ok),
                "paths_equal": sum(x["paths"]["equal"] for x in ok if "paths" in x),
                "paths_tie_only": sum(x["paths"]["tie_only"] for x in ok if "paths" in x),
                "paths_differ": sum(x["paths"].get("differs", False) for x in ok if "paths" in x),
            }
        )
    return summ


def print_summary(name: str, summ: dict, keep: bool) -> None:
    print(
        f"{name} depth {summ['depth']} gate {summ['gate']!s:5}: official p50 "
        f"{summ['official_ms_p50']:.1f} ms p95 {summ['official_ms_p95']:.1f}, activated "
        f"{summ['activated_mean']}, entities equal {summ['entities_equal']} tie "
        f"{summ['entities_tie_only']} differ {summ['entities_differ']}"
        + (
            f", keys {summ['same_keys']}/{summ['n'] - summ['errors']}, max|diff| "
            f"{summ['max_abs_diff']:.2e}, paths eq {summ['paths_equal']} tie "
            f"{summ['paths_tie_only']} differ {summ['paths_differ']}"
            if keep
            else ""
        ),
        flush=True,
    )


def write_fixture(
    path: Path, name: str, official: dict, mentions: dict, depth: int, n: int = 8
) -> None:
    """A small sample of what their code produced (activations rounded to 1e-12 are not needed:
    floats are stored as JSON doubles) for tests/retrieve/qasa/test_official_qasa_fixture.py."""
    data = json.loads(path.read_text()) if path.exists() else {}
    sample = {}
    for run in official["runs"]:
        if run["depth"] != depth:
            continue
        rows = [r for r in run["rows"] if "activation" in r][:n]
        sample["gate" if run["gate"] else "nogate"] = [
            {
                "id": r["id"],
                "mentions": mentions[r["id"]],
                "seeds": r["seeds"],
                "activation": r["activation"],
                "entities": r["entities"],
                "raw_paths": r["raw_paths"],
            }
            for r in rows
        ]
    data[name] = {"depth": depth, **sample}
    path.write_text(json.dumps(data, indent=None, sort_keys=True) + "\n")


def markdown(res: dict) -> str:
    """The parity and latency tables of one run."""
    out = [
        "# QASA: hopbench's spreading activation vs the authors' code",
        "",
        f"`{res['command']}`",
        "",
        f"Authors' code: kinfi4/qasa-graph-rag @ `{res['official_commit']}` (their `QASARetriever`, run "
        f"by benchmarks/parity/qasa/worker.py in its own venv) against the bundled Neo4j 5.26 at "
        f"{res['uri']}. Mentions: {res['mentions']}. Started {res['started']}, finished "
        f"{res.get('finished', '(unfinished)')}. Changes to their query, all mechanical: "
        "`gds.similarity.cosine(x, y)` -> `(2.0 * vector.similarity.cosine(x, y) - 1.0)` (no GDS "
        "here), `resource_map` added to the final RETURN, raw path rows read before their "
        "de-duplication; their vector index with quantization off.",
        "",
    ]
    for d in res["datasets"]:
        out += [
            f"## {d['dataset']} ({d['questions']} questions, {d['entities']} entities, "
            f"{d['relates_to']} RELATES_TO)",
            "",
            "Parity at the depth whose full activation maps were kept (top lists: equal / "
            "differ only inside exact ties at the cut / differ):",
            "",
            "| gate | depth | same seeds | same activated set | max abs diff | top-30 entities | "
            "raw top-30 paths (compared) | same-seed questions: same set / max abs diff / entities "
            "differ / paths differ |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in d["runs"]:
            if "same_keys" not in r:
                continue
            out.append(
                f"| {'on' if r['gate'] else 'off'} | {r['depth']} | {r['same_seeds']}/{r['n']} | "
                f"{r['same_keys']}/{r['n']} | {r['max_abs_diff']:.1e} | {r['entities_equal']} / "
                f"{r['entities_tie_only']} / {r['entities_differ']} | {r['paths_equal']} / "
                f"{r['paths_tie_only']} / {r['paths_differ']} ({r['paths_compared']}) | "
                f"{r['same_keys_same_seeds']}/{r['same_seed_questions']} / {r['max_abs_diff_same_seeds']:.1e} / "
                f"{r['entities_differ_same_seeds']} / {r['paths_differ_same_seeds']} |"
            )
        loads = [r["load"][0] for r in d["runs"] if r.get("load")]
        if loads:
            out += [
                "",
                f"Load average (1 min) at the end of each configuration: {min(loads):.1f}-{max(loads):.1f} "
                "(2 cores, shared with other jobs).",
            ]
        out += [
            "",
            "Latency of the authors' query run by their code (`QASARetriever.retrieve`, one "
            "question at a time, after 3 warm-up questions), and activated-set sizes:",
            "",
            "| depth | gated p50 ms | gated p95 | ungated p50 | ungated p95 | ungated/gated (means) | "
            "activated gated | activated ungated | errors | top-30 entities equal/tie/differ (gated) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        depths = sorted({r["depth"] for r in d["runs"]})
        for dep in depths:
            on = next(r for r in d["runs"] if r["depth"] == dep and r["gate"])
            off = next(r for r in d["runs"] if r["depth"] == dep and not r["gate"])
            out.append(
                f"| {dep} | {on['official_ms_p50']:.1f} | {on['official_ms_p95']:.1f} | "
                f"{off['official_ms_p50']:.1f} | {off['official_ms_p95']:.1f} | "
                f"{off['official_ms_mean'] / on['official_ms_mean']:.2f}x | {on['activated_mean']:.0f} | "
                f"{off['activated_mean']:.0f} | {on['errors']}+{off['errors']} | "
                f"{on['entities_equal']}/{on['entities_tie_only']}/{on['entities_differ']} |"
            )
        out.append("")
    return "\n".join(out) + "\n"


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common_args.add_official_args(
        ap,
        "qasa",
        "a checkout of kinfi4/qasa-graph-rag outside the repository (its commit is recorded)",
    )
    ap.add_argument("--datasets", default="musique,2wiki", help="comma-separated datasets")
    ap.add_argument(
        "--limit-2wiki", type=int, default=200, help="2Wiki questions to compare (its first N)"
    )
    ap.add_argument("--depths", default="1,2,3,4", help="comma-separated traversal depths")
    ap.add_argument(
        "--keep-maps",
        type=int,
        default=3,
        help="the depth whose full activation maps are compared and kept",
    )
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("HOPBENCH_CACHE_DIR", Path.home() / ".cache" / "hopbench")),
        help="hopbench's cache (graphs, vectors; default $HOPBENCH_CACHE_DIR)",
    )
    ap.add_argument(
        "--work",
        default=str(Path.home() / ".cache" / "hopbench" / "official-qasa"),
        help="inputs and outputs of the official side",
    )
    common_args.add_out_arg(ap, __file__, "official_qasa")
    ap.add_argument(
        "--fixture",
        default=None,
        help="write the official results of a sample here, for the CI test",
    )
    ap.add_argument(
        "--only", default=None, help="comma-separated question ids (e.g. to recheck a few)"
    )
    ap.add_argument(
        "--seed-search",
        choices=("theirs", "wide"),
        default="theirs",
        help="theirs: their index call as written (HNSW breadth k); wide: 100 hits, best k kept",
    )
    ap.add_argument(
        "--skip-load", action="store_true", help="the database's :Entity graph is this one already"
    )
    ap.add_argument(
        "--reuse", action="store_true", help="compare the worker output already in --work"
    )
    ap.add_argument("--md-only", action="store_true", help="rewrite <out>.md from <out>.json")
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    if args.md_only:
        Path(f"{args.out}.md").write_text(
            markdown(json.loads(Path(f"{args.out}.json").read_text()))
        )
        return 0
    from hopbench.embed import Encoder

    py = ensure_venv(args.venv)
    commit = checkout_commit(args.official_src)
    settings = graphdb_settings()
    encoder = Encoder(cache_dir=args.cache_dir, show_progress=False)
    results = {
        "official_commit": commit,
        "official_src": str(args.official_src),
        "uri": settings.uri,
        "seed_search": args.seed_search,
        "mentions": "hopbench spaCy mentions, each its own search hint (identical on both sides)",
        "command": command_line(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "datasets": [],
    }
    for name in args.datasets.split(","):
        results["datasets"].append(run_dataset(name, args, py, encoder, settings))
        Path(f"{args.out}.json").write_text(json.dumps(results))
        Path(f"{args.out}.md").write_text(markdown(results))
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    Path(f"{args.out}.json").write_text(json.dumps(results))
    Path(f"{args.out}.md").write_text(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
