#!/usr/bin/env bash
# Issue #15 part 2: HippoRAG 2 as its authors' code computes it (retriever=hipporag, graph
# construction hipporag2) and hopbench's variant (retriever=hipporag_hb, hopbench construction)
# on the MuSiQue subset, on the spaCy and on the published OpenIE triples, fact filter off (no LLM);
# dense as the baseline. Then the comparison with the official package
# (benchmarks/parity/hipporag/compare.py -> benchmarks/parity/hipporag/results/official_hipporag.{json,md}).
#
#   RUNS=runs-hippo CACHE=~/.cache/hopbench DATA=../shared/datasets \
#       nice benchmarks/parity/hipporag/faithful_musique.sh > hipporag_faithful.log 2>&1 &
set -euo pipefail
source benchmarks/common/run_settings.sh  # RUNS, CACHE, DATA, PY and `common`
common=(dataset=musique "${common[@]}")

$PY -m hopbench.run "${common[@]}" retriever=dense
for graph in spacy openie; do
  for r in hipporag hipporag_hb; do
    echo "== graph=$graph retriever=$r"
    $PY -m hopbench.run "${common[@]}" "graph=$graph" "retriever=$r" retriever.seeding.filter=false
  done
done
HOPBENCH_DATA_DIR=$DATA HOPBENCH_CACHE_DIR=$CACHE $PY -m benchmarks.parity.hipporag.compare \
    --dataset musique --graphs spacy,openie --out "${OUT:-benchmarks/parity/hipporag/results/official_hipporag}"
