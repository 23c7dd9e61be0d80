"""Export a `KnowledgeGraph` into Neo4j so spreading activation can run inside the database.

Schema (one hopbench graph per database; a different graph replaces it):

* ``(:Entity {idx, name, label, description, desc_emb})``: ``idx`` is the entity's index in
  the KnowledgeGraph, ``name`` its normalised name (both unique). ``desc_emb`` holds the float32
  description embedding as stored in the graph (entities whose embedding is all zeros get
  none, so the gate reads 0 for them as in memory); ``desc_norm`` its float64 norm, so the
  gate is the exact cosine `semantic_gate` computes.
* ``(:Passage {idx, id, emb})``: ``emb`` is the passage embedding (corpus order = idx).
* ``(:Entity)-[:RELATES_TO {count}]->(:Entity)``: one relationship per unordered pair u < v
  of ``kg.relation`` with the number of facts joining them; traversed undirected, a source
  contributes count x activation, exactly the kernel's A[u, v] x a_u. Self-loops are left out
  (a node never activates itself).
* ``(:Passage)-[:MENTIONS]->(:Entity)``: the context edges.
* Vector indexes (cosine, d dimensions) over ``Entity.desc_emb`` (seed fallback) and
  ``Passage.emb`` (dense fill of the ranking), without quantization (Neo4j 5.26 quantizes by
  default: scores off by ~3e-3 and a worse recall) and with a denser HNSW graph (m 32,
  ef_construction 200). On MuSiQue's 19,479 descriptions the 100 nearest from the index hold
  the exact top-k of all 415 unmatched question mentions; 50 missed one.
* ``(:HopbenchMeta {key: 'graph'})``: the export key (graph hash + schema version), counts and
  ``complete``; written last, so an interrupted export is re-done and a stale one replaced.

Writes are batched ``UNWIND $rows`` statements; values travel only as parameters.

Speed (2Wiki: 59k entities with 384-d vectors, 6k passages, 164k edges; issue #6): the old
graph is deleted while this process builds the rows; each vector index is created as soon as
its nodes are written, so the server populates it (one thread, the longest step) while the
rest is written; and a batch's repr is kept short (see `_Rows`). Tried without gain on 2 cores:
two writer sessions for the nodes, relationships deleted before nodes, bigger delete batches,
`db.create.setNodeVectorProperty` (float32 storage), an index created before the writes (its
background segment merges then made the next DROP INDEX wait ~90 s), relabelling the old graph
and deleting it in the background during the writes (the deletes slowed the writes as much as
they saved), more index-population threads (the vector index populates on one anyway).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from hopbench.errors import HopbenchError
from hopbench.graphdb.connection import GraphDB

log = logging.getLogger("hopbench.graphdb.export")

EXPORT_VERSION = 2  # bump when the schema above changes
ENTITY_INDEX = "hopbench_entity_description"
PASSAGE_INDEX = "hopbench_passage_embedding"

_CONSTRAINTS = (
    "CREATE CONSTRAINT hopbench_entity_idx IF NOT EXISTS FOR (e:Entity) REQUIRE e.idx IS UNIQUE",
    "CREATE CONSTRAINT hopbench_entity_name IF NOT EXISTS FOR (e:Entity) REQUIRE e.name IS UNIQUE",
    "CREATE CONSTRAINT hopbench_passage_idx IF NOT EXISTS FOR (p:Passage) REQUIRE p.idx IS UNIQUE",
    "CREATE CONSTRAINT hopbench_passage_id IF NOT EXISTS FOR (p:Passage) REQUIRE p.id IS UNIQUE",
    "CREATE CONSTRAINT hopbench_meta_key IF NOT EXISTS FOR (m:HopbenchMeta) REQUIRE m.key IS UNIQUE",
)


@dataclass
class ExportReport:
    export_key: str
    exported: bool          # False: the database already held this graph
    seconds: float
    entities: int = 0
    passages: int = 0
    relations: int = 0
    mentions: int = 0
    # seconds per stage: prepare (rows) and clear run at the same time, then clear_wait, entities,
    # passages, relations, context_edges, vector_indexes (what was left of the index build)
    stages: dict = field(default_factory=dict)


def export_key(kg) -> str:
    """What identifies the graph in the database: the graph's content hash and this schema."""
    graph_key = kg.manifest.get("graph_key")
    if not graph_key:  # a graph not built by the builder: hash its manifest
        graph_key = hashlib.sha256(json.dumps(kg.manifest, sort_keys=True, default=str).encode()).hexdigest()
    return f"{graph_key}:v{EXPORT_VERSION}:{kg.n_entities}:{kg.n_passages}"


