"""Iterations the certified top-k stop saves on HippoRAG 2's PPR, per dataset (issue #59).

    nice -n 19 python -m benchmarks.speed.ppr_stop [--datasets musique,2wikimultihopqa,...]

For every question of each dataset, HippoRAG 2's reset vector (retriever=hipporag,
graph=spacy, retriever.filter=false, as `python -m hopbench.run` builds it from the same
cache) is solved three ways: the default stop (tol 1e-10), the certified top-k stop
(kernels/ppr_stop.py, k = top_k) and a converged reference (tol 1e-13). Reported: sparse
mat-vecs per solve, wall time per solve, how many top-k lists equal the converged ones (by the
retriever's own rule, `order_by`: score, then dense cosine, then index) and how far the stored
top-k scores move. Results: benchmarks/speed/results/ppr_certified_stop.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from benchmarks.common.args import add_data_and_cache_args, add_out_dir_arg
from benchmarks.common.timing import loadavg
from hopbench.core.atomic import write_json, write_text
from hopbench.harness.compose import prepared_retriever
from hopbench.retrieve.kernels.ppr import personalized_pagerank
from hopbench.retrieve.kernels.ppr_stop import personalized_pagerank_stopped
from hopbench.retrieve.ranking import order_by

CONVERGED_TOL = 1e-13
DATASETS = "musique,2wikimultihopqa,hotpotqa,hover"


def prepared_hipporag(dataset: str, data_dir: str, cache_dir: str, retriever: str = "hipporag"):
    """(config, dataset, prepared HippoRAG 2 retriever with every question encoded)."""
    return prepared_retriever(
        [
            f"dataset={dataset}",
            f"retriever={retriever}",
            "graph=spacy",
            "progress=false",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
            "retriever.seeding.filter=false",
        ]
    )


def hipporag_reset(retriever, question):
    """(reset or None, dense cosine, trace): the reset vector of the retriever's seeding."""
    return retriever.seeding.reset_vector(question)


def timed(fn):
    """(fn(), process CPU-seconds it took): on a shared machine, time slices lost to other
    jobs do not count."""
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def one_question(retriever, reset, dense, k: int) -> dict:
    """The three solves of one reset vector and what differs between them."""
    common = {"damping": retriever.damping, "tol": retriever.ppr_tol}
    passages = slice(retriever.E, None)
    full, t_full = timed(lambda: personalized_pagerank_stopped(retriever.ppr, reset, **common))
    cut, t_cut = timed(
        lambda: personalized_pagerank_stopped(
            retriever.ppr, reset, stop="certified_topk", k=k, candidates=passages, **common
        )
    )
    ref = personalized_pagerank(retriever.ppr, reset, damping=retriever.damping, tol=CONVERGED_TOL)
    power = {
        stop: personalized_pagerank_stopped(
            retriever.ppr, reset, stop=stop, k=k, candidates=passages, method="power", **common
        )
        for stop in ("tol", "certified_topk")
    }
    top = {
        name: order_by(x[passages], dense)[:k]
        for name, x in (("default", full.scores), ("certified", cut.scores), ("converged", ref))
    }
    stored = top["certified"]
    return {
        "iters_default": full.iterations,
        "iters_certified": cut.iterations,
        "certified": cut.certified,
        "iters_power_default": power["tol"].iterations,
        "iters_power_certified": power["certified_topk"].iterations,
        "power_certified_equals_converged": bool(
            np.array_equal(
                order_by(power["certified_topk"].scores[passages], dense)[:k], top["converged"]
            )
        ),
        "s_default": t_full,
        "s_certified": t_cut,
        "certified_equals_converged": bool(np.array_equal(top["certified"], top["converged"])),
        "default_equals_converged": bool(np.array_equal(top["default"], top["converged"])),
        "max_score_change": float(
            np.abs(cut.scores[passages][stored] - full.scores[passages][stored]).max()
        ),
        "max_rel_score_change": float(
            (
                np.abs(cut.scores[passages][stored] - full.scores[passages][stored])
                / full.scores[passages][stored]
            ).max()
        ),
    }


def summarise(rows: list[dict], fallbacks: int) -> dict:
    """Per-dataset totals of `one_question` rows."""
    it_d = np.array([r["iters_default"] for r in rows])
    it_c = np.array([r["iters_certified"] for r in rows])
    return {
        "ppr_questions": len(rows),
        "dense_fallbacks": fallbacks,
        "certified": int(sum(r["certified"] for r in rows)),
        "mean_iters_default": float(it_d.mean()),
        "mean_iters_certified": float(it_c.mean()),
        "median_iters_default": float(np.median(it_d)),
        "median_iters_certified": float(np.median(it_c)),
        "iters_ratio": float(it_d.sum() / it_c.sum()),
        "mean_iters_power_default": float(np.mean([r["iters_power_default"] for r in rows])),
        "mean_iters_power_certified": float(np.mean([r["iters_power_certified"] for r in rows])),
        "topk_power_certified_equals_converged": int(
            sum(r["power_certified_equals_converged"] for r in rows)
        ),
        "mean_ms_default": 1e3 * float(np.mean([r["s_default"] for r in rows])),
        "mean_ms_certified": 1e3 * float(np.mean([r["s_certified"] for r in rows])),
        "topk_certified_equals_converged": int(sum(r["certified_equals_converged"] for r in rows)),
        "topk_default_equals_converged": int(sum(r["default_equals_converged"] for r in rows)),
        "max_stored_score_change": max(r["max_score_change"] for r in rows),
        "max_stored_rel_score_change": max(r["max_rel_score_change"] for r in rows),
    }


