"""Where a CPU retriever's milliseconds go in a real run (issue #59): per-stage latency profile.

    OMP_NUM_THREADS=1 nice python -m benchmarks.speed.stage_profile \\
        [--dataset 2wikimultihopqa] [--questions 1000] [--retrievers hipporag,dense,...] \\
        [--question-batch 1] [--out-dir benchmarks/speed/results] [--name stage_profile]

Each retriever runs as `python -m hopbench.run` runs it (llm=none reader=none graph=spacy, the
CPU rows of configs/paper.yaml, hipporag with its fact filter off), through the runner's own
plan -> prepare -> loop -> finish into a scratch runs folder, so rows are really written and
scored. The instrumentation is from outside: for the run the functions named in `STAGES` are
wrapped by a clock that charges each call's time to its stage, exclusive of the stages it
calls (no double counting), and restored after; nothing of it is in hopbench or its run hash.
What a retriever does outside the wrapped functions is its "other (in retrieve)" line, and
the loop's time outside every stage is "run loop overhead" (the progress bar, the row list).

Question encoding is measured twice: as the run pays it (`Services.encode_questions` before the
loop, served by the embedding cache when the questions were encoded before) and cold (the
first 50 questions encoded alone by an Encoder without a cache, the run's way on a fresh cache).

Results: <out-dir>/<name>.{json,md}, with the command, the machine's load (`uptime`) at start
and end, and what else was running (the top processes by CPU at the start).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

from benchmarks.common.args import add_out_dir_arg
from hopbench.core.atomic import write_json, write_text

# stage -> functions ("module:attr" or "module:Class.attr") whose time it is, per retriever.
# Functions are wrapped where the retriever looks them up (its module's namespace).
RUN_STAGES = {
    "record writing": ["hopbench.harness.run_store:RunStore.append"],
    "scoring": [
        "hopbench.harness.question_loop:score_question",
        "hopbench.harness.question_blocks:score_question",
    ],
    "question vector lookup": ["hopbench.retrieve.base:Services.query_embedding"],
}
_H = "hopbench.retrieve.hipporag.hipporag"
_HIPPORAG = {
    "fact search": [f"{_H}:fact_scores", f"{_H}:top_facts"],
    "seeding": [
        f"{_H}:phrase_seed_weights",
        f"{_H}:passage_reset",
        f"{_H}:HippoRAGSeeding.recognise",
        f"{_H}:HippoRAGSeeding.entity_reset",
    ],
    "passage search (dense cosines) + reset": [f"{_H}:HippoRAGSeeding.reset_vector"],
    "propagation (PPR)": [
        f"{_H}:personalized_pagerank",
        f"{_H}:personalized_pagerank_batch",
        f"{_H}:personalized_pagerank_block",
    ],
    "ranking": [f"{_H}:HippoRAGRetriever._finish"],
    "other (in retrieve)": [
        f"{_H}:HippoRAGRetriever.retrieve",
        f"{_H}:HippoRAGRetriever.retrieve_batch",
    ],
}
_SA = "hopbench.retrieve.qasa.spreading_activation"
_SPREAD = "hopbench.retrieve.qasa.spread"
_SPREADING_ACTIVATION = {
    "question analysis (spaCy mentions)": [f"{_SA}:SpreadingActivationRetriever.analyse"],
    "mention encoding": ["hopbench.retrieve.text_vectors:TextVectors.warm"],
    "entity search": ["hopbench.retrieve.kernels.topk:ExactTopK.search"],
    "seeding": [f"{_SA}:SpreadingActivationRetriever.seeds"],
    "gate (description cosines)": [f"{_SPREAD}:LazyGate.take", f"{_SPREAD}:LazyGate.upper"],
    "propagation": [f"{_SPREAD}:spreading_activation_batch", f"{_SA}:spreading_activation_batch"],
    "ranking": [f"{_SA}:passage_scores_from_entities", f"{_SA}:top_passages"],
    "trace paths": [f"{_SA}:path_kernels.top_paths"],
    "trace + ranking glue": [f"{_SA}:SpreadingActivationRetriever._finish"],
    "other (in retrieve)": [
        f"{_SA}:SpreadingActivationRetriever.retrieve",
        f"{_SA}:SpreadingActivationRetriever.retrieve_batch",
    ],
}
_B = "hopbench.retrieve.baselines"
_DENSE = {"passage search (faiss) + ranking": [f"{_B}.dense:DenseRetriever.retrieve_batch"]}
_BM25 = {
    "question terms": [f"{_B}.lexical_terms:LexicalTerms.terms"],
    "passage search (bm25s scores)": ["bm25s:BM25.get_scores"],
    "ranking": [f"{_B}.bm25:BM25Retriever.retrieve"],
}
_FDC = "hopbench.retrieve.qafd.flow_diffusion_code"
_FDJ = "hopbench.retrieve.qafd.flow_diffusion_joint"
STAGES = {
    "dense": _DENSE,
    "bm25": _BM25,
    "hybrid": {**_DENSE, **_BM25, "fusion": [f"{_B}.hybrid:HybridRetriever.retrieve"]},
    "hipporag": _HIPPORAG,
    "hipporag_hb": _HIPPORAG,  # the same retriever on hopbench's graph construction
    "spreading_activation": _SPREADING_ACTIVATION,
    "flow_diffusion_code": {
        **{k: v for k, v in _HIPPORAG.items() if k not in ("ranking", "other (in retrieve)")},
        "propagation (code push)": [
            f"{_FDC}:code_flow_diffusion",
            f"{_FDC}:QAFDCodeRetriever.diffuse",
        ],
        "ranking": [f"{_FDC}:rank_passages", f"{_FDC}:order_by", f"{_FDC}:to_retrieval"],
        "other (in retrieve)": [f"{_FDC}:QAFDCodeRetriever.retrieve"],
    },
    "flow_diffusion_joint": {
        **{k: v for k, v in _HIPPORAG.items() if k not in ("ranking", "other (in retrieve)")},
        "question analysis (spaCy phrases)": [f"{_FDJ}:question_phrases"],
        "mention encoding": ["hopbench.retrieve.text_vectors:TextVectors.warm"],
        "keyword seeding": [f"{_FDJ}:JointFlowDiffusionRetriever.seeds", f"{_FDJ}:keyword_seeds"],
        "node cosines": [f"{_FDJ}:node_query_cosine"],
        "propagation (flow)": [f"{_FDJ}:qafd"],
        "ranking": [f"{_FDJ}:order_by", f"{_FDJ}:to_retrieval"],
        "other (in retrieve)": [f"{_FDJ}:JointFlowDiffusionRetriever.retrieve"],
    },
    "linearrag": {
        "question analysis (spaCy NER)": [
            "hopbench.retrieve.linearrag.retriever:LinearRAGRetriever.question_entities"
        ],
        "mention encoding": ["hopbench.embed.encoder:Encoder.encode"],
        "seeding (entity linking)": ["hopbench.retrieve.linearrag.retriever:link_seeds"],
        "activation": [
            "hopbench.retrieve.linearrag.retriever:vectorized_activation",
            "hopbench.retrieve.linearrag.retriever:bfs_activation",
        ],
        "passage weights": ["hopbench.retrieve.linearrag.retriever:passage_weights"],
        "propagation (PPR)": ["hopbench.retrieve.linearrag.retriever:personalized_pagerank"],
        "passage search (dense cosines) + reset": [
            "hopbench.retrieve.linearrag.retriever:LinearRAGRetriever.score_question"
        ],
        "ranking": ["hopbench.retrieve.linearrag.retriever:LinearRAGRetriever.ranking"],
        "other (in retrieve)": [
            "hopbench.retrieve.linearrag.retriever:LinearRAGRetriever.retrieve"
        ],
    },
}


def cpu_row_overrides(retriever: str) -> list[str]:
    """The overrides of the retriever's CPU row in configs/paper.yaml (hipporag: its filter off)."""
    import yaml

    from hopbench.core.paths import CONFIG_DIR

    rows = yaml.safe_load((Path(CONFIG_DIR) / "paper.yaml").read_text())["cpu"]
    for row in rows:
        if row["retriever"] == retriever:
            return list(row.get("overrides", []))
    return []


