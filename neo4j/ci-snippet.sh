# --- Neo4j for the tests marked `neo4j`: paste into .ci/run before pytest -------------------
# Builds the launcher if needed (cold Maven build ~40 s), starts it (~25 s), stops it on exit.
# Without a reachable server the `neo4j` tests FAIL; HOPBENCH_SKIP_NEO4J=1 skips them instead.
# On a shared machine give each checkout its own port: export HOPBENCH_NEO4J_PORT=17687.
if [ "${HOPBENCH_SKIP_NEO4J:-0}" != "1" ]; then
    scripts/neo4j-up.sh
    trap 'scripts/neo4j-down.sh' EXIT   # merge with any existing EXIT trap in .ci/run
fi
# ... python -m pytest ... (the neo4j tests read HOPBENCH_NEO4J_PORT through configs/graphdb/local.yaml)
