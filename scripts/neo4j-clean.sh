#!/usr/bin/env bash
# Delete the local Neo4j's state directory for this port (store, log, password); run after
# neo4j-down.sh. The next neo4j-up.sh starts an empty database with a new password.
#   HOPBENCH_NEO4J_PORT (7687)  HOPBENCH_NEO4J_STATE_DIR  HOPBENCH_NEO4J_DATA_DIR (see neo4j-env.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/neo4j-env.sh"
if pid="$(running_pid)"; then
    die "still running on port $PORT (pid $pid); stop it first (make neo4j-down)"
fi
rm -rf "$DATA_DIR" "$STATE_DIR"
say "deleted $STATE_DIR"