class StageClock:
    """Seconds per stage, each call charged exclusive of the wrapped calls inside it."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list] = []  # [stage, time the stage last resumed]

    def wrap(self, stage: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            now = time.perf_counter()
            if self._stack:  # pause the caller's stage
                self.seconds[self._stack[-1][0]] += now - self._stack[-1][1]
            self._stack.append([stage, now])
            try:
                return fn(*args, **kwargs)
            finally:
                end = time.perf_counter()
                self.seconds[stage] += end - self._stack.pop()[1]
                self.calls[stage] += 1
                if self._stack:
                    self._stack[-1][1] = end

        return timed


def _owner_and_name(target: str):
    module, _, path = target.partition(":")
    obj = importlib.import_module(module)
    *parents, name = path.split(".")
    for p in parents:
        obj = getattr(obj, p)
    return obj, name


def instrument(stack: ExitStack, clock: StageClock, stages: dict[str, list[str]]) -> list[str]:
    """Wrap every function of `stages` (restored when `stack` closes); the targets not found."""
    missing = []
    for stage, targets in stages.items():
        for target in targets:
            try:
                owner, name = _owner_and_name(target)
                original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            except (ImportError, AttributeError, KeyError):
                missing.append(target)
                continue
            setattr(owner, name, clock.wrap(stage, original))
            stack.callback(setattr, owner, name, original)
    return missing


def profile_run(dataset: str, retriever: str, questions: int, batch: int, runs_dir: Path) -> dict:
    """One real run under the stage clock: stage seconds, the run's own timings and rows."""
    from hopbench.harness.compose import load_config
    from hopbench.harness.runner import build_models, finish, loop, plan, prepare

    cfg = load_config(
        [
            f"dataset={dataset}",
            f"retriever={retriever}",
            "llm=none",
            "reader=none",
            "graph=spacy",
            f"dataset.limit={questions}",
            f"runs_dir={runs_dir}",
            f"question_batch={batch}",
            "progress=false",
            *cpu_row_overrides(retriever),
        ]
    )
    p = plan(cfg)
    llm, reader = build_models(p)
    clock = StageClock()
    with p.store.lock():
        t0 = time.perf_counter()
        job = prepare(p, llm, reader)
        prepare_s = time.perf_counter() - t0
        with ExitStack() as stack:
            missing = instrument(stack, clock, {**RUN_STAGES, **STAGES[retriever]})
            loop(job)
        metrics = finish(job)
    loop_s = metrics["loop_seconds"]
    n = max(len(job.todo), 1)
    stages = {k: 1000 * v / n for k, v in sorted(clock.seconds.items(), key=lambda kv: -kv[1])}
    stages["run loop overhead"] = 1000 * (loop_s - sum(clock.seconds.values())) / n
    return {
        "retriever": retriever,
        "questions": len(job.todo),
        "question_batch": metrics.get("question_batch", 1),
        "prepare_seconds_incl_graph_load": prepare_s,
        "query_encoding_ms_per_question_in_run": metrics.get("query_encoding_ms_per_question"),
        "loop_ms_per_question": 1000 * loop_s / n,
        "questions_per_second": n / loop_s if loop_s > 0 else None,
        "latency_ms_p50": metrics.get("latency_ms_p50"),
        "latency_ms_mean": metrics.get("latency_ms_mean"),
        "recall@5": metrics.get("recall@5"),
        "rows_digest": rows_digest(job.done),
        "stages_ms_per_question": stages,
        "stage_calls": dict(clock.calls),
        "targets_not_found": missing,
    }


