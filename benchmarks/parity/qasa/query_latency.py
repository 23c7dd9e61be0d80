"""The authors' QASA query as hopbench's Neo4j retriever runs it: gated vs ungated, depth 1-4.

    HOPBENCH_NEO4J_PORT=7701 HOPBENCH_DATA_DIR=... nice python -m benchmarks.parity.qasa.query_latency \\
        [--datasets musique,2wiki] [--depths 1,2,3,4] [--forms apoc] [--out benchmarks/parity/qasa/results/qasa_query]

Per dataset graph (exported once into its namespace), per depth, gate on/off and query form:
the time of the single round trip (`SpreadingActivationNeo4jRetriever.run_query`: seeds, T
steps with the built-in cosine gate, the authors' path block, passage ranking), p50/p95 over
the questions after 3 warm-up queries, and the activated-set sizes. The authors' own code on the
same graph is timed by benchmarks/parity/qasa/compare.py; both go to
benchmarks/parity/qasa/results/official_qasa.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common.paths import command_line, results_dir
from benchmarks.parity.qasa.compare import graphdb_settings
from benchmarks.speed.neo4j_sa import load
from hopbench.embed import Encoder
from hopbench.graphdb.connection import QueryTimeout, connect
from hopbench.kg import load_or_build
from hopbench.retrieve.base import Services
from hopbench.retrieve.qasa.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever

K = 10


def pct(xs, p):
    return float(np.percentile(xs, p)) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="musique,2wiki")
    ap.add_argument("--limit-2wiki", type=int, default=200)
    ap.add_argument("--depths", default="1,2,3,4")
    ap.add_argument("--forms", default="apoc")
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("HOPBENCH_CACHE_DIR", Path.home() / ".cache" / "hopbench")),
    )
    ap.add_argument("--out", default=str(results_dir(__file__) / "qasa_query"))
    args = ap.parse_args()
    encoder = Encoder(cache_dir=args.cache_dir, show_progress=False)
    db = connect(graphdb_settings())
    res = {
        "command": command_line(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "datasets": [],
    }
    for name in args.datasets.split(","):
        ds = load(name, args.limit_2wiki)
        kg = load_or_build(ds, None, encoder=encoder, cache_dir=args.cache_dir)
        services = Services(dataset=ds, encoder=encoder)
        services.encode_questions(ds.questions)
        out = {"dataset": ds.name, "questions": len(ds.questions), "runs": []}
        for depth in [int(d) for d in args.depths.split(",")]:
            for form in args.forms.split(","):
                for gate in (True, False):
                    r = SpreadingActivationNeo4jRetriever(depth=depth, gate=gate, form=form)
                    r.prepare(kg, services, db=db)
                    params = [r.parameters(q, K) for q in ds.questions]
                    for p in params[:3]:
                        try:
                            r.run_query(p)
                        except QueryTimeout:
                            pass
                    ms, sizes, paths, timeouts = [], [], [], 0
                    for p in params:
                        t0 = time.perf_counter()
                        try:
                            o = r.run_query(p)
                        except (
                            QueryTimeout
                        ):  # counted; its time (the limit) stays in the percentiles
                            timeouts += 1
                            ms.append(1000 * (time.perf_counter() - t0))
                            continue
                        ms.append(1000 * (time.perf_counter() - t0))
                        sizes.append(len(o["activation"]))
                        paths.append(len(o["path_rows"]))
                    row = {
                        "depth": depth,
                        "form": form,
                        "gate": gate,
                        "ms": ms,
                        "p50": pct(ms, 50),
                        "p95": pct(ms, 95),
                        "mean": float(np.mean(ms)),
                        "activated_mean": float(np.mean(sizes)),
                        "path_rows_mean": float(np.mean(paths)),
                        "timeouts": timeouts,
                        "query_timeout_s": db.settings.query_timeout,
                        "load": list(os.getloadavg()),
                    }  # shared machine: load when this one ended
                    out["runs"].append(row)
                    Path(args.out + ".json").write_text(
                        json.dumps({**res, "datasets": [*res["datasets"], out]})
                    )
                    print(
                        f"{name} depth {depth} {form} gate {gate!s:5}: p50 {row['p50']:.1f} ms p95 {row['p95']:.1f} "
                        f"mean {row['mean']:.1f}, activated {row['activated_mean']:.0f}, timeouts {timeouts}, "
                        f"load {row['load'][0]:.1f}",
                        flush=True,
                    )
        res["datasets"].append(out)
        Path(args.out + ".json").write_text(json.dumps(res))
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    Path(args.out + ".json").write_text(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
