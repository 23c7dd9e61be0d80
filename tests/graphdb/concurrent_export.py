"""One process of the concurrent-export tests (tests/graphdb/test_namespaces.py), run as a script:

    python concurrent_export.py JOB.pkl OUT.json READY GO

JOB.pkl holds {uri, kg, depth, gate, params: {question id: query parameters}, rounds}
(the apoc form).
The process connects, writes READY, waits for the file GO (so that both processes start their
export at the same moment), runs `ensure_exported`, then the spreading-activation query for
every question `rounds` times, and writes what it got and when to OUT.json.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from functools import partial
from pathlib import Path

from hopbench.graphdb.connection import connect
from hopbench.graphdb.export import ensure_exported
from hopbench.graphdb.sa_query import spreading_activation_query
from hopbench.retrieve.qasa.activation_rules import relation_matrix

# the `pairs` rule spreading activation gives the export (graphdb knows no method's rule)
PAIRS = partial(relation_matrix, edges="pairs")


def main(job_path: str, out_path: str, ready: str, go: str) -> None:
    job = pickle.loads(Path(job_path).read_bytes())
    with connect({"uri": job["uri"], "query_timeout": 60}) as db:
        db.query("RETURN 1")
        Path(ready).touch()
        deadline = time.time() + 120
        while not Path(go).exists():
            if time.time() > deadline:
                raise SystemExit("no GO file within 120 s")
            time.sleep(0.02)
        t0 = time.time()
        report = ensure_exported(db, job["kg"], pair_counts=PAIRS)
        t1 = time.time()
        cypher = spreading_activation_query("apoc", job["depth"], job["gate"], report.namespace)
        rounds = [
            {qid: _result(db.query(cypher, p)[0]) for qid, p in job["params"].items()}
            for _ in range(job["rounds"])
        ]
        t2 = time.time()
    Path(out_path).write_text(
        json.dumps(
            {
                "exported": report.exported,
                "waited": report.waited,
                "namespace": report.namespace.id,
                "export_start": t0,
                "export_end": t1,
                "queries_end": t2,
                "rounds": rounds,
            }
        )
    )


def _result(row: dict) -> dict:
    """As `SpreadingActivationNeo4jRetriever.run_query` returns it (the apoc form)."""
    return {
        "seeds": row["seed_map"],
        "activation": row["activation"],
        "ranked": row["ranked"],
        "path_rows": [(p["names"], p["weight"]) for p in row["paths"]],
    }


if __name__ == "__main__":
    main(*sys.argv[1:5])