def rows_digest(rows: list[dict]) -> str:
    """sha256 of every row's id, ranking and scores (in id order): equal digests, equal rows."""
    import hashlib
    import json

    key = sorted(
        ([r["id"], r["ranked_passage_ids"], r["scores"]] for r in rows), key=lambda x: x[0]
    )
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def cold_question_encoding(dataset: str, n: int = 50) -> float:
    """ms per question, each encoded alone by an Encoder without a cache (a fresh cache's cost)."""
    from hopbench.embed import Encoder
    from hopbench.harness.compose import build_dataset, load_config

    ds = build_dataset(load_config([f"dataset={dataset}", f"dataset.limit={n}"]))
    enc = Encoder(cache_dir=None, show_progress=False)
    _ = enc.model
    texts = [q.text for q in ds.questions]
    t0 = time.perf_counter()
    enc.encode(texts, alone=True, query=True)
    return 1000 * (time.perf_counter() - t0) / len(texts)


def machine_state() -> dict:
    """`uptime` and the busiest processes: what else was running."""
    top = subprocess.run(
        ["ps", "-eo", "pcpu,ni,args", "--sort=-pcpu"], capture_output=True, text=True, check=False
    ).stdout.splitlines()[1:9]
    uptime = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
    return {"uptime": uptime.strip(), "top": [without_paths(line) for line in top]}