def stored_export_key(db: GraphDB) -> str | None:
    """The export key of a complete export in the database, or None."""
    # an empty database has no such label or keys yet: silence the server's notifications
    with db.translate_errors("export check"), db.session(notifications_min_severity="OFF") as s:
        rec = s.run("MATCH (m:HopbenchMeta {key: 'graph'}) WHERE m.complete RETURN m.export_key AS k").single()
    return rec["k"] if rec else None


def ensure_exported(db: GraphDB, kg, *, batch_size: int = 1000, force: bool = False) -> ExportReport:
    """Export `kg` unless the database already holds exactly this graph (by export key)."""
    key = export_key(kg)
    t0 = time.perf_counter()
    if not force and stored_export_key(db) == key:
        return ExportReport(key, False, time.perf_counter() - t0)
    return export_graph(db, kg, batch_size=batch_size)


def export_graph(db: GraphDB, kg, *, batch_size: int = 1000) -> ExportReport:
    """Replace whatever hopbench graph the database holds with `kg` (see the module docstring)."""
    t0 = time.perf_counter()
    stages: dict[str, float] = {}
    mark = [t0]

    def stage(name: str) -> None:
        now = time.perf_counter()
        stages[name] = round(now - mark[0], 3)
        mark[0] = now

    key = export_key(kg)
    dim = _check_dims(kg)
    # the server deletes the old graph while this process converts the new one to rows
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopbench-clear") as pool:
        clearing = pool.submit(_timed, clear_graph, db)
        rows = _rows(kg)
        stage("prepare")
        stages["clear"] = clearing.result()
    mark[0] = time.perf_counter()
    for c in _CONSTRAINTS:
        db.query(c, what="export: constraint", timeout=None)
    with db.translate_errors("export"), db.session() as s:
        s.run("MERGE (m:HopbenchMeta {key: 'graph'}) SET m.complete = false, m.export_key = $k",
              k=key).consume()
    stage("clear_wait")  # the part of the clear not hidden behind "prepare", plus constraints

    _write(db, "UNWIND $rows AS r CREATE (e:Entity {idx: r.idx, name: r.name, label: r.label, "
               "description: r.description, desc_emb: r.emb, desc_norm: r.norm})",
           rows["entities"], batch_size, "export: entities")
    # HNSW population is the slowest step and runs on one server thread: let it build the entity
    # index in the background while the passages and edges are written; wait for it at the end
    _create_vector_index(db, ENTITY_INDEX, "Entity", "desc_emb", dim)
    stage("entities")

    _write(db, "UNWIND $rows AS r CREATE (p:Passage {idx: r.idx, id: r.id, emb: r.emb})",
           rows["passages"], batch_size, "export: passages")
    _create_vector_index(db, PASSAGE_INDEX, "Passage", "emb", dim)
    stage("passages")

    _write(db, "UNWIND $rows AS r MATCH (a:Entity {idx: r.u}) MATCH (b:Entity {idx: r.v}) "
               "CREATE (a)-[:RELATES_TO {count: r.c}]->(b)", rows["relations"], 5 * batch_size,
           "export: relations")
    stage("relations")

    _write(db, "UNWIND $rows AS r MATCH (p:Passage {idx: r.p}) MATCH (e:Entity {idx: r.e}) "
               "CREATE (p)-[:MENTIONS]->(e)", rows["mentions"], 5 * batch_size, "export: context edges")
    stage("context_edges")
    n_rel, n_ctx = len(rows["relations"]), len(rows["mentions"])
    del rows

    db.query("CALL db.awaitIndexes(600)", what="export: waiting for the vector indexes", timeout=None)
    stage("vector_indexes")  # what is left of the index population after the writes

    seconds = time.perf_counter() - t0
    db.query("MATCH (m:HopbenchMeta {key: 'graph'}) SET m += $props, m.complete = true",
             {"props": {"export_key": key, "graph_key": kg.manifest.get("graph_key"),
                        "entities": kg.n_entities, "passages": kg.n_passages, "relations": n_rel,
                        "mentions": n_ctx, "export_seconds": seconds, "dimensions": dim,
                        "exported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}},
             what="export: meta")
    log.info("exported graph %s to %s: %d entities, %d passages, %d relations, %d context edges in %.1f s "
             "(%s)", key, db.uri, kg.n_entities, kg.n_passages, n_rel, n_ctx, seconds,
             ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
    return ExportReport(key, True, seconds, kg.n_entities, kg.n_passages, n_rel, n_ctx, stages)


def _rows(kg) -> dict[str, list[dict]]:
    """The query parameters of every write, converted from numpy in one go per array."""
    desc = np.asarray(kg.description_embeddings, dtype=np.float32)
    norms = np.linalg.norm(desc.astype(np.float64), axis=1)
    embs = desc.tolist()  # float32 values, exact as the doubles Neo4j stores
    entities = [{"idx": i, "name": kg.entity_names[i], "label": kg.entity_labels[i],
                 "description": kg.entity_descriptions[i], "emb": embs[i] if norms[i] > 0 else None,
                 "norm": n} for i, n in enumerate(norms.tolist())]
    pemb = np.asarray(kg.passage_embeddings, dtype=np.float32).tolist()
    passages = [{"idx": j, "id": pid, "emb": pemb[j]} for j, pid in enumerate(kg.passage_ids)]
    rel = sp.triu(kg.relation, k=1).tocoo()
    keep = rel.data != 0
    relations = [{"u": u, "v": v, "c": c} for u, v, c in zip(
        rel.row[keep].tolist(), rel.col[keep].tolist(), rel.data[keep].astype(np.float64).tolist())]
    ctx = kg.context.tocoo()
    keep = ctx.data != 0
    mentions = [{"p": p, "e": e} for p, e in zip(ctx.row[keep].tolist(), ctx.col[keep].tolist())]
    return {"entities": entities, "passages": passages, "relations": relations, "mentions": mentions}


def _timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return round(time.perf_counter() - t, 3)


def clear_graph(db: GraphDB) -> None:
    """Remove hopbench's nodes, indexes and meta node (batched so a big graph fits in memory)."""
    for name in (ENTITY_INDEX, PASSAGE_INDEX):
        db.query(f"DROP INDEX {name} IF EXISTS", what="export: drop index", timeout=None)  # type: ignore[arg-type]
    db.query("MATCH (n) WHERE n:Entity OR n:Passage OR n:HopbenchMeta "
             "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
             what="export: clearing the old graph", timeout=None)


class _Rows(list):
    """A batch of rows whose repr is one short line.

    Why: the neo4j driver (6.x) formats ``repr`` of every RUN's parameters for its debug log
    before it checks the log level; for a batch of 384-d embeddings that string building took
    longer than packing, sending and storing the batch together."""

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


def _write(db: GraphDB, cypher, rows: list[dict], batch_size: int, what: str) -> None:
    # (two writer sessions in threads were tried for the nodes: no faster on 2 cores)
    with db.translate_errors(what), db.session() as s:
        for start in range(0, len(rows), batch_size):
            s.execute_write(lambda tx, b: tx.run(cypher, rows=b).consume(),
                            _Rows(rows[start:start + batch_size]))


def _create_vector_index(db: GraphDB, name: str, label: str, prop: str, dim: int) -> None:
    """Create a vector index; the server populates it in the background (db.awaitIndexes waits)."""
    # index, label and property names are constants of this module, never data
    db.query(f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) ON n.{prop} "  # type: ignore[arg-type]
             "OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', "
             "`vector.quantization.enabled`: false, `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}}",
             {"dim": dim}, what="export: vector index", timeout=None)


def _check_dims(kg) -> int:
    d = np.asarray(kg.description_embeddings).shape[1]
    for name in ("passage_embeddings",):
        arr = np.asarray(getattr(kg, name))
        if arr.ndim != 2 or arr.shape[1] != d:
            raise HopbenchError(f"knowledge graph: {name} has shape {arr.shape}; expected (n, {d}) "
                                "like description_embeddings")
    if len(kg.passage_ids) != np.asarray(kg.passage_embeddings).shape[0]:
        raise HopbenchError("knowledge graph: passage_embeddings rows do not match passage_ids")
    return int(d)
