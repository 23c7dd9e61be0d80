#!/usr/bin/env bash
# Stop the hopbench Neo4j launcher started by neo4j-up.sh: SIGTERM (clean shutdown), then wait.
# Idempotent: nothing running is not an error. Only the PID in our PID file is signalled.
#   HOPBENCH_NEO4J_PORT (7687)  HOPBENCH_NEO4J_STOP_TIMEOUT (60 s)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/neo4j-env.sh"

if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    say "not running on port $PORT"
    exit 0
fi

kill -TERM "$pid"
start=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
    if (( SECONDS - start >= STOP_TIMEOUT )); then
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$PID_FILE"
        die "pid $pid did not stop within ${STOP_TIMEOUT} s after SIGTERM; killed it (the store \
will be recovered on the next start); log: $LOG_FILE"
    fi
    sleep 0.2
done
rm -f "$PID_FILE"
say "stopped (pid $pid, $((SECONDS - start)) s)"
