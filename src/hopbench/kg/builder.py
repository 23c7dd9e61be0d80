"""Build (or load from cache) the KnowledgeGraph of a dataset's corpus.

    kg = load_or_build(dataset, cfg.graph, encoder=encoder, llm=llm, cache_dir=cfg.paths.cache_dir)

Two cache levels, both content-addressed:

* ``<cache>/kg/extractions/<corpus+extractor hash>.jsonl``: one extraction record per passage,
  appended as produced, so an interrupted build resumes where it stopped;
* ``<cache>/kg/graphs/<graph hash>/``: the finished graph (see `store`); the hash covers the
  corpus, the extractor and its model, the embedding model and the graph settings.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from hopbench.core.locks import exclusive
from hopbench.core.private import private_umask
from hopbench.core.process_memo import ProcessMemo, file_stamp
from hopbench.data.schema import Dataset
from hopbench.kg.assembly import assemble_graph
from hopbench.kg.cache_keys import cache_keys
from hopbench.kg.description_layer import add_description_layer
from hopbench.kg.extraction_run import make_extractor, run_extraction
from hopbench.kg.graph import KnowledgeGraph
from hopbench.kg.graph_vectors import encode_passages
from hopbench.kg.settings import resolve_settings, semantic_settings
from hopbench.kg.stage_timing import timed
from hopbench.kg.store import is_complete, load_graph, save_graph

log = logging.getLogger(__name__)

# the graphs this process has loaded or built, by folder: the points of a sweep that share a
# graph read it once (hopbench.core.process_memo). One entry: a graph can be hundreds of MB.
LOADED_GRAPHS = ProcessMemo("knowledge graph", max_entries=1)


def load_or_build(
    dataset: Dataset,
    graph_cfg=None,
    *,
    encoder,
    llm=None,
    cache_dir,
    extractor=None,
    concurrency: int = 1,
    descriptions: bool = True,
) -> KnowledgeGraph:
    """The graph of `dataset.corpus` for these settings: from cache if it exists, else built and saved.

    `extractor` overrides the one named by `graph_cfg.extractor` (tests and benchmarks use it);
    `concurrency`: passages sent to the LLM at once by `graph.extractor=llm` (the run's setting);
    `descriptions`: the caller reads `description_embeddings` (`Retriever.needs_descriptions`);
    False leaves them to the first caller that does (kg/description_layer.py).
    """
    t0 = time.perf_counter()
    private_umask()  # graph folders and files are the user's only (hopbench.core.private)
    settings = resolve_settings(graph_cfg)
    extractor = extractor or make_extractor(settings, llm, concurrency)
    corpus = list(dataset.corpus)
    ext_key, graph_key, inputs = cache_keys(corpus, settings, extractor, encoder, llm)
    root = Path(cache_dir) / "kg"
    folder = root / "graphs" / graph_key
    lock = root / "locks" / f"{graph_key}.lock"
    if not is_complete(folder):
        # one build per graph, however many processes (Hydra jobs) need it at once
        with exclusive(lock, f"knowledge graph {graph_key}"):
            if not is_complete(folder):  # else built by the process this one waited for
                kg = _build(
                    dataset,
                    corpus,
                    settings,
                    extractor,
                    encoder,
                    llm,
                    ext_key,
                    graph_key,
                    inputs,
                    root,
                    folder,
                    t0,
                    descriptions,
                )
                LOADED_GRAPHS.put(file_stamp(folder), kg)
                return kg
    kg = LOADED_GRAPHS.find(file_stamp(folder))
    if kg is None:
        kg = load_graph(folder)
        LOADED_GRAPHS.put(file_stamp(folder), kg)
        log.info("knowledge graph %s loaded from %s", graph_key, folder)
    kg.manifest["cache_hit"] = True
    if descriptions and kg.description_embeddings is None:
        with exclusive(lock, f"knowledge graph {graph_key}"):
            add_description_layer(kg, folder, encoder, settings)
    log.info("knowledge graph %s ready in %.1fs", graph_key, time.perf_counter() - t0)
    return kg


def _build(
    dataset,
    corpus,
    settings,
    extractor,
    encoder,
    llm,
    ext_key,
    graph_key,
    inputs,
    root,
    folder,
    t0,
    descriptions: bool = True,
) -> KnowledgeGraph:
    log.info(
        "building knowledge graph %s for %s (%d passages, extractor %s)",
        graph_key,
        dataset.name,
        len(corpus),
        settings["extractor"],
    )
    timings: dict[str, float] = {}
    # an extractor that reads a file (graph=openie) refuses another corpus's file before any work
    check = getattr(extractor, "check_corpus", None)
    extraction_report = check(corpus) if check is not None else None
    # forking spaCy workers while a torch thread runs risks a deadlocked child: no overlap then
    overlap = settings["overlap_passage_embedding"] and not (
        settings["extractor"] == "spacy" and int(settings["spacy"]["n_process"]) > 1
    )
    pool = ThreadPoolExecutor(max_workers=1) if overlap else None
    try:
        passage_future: Future | None = None
        if pool is not None:
            passage_future = pool.submit(encode_passages, encoder, corpus, timings)
        records = run_extraction(
            corpus, extractor, root / "extractions" / f"{ext_key}.jsonl", timings
        )
        passage_emb = (
            passage_future.result() if passage_future else encode_passages(encoder, corpus, timings)
        )
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    kg = assemble_graph(
        corpus,
        records,
        encoder,
        settings,
        passage_emb,
        llm=llm,
        timings=timings,
        descriptions=descriptions,
    )
    kg.manifest.update(
        {
            "graph_key": graph_key,
            "extraction_key": ext_key,
            "inputs": inputs,
            "settings": semantic_settings(settings),
            "dataset": dataset.name,
            "build_seconds": time.perf_counter() - t0,
            "timings": timings,
        }
    )
    if extraction_report is not None:
        kg.manifest["extraction_report"] = extraction_report
    with timed(timings, "save"):  # after the manifest is written: in memory only
        save_graph(kg, folder)
    kg.manifest["cache_hit"] = False
    log.info(
        "knowledge graph %s: %d entities, %d facts, %d passages (%d failed) in %.1fs",
        graph_key,
        kg.n_entities,
        kg.n_facts,
        kg.n_passages,
        len(kg.failed_passages),
        time.perf_counter() - t0,
    )
    return kg
