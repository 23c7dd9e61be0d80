"""Runs the official HippoRAG 2 package (`hipporag==2.0.0a4`) offline; started by
`compare.py` inside the virtual environment it makes. Not part of hopbench: it imports no
hopbench module, and hopbench never imports it.

    PYTHONPATH=<repository> <venv>/bin/python -m benchmarks.parity.hipporag.worker WORK_DIR

WORK_DIR holds what the driver wrote: `docs.json` (passage texts, corpus order), `queries.json`
(question texts), `vectors.npz` (texts and their all-MiniLM-L6-v2 vectors, computed by hopbench)
and `openie_results_ner_bypassed.json` (the triples, HippoRAG 2 OpenIE format). Writes
`official.json` (graph counts, per-question top passages, seeds, facts, times) and
`official_edges.npz` (the igraph's edges).

What is replaced, and only that:
* vllm, gritlm and litellm are imported by the package at module level but never called
  offline: empty placeholder modules stand in for them (a call would raise);
* the embedding model: a lookup of the precomputed vectors (an unknown text raises, so both
  sides embed exactly the same texts with the same vectors);
* the LLM client and the DSPy fact filter ("recognition memory"): the filter returns its
  candidates unchanged (the bypass the issue's comparison used), the LLM is never asked.
Everything else, from `HippoRAG.index` to `graph_search_with_fact_entities` and `run_ppr`, is the
package's own code.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from benchmarks.common.shims import install_placeholders

install_placeholders(purpose="the offline comparison")

from benchmarks.common import hipporag_offline as offline
from benchmarks.common.versions import package_versions

WORK = Path(sys.argv[1])
TOP = 20  # passages kept per question (scores too, for the tie analysis)
REPEATS = int(os.environ.get("HOPBENCH_TIMING_REPEATS", "3"))
VERSIONS = ("hipporag", "igraph", "torch", "numpy", "transformers", "tenacity")


class RecordingDict(dict):
    """node_to_node_stats while synonymy edges are added: remembers which keys were set."""

    def __init__(self, *args):
        super().__init__(*args)
        self.set_keys: list = []

    def __setitem__(self, key, value):
        self.set_keys.append(key)
        super().__setitem__(key, value)


def main() -> int:
    t_import = time.perf_counter()
    import hipporag  # noqa: F401  (its __init__ binds the name HippoRAG to the class)
    from hipporag.utils.config_utils import BaseConfig

    H = sys.modules["hipporag.HippoRAG"]  # the module, whose global names the patches replace

    import_s = time.perf_counter() - t_import
    offline.replace_models(
        H,
        offline.precomputed_vectors(WORK / "vectors.npz"),
        offline.NoLLM("the offline comparison"),
        offline.FilterBypassed,
    )

    steps: dict = {}
    Recorded = recording_class(H.HippoRAG, steps)

    docs = json.loads((WORK / "docs.json").read_text(encoding="utf-8"))
    queries = json.loads((WORK / "queries.json").read_text(encoding="utf-8"))
    save_dir = offline.openie_save_dir(WORK, offline.hash_seed_dir(WORK, "official"))
    cfg = offline.openie_config(
        BaseConfig,
        save_dir,
        embedding_model_name="all-MiniLM-L6-v2-precomputed",
        retrieval_top_k=TOP,
    )
    hr, index_s = offline.index_for_retrieval(lambda: Recorded(global_config=cfg), docs, queries)

    # the graph: vertices (kind, content) and every igraph edge with its weight
    names, contents, kinds = offline.save_edges(hr.graph, WORK / "official_edges.npz")
    graph = {
        **graph_counts(hr, names, kinds, steps),
        "index_seconds": index_s,
        "import_seconds": import_s,
    }

    def one(q):
        """The body of `HippoRAG.retrieve`'s loop for one question (minus its logging)."""
        scores = hr.get_fact_scores(q)
        idx, facts, _ = hr.rerank_facts(q, scores)
        if len(facts) == 0:
            return hr.dense_passage_retrieval(q), facts
        return hr.graph_search_with_fact_entities(
            query=q,
            link_top_k=hr.global_config.linking_top_k,
            query_fact_scores=scores,
            top_k_facts=facts,
            top_k_fact_indices=idx,
            passage_node_weight=hr.global_config.passage_node_weight,
        ), facts

    for q in queries[:5]:  # warm-up
        one(q)
    times = offline.median_ms(one, queries, REPEATS)

    # an untimed pass that also keeps the reset vector each PPR was given (the seeds)
    resets, _ = offline.recording_resets(hr)
    ent_index = [i for i, k in enumerate(kinds) if k == "entity"]
    rows = []
    for q in queries:
        resets.clear()
        ranked, facts = one(q)
        rows.append(offline.question_row(ranked, facts, resets, contents, ent_index, TOP))
    out = {
        "hash_seed": os.environ.get("PYTHONHASHSEED"),
        "graph": graph,
        "questions": rows,
        "ms": times,
        "threads": {
            k: os.environ.get(k)
            for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        },
        "versions": package_versions(VERSIONS),
    }
    (WORK / f"official_{os.environ.get('PYTHONHASHSEED', 'random')}.json").write_text(
        json.dumps(out), encoding="utf-8"
    )
    print(json.dumps(graph))
    return 0


def recording_class(base: type, steps: dict) -> type:
    """The official class; its graph-building steps also note in `steps` what they added (read
    only)."""

    class Recorded(base):
        def add_fact_edges(self, chunk_ids, chunk_triples):
            super().add_fact_edges(chunk_ids, chunk_triples)
            steps.setdefault("fact", dict(self.node_to_node_stats))

        def add_passage_edges(self, chunk_ids, chunk_triple_entities):
            before = set(self.node_to_node_stats)
            n = super().add_passage_edges(chunk_ids, chunk_triple_entities)
            steps.setdefault("passage", [k for k in self.node_to_node_stats if k not in before])
            return n

        def add_synonymy_edges(self):
            self.node_to_node_stats = RecordingDict(self.node_to_node_stats)
            super().add_synonymy_edges()
            steps.setdefault("synonym", list(self.node_to_node_stats.set_keys))
            self.node_to_node_stats = dict(self.node_to_node_stats)

    return Recorded


def graph_counts(hr, names: list, kinds: list, steps: dict) -> dict:
    """The official graph's counts, and the pairs each edge step added (from `steps`)."""
    g = hr.graph
    ent_keys = {n for n, k in zip(names, kinds) if k == "entity"}
    fact_pairs = {frozenset(k) for k in steps["fact"] if k[0] != k[1]}
    syn_pairs = {frozenset(k) for k in steps["synonym"]}
    return {
        "vertices": g.vcount(),
        "edges": g.ecount(),
        "entities": len(ent_keys),
        "passages": len(names) - len(ent_keys),
        "facts": len(hr.fact_node_keys),
        "fact_pairs": len(fact_pairs),
        "synonym_pairs": len(syn_pairs),
        "directed_synonym_entries": len(set(steps["synonym"])),
        "fact_and_synonym_pairs": len(fact_pairs & syn_pairs),
        "passage_entity_edges": len(steps["passage"]),
        "graph_info": hr.get_graph_info(),
    }


if __name__ == "__main__":
    sys.exit(main())
