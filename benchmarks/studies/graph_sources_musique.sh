#!/usr/bin/env bash
# Issue #15 part 1: every offline graph retriever on the MuSiQue subset, on HippoRAG's published
# gpt-3.5-turbo OpenIE graph (graph=openie) and on the spaCy graph (graph=spacy), then the
# paired comparison (benchmarks/studies/compare_graphs.py -> benchmarks/studies/results/graph_sources_musique.md).
# The offline retrievers use no LLM: hipporag's fact filter is off (retriever.seeding.filter=false), as in
# the official-package run quoted in the issue; spreading_activation_neo4j runs inside a local
# Neo4j (scripts/with-neo4j.sh starts it). With LLM=1 the LLM methods (catrag, catrag_code,
# neuropath) follow on the first 20 questions with reader=qa and the local model, next to dense
# with the same reader (hours on a 2-core CPU; the response cache makes a relaunch resume).
#
#   RUNS=runs-openie CACHE=~/.cache/hopbench DATA=../shared/datasets [LLM=1] \
#       nice benchmarks/studies/graph_sources_musique.sh > graph_sources.log 2>&1 &
set -euo pipefail
source benchmarks/common/run_settings.sh  # RUNS, CACHE, DATA, PY and `common`
common=(dataset=musique "${common[@]}")
retrievers=("hipporag retriever.seeding.filter=false" "hipporag_hb retriever.seeding.filter=false" hipporag1
            spreading_activation spreading_activation_nogate flow_diffusion flow_diffusion_code)

$PY -m hopbench.run "${common[@]}" retriever=dense
for graph in openie spacy; do
  for r in "${retrievers[@]}"; do
    read -r -a args <<< "$r"
    echo "== graph=$graph retriever=${args[*]}"
    $PY -m hopbench.run "${common[@]}" "graph=$graph" "retriever=${args[0]}" "${args[@]:1}"
  done
  scripts/with-neo4j.sh $PY -m hopbench.run "${common[@]}" "graph=$graph" retriever=spreading_activation_neo4j
done
if [ "${LLM:-0}" = 1 ]; then
  llm=(dataset.limit=20 reader=qa llm=local "concurrency=${CONCURRENCY:-4}")
  $PY -m hopbench.run "${common[@]}" "${llm[@]}" retriever=dense
  for graph in openie spacy; do
    for r in catrag catrag_code neuropath; do
      echo "== graph=$graph retriever=$r (LLM)"
      $PY -m hopbench.run "${common[@]}" "${llm[@]}" "graph=$graph" "retriever=$r"
    done
  done
fi
$PY -m benchmarks.studies.compare_graphs --runs-dir "$RUNS" --data-dir "$DATA" --cache-dir "$CACHE" \
    --out "${OUT:-benchmarks/studies/results/graph_sources_musique.md}"
