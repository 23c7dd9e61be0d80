"""Runs the authors' QASARetriever (kinfi4/qasa-graph-rag) on a hopbench graph; never imports hopbench.

Started by benchmarks/parity/qasa/compare.py with the interpreter of the official code's own
virtual environment (neo4j, google-genai, pydantic from PyPI) and `--official-src` on PYTHONPATH.

1. Loads the graph into the database in the authors' schema: ``(:Entity {name, type,
   description, description_embedding})``, one ``(:Entity)-[:RELATES_TO {relation}]->(:Entity)``
   per ordered pair with a fact (their loader MERGEs it; relation texts joined by " | "), their
   ``entity_name`` index (their `Neo4jClient.create_indexes`) and their vector index name
   ``entity_description_embeddings`` (cosine; quantization off, see below). Only ``:Entity``
   nodes are deleted first (the authors' labels; hopbench's own graphs live under other labels).
2. Runs their `QASARetriever.retrieve` per question and configuration with three stand-ins:
   the embedder returns hopbench's MiniLM vectors for the exact texts it is asked for (the
   question, each search hint); the question entities come through their own
   ``query_entity_cache`` (no LLM call); the Gemini client is never created.
3. Changes to their query text, all printed in the output: ``gds.similarity.cosine(x, y)``
   (the GDS plugin, absent here) becomes ``(2.0 * vector.similarity.cosine(x, y) - 1.0)`` (Neo4j's
   built-in returns (1 + cos) / 2, computed in float32); the final RETURN also returns
   ``resource_map`` so the full activation map can be compared; the raw path rows are recorded
   before their `_deduplicate_paths`.

Vector index: their `create_entity_vector_index` leaves Neo4j 5.26's default int8 quantization
on, whose scores are off by ~1e-3; the parity run turns it off (everything else as theirs).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

GDS_CALL = "gds.similarity.cosine(dst.description_embedding, $qe)"
NATIVE_CALL = "(2.0 * vector.similarity.cosine(dst.description_embedding, $qe) - 1.0)"
RETURN_LINE = "RETURN seed_names, paths, entities\n"
# their seed search asks the HNSW index for k = max(1, 5 // n) hits, which Neo4j also uses as the
# search breadth: it misses the nearest description on some questions (results/official_qasa.md).
# --seed-search wide asks for 100 and keeps the best k (exact here).
SEED_CALL = """    CALL db.index.vector.queryNodes(
        'entity_description_embeddings', $k_per_entity, e.emb
    ) YIELD node, score
    RETURN node.name AS seed_name, score AS seed_score"""
WIDE_SEED_CALL = """    CALL db.index.vector.queryNodes('entity_description_embeddings', 100, e.emb) YIELD node, score
    WITH node, score ORDER BY score DESC LIMIT $k_per_entity
    RETURN node.name AS seed_name, score AS seed_score"""
RETURN_WITH_MAP = "RETURN seed_names, paths, entities, resource_map\n"


class VectorTable:
    """The authors' Embedder interface (embed(text) -> list[float]) over given vectors."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self.table = {t: v for t, v in zip(texts, vectors.astype(np.float64).tolist())}
        self.misses: list[str] = []

    def embed(self, text: str) -> list[float]:
        if text not in self.table:
            self.misses.append(text)
            raise KeyError(f"no vector for {text!r}")
        return self.table[text]


class TimedDriver:
    """Their driver with a per-query transaction timeout (they set none)."""

    def __init__(self, driver, timeout: float) -> None:
        self.driver, self.timeout = driver, timeout

    def session(self, **kw):
        import neo4j

        outer = self

        class _S:
            def __init__(self, s):
                self.s = s

            def __enter__(self):
                self.s.__enter__()
                return self

            def __exit__(self, *a):
                return self.s.__exit__(*a)

            def run(self, query, **params):
                return self.s.run(neo4j.Query(query, timeout=outer.timeout), **params)

        return _S(self.driver.session(**kw))


