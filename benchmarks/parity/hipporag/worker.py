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

import numpy as np

WORK = Path(sys.argv[1])
LLM_NAME = "bypassed"
TOP = 20  # passages kept per question (scores too, for the tie analysis)
REPEATS = int(os.environ.get("HOPBENCH_TIMING_REPEATS", "3"))


class PrecomputedVectors:
    """Stands in for HippoRAG's embedding model: the vectors hopbench computed, by text."""

    def __init__(self, global_config=None, embedding_model_name=None):
        z = np.load(WORK / "vectors.npz", allow_pickle=False)
        self.table = {str(t): i for i, t in enumerate(z["texts"])}
        self.vectors = z["vectors"].astype(np.float32)
        self.embedding_dim = self.vectors.shape[1]

    def batch_encode(self, texts, instruction=None, norm=True, **kwargs):
        if isinstance(texts, str):
            texts = [texts]
        missing = [t for t in texts if str(t) not in self.table]
        if missing:
            raise KeyError(f"{len(missing)} texts have no precomputed vector, e.g. {missing[:3]!r}")
        return self.vectors[[self.table[str(t)] for t in texts]]


class NoLLM:
    def infer(self, *args, **kwargs):
        raise RuntimeError("the LLM was called: the offline comparison must not use it")


class FilterBypassed:
    """The DSPy recognition filter, bypassed: the candidate facts are kept as they are."""

    def __init__(self, hipporag):
        pass

    def __call__(self, query, candidate_items, candidate_indices, len_after_rerank=None):
        n = len(candidate_items) if len_after_rerank is None else len_after_rerank
        return candidate_indices[:n], candidate_items[:n], {"bypassed": True}


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
    H._get_embedding_model_class = lambda embedding_model_name=None: PrecomputedVectors
    H._get_llm_class = lambda config: NoLLM()
    H.DSPyFilter = FilterBypassed

    steps: dict = {}

    class Recorded(H.HippoRAG):
        """The official class; the graph-building steps also note what they added (read only)."""

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

    docs = json.loads((WORK / "docs.json").read_text(encoding="utf-8"))
    queries = json.loads((WORK / "queries.json").read_text(encoding="utf-8"))
    save_dir = WORK / f"official_{os.environ.get('PYTHONHASHSEED', 'random')}"
    save_dir.mkdir(parents=True, exist_ok=True)
    openie = save_dir / f"openie_results_ner_{LLM_NAME}.json"
    if not openie.exists():
        os.symlink(WORK / f"openie_results_ner_{LLM_NAME}.json", openie)
    cfg = BaseConfig(
        save_dir=str(save_dir),
        llm_name=LLM_NAME,
        embedding_model_name="all-MiniLM-L6-v2-precomputed",
        openie_mode="online",
        force_index_from_scratch=True,
        force_openie_from_scratch=False,
        save_openie=False,
        retrieval_top_k=TOP,
    )
    t0 = time.perf_counter()
    hr = Recorded(global_config=cfg)
    hr.index(docs)
    index_s = time.perf_counter() - t0
    hr.prepare_retrieval_objects()
    hr.get_query_embeddings(queries)

    # the graph: vertices (kind, content) and every igraph edge with its weight
    g = hr.graph
    names, contents, kinds = save_edges(g, WORK / "official_edges.npz")
    ent_keys = {n for n, k in zip(names, kinds) if k == "entity"}
    fact_pairs = {frozenset(k) for k in steps["fact"] if k[0] != k[1]}
    syn_pairs = {frozenset(k) for k in steps["synonym"]}
    graph = {
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
    times = [
        [] for _ in queries
    ]  # REPEATS passes over the questions; a question's median is its time
    for _ in range(REPEATS):
        for i, q in enumerate(queries):
            t = time.perf_counter()
            (ids, sc), _ = one(q)
            _ = ids[:TOP]
            times[i].append(1000 * (time.perf_counter() - t))
    times = [float(np.median(t)) for t in times]

    # an untimed pass that also keeps the reset vector each PPR was given (the seeds)
    resets, _ = recording_resets(hr)
    ent_index = [i for i, k in enumerate(kinds) if k == "entity"]
    rows = []
    for q in queries:
        resets.clear()
        (ids, sc), facts = one(q)
        seeds = seeds_from(resets, contents, ent_index)
        rows.append(
            {
                "top": [int(i) for i in ids[:TOP]],
                "scores": [float(s) for s in sc[:TOP]],
                "facts": [str(tuple(f)) for f in facts],
                "seeds": seeds,
                "dense": not resets,
            }
        )
    out = {
        "hash_seed": os.environ.get("PYTHONHASHSEED"),
        "graph": graph,
        "questions": rows,
        "ms": times,
        "threads": {
            k: os.environ.get(k)
            for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        },
        "versions": _versions(),
    }
    (WORK / f"official_{os.environ.get('PYTHONHASHSEED', 'random')}.json").write_text(
        json.dumps(out), encoding="utf-8"
    )
    print(json.dumps(graph))
    return 0


def save_edges(g, path: Path) -> tuple[list, list, list]:
    """Every igraph edge with its weight, and each vertex's kind and content, to `path` (what
    the compare script matches against hopbench's graph); returns names, contents, kinds."""
    names, contents = g.vs["name"], g.vs["content"]
    kinds = ["entity" if n.startswith("entity-") else "passage" for n in names]
    el = np.array(g.get_edgelist(), dtype=np.int64).reshape(-1, 2)
    np.savez(
        path,
        src=el[:, 0],
        dst=el[:, 1],
        weight=np.array(g.es["weight"], dtype=np.float64),
        kind=np.array(kinds),
        content=np.array(contents),
    )
    return names, contents, kinds


def recording_resets(owner) -> tuple[list, object]:
    """Wraps `owner.run_ppr` so that every reset vector it is given is kept (a query's seeds);
    returns the list the vectors go to and the unwrapped `run_ppr` (to put back)."""
    resets: list = []
    run_ppr = owner.run_ppr

    def keep_reset(reset_prob, damping=0.5):
        resets.append(np.asarray(reset_prob, dtype=np.float64).copy())
        return run_ppr(reset_prob, damping=damping)

    owner.run_ppr = keep_reset
    return resets, run_ppr


def seeds_from(resets: list, contents: list, ent_index: list) -> dict:
    """Entity name -> weight of the last reset vector's positive entries ({} without PPR)."""
    if not resets:
        return {}
    r = resets[-1]
    return {contents[i]: float(r[i]) for i in ent_index if r[i] > 0}


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for name in ("hipporag", "igraph", "torch", "numpy", "transformers", "tenacity"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


if __name__ == "__main__":
    sys.exit(main())
