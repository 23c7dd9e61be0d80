"""Times the official HippoRAG 2 package's (`hipporag==2.0.0a4`) cold index build; started by
`index_build.py` inside the virtual environment of compare.py's recipe. Not part of hopbench:
it imports no hopbench module, and hopbench never imports it.

    PYTHONPATH=<repository> <venv>/bin/python -m benchmarks.parity.hipporag.index_worker WORK_DIR SAVE_DIR

WORK_DIR holds what the driver wrote: `docs.json` (passage texts, corpus order),
`openie_results_ner_bypassed.json` (the triples, HippoRAG 2 OpenIE format) and
`index_config.json` (the embedding model's path, the embedding batch size). SAVE_DIR must not
exist (a cold build: no embedding store, no graph pickle); the OpenIE file is symlinked into it.
Writes `SAVE_DIR/official_index.json`: wall and CPU seconds per stage, peak RSS, graph counts,
versions and threads.

What is replaced, and only that (as in worker.py):
* vllm, gritlm and litellm are imported by the package at module level but never called
  offline: empty placeholder modules stand in for them (a call would raise);
* the embedding model: all-MiniLM-L6-v2 through sentence-transformers on the CPU (the package
  has no class for it), a real model: every text the index embeds is encoded here;
* the LLM client and the DSPy fact filter: never called while indexing (the OpenIE file holds
  every passage's triples, so `batch_openie` is not reached).
Everything from `HippoRAG.__init__` to `save_igraph` is the package's own code; the stages are
timed by wrapping its methods and module functions (names read from the 2.0.0a4 source), which
adds a few microseconds per call and changes nothing they compute.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

T_PROCESS = time.perf_counter()

from benchmarks.common.shims import install_placeholders

install_placeholders(purpose="the offline benchmark")

from benchmarks.common import hipporag_offline as offline
from benchmarks.common.versions import THREAD_VARS, package_versions, thread_settings

WORK = Path(sys.argv[1])
SAVE = Path(sys.argv[2])
CONFIG = json.loads((WORK / "index_config.json").read_text(encoding="utf-8"))
VERSIONS = (
    "hipporag",
    "torch",
    "sentence-transformers",
    "transformers",
    "igraph",
    "numpy",
    "pandas",
    "pyarrow",
)


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (as hopbench's builder counts)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Stages:
    """Wall and CPU seconds per stage, summed over calls."""

    def __init__(self):
        self.data: dict[str, dict] = {}

    def add(self, name: str, wall: float, cpu: float) -> None:
        d = self.data.setdefault(name, {"wall": 0.0, "cpu": 0.0, "calls": 0})
        d["wall"] += wall
        d["cpu"] += cpu
        d["calls"] += 1

    def wrap(self, owner, attr: str, name, after=None, before=None):
        """Replace owner.attr by a timed call of it; `name` a string or f(args) -> string;
        `before(args)` / `after(args, result)` run outside the timed window."""
        fn = getattr(owner, attr)

        def timed(*args, **kwargs):
            if before is not None:
                before(args)
            w, c = time.perf_counter(), cpu_seconds()
            result = fn(*args, **kwargs)
            self.add(
                name(args) if callable(name) else name, time.perf_counter() - w, cpu_seconds() - c
            )
            if after is not None:
                after(args, result)
            return result

        timed.__wrapped__ = fn
        setattr(owner, attr, timed)


STAGES = Stages()
CURRENT_NAMESPACE = [
    "?"
]  # the EmbeddingStore whose insert_strings is running (names the encode stage)


class SentenceTransformerModel:
    """all-MiniLM-L6-v2 as an official embedding-model class: `batch_encode` of the base class's
    signature, batches of `global_config.embedding_batch_size`, float32, normalised by default."""

    def __init__(self, global_config=None, embedding_model_name=None):
        from sentence_transformers import SentenceTransformer

        self.global_config = global_config
        self.embedding_model_name = embedding_model_name
        self.batch_size = int(global_config.embedding_batch_size)
        self.model = SentenceTransformer(CONFIG["model_path"], device="cpu")
        if CONFIG.get("max_seq_length"):
            self.model.max_seq_length = int(CONFIG["max_seq_length"])
        get_dim = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        self.embedding_dim = int(get_dim())

    def batch_encode(self, texts, instruction=None, norm=True, **kwargs):
        import numpy as np

        if isinstance(texts, str):
            texts = [texts]
        w, c = time.perf_counter(), cpu_seconds()
        out = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=norm,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        STAGES.add(f"encode_{CURRENT_NAMESPACE[0]}", time.perf_counter() - w, cpu_seconds() - c)
        return np.asarray(out, dtype=np.float32)


# the stages that partition index() (the others are inside one of them)
TOP_STAGES = [
    "insert_chunk",
    "load_existing_openie",
    "reformat_openie_results",
    "text_processing",
    "extract_entity_nodes",
    "flatten_facts",
    "insert_entity",
    "insert_fact",
    "add_fact_edges",
    "add_passage_edges",
    "add_synonymy_edges",
    "augment_graph",
    "save_igraph",
]


def main() -> int:
    w, c = time.perf_counter(), cpu_seconds()
    import hipporag  # noqa: F401  (its __init__ binds the name HippoRAG to the class)
    from hipporag.embedding_store import EmbeddingStore
    from hipporag.utils.config_utils import BaseConfig

    H = sys.modules["hipporag.HippoRAG"]  # the module, whose global names the patches replace
    imports = {"wall": time.perf_counter() - w, "cpu": cpu_seconds() - c}

    offline.replace_models(
        H,
        SentenceTransformerModel,
        offline.NoLLM("indexing from an OpenIE file"),
        offline.FilterNeverCalled,
    )
    sizes = time_the_stages(H, EmbeddingStore)

    docs = json.loads((WORK / "docs.json").read_text(encoding="utf-8"))
    offline.openie_save_dir(WORK, SAVE, cold=True)  # a cold build: nothing of a previous one
    cfg = offline.openie_config(
        BaseConfig,
        SAVE,
        embedding_model_name="sentence-transformers/all-MiniLM-L6-v2",
        embedding_batch_size=int(CONFIG["embedding_batch_size"]),
    )

    w, c = time.perf_counter(), cpu_seconds()
    hr = H.HippoRAG(global_config=cfg)
    init = {"wall": time.perf_counter() - w, "cpu": cpu_seconds() - c}
    w, c = time.perf_counter(), cpu_seconds()
    hr.index(docs)
    index = {"wall": time.perf_counter() - w, "cpu": cpu_seconds() - c}
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    stages = {
        k: {"wall": round(v["wall"], 4), "cpu": round(v["cpu"], 4), "calls": v["calls"]}
        for k, v in STAGES.data.items()
    }
    other = {
        k: index[k] - sum(stages.get(s, {}).get(k, 0.0) for s in TOP_STAGES)
        for k in ("wall", "cpu")
    }
    graph = graph_counts(hr, sizes)
    out = {
        "imports": imports,
        "init": init,
        "index": index,
        "other": other,
        "total": {k: init[k] + index[k] for k in ("wall", "cpu")},
        "stages": stages,
        "top_stages": TOP_STAGES,
        "process_wall_to_end": time.perf_counter() - T_PROCESS,
        "peak_rss_mib": round(peak_rss_mib, 1),
        "graph": graph,
        "embedding_batch_size": cfg.embedding_batch_size,
        "model_path": CONFIG["model_path"],
        "versions": package_versions(VERSIONS, python=True),
        "threads": thread_settings((*THREAD_VARS, "PYTHONHASHSEED")),
    }
    (SAVE / "official_index.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(json.dumps({"total": out["total"], "graph": graph}))
    return 0


def time_the_stages(H, EmbeddingStore) -> dict[str, int]:
    """Wraps the methods of HippoRAG and EmbeddingStore and the module functions `index` calls
    so that STAGES times them; returns the dict that will hold len(node_to_node_stats) after
    each edge step (read outside the timing)."""
    sizes: dict[str, int] = {}
    marks: dict[str, tuple[float, float]] = {}

    def set_namespace(args):
        CURRENT_NAMESPACE[0] = args[0].namespace

    STAGES.wrap(
        EmbeddingStore, "insert_strings", lambda a: f"insert_{a[0].namespace}", before=set_namespace
    )
    for name in (
        "load_existing_openie",
        "add_fact_edges",
        "add_passage_edges",
        "add_synonymy_edges",
        "augment_graph",
        "add_new_nodes",
        "add_new_edges",
        "get_graph_info",
        "save_igraph",
    ):
        after = None
        if name in ("add_fact_edges", "add_passage_edges", "add_synonymy_edges"):

            def after(args, result, name=name):
                sizes[name] = len(args[0].node_to_node_stats)

        STAGES.wrap(H.HippoRAG, name, name, after=after)

    # text_processing runs once per passage in a comprehension between these two calls: its time is
    # the gap from reformat_openie_results' return to extract_entity_nodes' call (no per-call wrapper)
    def mark_end(args, result):
        marks["reformat_end"] = (time.perf_counter(), cpu_seconds())

    def gap(args):
        t, cp = marks["reformat_end"]
        STAGES.add("text_processing", time.perf_counter() - t, cpu_seconds() - cp)

    STAGES.wrap(H, "reformat_openie_results", "reformat_openie_results", after=mark_end)
    STAGES.wrap(H, "extract_entity_nodes", "extract_entity_nodes", before=gap)
    STAGES.wrap(H, "flatten_facts", "flatten_facts")
    STAGES.wrap(H, "retrieve_knn", "retrieve_knn")
    return sizes


def graph_counts(hr, sizes: dict[str, int]) -> dict:
    """The built graph's counts, and the edges each step added (from `sizes`)."""
    g = hr.graph
    names = g.vs["name"]
    n_entities = sum(n.startswith("entity-") for n in names)
    loops = sum(a == b for a, b in hr.node_to_node_stats)  # only fact triples make them
    simple = g.copy()
    simple.simplify(multiple=True, loops=True)
    return {
        "vertices": g.vcount(),
        "edges": g.ecount(),
        "entities": n_entities,
        "passages": len(names) - n_entities,
        "facts": len(hr.fact_embedding_store.hash_ids),
        "node_pairs": simple.ecount(),
        "fact_pairs": (sizes["add_fact_edges"] - loops) // 2,
        "passage_entity_edges": sizes["add_passage_edges"] - sizes["add_fact_edges"],
        "synonym_new_directed_entries": sizes["add_synonymy_edges"] - sizes["add_passage_edges"],
        "embedded": {
            ns: len(getattr(hr, f"{ns}_embedding_store").hash_ids)
            for ns in ("chunk", "entity", "fact")
        },
    }


if __name__ == "__main__":
    sys.exit(main())
