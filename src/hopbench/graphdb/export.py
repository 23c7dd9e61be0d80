"""Export a `KnowledgeGraph` into Neo4j so spreading activation can run inside the database.

Each graph lives in its own namespace (`hopbench.graphdb.namespace`): ``<ns>`` is 16 hex
digits of the SHA-256 of the graph's content key, and every label, index and constraint
below carries it. Nothing outside the namespace is read, changed or deleted: a user's own
``:Entity`` nodes survive, and several graphs (and runs on them, at the same time) share
one database. Schema of one namespace:

* ``(:Hopbench_<ns>_Entity {idx, name, label, description, desc_emb, desc_norm})``: ``idx`` is
  the entity's index in the KnowledgeGraph, ``name`` its normalised name (both unique).
  ``desc_emb`` holds the float32 description embedding as stored in the graph (entities whose
  embedding is all zeros get none, so the gate reads 0 for them as in memory); ``desc_norm``
  its float64 norm, so the gate is the exact cosine `semantic_gate` computes.
* ``(:Hopbench_<ns>_Passage {idx, id, emb})``: ``emb`` is the passage embedding (corpus order = idx).
* ``-[:RELATES_TO {count, pairs}]->`` between two entities: one relationship per unordered pair
  u < v of ``kg.relation``; ``count`` is the number of facts joining them, ``pairs`` the number
  of ordered pairs (u, v), (v, u) with a fact (1 or 2: the relationships the authors' loader
  would MERGE; the rule is the caller's, `pair_counts`). Traversed undirected, a source
  contributes weight x activation, exactly the kernel's A[u, v] x a_u for ``edges: facts`` or
  ``pairs``. Self-loops are left out (a node never activates itself).
* ``(passage)-[:MENTIONS]->(entity)``: the context edges.
* Vector indexes ``hopbench_<ns>_entity_description`` (seed fallback) and
  ``hopbench_<ns>_passage_embedding`` (dense fill of the ranking), cosine, d dimensions,
  without quantization and with a denser HNSW graph (m 32, ef_construction 200), so that the
  index's nearest neighbours hold the exact seeds the in-memory version finds (Neo4j 5.26
  quantizes by default, which shifts scores and loses recall; docs/findings.md, "Neo4j export").
* Uniqueness constraints ``hopbench_<ns>_{entity_idx, entity_name, passage_idx, passage_id}``.
* ``(:HopbenchGraph {namespace})``: the registry entry (one per namespace, unique): the export
  key (graph hash + schema version + counts), the dataset, counts, ``complete``, and while an
  export runs its ``owner`` and ``heartbeat``. ``complete`` is set last, so an interrupted
  export is re-done and a stale one replaced, in its namespace only.

Concurrent runs agree through the registry node (graphdb/export_registry.py): one process
exports a namespace while the others wait for it; a dead exporter's claim is taken over.

Data of hopbench versions before namespaces is left alone (graphdb/legacy.py).

Writes are batched ``UNWIND $rows`` statements; values travel only as parameters, and the only
names pasted into Cypher text are the namespace's (checked hex ids) and this module's constants.

Order of the work, for speed: the old version of the graph (same namespace) is deleted while
this process builds the rows; each vector index is created as soon as its nodes are written, so
the server populates it (on one thread, the longest step) while the rest is written; and a
batch's repr is kept short (`_Rows`), because the driver formats every batch as text for its
debug log. What was measured, and what was tried without gain: docs/findings.md, "Neo4j
export", and benchmarks/speed/results/neo4j_export.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.connection import GraphDB
from hopbench.graphdb.export_registry import ExportClaim, ensure_registry, stored_export_key
from hopbench.graphdb.namespace import Namespace
from hopbench.graphdb.schema import run_schema

# The caller's rule for the `pairs` property of RELATES_TO: kg -> an ENTITY x ENTITY matrix whose
# [u, v] is that edge's value (spreading activation gives its `edges: pairs` propagation matrix,
# the ordered pairs with a fact). A method's rule, so the method hands it down: the store knows none.
PairCounts = Callable[[object], sp.spmatrix]

log = logging.getLogger("hopbench.graphdb.export")

EXPORT_VERSION = 4  # bump when the schema above changes (3: per-graph namespaces; 4: r.pairs)


@dataclass
class ExportReport:
    export_key: str
    exported: bool  # False: the database already held this graph
    seconds: float
    entities: int = 0
    passages: int = 0
    relations: int = 0
    mentions: int = 0
    # seconds per stage: prepare (rows) and clear run at the same time, then clear_wait, entities,
    # passages, relations, context_edges, vector_indexes (what was left of the index build)
    stages: dict = field(default_factory=dict)
    namespace: Namespace | None = None  # where the graph is (labels and index names for queries)
    waited: float = 0.0  # seconds spent waiting for another process exporting the same graph


def graph_key(kg) -> str:
    """The graph's content hash (the builder's cache key); a graph not built by the builder
    gets the hash of its manifest."""
    key = kg.manifest.get("graph_key")
    if not key:
        key = hashlib.sha256(
            json.dumps(kg.manifest, sort_keys=True, default=str).encode()
        ).hexdigest()
    return str(key)


def namespace_of(kg) -> Namespace:
    """The namespace this graph is exported into (from its content hash alone)."""
    return Namespace.for_graph_key(graph_key(kg))


def export_key(kg) -> str:
    """What identifies the export: the graph's content hash, this schema and the counts."""
    return f"{graph_key(kg)}:v{EXPORT_VERSION}:{kg.n_entities}:{kg.n_passages}"


