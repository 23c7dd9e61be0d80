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
  would MERGE). Traversed undirected, a source contributes weight x activation, exactly the
  kernel's A[u, v] x a_u for ``edges: facts`` or ``pairs``. Self-loops are left out (a node
  never activates itself).
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

Concurrent runs. Different graphs never touch each other's labels or indexes. Two processes
that want the same graph agree through the registry node: in one transaction that holds the
node's write lock, a process either finds the export complete (cache hit), or claims it
(``owner`` = a random token, ``heartbeat`` = server time, refreshed every `HEARTBEAT_S` by a
thread), or sees a live claim and waits for it to finish. A claim whose heartbeat is older
than `LEASE_S` (its process died) is taken over. Only the owner of a namespace writes to it,
so a run is never disturbed by exports of other graphs; what can still pull a graph from under
a run using it is a re-export of that same graph: `force=True` (`export_graph`, the
benchmarks), another hopbench version's export schema, or `drop_graph`.

Data from hopbench versions before namespaces (unprefixed ``:Entity``/``:Passage`` with a
``(:HopbenchMeta {key: 'graph'})`` node and ``hopbench_entity_description`` /
``hopbench_passage_embedding`` indexes) is left alone by exports; `list_graphs` reports it and
`drop_legacy_graph` removes it (only nodes with exactly hopbench's properties).

Writes are batched ``UNWIND $rows`` statements; values travel only as parameters, and the only
names pasted into Cypher text are the namespace's (checked hex ids) and this module's constants.

Order of the work, for speed: the old version of the graph (same namespace) is deleted while
this process builds the rows; each vector index is created as soon as its nodes are written, so
the server populates it (on one thread, the longest step) while the rest is written; and a
batch's repr is kept short (`_Rows`), because the driver formats every batch as text for its
debug log. What was measured, and what was tried without gain: docs/findings.md, "Neo4j
export", and benchmarks/results/neo4j_export.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from hopbench.errors import HopbenchError
from hopbench.graphdb.connection import GraphDB, GraphDBQueryError
from hopbench.graphdb.namespace import LABEL_RE, Namespace
from hopbench.retrieve.activation_rules import relation_matrix

log = logging.getLogger("hopbench.graphdb.export")

EXPORT_VERSION = 4  # bump when the schema above changes (3: per-graph namespaces; 4: r.pairs)
REGISTRY_LABEL = "HopbenchGraph"
_REGISTRY_CONSTRAINT = ("CREATE CONSTRAINT hopbench_graph_namespace IF NOT EXISTS "
                        "FOR (g:HopbenchGraph) REQUIRE g.namespace IS UNIQUE")

LEASE_S = 60.0      # a claim whose heartbeat is older than this belongs to a dead process
HEARTBEAT_S = 5.0   # how often the exporting process refreshes its claim
POLL_S = 0.5        # how often a process waiting for another's export looks again

# what hopbench versions before namespaces created (export schema v1/v2)
LEGACY_INDEXES = ("hopbench_entity_description", "hopbench_passage_embedding")
LEGACY_CONSTRAINTS = ("hopbench_entity_idx", "hopbench_entity_name", "hopbench_passage_idx",
                      "hopbench_passage_id", "hopbench_meta_key")
_LEGACY_ENTITY_KEYS = ["idx", "name", "label", "description", "desc_emb", "desc_norm"]
_LEGACY_PASSAGE_KEYS = ["idx", "id", "emb"]


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
    namespace: Namespace | None = None  # where the graph is (labels and index names for queries)
    waited: float = 0.0     # seconds spent waiting for another process exporting the same graph


def graph_key(kg) -> str:
    """The graph's content hash (the builder's cache key); a graph not built by the builder
    gets the hash of its manifest."""
    key = kg.manifest.get("graph_key")
    if not key:
        key = hashlib.sha256(json.dumps(kg.manifest, sort_keys=True, default=str).encode()).hexdigest()
    return str(key)


def namespace_of(kg) -> Namespace:
    """The namespace this graph is exported into (from its content hash alone)."""
    return Namespace.for_graph_key(graph_key(kg))


def export_key(kg) -> str:
    """What identifies the export: the graph's content hash, this schema and the counts."""
    return f"{graph_key(kg)}:v{EXPORT_VERSION}:{kg.n_entities}:{kg.n_passages}"


def stored_export_key(db: GraphDB, namespace: Namespace) -> str | None:
    """The export key of a complete export in `namespace`, or None."""
    # a database without hopbench graphs has no such label yet: silence the server's notifications
    with db.translate_errors("export check"), db.session(notifications_min_severity="OFF") as s:
        rec = s.run("MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.complete RETURN g.export_key AS k",
                    ns=namespace.id).single()
    return rec["k"] if rec else None


def ensure_exported(db: GraphDB, kg, *, batch_size: int = 1000, force: bool = False) -> ExportReport:
    """Export `kg` into its namespace unless the namespace already holds exactly this graph.

    If another process is exporting the same graph, wait for it (and use its export). `force`
    re-exports even a complete graph. Other namespaces and non-hopbench data are not touched.
    """
    t0 = time.perf_counter()
    ns, key = namespace_of(kg), export_key(kg)
    if not force and stored_export_key(db, ns) == key:
        return ExportReport(key, False, time.perf_counter() - t0, namespace=ns)
    _ensure_registry(db)
    claim = _Claim(db, ns, key)
    if not claim.acquire(force=force):  # another process finished this export while we waited
        return ExportReport(key, False, time.perf_counter() - t0, namespace=ns, waited=claim.waited)
    try:
        with claim.heartbeat():
            report = _export(db, kg, ns, claim, batch_size)
    except BaseException:
        claim.release()  # `complete` stays false: the next run (or a waiting one) redoes it
        raise
    report.waited = claim.waited
    return report


def export_graph(db: GraphDB, kg, *, batch_size: int = 1000) -> ExportReport:
    """Replace what `kg`'s namespace holds with `kg` (a forced export; see `ensure_exported`)."""
    return ensure_exported(db, kg, batch_size=batch_size, force=True)


def _export(db: GraphDB, kg, ns: Namespace, claim: _Claim, batch_size: int) -> ExportReport:
    t0 = time.perf_counter()
    stages: dict[str, float] = {}
    mark = [t0]

    def stage(name: str) -> None:
        now = time.perf_counter()
        stages[name] = round(now - mark[0], 3)
        mark[0] = now
        claim.check()

    key = claim.export_key
    dim = _check_dims(kg)
    # the server deletes the old version of this graph while this process converts the new one to rows
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopbench-clear") as pool:
        clearing = pool.submit(_timed, clear_graph, db, ns)
        rows = _rows(kg)
        stage("prepare")
        stages["clear"] = clearing.result()
    mark[0] = time.perf_counter()
    # names and labels are the namespace's (checked hex), properties this module's constants
    _schema(db, [f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
                 for name, (label, prop) in ns.constraints.items()], "export: constraint")
    stage("clear_wait")  # the part of the clear not hidden behind "prepare", plus constraints

    _write(db, ns.cypher("UNWIND $rows AS r CREATE (e:{{ENTITY}} {idx: r.idx, name: r.name, label: r.label, "
                         "description: r.description, desc_emb: r.emb, desc_norm: r.norm})"),
           rows["entities"], batch_size, "export: entities")
    # HNSW population is the slowest step and runs on one server thread: let it build the entity
    # index in the background while the passages and edges are written; wait for it at the end
    _create_vector_index(db, ns.entity_index, ns.entity, "desc_emb", dim)
    stage("entities")

    _write(db, ns.cypher("UNWIND $rows AS r CREATE (p:{{PASSAGE}} {idx: r.idx, id: r.id, emb: r.emb})"),
           rows["passages"], batch_size, "export: passages")
    _create_vector_index(db, ns.passage_index, ns.passage, "emb", dim)
    stage("passages")

    _write(db, ns.cypher("UNWIND $rows AS r MATCH (a:{{ENTITY}} {idx: r.u}) MATCH (b:{{ENTITY}} {idx: r.v}) "
                         "CREATE (a)-[:RELATES_TO {count: r.c, pairs: r.n}]->(b)"), rows["relations"], 5 * batch_size,
           "export: relations")
    stage("relations")

    _write(db, ns.cypher("UNWIND $rows AS r MATCH (p:{{PASSAGE}} {idx: r.p}) MATCH (e:{{ENTITY}} {idx: r.e}) "
                         "CREATE (p)-[:MENTIONS]->(e)"), rows["mentions"], 5 * batch_size,
           "export: context edges")
    stage("context_edges")
    n_rel, n_ctx = len(rows["relations"]), len(rows["mentions"])
    del rows

    # only this graph's indexes: db.awaitIndexes would also wait for other runs' exports
    for name in (ns.entity_index, ns.passage_index):
        db.query("CALL db.awaitIndex($name, 600)", {"name": name},
                 what="export: waiting for the vector indexes", timeout=None)
    stage("vector_indexes")  # what is left of the index population after the writes

    seconds = time.perf_counter() - t0
    claim.complete({"export_key": key, "graph_key": graph_key(kg), "dataset": kg.manifest.get("dataset"),
                    "entities": kg.n_entities, "passages": kg.n_passages, "relations": n_rel,
                    "mentions": n_ctx, "export_seconds": seconds, "dimensions": dim,
                    "export_version": EXPORT_VERSION, "exported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    log.info("exported graph %s to %s (namespace %s): %d entities, %d passages, %d relations, "
             "%d context edges in %.1f s (%s)", key, db.uri, ns.id, kg.n_entities, kg.n_passages, n_rel,
             n_ctx, seconds, ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
    return ExportReport(key, True, seconds, kg.n_entities, kg.n_passages, n_rel, n_ctx, stages, namespace=ns)


# -- claims: one exporter per namespace ----------------------------------------------------

def _ensure_registry(db: GraphDB) -> None:
    """The uniqueness constraint that makes MERGE of a registry node safe under concurrency."""
    try:
        _schema(db, [_REGISTRY_CONSTRAINT], "export: registry constraint")
    except GraphDBQueryError as exc:
        # two processes creating it at the same moment: the loser's IF NOT EXISTS can still fail
        if "AlreadyExists" not in exc.code:
            raise


class _Claim:
    """The right to write one namespace, held through the registry node's `owner` token."""

    def __init__(self, db: GraphDB, ns: Namespace, export_key: str):
        self.db, self.ns, self.export_key = db, ns, export_key
        self.token = uuid.uuid4().hex
        self.owner_info = f"{socket.gethostname()} pid {os.getpid()}"
        self.waited = 0.0
        self.lost = False

    def acquire(self, *, force: bool) -> bool:
        """True once this process holds the claim; False if, while it waited for another
        process's claim, that process completed exactly this export (and not `force`)."""
        t0 = time.perf_counter()
        announced = False
        while True:
            # (notifications off: a new registry node has none of the properties read yet)
            with self.db.translate_errors("export: claim"), \
                    self.db.session(notifications_min_severity="OFF") as s:
                state, info = s.execute_write(self._try_claim, force)
            if state != "busy":
                self.waited = time.perf_counter() - t0
                return state == "claimed"
            if not announced:
                log.info("graph namespace %s is being exported by %s; waiting for it", self.ns.id, info)
                announced = True
            time.sleep(POLL_S)

    def _try_claim(self, tx, force: bool) -> tuple[str, str]:
        # writing a property first takes the node's write lock, so the read below cannot be stale
        tx.run("MERGE (g:HopbenchGraph {namespace: $ns}) ON CREATE SET g.complete = false "
               "SET g._lock = true", ns=self.ns.id).consume()
        g = tx.run("MATCH (g:HopbenchGraph {namespace: $ns}) RETURN g.complete AS complete, "
                   "g.export_key AS key, g.owner AS owner, g.owner_info AS info, "
                   "timestamp() - g.heartbeat AS age", ns=self.ns.id).single()
        if g["owner"] is not None and g["owner"] != self.token and g["age"] is not None \
                and g["age"] < 1000 * LEASE_S:
            state = "busy"
        elif g["complete"] and g["key"] == self.export_key and g["owner"] is None and not force:
            state = "done"
        else:
            if g["owner"] is not None and g["owner"] != self.token:
                log.warning("graph namespace %s: taking over the export of %s (no heartbeat for %.0f s)",
                            self.ns.id, g["info"], g["age"] / 1000)
            tx.run("MATCH (g:HopbenchGraph {namespace: $ns}) SET g.owner = $token, g.owner_info = $info, "
                   "g.heartbeat = timestamp(), g.complete = false, g.export_key = $key",
                   ns=self.ns.id, token=self.token, info=self.owner_info, key=self.export_key).consume()
            state = "claimed"
        tx.run("MATCH (g:HopbenchGraph {namespace: $ns}) REMOVE g._lock", ns=self.ns.id).consume()
        return state, g["info"] or ""

    @contextlib.contextmanager
    def heartbeat(self) -> Iterator[None]:
        """Refresh the claim every HEARTBEAT_S from a thread while the block runs."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                try:
                    rows = self.db.query("MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.owner = $token "
                                         "SET g.heartbeat = timestamp() RETURN count(g) AS n",
                                         {"ns": self.ns.id, "token": self.token}, what="export: heartbeat")
                except HopbenchError as exc:  # a slow server: try again at the next beat
                    log.warning("graph namespace %s: heartbeat failed: %s", self.ns.id, exc)
                    continue
                if rows[0]["n"] == 0:
                    self.lost = True
                    return

        thread = threading.Thread(target=beat, name="hopbench-export-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def check(self) -> None:
        if self.lost:
            raise HopbenchError(f"Neo4j at {self.db.uri}: another process took over the export of graph "
                                f"namespace {self.ns.id} (this one missed its heartbeats for {LEASE_S:g} s)")

    def complete(self, props: dict) -> None:
        rows = self.db.query("MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.owner = $token "
                             "SET g += $props, g.complete = true REMOVE g.owner, g.owner_info, g.heartbeat "
                             "RETURN count(g) AS n", {"ns": self.ns.id, "token": self.token, "props": props},
                             what="export: registry")
        if rows[0]["n"] == 0:
            self.lost = True
            self.check()

    def release(self) -> None:
        """Give up the claim after a failed export (best effort: the lease expires anyway)."""
        with contextlib.suppress(HopbenchError):
            self.db.query("MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.owner = $token "
                          "REMOVE g.owner, g.owner_info, g.heartbeat",
                          {"ns": self.ns.id, "token": self.token}, what="export: release")


# -- listing and dropping -----------------------------------------------------------------

def list_graphs(db: GraphDB) -> dict:
    """The hopbench graphs in the database: ``{"graphs": [...], "legacy": {...} | None}``.

    Each graph is its registry entry (namespace, dataset, graph_key, entities, passages,
    complete, exported_at, ...) plus ``state``: "complete", "exporting" (a live claim, with
    ``owner_info``), "incomplete" (interrupted), "old schema" (another export version), or
    "unregistered" (labels of a namespace without a registry node). ``legacy`` describes data
    of hopbench versions before namespaces, if any."""
    with db.translate_errors("listing hopbench graphs"), db.session(notifications_min_severity="OFF") as s:
        rows = s.run("MATCH (g:HopbenchGraph) RETURN g {.*} AS g, timestamp() - g.heartbeat AS age "
                     "ORDER BY g.exported_at, g.namespace").data()
        labels = [r["label"] for r in s.run("CALL db.labels() YIELD label RETURN label").data()]
        graphs, seen = [], set()
        for r in rows:
            g = {k: v for k, v in r["g"].items() if k not in ("owner", "_lock")}
            if g.get("owner_info") and r["age"] is not None and r["age"] < 1000 * LEASE_S:
                g["state"] = "exporting"
            elif not g.get("complete"):
                g["state"] = "incomplete"
            elif g.get("export_version") != EXPORT_VERSION:
                g["state"] = "old schema"
            else:
                g["state"] = "complete"
            graphs.append(g)
            seen.add(g["namespace"])
        for ns_id in sorted({m.group(1) for m in map(LABEL_RE.fullmatch, labels) if m} - seen):
            ns = Namespace(ns_id)
            counts = {what: s.run(f"MATCH (n:{label}) RETURN count(n) AS n").single()["n"]  # type: ignore[arg-type]
                      for what, label in (("entities", ns.entity), ("passages", ns.passage))}
            if counts["entities"] or counts["passages"]:
                graphs.append({"namespace": ns_id, "state": "unregistered", **counts})
        legacy = _legacy(s, labels)
    return {"graphs": graphs, "legacy": legacy}


def _legacy(s, labels: list[str]) -> dict | None:
    meta = s.run("MATCH (m:HopbenchMeta {key: 'graph'}) RETURN m {.*} AS m").single() \
        if "HopbenchMeta" in labels else None
    indexes = [r["name"] for r in s.run("SHOW INDEXES YIELD name WHERE name IN $names RETURN name",
                                        names=list(LEGACY_INDEXES + LEGACY_CONSTRAINTS)).data()]
    if meta is None and not indexes:
        return None
    m = meta["m"] if meta else {}
    return {"export_key": m.get("export_key"), "entities": m.get("entities"), "passages": m.get("passages"),
            "complete": m.get("complete"), "exported_at": m.get("exported_at"), "indexes": indexes}


def clear_graph(db: GraphDB, namespace: Namespace) -> None:
    """Remove the nodes and vector indexes of one namespace (batched, so a big graph fits in
    memory); its constraints and registry node stay for the next export into it."""
    _schema(db, [f"DROP INDEX {name} IF EXISTS" for name in (namespace.entity_index, namespace.passage_index)],
            "export: drop index")
    # (a new namespace has no labels yet: _schema silences the server's notes about that)
    _schema(db, [f"MATCH (n:{label}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS"
                 for label in (namespace.entity, namespace.passage)], "export: clearing the old graph")


def _schema(db: GraphDB, statements: list[str], what: str) -> None:
    """Run statements one by one in auto-commit transactions, without a time limit, and without
    the server's notifications ("index does not exist", "label does not exist" are expected)."""
    with db.translate_errors(what), db.session(notifications_min_severity="OFF") as s:
        for text in statements:
            s.run(text).consume()  # type: ignore[arg-type]


def drop_graph(db: GraphDB, namespace: Namespace) -> bool:
    """Delete one hopbench graph entirely: nodes, indexes, constraints, registry node.

    Refuses (HopbenchError) while another process is exporting it. Returns False if the
    namespace held nothing."""
    listed = {g["namespace"]: g for g in list_graphs(db)["graphs"]}
    if namespace.id not in listed:
        return False
    if listed[namespace.id]["state"] == "exporting":
        raise HopbenchError(f"graph namespace {namespace.id} is being exported by "
                            f"{listed[namespace.id].get('owner_info')}; drop it when that run is done")
    clear_graph(db, namespace)
    _schema(db, [f"DROP CONSTRAINT {name} IF EXISTS" for name in namespace.constraints], "drop: constraint")
    db.query("MATCH (g:HopbenchGraph {namespace: $ns}) DELETE g", {"ns": namespace.id}, what="drop: registry")
    log.info("dropped hopbench graph namespace %s from %s", namespace.id, db.uri)
    return True


def drop_legacy_graph(db: GraphDB) -> dict:
    """Remove the data of hopbench versions before namespaces: the `HopbenchMeta` node, the old
    indexes and constraints, and the `:Entity` / `:Passage` nodes that have only that label and
    exactly hopbench's properties (others, e.g. a user's, are kept). Returns the counts."""
    with db.translate_errors("drop: legacy graph"), db.session(notifications_min_severity="OFF") as s:
        for name in LEGACY_INDEXES:
            s.run(f"DROP INDEX {name} IF EXISTS").consume()  # type: ignore[arg-type]
        counts = {}
        for what, label, keys in (("passages", "Passage", _LEGACY_PASSAGE_KEYS),
                                  ("entities", "Entity", _LEGACY_ENTITY_KEYS)):
            required = ["idx", "name", "desc_norm"] if label == "Entity" else keys
            # label is one of the two constants above
            summary = s.run(f"MATCH (n:{label}) WHERE size(labels(n)) = 1 "  # type: ignore[arg-type]
                            "AND all(k IN keys(n) WHERE k IN $keys) AND all(k IN $required WHERE n[k] IS NOT NULL) "
                            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
                            keys=keys, required=required).consume()
            counts[what] = summary.counters.nodes_deleted
        counts["meta"] = s.run("MATCH (m:HopbenchMeta {key: 'graph'}) DELETE m").consume().counters.nodes_deleted
        for name in LEGACY_CONSTRAINTS:
            s.run(f"DROP CONSTRAINT {name} IF EXISTS").consume()  # type: ignore[arg-type]
    log.info("dropped the legacy (unnamespaced) hopbench graph from %s: %s", db.uri, counts)
    return counts


# -- writing -------------------------------------------------------------------------------

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
    row, col = rel.row[keep], rel.col[keep]
    pairs = np.asarray(relation_matrix(kg, "pairs")[row, col], dtype=np.float64).ravel()
    relations = [{"u": u, "v": v, "c": c, "n": n} for u, v, c, n in zip(
        row.tolist(), col.tolist(), rel.data[keep].astype(np.float64).tolist(), pairs.tolist())]
    ctx = kg.context.tocoo()
    keep = ctx.data != 0
    mentions = [{"p": p, "e": e} for p, e in zip(ctx.row[keep].tolist(), ctx.col[keep].tolist())]
    return {"entities": entities, "passages": passages, "relations": relations, "mentions": mentions}


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
            s.execute_write(lambda tx, b: tx.run(cypher, rows=b).consume(),
                            _Rows(rows[start:start + batch_size]))


def _create_vector_index(db: GraphDB, name: str, label: str, prop: str, dim: int) -> None:
    """Create a vector index; the server populates it in the background (db.awaitIndexes waits)."""
    # index and label names are the namespace's (checked hex ids), the property a constant
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
