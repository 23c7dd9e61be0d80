#!/usr/bin/env bash
# Start the hopbench Neo4j launcher in the background and wait until Bolt is ready.
# Idempotent: if our server is already running on this port, say so and exit 0.
# Builds neo4j/ with Maven first if the jar is missing.
#   HOPBENCH_NEO4J_PORT (7687)  HOPBENCH_NEO4J_START_TIMEOUT (300 s)
#   HOPBENCH_NEO4J_JAVA_OPTS (-Xms256m -Xmx4g)  HOPBENCH_NEO4J_PAGE_CACHE (256m)
#   HOPBENCH_NEO4J_STATE_DIR (~/.cache/hopbench/neo4j, or $HOPBENCH_CACHE_DIR/neo4j)
#   HOPBENCH_NEO4J_DATA_DIR (STATE_DIR/PORT/home)
# Auth is on: the first start of a state directory writes a random password to
# STATE_DIR/PORT/password (0600); hopbench reads it from there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/neo4j-env.sh"

if pid="$(running_pid)"; then
    say "already running on bolt://127.0.0.1:$PORT (pid $pid, log $LOG_FILE)"
    exit 0
fi
rm -f "$PID_FILE"

if [ ! -f "$JAR" ] || [ ! -d "$REPO/neo4j/target/lib" ] || [ ! -d "$REPO/neo4j/target/plugins" ]; then
    command -v mvn >/dev/null || die "$JAR is missing and mvn is not installed; install Maven and Java 17"
    say "building $JAR (first build downloads Neo4j from Maven Central)"
    mvn -B -q -Dstyle.color=never -f "$REPO/neo4j/pom.xml" package || die "Maven build of neo4j/ failed"
fi
command -v java >/dev/null || die "java is not installed (Neo4j 5.26 needs Java 17 or 21)"

if port_open; then
    die "port $PORT on 127.0.0.1 is already in use by a process this script did not start; \
stop it or choose another port with HOPBENCH_NEO4J_PORT"
fi

umask 077  # the state directory, log and password are the launching user's only
mkdir -p "$STATE_DIR"
chmod 700 "$STATE_DIR"
if [ ! -s "$PASSWORD_FILE" ]; then
    # 32 random URL-safe characters, written beside the store; `ln` publishes it atomically and
    # only once, so two starts racing agree on one password.
    tmp="$(mktemp "$STATE_DIR/.password.XXXXXX")"
    head -c 24 /dev/urandom | base64 | tr '+/' '-_' >"$tmp"
    rm -f "$PASSWORD_FILE"
    ln "$tmp" "$PASSWORD_FILE" 2>/dev/null || true
    rm -f "$tmp"
    say "new password for this server in $PASSWORD_FILE (mode 600)"
fi
chmod 600 "$PASSWORD_FILE"
# shellcheck disable=SC2086  # JAVA_OPTS is a list of options
nohup java $JAVA_OPTS -jar "$JAR" --data-dir "$DATA_DIR" --password-file "$PASSWORD_FILE" \
    --port "$PORT" --page-cache "$PAGE_CACHE" >"$LOG_FILE" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PID_FILE"

start=$SECONDS
while true; do
    if ready="$(grep -m1 '^hopbench-neo4j ready' "$LOG_FILE")"; then
        say "$ready (pid $pid, waited $((SECONDS - start)) s)"
        exit 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
        rm -f "$PID_FILE"
        tail -n 20 "$LOG_FILE" >&2
        die "the launcher exited before it was ready; full log: $LOG_FILE"
    fi
    if (( SECONDS - start >= START_TIMEOUT )); then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 $((STOP_TIMEOUT * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$PID_FILE"
        tail -n 20 "$LOG_FILE" >&2
        die "not ready after ${START_TIMEOUT} s (HOPBENCH_NEO4J_START_TIMEOUT); stopped it; log: $LOG_FILE"
    fi
    sleep 0.5
done
