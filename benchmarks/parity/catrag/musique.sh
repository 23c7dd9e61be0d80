#!/usr/bin/env bash
# Issue #33: CatRAG as its authors compute it. The LLM runs (local model, one at a time under the
# shared lock, resumable through the response cache), then the comparison with the authors' code
# on the recorded decisions (benchmarks/parity/catrag/compare.py ->
# benchmarks/parity/catrag/results/official_catrag.{json,md}). From the repository root:
#
#   OFFICIAL_SRC=<CatRAG checkout>/src HOPBENCH_RUNS_DIR=runs \
#   HOPBENCH_DATA_DIR=../shared/datasets nice benchmarks/parity/catrag/musique.sh
set -euo pipefail
PY=${PYTHON:-python3}
LIMIT=${LIMIT:-20}
LOCK=${LOCK:-/tmp/hopbench-llm.lock}
run() { flock "$LOCK" nice -n 10 $PY -m hopbench.run progress=false "$@"; }

run dataset=musique "dataset.limit=$LIMIT" retriever=catrag_code llm=local reader=none
RUN=$($PY - <<'PY'
import os, glob, json, yaml
runs = os.environ.get("HOPBENCH_RUNS_DIR", "runs")
best = None
for d in glob.glob(f"{runs}/musique/catrag_code/*/"):
    c = yaml.safe_load(open(d + "config.yaml"))
    if c.get("reader", {}).get("name", "none") == "none" and os.path.exists(d + "metrics.json"):
        best = d if best is None or os.path.getmtime(d) > os.path.getmtime(best) else best
print(best)
PY
)
$PY -m benchmarks.parity.catrag.compare --run "$RUN" --official-src "${OFFICIAL_SRC:?}" \
    --out benchmarks/parity/catrag/results/official_catrag