def load_graph(driver, work: Path, batch: int = 1000) -> dict:
    from qasa_rag.neo4j_client import Neo4jClient  # their index statements

    meta = json.loads((work / "graph.json").read_text())
    emb = np.load(work / "description_embeddings.npy")
    t0 = time.perf_counter()
    with driver.session() as s:
        s.run("DROP INDEX entity_description_embeddings IF EXISTS").consume()
        while s.run(
            "MATCH (e:Entity) WITH e LIMIT 5000 DETACH DELETE e RETURN count(*) AS n"
        ).single()["n"]:
            pass
    client = Neo4jClient.__new__(Neo4jClient)
    client._driver = driver
    client.create_indexes()
    rows = [
        {"name": n, "description": d, "emb": (emb[i].tolist() if meta["has_emb"][i] else None)}
        for i, (n, d) in enumerate(zip(meta["names"], meta["descriptions"]))
    ]
    with driver.session() as s:
        for k in range(0, len(rows), batch):
            s.run(
                "UNWIND $rows AS r CREATE (e:Entity {name: r.name, description: r.description}) "
                "SET e.description_embedding = r.emb",
                rows=rows[k : k + batch],
            ).consume()
        rel = [{"s": meta["names"][a], "o": meta["names"][b], "r": r} for a, b, r in meta["pairs"]]
        for k in range(0, len(rel), 5 * batch):
            s.run(
                "UNWIND $rows AS r MATCH (a:Entity {name: r.s}) MATCH (b:Entity {name: r.o}) "
                "CREATE (a)-[:RELATES_TO {relation: r.r}]->(b)",
                rows=rel[k : k + 5 * batch],
            ).consume()
        s.run(
            "CREATE VECTOR INDEX entity_description_embeddings IF NOT EXISTS FOR (e:Entity) "
            "ON (e.description_embedding) OPTIONS {indexConfig: {`vector.dimensions`: $d, "
            "`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}",
            d=int(emb.shape[1]),
        ).consume()
        s.run("CALL db.awaitIndexes(1200)").consume()
    return {"entities": len(rows), "relates_to": len(rel), "load_s": time.perf_counter() - t0}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--official-src", required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--user", default="neo4j")
    ap.add_argument("--password-env", default="HOPBENCH_NEO4J_PASSWORD")
    ap.add_argument("--configs", default="1,2,3,4")
    ap.add_argument(
        "--keep-maps", type=int, default=3, help="depth whose full activation maps are kept"
    )
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument(
        "--skip-load", action="store_true", help="the database holds this graph already"
    )
    ap.add_argument("--seed-search", choices=("theirs", "wide"), default="theirs")
    return ap


def patch_queries(qr, seed_search: str) -> None:
    """Their Cypher, with the two documented changes (native propagation instead of GDS, the
    activation map returned) and, for `wide`, the wider seed search."""
    assert GDS_CALL in qr._PROPAGATION_QA and RETURN_LINE in qr._COLLECT_SUFFIX, (
        "unexpected query text"
    )
    qr._PROPAGATION_QA = qr._PROPAGATION_QA.replace(GDS_CALL, NATIVE_CALL)
    qr._COLLECT_SUFFIX = qr._COLLECT_SUFFIX.replace(RETURN_LINE, RETURN_WITH_MAP)
    if seed_search == "wide":
        assert SEED_CALL in qr._SEED_PREFIX, "unexpected seed query text"
        qr._SEED_PREFIX = qr._SEED_PREFIX.replace(SEED_CALL, WIDE_SEED_CALL)


def recording_raw_paths(qr) -> list:
    """The paths of each retrieval before their _deduplicate_paths (read only): the list they
    go to."""
    raw_paths: list = []
    dedup = qr.QASARetriever._deduplicate_paths

    def record_raw(rows):
        raw_paths.append([dict(r) for r in rows])
        return dedup(rows)

    qr.QASARetriever._deduplicate_paths = staticmethod(record_raw)
    return raw_paths


def recording_maps(tdriver) -> list:
    """The resource_map of each record their session.run(...).single() returns: the list the
    maps go to."""
    maps: list = []
    orig_session = tdriver.session

    def session(**kw):
        s = orig_session(**kw)
        inner_run = s.run

        def run(query, **params):
            res = inner_run(query, **params)

            class _R:
                def single(self_inner):
                    rec = res.single()
                    if rec is not None and "resource_map" in rec.keys():
                        maps.append(dict(rec["resource_map"]))
                    return rec

            return _R()

        s.run = run
        return s

    tdriver.session = session
    return maps