def ensure_exported(
    db: GraphDB, kg, *, pair_counts: PairCounts, batch_size: int = 1000, force: bool = False
) -> ExportReport:
    """Export `kg` into its namespace unless the namespace already holds exactly this graph.

    If another process is exporting the same graph, wait for it (and use its export). `force`
    re-exports even a complete graph. Other namespaces and non-hopbench data are not touched.
    """
    t0 = time.perf_counter()
    ns, key = namespace_of(kg), export_key(kg)
    if not force and stored_export_key(db, ns) == key:
        return ExportReport(key, False, time.perf_counter() - t0, namespace=ns)
    ensure_registry(db)
    claim = ExportClaim(db, ns, key)
    if not claim.acquire(force=force):  # another process finished this export while we waited
        return ExportReport(key, False, time.perf_counter() - t0, namespace=ns, waited=claim.waited)
    try:
        with claim.heartbeat():
            report = _export(db, kg, ns, claim, batch_size, pair_counts)
    except BaseException:
        claim.release()  # `complete` stays false: the next run (or a waiting one) redoes it
        raise
    report.waited = claim.waited
    return report


def export_graph(
    db: GraphDB, kg, *, pair_counts: PairCounts, batch_size: int = 1000
) -> ExportReport:
    """Replace what `kg`'s namespace holds with `kg` (a forced export; see `ensure_exported`)."""
    return ensure_exported(db, kg, pair_counts=pair_counts, batch_size=batch_size, force=True)


