# --- Neo4j for the tests marked `neo4j`: paste into .ci/run right after `make install` ---------
# Builds the launcher if needed (cold Maven build ~55 s), starts it (~20-40 s on this machine),
# stops it when .ci/run exits (the script's exit status is kept).
# Without a reachable server the `neo4j` tests FAIL; HOPBENCH_SKIP_NEO4J=1 skips them instead.
# On a shared machine give each checkout its own port: export HOPBENCH_NEO4J_PORT=17687.
if [ "${HOPBENCH_SKIP_NEO4J:-0}" != "1" ]; then
  echo "== make neo4j-up"
  make neo4j-up
  trap 'echo "== make neo4j-down"; make neo4j-down' EXIT
fi
