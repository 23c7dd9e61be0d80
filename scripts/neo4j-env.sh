# Shared settings for neo4j-up.sh / neo4j-down.sh (sourced, not executed).
# Every instance lives in its own directory keyed by port, so several checkouts on one machine
# can each run a server on a different HOPBENCH_NEO4J_PORT without touching each other's store.
# That directory is outside the checkout (under hopbench's cache folder, mode 0700) and holds the
# store, the log and the server's password (`password`, 0600), which hopbench reads from there
# (hopbench.graphdb.connection.launcher_password_file follows the same rule).

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${HOPBENCH_NEO4J_PORT:-7687}"
STATE_DIR="${HOPBENCH_NEO4J_STATE_DIR:-${HOPBENCH_CACHE_DIR:-${HOME:-.}/.cache/hopbench}/neo4j}/$PORT"
DATA_DIR="${HOPBENCH_NEO4J_DATA_DIR:-$STATE_DIR/home}"
PID_FILE="$STATE_DIR/neo4j.pid"
LOG_FILE="$STATE_DIR/neo4j.log"
PASSWORD_FILE="$STATE_DIR/password"
JAR="$REPO/neo4j/target/hopbench-neo4j.jar"
JAVA_OPTS="${HOPBENCH_NEO4J_JAVA_OPTS:--Xms256m -Xmx4g}"
PAGE_CACHE="${HOPBENCH_NEO4J_PAGE_CACHE:-256m}"
START_TIMEOUT="${HOPBENCH_NEO4J_START_TIMEOUT:-300}"  # a new store starts twice (Launcher.java)
STOP_TIMEOUT="${HOPBENCH_NEO4J_STOP_TIMEOUT:-60}"

say() { echo "neo4j: $*"; }
die() { echo "neo4j: error: $*" >&2; exit 1; }

# The PID in the PID file, if that process is alive and really is our launcher (PIDs get reused).
running_pid() {
    [ -f "$PID_FILE" ] || return 1
    local pid
    pid="$(cat "$PID_FILE" 2>/dev/null)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    ps -p "$pid" -o command= 2>/dev/null | grep -q "hopbench-neo4j.jar" || return 1
    echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }
