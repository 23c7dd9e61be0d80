"""Worker-side pieces for running the official `hipporag==2.0.0a4` package offline, shared by
the HippoRAG worker, its index-timing worker and the CatRAG worker (CatRAG's code is a HippoRAG
fork): the stand-ins for its models, the save folder it indexes into, and what is read back from
its graph. Imports the standard library and numpy only (both are in every authors' venv that
runs hipporag); the package itself is imported by the callers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

LLM_NAME = "bypassed"  # the llm_name of the OpenIE file the driver writes


class NoLLM:
    """The LLM client: never asked; a call raises, naming what must not use it."""

    def __init__(self, purpose: str):
        self.purpose = purpose

    def infer(self, *args, **kwargs):
        raise RuntimeError(f"the LLM was called: {self.purpose} must not use it")


class FilterBypassed:
    """The DSPy recognition filter, bypassed: the candidate facts are kept as they are."""

    def __init__(self, hipporag):
        pass

    def __call__(self, query, candidate_items, candidate_indices, len_after_rerank=None):
        n = len(candidate_items) if len_after_rerank is None else len_after_rerank
        return candidate_indices[:n], candidate_items[:n], {"bypassed": True}


class FilterNeverCalled(FilterBypassed):
    """The DSPy filter where only indexing runs: constructed by __init__, a call raises."""

    def __call__(self, query, candidate_items, candidate_indices, len_after_rerank=None):
        raise RuntimeError("the fact filter was called while indexing")


def precomputed_vectors(npz: Path) -> type:
    """An embedding-model class for the package that looks up the vectors hopbench computed
    (`npz`: `texts`, `vectors`); an unknown text raises, so both sides embed the same texts."""

    class PrecomputedVectors:
        def __init__(self, global_config=None, embedding_model_name=None):
            z = np.load(npz, allow_pickle=False)
            self.table = {str(t): i for i, t in enumerate(z["texts"])}
            self.vectors = z["vectors"].astype(np.float32)
            self.embedding_dim = self.vectors.shape[1]

        def batch_encode(self, texts, instruction=None, norm=True, **kwargs):
            if isinstance(texts, str):
                texts = [texts]
            missing = [t for t in texts if str(t) not in self.table]
            if missing:
                raise KeyError(
                    f"{len(missing)} texts have no precomputed vector, e.g. {missing[:3]!r}"
                )
            return self.vectors[[self.table[str(t)] for t in texts]]

    return PrecomputedVectors


def replace_models(module, embedding_class: type, llm, fact_filter: type | None = None) -> None:
    """Point the package module's model look-ups (and its DSPy filter, if given) at stand-ins."""
    module._get_embedding_model_class = lambda embedding_model_name=None: embedding_class
    module._get_llm_class = lambda config: llm
    if fact_filter is not None:
        module.DSPyFilter = fact_filter


def openie_save_dir(work: Path, save_dir: Path, *, cold: bool = False) -> Path:
    """The package's save folder, holding a link to the driver's OpenIE file (so indexing reads
    the triples instead of asking an LLM). `cold`: the folder must not exist yet."""
    save_dir.mkdir(parents=True, exist_ok=not cold)
    name = f"openie_results_ner_{LLM_NAME}.json"
    if not (save_dir / name).exists():
        os.symlink(work / name, save_dir / name)
    return save_dir


def openie_config(config_class: type, save_dir: Path, **settings):
    """The package's config for indexing from the OpenIE file in `save_dir`, from scratch, with
    nothing written back to it; `settings` (embedding model name, top k, ...) added."""
    return config_class(
        save_dir=str(save_dir),
        llm_name=LLM_NAME,
        openie_mode="online",
        force_index_from_scratch=True,
        force_openie_from_scratch=False,
        save_openie=False,
        **settings,
    )


def hash_seed_dir(work: Path, prefix: str) -> Path:
    """WORK/<prefix>_<PYTHONHASHSEED>: one save folder per hash seed, so runs under two seeds
    (set iteration order differs) do not share an index."""
    return work / f"{prefix}_{os.environ.get('PYTHONHASHSEED', 'random')}"


def index_for_retrieval(make: Callable, docs: list, queries: list):
    """The package's object made by `make()` and indexed on `docs` (both timed, as the index
    figures count them), then what its `retrieve` does before the first question (the
    retrieval objects, the queries' embeddings); returns the object and the seconds."""
    t0 = time.perf_counter()
    rag = make()
    rag.index(docs)
    index_s = time.perf_counter() - t0
    rag.prepare_retrieval_objects()
    rag.get_query_embeddings(queries)
    return rag, index_s


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


def question_row(ranked, facts, resets: list, contents: list, ent_index: list, top: int) -> dict:
    """What a worker records of one question: its `top` passages and scores (`ranked`: ids,
    scores), the facts kept, the seeds of its last PPR, and whether it fell back to dense
    retrieval (no PPR ran)."""
    ids, scores = ranked
    return {
        "top": [int(i) for i in ids[:top]],
        "scores": [float(s) for s in scores[:top]],
        "facts": [str(tuple(f)) for f in facts],
        "seeds": seeds_from(resets, contents, ent_index),
        "dense": not resets,
    }


def median_ms(one: Callable, items: Sequence, repeats: int) -> list[float]:
    """`repeats` passes over `items`, calling `one` on each; an item's time is its median, in
    milliseconds (passes, not repeats in place, so no item is timed only while warm)."""
    times: list[list[float]] = [[] for _ in items]
    for _ in range(repeats):
        for i, item in enumerate(items):
            t = time.perf_counter()
            one(item)
            times[i].append(1000 * (time.perf_counter() - t))
    return [float(np.median(t)) for t in times]