def run_dataset(name: str, args) -> dict:
    cfg, data, retriever = prepared_hipporag(name, args.data_dir, args.cache_dir)
    k = int(cfg.top_k)
    questions = data.questions[: args.limit] if args.limit else data.questions
    load_before = loadavg()
    rows, fallbacks = [], 0
    for q in questions:
        reset, dense, _ = hipporag_reset(retriever, q)
        if reset is None:
            fallbacks += 1
            continue
        rows.append(one_question(retriever, reset, dense, k))
    out = {
        "dataset": name,
        "questions": len(questions),
        "k": k,
        "nodes": retriever.ppr.n,
        "nnz": int(retriever.ppr.transition.nnz),
        **summarise(rows, fallbacks),
        "load_before": load_before,
        "load_after": loadavg(),
    }
    print(out, flush=True)
    return out


NOTE = """\
Mat-vecs: sparse matrix-vector products per solve; the certified count includes the one extra
product that recomputes the residual before a certificate is accepted. Default: Chebyshev to
tol 1e-10, checked every 4 steps (kernels/ppr.py); certified: the same recursion, stopped when
the residual bound proves the top-k passages and their order (kernels/ppr_stop.py has the
derivation); converged: tol 1e-13. Power iteration (`method="power"`, what CatRAG's directed
graph uses) is shown on the same resets for comparison. Top-k lists are compared by the
retriever's rule (`order_by`: PPR score, then dense cosine, then corpus index); a question
whose top k cannot be certified (a tie within the bound) runs on to tol 1e-10 and returns the
default's scores bit for bit.

What changes for a run: the ranking returned is the converged one, but the scores are not
converged. A run stores each returned passage's PPR score (predictions.jsonl `scores`); under
the certified stop those move by up to the bound (the columns on stored scores above), and
every score beyond the top k is not converged at all. The stop is off by default (the authors'
computation); `retriever.ppr_stop=certified_topk` turns it on for hipporag, catrag and
linearrag (each question's trace then says `ppr: {matvecs, certified, bound}`; a block of
questions is then solved one question at a time).
"""

TABLE_HEAD = (
    "| dataset | questions (PPR / dense fallback) | nodes | certified | mat-vecs default "
    "(mean, median) | mat-vecs certified (mean, median) | fewer by | CPU ms/solve default | "
    "CPU ms/solve certified | top-k = converged: certified, default | max change of a stored "
    "score (abs, rel) | power iteration: mat-vecs default -> certified (mean), top-k = converged "
    "| load before -> after |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def table_row(r: dict) -> str:
    n = r["ppr_questions"]
    return (
        f"| {r['dataset']} | {n} / {r['dense_fallbacks']} | {r['nodes']:,} | "
        f"{r['certified']}/{n} | {r['mean_iters_default']:.1f}, {r['median_iters_default']:.0f} | "
        f"{r['mean_iters_certified']:.1f}, {r['median_iters_certified']:.0f} | "
        f"{r['iters_ratio']:.2f}x | {r['mean_ms_default']:.2f} | {r['mean_ms_certified']:.2f} | "
        f"{r['topk_certified_equals_converged']}/{n}, {r['topk_default_equals_converged']}/{n} | "
        f"{r['max_stored_score_change']:.1e}, {r['max_stored_rel_score_change']:.1e} | "
        f"{r['mean_iters_power_default']:.1f} -> {r['mean_iters_power_certified']:.1f}, "
        f"{r['topk_power_certified_equals_converged']}/{n} | "
        f"{r['load_before'][0]} -> {r['load_after'][0]} |"
    )


def merged_rows(path, new_rows: list[dict]) -> list[dict]:
    """The rows already in `path` (other datasets, measured by an earlier command) with the
    new ones in their place, so datasets whose graphs exist at different times share a file."""
    old = json.loads(path.read_text())["rows"] if path.exists() else []
    fresh = {r["dataset"] for r in new_rows}
    return [r for r in old if r["dataset"] not in fresh] + new_rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=DATASETS, help="comma-separated dataset configs")
    ap.add_argument("--limit", type=int, default=0, help="questions per dataset (0: all)")
    ap.add_argument(
        "--merge", action="store_true", help="keep the other datasets' rows of the results file"
    )
    add_data_and_cache_args(ap)
    add_out_dir_arg(ap, __file__)
    args = ap.parse_args(argv)
    command = "nice -n 19 python -m benchmarks.speed.ppr_stop " + " ".join(argv or sys.argv[1:])
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = [
        {**run_dataset(name, args), "command": command.strip(), "started": started}
        for name in args.datasets.split(",")
    ]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path = args.out_dir / "ppr_certified_stop.json"
    rows = merged_rows(path, results) if args.merge else results
    write_json(path, {"rows": rows})
    md = "\n".join(
        [
            "# Certified top-k stop for PPR: iterations saved (HippoRAG 2, graph=spacy, filter off)",
            "",
            "Subset numbers. Load average (1 min) before and after each dataset in the table (the "
            "machine is shared; mat-vec counts do not depend on it, milliseconds do).",
            "",
            TABLE_HEAD,
            *map(table_row, rows),
            "",
            "Commands (from the repository root):",
            "",
            *[f"- {r['dataset']}: `{r['command']}`, started {r['started']}" for r in rows],
            "",
            NOTE,
        ]
    )
    write_text(args.out_dir / "ppr_certified_stop.md", md)
    print(md)


if __name__ == "__main__":
    main()
