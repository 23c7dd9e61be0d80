"""The hopbench graphs a database holds, and dropping one of them (`hopbench neo4j`)."""

from __future__ import annotations

import logging

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.connection import GraphDB
from hopbench.graphdb.export import EXPORT_VERSION, clear_graph
from hopbench.graphdb.export_registry import LEASE_S
from hopbench.graphdb.legacy import legacy_summary
from hopbench.graphdb.namespace import LABEL_RE, Namespace
from hopbench.graphdb.schema import run_schema

log = logging.getLogger("hopbench.graphdb.export")


def list_graphs(db: GraphDB) -> dict:
    """The hopbench graphs in the database: ``{"graphs": [...], "legacy": {...} | None}``.

    Each graph is its registry entry (namespace, dataset, graph_key, entities, passages,
    complete, exported_at, ...) plus ``state``: "complete", "exporting" (a live claim, with
    ``owner_info``), "incomplete" (interrupted), "old schema" (another export version), or
    "unregistered" (labels of a namespace without a registry node). ``legacy`` describes data
    of hopbench versions before namespaces, if any."""
    with (
        db.translate_errors("listing hopbench graphs"),
        db.session(notifications_min_severity="OFF") as s,
    ):
        rows = s.run(
            "MATCH (g:HopbenchGraph) RETURN g {.*} AS g, timestamp() - g.heartbeat AS age "
            "ORDER BY g.exported_at, g.namespace"
        ).data()
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
            counts = {
                what: s.run(f"MATCH (n:{label}) RETURN count(n) AS n").single()["n"]  # type: ignore[arg-type]
                for what, label in (("entities", ns.entity), ("passages", ns.passage))
            }
            if counts["entities"] or counts["passages"]:
                graphs.append({"namespace": ns_id, "state": "unregistered", **counts})
        legacy = legacy_summary(s, labels)
    return {"graphs": graphs, "legacy": legacy}


def drop_graph(db: GraphDB, namespace: Namespace) -> bool:
    """Delete one hopbench graph entirely: nodes, indexes, constraints, registry node.

    Refuses (HopbenchError) while another process is exporting it. Returns False if the
    namespace held nothing."""
    listed = {g["namespace"]: g for g in list_graphs(db)["graphs"]}
    if namespace.id not in listed:
        return False
    if listed[namespace.id]["state"] == "exporting":
        raise HopbenchError(
            f"graph namespace {namespace.id} is being exported by "
            f"{listed[namespace.id].get('owner_info')}; drop it when that run is done"
        )
    clear_graph(db, namespace)
    run_schema(
        db,
        [f"DROP CONSTRAINT {name} IF EXISTS" for name in namespace.constraints],
        "drop: constraint",
    )
    db.query(
        "MATCH (g:HopbenchGraph {namespace: $ns}) DELETE g",
        {"ns": namespace.id},
        what="drop: registry",
    )
    log.info("dropped hopbench graph namespace %s from %s", namespace.id, db.uri)
    return True
