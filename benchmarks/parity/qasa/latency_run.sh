#!/usr/bin/env bash
# Issue #27's latency benchmark as ONE run over MuSiQue and 2Wiki (benchmarks/parity/qasa/results/official_qasa.md):
#  1. the authors' QASARetriever run by their code (compare.py: their seed search as
#     written, gated vs ungated, depth 1-4; parity at depth 3 as a by-product),
#  2. hopbench's Neo4j query on the same graphs (query_latency.py, same depths),
#  3. the parity run with their seed search given 100 hits (2Wiki; MuSiQue's is official_qasa_wide).
# The machine is shared: the load average is logged between the steps and stored per configuration.
#
# From the repository root:
#   HOPBENCH_NEO4J_PORT=7703 HOPBENCH_DATA_DIR=../shared/datasets \
#       benchmarks/parity/qasa/latency_run.sh <qasa-graph-rag checkout> [out-prefix]
# QASA_LIMIT_2WIKI=N: 2Wiki questions for the latency tables (default 200); QASA_SKIP_WIDE=1: stop after step 2.
set -euo pipefail
OFFICIAL="$(realpath "${1:?usage: $0 OFFICIAL_SRC [OUT_PREFIX]}")"
OUT="$(realpath -m "${2:-$(dirname "$0")/results/official_qasa}")"
cd "$(dirname "$0")/../../.."  # the repository root: the scripts run as modules from there
LIMIT_2WIKI="${QASA_LIMIT_2WIKI:-200}"   # 2Wiki questions for the latency tables
py() { nice -n 15 python "$@"; }
load() { echo "== $(date -u +%H:%M:%S) $1, load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }

load "start"
py -m benchmarks.parity.qasa.compare --official-src "$OFFICIAL" --datasets musique,2wiki --depths 1,2,3,4 \
    --limit-2wiki "$LIMIT_2WIKI" --out "${OUT}_latency"
load "authors' code done"
py -m benchmarks.parity.qasa.query_latency --datasets musique,2wiki --depths 1,2,3,4 --limit-2wiki "$LIMIT_2WIKI" \
    --out "${OUT}_hopbench_query"
load "hopbench's query done"
[ -n "${QASA_SKIP_WIDE:-}" ] && exit 0
py -m benchmarks.parity.qasa.compare --official-src "$OFFICIAL" --datasets 2wiki --depths 3 --seed-search wide \
    --skip-load --out "${OUT}_2wiki_wide"
load "end"