def main() -> int:
    args = parser().parse_args()
    import neo4j
    import qasa_rag.retrieval.qasa_retriever as qr
    import qasa_rag.retrieval.retriever as base

    patch_queries(qr, args.seed_search)
    base.create_genai_client = lambda: None  # no Gemini client: entities come from the cache
    raw_paths = recording_raw_paths(qr)

    work = Path(args.work)
    qs = json.loads((work / "questions.json").read_text())
    vt = VectorTable(
        json.loads((work / "texts.json").read_text()), np.load(work / "text_vectors.npy")
    )
    password = os.environ.get(args.password_env)
    # notifications off: their entity block reads e.type, which hopbench's graph has no value for
    driver = neo4j.GraphDatabase.driver(
        args.uri, auth=(args.user, password) if password else None, notifications_min_severity="OFF"
    )
    loaded = load_graph(driver, work) if not args.skip_load else {"skipped": True}
    print(f"loaded {loaded}", flush=True)
    cache = {
        q["text"]: [
            base.QueryEntity(name=e["name"], search_hint=e["search_hint"]) for e in q["entities"]
        ]
        for q in qs
    }
    tdriver = TimedDriver(driver, args.timeout)
    maps = recording_maps(tdriver)

    out = {
        "loaded": loaded,
        "query_changes": {
            "gds": [GDS_CALL, NATIVE_CALL],
            "return": RETURN_WITH_MAP.strip(),
            "raw_paths": "recorded before _deduplicate_paths",
            "seed_search": args.seed_search,
        },
        "neo4j_driver": neo4j.__version__,
        "runs": [],
    }
    for depth in [int(d) for d in args.configs.split(",")]:
        for gate in (True, False):
            r = qr.QASARetriever(
                tdriver, vt, max_steps=depth, query_aware=gate, query_entity_cache=cache
            )
            for q in qs[:3]:  # warm-up: plan cache, page cache
                r.retrieve(q["text"])
            rows = [
                question_row(r, q, (raw_paths, maps), depth == args.keep_maps, neo4j) for q in qs
            ]
            ms = [x["ms"] for x in rows if "error" not in x]
            print(
                f"depth {depth} gate {gate}: p50 {np.percentile(ms, 50):.1f} ms, "
                f"{sum('error' in x for x in rows)} errors",
                flush=True,
            )
            # the machine is shared: the 1/5/15-minute load averages when this configuration ended
            out["runs"].append(
                {"depth": depth, "gate": gate, "rows": rows, "load": list(os.getloadavg())}
            )
    out["embed_misses"] = vt.misses[:20]
    (work / f"official_{args.seed_search}.json").write_text(json.dumps(out))
    driver.close()
    return 0


def question_row(r, q: dict, recorded: tuple[list, list], keep_map: bool, neo4j) -> dict:
    """One timed retrieval of their retriever `r`: seeds, entities, paths before and after their
    deduplication, and (`keep_map`) the full activation map; a Neo4j error is recorded."""
    raw_paths, maps = recorded
    raw_paths.clear()
    maps.clear()
    t0 = time.perf_counter()
    try:
        res = r.retrieve(q["text"])
        ms = 1000 * (time.perf_counter() - t0)
    except neo4j.exceptions.Neo4jError as exc:
        return {"id": q["id"], "error": exc.code, "ms": 1000 * (time.perf_counter() - t0)}
    row = {
        "id": q["id"],
        "ms": ms,
        "seeds": res.seed_entities,
        "entities": [[e["name"], e["resource"]] for e in res.entities],
        "paths": [[p["names"], p["path_weight"]] for p in res.paths],
        "raw_paths": [[p["names"], p["path_weight"]] for p in (raw_paths[0] if raw_paths else [])],
        "n_activated": len(maps[0]) if maps else None,
    }
    if keep_map and maps:
        row["activation"] = maps[0]
    return row


if __name__ == "__main__":
    raise SystemExit(main())
