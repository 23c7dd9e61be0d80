"""QAFD's per-seed diffusion (`flow_diffusion`): the merge of newly reached nodes into the sorted
set of nodes that held mass, as a linear insert (now) against `np.union1d` (before), on the
questions of a real run, same process, alternating, with identical results required.

    HOPBENCH_DATA_DIR=../shared/datasets nice python -m benchmarks.speed.qafd_seed_flow \
        --cache-dir DIR [--dataset 2wikimultihopqa] [--questions 20]

The retriever is prepared exactly as `python -m hopbench.run retriever=flow_diffusion` does, with
`llm.cache_only=true`: the keyword replies must be in DIR's response cache (import
results/reference/llm_replies.jsonl.gz there first), so no model runs. Each question is retrieved
once with each kernel (order alternating); the top-10 and every cluster must be equal.
Results: benchmarks/speed/results/qafd_seed_flow.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common.paths import results_dir
from hopbench.core.atomic import write_json, write_text
from hopbench.harness.compose import load_config
from hopbench.harness.runner import build_models, plan, prepare
from hopbench.retrieve.qafd import seed_flow as k


def union1d_merge(held: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The merge as it was before."""
    return np.union1d(held, new)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--dataset", default="2wikimultihopqa")
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--out", default=str(results_dir(__file__) / "qafd_seed_flow"))
    args = ap.parse_args()
    cfg = load_config(
        [
            f"dataset={args.dataset}",
            "retriever=flow_diffusion",
            "graph=spacy",
            "llm=local",
            "llm.cache_only=true",
            "llm.replay_failed=true",
            f"paths.cache_dir={args.cache_dir}",
            f"paths.runs_dir={Path(args.cache_dir) / 'bench_runs'}",
            f"dataset.limit={args.questions}",
            "progress=false",
        ]
    )
    p = plan(cfg)
    llm, reader = build_models(p)
    job = prepare(p, llm, reader)
    questions = p.dataset.questions[: args.questions]
    insert_merge = k.SeedFlowDiffusion._merge
    times = {"insert": [], "union1d": []}
    for i, q in enumerate(questions):
        got = {}
        for name in ("insert", "union1d") if i % 2 == 0 else ("union1d", "insert"):
            k.SeedFlowDiffusion._merge = staticmethod(
                insert_merge if name == "insert" else union1d_merge
            )
            t = time.perf_counter()
            r = job.plan.retriever.retrieve(q, 10)
            times[name].append(time.perf_counter() - t)
            trace = {key: v for key, v in r.trace.items() if key != "llm_cost"}  # timings
            got[name] = (r.passage_ids, r.scores, trace)
        k.SeedFlowDiffusion._merge = staticmethod(insert_merge)
        a, b = got["insert"], got["union1d"]
        if repr(a) != repr(b):
            print(f"question {q.id}: the two kernels differ", file=sys.stderr)
            return 1
    total = {n: float(np.sum(v)) for n, v in times.items()}
    result = {
        "dataset": args.dataset,
        "questions": len(questions),
        "seconds_total": total,
        "seconds_p50": {n: float(np.median(v)) for n, v in times.items()},
        "speedup": total["union1d"] / total["insert"],
        "identical": True,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    write_json(Path(args.out + ".json"), result)
    md = (
        f"# QAFD seed diffusion: linear merge vs union1d ({args.dataset}, {len(questions)} questions)\n\n"
        f"`{' '.join(sys.argv)}`, {result['finished']}, load after {result['load_after']}.\n\n"
        "| kernel | total s | p50 s/question |\n|---|---:|---:|\n"
        + "".join(f"| {n} | {total[n]:.1f} | {result['seconds_p50'][n]:.2f} |\n" for n in times)
        + f"\nSpeed-up {result['speedup']:.2f}x; top-10 and traces identical on every question.\n"
    )
    write_text(Path(args.out + ".md"), md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