def without_paths(line: str) -> str:
    """A process line with every absolute path cut to its last part (no machine folders in a
    committed file), at most 8 words."""

    def cut(word: str) -> str:
        key, eq, value = word.rpartition("=") if "=/" in word else ("", "", word)
        return key + eq + (value.rstrip("/").rsplit("/", 1)[-1] if value.startswith("/") else value)

    return " ".join(cut(w) for w in line.split()[:8])[:140]


def report_md(out: dict) -> str:
    lines = [
        f"# Per-stage latency profile: {out['dataset']}",
        "",
        f"`{out['command']}` ({out['started']} UTC, {out['machine']}, commit {out['commit']})",
        "",
        f"Load at start: `{out['state_start']['uptime']}`; at end: `{out['state_end']['uptime']}`.",
        "Busiest processes at the start (the machine is shared; absolute ms carry that load,",
        "shares of a row are what travel):",
        "",
        *[f"    {t}" for t in out["state_start"]["top"]],
        "",
        f"Question encoding cold (first 50 questions, each alone, no cache): "
        f"{out['cold_question_encoding_ms']:.2f} ms/question.",
        "",
    ]
    for r in out["runs"]:
        total = r["loop_ms_per_question"]
        lines += [
            f"## {r['retriever']} ({r['questions']} questions, question_batch={r['question_batch']})",
            "",
            f"Loop {total:.2f} ms/question ({r['questions_per_second']:.1f} q/s); rows' latency "
            f"p50 {r['latency_ms_p50']:.2f} ms, mean {r['latency_ms_mean']:.2f} ms; recall@5 "
            f"{r['recall@5']:.4f}; question encoding in the run "
            f"{r['query_encoding_ms_per_question_in_run']:.2f} ms/question (before the loop); "
            f"prepare incl. graph load {r['prepare_seconds_incl_graph_load']:.1f} s.",
            "",
            "| stage | ms/question | share of loop |",
            "|---|---|---|",
            *[
                f"| {k} | {v:.3f} | {100 * v / total:.1f}% |"
                for k, v in r["stages_ms_per_question"].items()
            ],
            "",
        ]
        if r["targets_not_found"]:
            lines += [f"Not instrumented (not found): {', '.join(r['targets_not_found'])}", ""]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="2wikimultihopqa")
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--retrievers", default=",".join(STAGES))
    ap.add_argument("--question-batch", type=int, default=1)
    ap.add_argument("--name", default="stage_profile")
    add_out_dir_arg(ap, __file__)
    args = ap.parse_args(argv)
    names = [x for x in args.retrievers.split(",") if x]
    unknown = sorted(set(names) - set(STAGES))
    if unknown:
        ap.error(
            f"--retrievers: no stage map for {', '.join(unknown)} (known: {', '.join(STAGES)})"
        )
    out = {
        "command": "python -m benchmarks.speed.stage_profile "
        + shlex.join(sys.argv[1:] if argv is None else argv),
        "dataset": args.dataset,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "commit": subprocess.run(
            ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
        ).stdout.strip(),
        "state_start": machine_state(),
        "cold_question_encoding_ms": cold_question_encoding(args.dataset),
        "runs": [],
    }
    out_dir = Path(args.out_dir)
    with tempfile.TemporaryDirectory(prefix="stage_profile_") as tmp:
        for name in names:
            print(f"== {name}", flush=True)
            out["runs"].append(
                profile_run(
                    args.dataset, name, args.questions, args.question_batch, Path(tmp) / name
                )
            )
            out["state_end"] = machine_state()
            write_json(out_dir / f"{args.name}.json", out)  # after each: a killed run keeps some
            write_text(out_dir / f"{args.name}.md", report_md(out) + "\n")


if __name__ == "__main__":
    main()
