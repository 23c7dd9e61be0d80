"""`hopbench graphdb-check [overrides]`: can hopbench use the configured Neo4j, and is APOC there?

    hopbench graphdb-check                                  # the local launcher (make neo4j-up)
    hopbench graphdb-check graphdb.uri=bolt://db:7687 graphdb.user=me   # password: HOPBENCH_NEO4J_PASSWORD

Why: a sweep over many configurations should not be the first thing to find out that the
server is down or that APOC is missing (the paper-form query needs apoc.map.fromPairs).
"""

from __future__ import annotations

import sys

from hopbench.errors import HopbenchError
from hopbench.graphdb.connection import GraphDBSettings, check_apoc, connect


def describe(settings: GraphDBSettings) -> str:
    """One line: server version and edition, database, APOC version or its absence."""
    with (connect(settings) as db, db.translate_errors("server check", settings.query_timeout),
          db.session() as session):
        comp = session.run("CALL dbms.components() YIELD name, versions, edition "
                           "RETURN versions[0] AS version, edition").single()
        database = session.run("CALL db.info() YIELD name RETURN name").single()["name"]
        apoc = check_apoc(session)
    apoc_text = f"APOC {apoc}" if apoc else "APOC missing (only the portable query form will work)"
    return (f"Neo4j at {settings.uri}: ok, Neo4j {comp['version']} ({comp['edition']}), "
            f"database '{database}', {apoc_text}")


def cli(argv: list[str]) -> int:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hopbench.run import CONFIG_DIR

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose(config_name="config", overrides=list(argv))
    settings = GraphDBSettings.from_config(OmegaConf.to_container(cfg.graphdb, resolve=True))
    try:
        print(describe(settings))
    except HopbenchError as exc:
        print(f"hopbench: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(cli(sys.argv[1:]))