def _export(
    db: GraphDB, kg, ns: Namespace, claim: ExportClaim, batch_size: int, pair_counts: PairCounts
) -> ExportReport:
    clock = _StageClock(claim)
    key = claim.export_key
    dim = _check_dims(kg)
    # the server deletes the old version of this graph while this process converts the new one to rows
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopbench-clear") as pool:
        clearing = pool.submit(_timed, clear_graph, db, ns)
        rows = export_rows(kg, pair_counts)
        clock.stage("prepare")
        clock.stages["clear"] = clearing.result()
    clock.restart()
    # names and labels are the namespace's (checked hex), properties this module's constants
    run_schema(
        db,
        [
            f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
            for name, (label, prop) in ns.constraints.items()
        ],
        "export: constraint",
    )
    clock.stage("clear_wait")  # the part of the clear not hidden behind "prepare", plus constraints
    _write_graph(db, ns, rows, batch_size, dim, clock)
    n_rel, n_ctx = len(rows["relations"]), len(rows["mentions"])
    del rows
    _await_vector_indexes(db, ns)
    clock.stage("vector_indexes")  # what is left of the index population after the writes

    seconds = clock.seconds()
    claim.complete(
        {
            "export_key": key,
            "graph_key": graph_key(kg),
            "dataset": kg.manifest.get("dataset"),
            "entities": kg.n_entities,
            "passages": kg.n_passages,
            "relations": n_rel,
            "mentions": n_ctx,
            "export_seconds": seconds,
            "dimensions": dim,
            "export_version": EXPORT_VERSION,
            "exported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
    )
    log.info(
        "exported graph %s to %s (namespace %s): %d entities, %d passages, %d relations, "
        "%d context edges in %.1f s (%s)",
        key,
        db.uri,
        ns.id,
        kg.n_entities,
        kg.n_passages,
        n_rel,
        n_ctx,
        seconds,
        ", ".join(f"{k} {v:.1f} s" for k, v in clock.stages.items()),
    )
    return ExportReport(
        key, True, seconds, kg.n_entities, kg.n_passages, n_rel, n_ctx, clock.stages, namespace=ns
    )


class _StageClock:
    """Seconds per export stage, each from the end of the one before; the claim is checked at
    each stage's end (a lost claim stops the export there)."""

    def __init__(self, claim: ExportClaim) -> None:
        self.claim = claim
        self.t0 = self.mark = time.perf_counter()
        self.stages: dict[str, float] = {}

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        self.stages[name] = round(now - self.mark, 3)
        self.mark = now
        self.claim.check()

    def restart(self) -> None:
        self.mark = time.perf_counter()

    def seconds(self) -> float:
        return time.perf_counter() - self.t0


def _write_graph(
    db: GraphDB,
    ns: Namespace,
    rows: dict[str, list[dict]],
    batch_size: int,
    dim: int,
    clock: _StageClock,
) -> None:
    """Entities, passages (each followed by its vector index), relations, context edges."""
    _write(
        db,
        ns.cypher(
            "UNWIND $rows AS r CREATE (e:{{ENTITY}} {idx: r.idx, name: r.name, label: r.label, "
            "description: r.description, desc_emb: r.emb, desc_norm: r.norm})"
        ),
        rows["entities"],
        batch_size,
        "export: entities",
    )
    # HNSW population is the slowest step and runs on one server thread: let it build the entity
    # index in the background while the passages and edges are written; wait for it at the end
    _create_vector_index(db, ns.entity_index, ns.entity, "desc_emb", dim)
    clock.stage("entities")

    _write(
        db,
        ns.cypher("UNWIND $rows AS r CREATE (p:{{PASSAGE}} {idx: r.idx, id: r.id, emb: r.emb})"),
        rows["passages"],
        batch_size,
        "export: passages",
    )
    _create_vector_index(db, ns.passage_index, ns.passage, "emb", dim)
    clock.stage("passages")

    _write(
        db,
        ns.cypher(
            "UNWIND $rows AS r MATCH (a:{{ENTITY}} {idx: r.u}) MATCH (b:{{ENTITY}} {idx: r.v}) "
            "CREATE (a)-[:RELATES_TO {count: r.c, pairs: r.n}]->(b)"
        ),
        rows["relations"],
        5 * batch_size,
        "export: relations",
    )
    clock.stage("relations")

    _write(
        db,
        ns.cypher(
            "UNWIND $rows AS r MATCH (p:{{PASSAGE}} {idx: r.p}) MATCH (e:{{ENTITY}} {idx: r.e}) "
            "CREATE (p)-[:MENTIONS]->(e)"
        ),
        rows["mentions"],
        5 * batch_size,
        "export: context edges",
    )
    clock.stage("context_edges")


def _await_vector_indexes(db: GraphDB, ns: Namespace) -> None:
    # only this graph's indexes: db.awaitIndexes would also wait for other runs' exports
    for name in (ns.entity_index, ns.passage_index):
        db.query(
            "CALL db.awaitIndex($name, 600)",
            {"name": name},
            what="export: waiting for the vector indexes",
            timeout=None,
        )


# -- clearing ------------------------------------------------------------------------------


def clear_graph(db: GraphDB, namespace: Namespace) -> None:
    """Remove the nodes and vector indexes of one namespace (batched, so a big graph fits in
    memory); its constraints and registry node stay for the next export into it."""
    run_schema(
        db,
        [
            f"DROP INDEX {name} IF EXISTS"
            for name in (namespace.entity_index, namespace.passage_index)
        ],
        "export: drop index",
    )
    # (a new namespace has no labels yet: run_schema silences the server's notes about that)
    run_schema(
        db,
        [
            f"MATCH (n:{label}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS"
            for label in (namespace.entity, namespace.passage)
        ],
        "export: clearing the old graph",
    )


# -- writing -------------------------------------------------------------------------------


def export_rows(kg, pair_counts: PairCounts) -> dict[str, list[dict]]:
    """The query parameters of every write, converted from numpy in one go per array."""
    desc = np.asarray(kg.description_embeddings, dtype=np.float32)
    norms = np.linalg.norm(desc.astype(np.float64), axis=1)
    embs = desc.tolist()  # float32 values, exact as the doubles Neo4j stores
    entities = [
        {
            "idx": i,
            "name": kg.entity_names[i],
            "label": kg.entity_labels[i],
            "description": kg.entity_descriptions[i],
            "emb": embs[i] if norms[i] > 0 else None,
            "norm": n,
        }
        for i, n in enumerate(norms.tolist())
    ]
    pemb = np.asarray(kg.passage_embeddings, dtype=np.float32).tolist()
    passages = [{"idx": j, "id": pid, "emb": pemb[j]} for j, pid in enumerate(kg.passage_ids)]
    rel = sp.triu(kg.relation, k=1).tocoo()
    keep = rel.data != 0
    row, col = rel.row[keep], rel.col[keep]
    pairs = np.asarray(pair_counts(kg)[row, col], dtype=np.float64).ravel()
    relations = [
        {"u": u, "v": v, "c": c, "n": n}
        for u, v, c, n in zip(
            row.tolist(), col.tolist(), rel.data[keep].astype(np.float64).tolist(), pairs.tolist()
        )
    ]
    ctx = kg.context.tocoo()
    keep = ctx.data != 0
    mentions = [{"p": p, "e": e} for p, e in zip(ctx.row[keep].tolist(), ctx.col[keep].tolist())]
    return {
        "entities": entities,
        "passages": passages,
        "relations": relations,
        "mentions": mentions,
    }


def _timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return round(time.perf_counter() - t, 3)


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
            s.execute_write(
                lambda tx, b: tx.run(cypher, rows=b).consume(),
                _Rows(rows[start : start + batch_size]),
            )


def _create_vector_index(db: GraphDB, name: str, label: str, prop: str, dim: int) -> None:
    """Create a vector index; the server populates it in the background (db.awaitIndexes waits)."""
    # index and label names are the namespace's (checked hex ids), the property a constant
    db.query(
        f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) ON n.{prop} "  # type: ignore[arg-type]
        "OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', "
        "`vector.quantization.enabled`: false, `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}}",
        {"dim": dim},
        what="export: vector index",
        timeout=None,
    )


def _check_dims(kg) -> int:
    d = np.asarray(kg.description_embeddings).shape[1]
    for name in ("passage_embeddings",):
        arr = np.asarray(getattr(kg, name))
        if arr.ndim != 2 or arr.shape[1] != d:
            raise HopbenchError(
                f"knowledge graph: {name} has shape {arr.shape}; expected (n, {d}) "
                "like description_embeddings"
            )
    if len(kg.passage_ids) != np.asarray(kg.passage_embeddings).shape[0]:
        raise HopbenchError("knowledge graph: passage_embeddings rows do not match passage_ids")
    return int(d)
