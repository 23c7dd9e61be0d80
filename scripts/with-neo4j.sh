#!/usr/bin/env bash
# Run a command with the local Neo4j up, so `make test` needs nothing started by hand.
# Starts the launcher only if it is not already running, and stops it afterwards only if this
# script started it. HOPBENCH_SKIP_NEO4J=1 runs the command without Neo4j (its tests are skipped).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/neo4j-env.sh"
if [ "${HOPBENCH_SKIP_NEO4J:-0}" = "1" ]; then
    exec "$@"
fi
started=0
if ! running_pid >/dev/null; then
    "$REPO/scripts/neo4j-up.sh" || exit 1
    started=1
fi
"$@"
status=$?
if [ "$started" = 1 ]; then
    "$REPO/scripts/neo4j-down.sh" || true
fi
exit "$status"
