"""`hopbench graphdb-check [overrides]`: can hopbench use the configured Neo4j, is APOC there,
and which hopbench graphs does it hold? `hopbench graphdb-drop`: remove some of those graphs.

    hopbench graphdb-check                                  # the local launcher (make neo4j-up)
    hopbench graphdb-check graphdb.uri=bolt://db:7687 graphdb.user=me   # password: HOPBENCH_NEO4J_PASSWORD
    hopbench graphdb-drop 3fa2c9e1d0b4a7f6 [...]            # graphs by namespace (as listed by graphdb-check)
    hopbench graphdb-drop --all                             # every hopbench graph (not the legacy one)
    hopbench graphdb-drop --legacy                          # data of hopbench before namespaces

Why: a sweep over many configurations should not be the first thing to find out that the
server is down or that APOC is missing (the paper-form query needs apoc.map.fromPairs). Each
graph hopbench exports keeps its own namespace (`hopbench.graphdb.namespace`), so a server
collects one per dataset and graph setting until they are dropped.
"""

from __future__ import annotations

from hopbench.graphdb.connection import GraphDB, GraphDBSettings, check_apoc, connect
from hopbench.graphdb.inventory import list_graphs


def describe(settings: GraphDBSettings) -> str:
    """One line: server version and edition, database, APOC version or its absence."""
    with (
        connect(settings) as db,
        db.translate_errors("server check", settings.query_timeout),
        db.session() as session,
    ):
        comp = session.run(
            "CALL dbms.components() YIELD name, versions, edition "
            "RETURN versions[0] AS version, edition"
        ).single()
        database = session.run("CALL db.info() YIELD name RETURN name").single()["name"]
        apoc = check_apoc(session)
    apoc_text = f"APOC {apoc}" if apoc else "APOC missing (only the portable query form will work)"
    return (
        f"Neo4j at {settings.uri}: ok, Neo4j {comp['version']} ({comp['edition']}), "
        f"database '{database}', {apoc_text}"
    )


def describe_graphs(db: GraphDB) -> list[str]:
    """One line per hopbench graph in the database (and one for legacy data), after a header."""
    listed = list_graphs(db)
    graphs, legacy = listed["graphs"], listed["legacy"]
    where = f"database '{db.settings.database}'" if db.settings.database else "the default database"
    lines = [f"hopbench graphs in {where}: {len(graphs)}"]
    for g in graphs:
        what = (
            f"{g.get('dataset') or '?'}, graph {g.get('graph_key') or '?'}"
            if g["state"] != "unregistered"
            else "no registry node"
        )
        state = g["state"] + (f" by {g['owner_info']}" if g["state"] == "exporting" else "")
        when = f", exported {g['exported_at']}" if g.get("exported_at") else ""
        lines.append(
            f"  {g['namespace']}  {what}: {_count(g.get('entities'))} entities, "
            f"{_count(g.get('passages'))} passages, {state}{when}"
        )
    if legacy:
        lines.append(
            f"  legacy (unnamespaced, hopbench before export v3): {_count(legacy['entities'])} entities, "
            f"{_count(legacy['passages'])} passages (`hopbench graphdb-drop --legacy` removes it)"
        )
    return lines


def _count(n) -> str:
    return f"{n:,}" if isinstance(n, int) else "?"
