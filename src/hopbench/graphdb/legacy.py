"""Data of hopbench versions before per-graph namespaces (export schema v1/v2).

Data from hopbench versions before namespaces (unprefixed ``:Entity``/``:Passage`` with a
``(:HopbenchMeta {key: 'graph'})`` node and ``hopbench_entity_description`` /
``hopbench_passage_embedding`` indexes) is left alone by exports; `list_graphs` reports it and
`drop_legacy_graph` removes it (only nodes with exactly hopbench's properties).
"""

from __future__ import annotations

import logging

from hopbench.graphdb.connection import GraphDB

log = logging.getLogger("hopbench.graphdb.export")

LEGACY_INDEXES = ("hopbench_entity_description", "hopbench_passage_embedding")
LEGACY_CONSTRAINTS = (
    "hopbench_entity_idx",
    "hopbench_entity_name",
    "hopbench_passage_idx",
    "hopbench_passage_id",
    "hopbench_meta_key",
)
_LEGACY_ENTITY_KEYS = ["idx", "name", "label", "description", "desc_emb", "desc_norm"]
_LEGACY_PASSAGE_KEYS = ["idx", "id", "emb"]


def legacy_summary(s, labels: list[str]) -> dict | None:
    """What legacy data a session `s` sees (its meta node and indexes), or None."""
    meta = (
        s.run("MATCH (m:HopbenchMeta {key: 'graph'}) RETURN m {.*} AS m").single()
        if "HopbenchMeta" in labels
        else None
    )
    indexes = [
        r["name"]
        for r in s.run(
            "SHOW INDEXES YIELD name WHERE name IN $names RETURN name",
            names=list(LEGACY_INDEXES + LEGACY_CONSTRAINTS),
        ).data()
    ]
    if meta is None and not indexes:
        return None
    m = meta["m"] if meta else {}
    return {
        "export_key": m.get("export_key"),
        "entities": m.get("entities"),
        "passages": m.get("passages"),
        "complete": m.get("complete"),
        "exported_at": m.get("exported_at"),
        "indexes": indexes,
    }


def drop_legacy_graph(db: GraphDB) -> dict:
    """Remove the data of hopbench versions before namespaces: the `HopbenchMeta` node, the old
    indexes and constraints, and the `:Entity` / `:Passage` nodes that have only that label and
    exactly hopbench's properties (others, e.g. a user's, are kept). Returns the counts."""
    with (
        db.translate_errors("drop: legacy graph"),
        db.session(notifications_min_severity="OFF") as s,
    ):
        for name in LEGACY_INDEXES:
            s.run(f"DROP INDEX {name} IF EXISTS").consume()  # type: ignore[arg-type]
        counts = {}
        for what, label, keys in (
            ("passages", "Passage", _LEGACY_PASSAGE_KEYS),
            ("entities", "Entity", _LEGACY_ENTITY_KEYS),
        ):
            required = ["idx", "name", "desc_norm"] if label == "Entity" else keys
            # label is one of the two constants above
            summary = s.run(
                f"MATCH (n:{label}) WHERE size(labels(n)) = 1 "  # type: ignore[arg-type]
                "AND all(k IN keys(n) WHERE k IN $keys) AND all(k IN $required WHERE n[k] IS NOT NULL) "
                "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
                keys=keys,
                required=required,
            ).consume()
            counts[what] = summary.counters.nodes_deleted
        counts["meta"] = (
            s.run("MATCH (m:HopbenchMeta {key: 'graph'}) DELETE m").consume().counters.nodes_deleted
        )
        for name in LEGACY_CONSTRAINTS:
            s.run(f"DROP CONSTRAINT {name} IF EXISTS").consume()  # type: ignore[arg-type]
    log.info("dropped the legacy (unnamespaced) hopbench graph from %s: %s", db.uri, counts)
    return counts
