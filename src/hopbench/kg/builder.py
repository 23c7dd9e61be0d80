"""Build (or load from cache) the KnowledgeGraph of a dataset's corpus.

    kg = load_or_build(dataset, cfg.graph, encoder=encoder, llm=llm, cache_dir=cfg.paths.cache_dir)

Two cache levels, both content-addressed:

* ``<cache>/kg/extractions/<corpus+extractor hash>.jsonl``: one extraction record per passage,
  appended as produced, so an interrupted build resumes where it stopped;
* ``<cache>/kg/graphs/<graph hash>/``: the finished graph (see `store`); the hash covers the
  corpus, the extractor and its model, the embedding model and the graph settings.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from hopbench.data.schema import Dataset, Passage
from hopbench.errors import HopbenchError
from hopbench.kg.description_layer import add_description_layer, encode_descriptions
from hopbench.kg.descriptions import default_description, llm_description
from hopbench.kg.encoding import encode_unique, short_text_batches
from hopbench.kg.extraction import ExtractionLog, PassageExtraction
from hopbench.kg.graph import KnowledgeGraph
from hopbench.kg.llm_extractor import LLMExtractor, client_identity, is_passage_failure
from hopbench.kg.openie_file import OpenIEFileExtractor
from hopbench.kg.settings import resolve_settings, semantic_settings
from hopbench.kg.spacy_extractor import SpacyExtractor
from hopbench.kg.store import FORMAT_VERSION, is_complete, load_graph, save_graph
from hopbench.kg.synonyms import synonym_matrix
from hopbench.kg.text import clean_text, first_mention, normalize_name, split_sentences
from hopbench.locks import exclusive
from hopbench.private import private_umask
from hopbench.progress import LLMProgress

log = logging.getLogger(__name__)

BUILD_VERSION = 1  # bump when assembly changes what a graph contains


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8", "replace")).hexdigest()


def corpus_hash(corpus: list[Passage]) -> str:
    """Passage ids are content hashes of title + text, so this changes with any passage or order."""
    seen: set[str] = set()
    for p in corpus:
        if p.id in seen:
            raise HopbenchError(f"corpus: passage id {p.id!r} ({p.title!r}) occurs twice; "
                                "passages must be unique (title + text)")
        seen.add(p.id)
    return hashlib.sha256("\n".join(p.id for p in corpus).encode()).hexdigest()


def make_extractor(settings: dict, llm=None, concurrency: int = 1):
    if settings["extractor"] == "spacy":
        s = settings["spacy"]
        return SpacyExtractor(model=s["model"], batch_size=int(s["batch_size"]), n_process=int(s["n_process"]),
                              resolve_pronouns=bool(s["resolve_pronouns"]))
    if settings["extractor"] == "openie":
        return OpenIEFileExtractor(settings["openie"]["path"])
    if llm is None:
        raise HopbenchError("graph.extractor=llm needs an LLM; add llm=local (or llm=openai / llm=server)")
    s = settings["llm_extraction"]
    return LLMExtractor(llm, max_tokens_ner=int(s["max_tokens_ner"]), max_tokens_triples=int(s["max_tokens_triples"]),
                        concurrency=concurrency)


def cache_keys(corpus: list[Passage], settings: dict, extractor, encoder, llm=None) -> tuple[str, str, dict]:
    """(extraction key, graph key, the inputs that produced them) for this corpus and settings."""
    inputs = {
        "corpus": corpus_hash(corpus),
        "extractor": extractor.identity(),
        "embedding": encoder.identity,
        "synonym": settings["synonym"],
        "description": settings["description"],
        "build_version": BUILD_VERSION,
        "format_version": FORMAT_VERSION,
    }
    with short_text_batches(encoder, settings["short_text_batch_size"]):
        short_identity = encoder.identity
    if short_identity != inputs["embedding"]:
        # int8 backends: names and facts are batched differently from passages, and their
        # vectors depend on the batching (Encoder.identity); fp32 backends keep their hash
        inputs["embedding_short_texts"] = short_identity
    if settings["description"]["embedding"] == "text":
        # the default before the setting existed: graphs built then keep their hash
        inputs["description"] = {k: v for k, v in settings["description"].items() if k != "embedding"}
    if settings["construction"] != "hopbench":  # graphs of the default keep their hash
        inputs["construction"] = settings["construction"]
    if settings["description"]["source"] == "llm":
        inputs["description_llm"] = client_identity(llm) if llm is not None else None
    extraction_key = _sha({"corpus": inputs["corpus"], "extractor": inputs["extractor"]})[:24]
    graph_key = _sha(inputs)[:24]
    return extraction_key, graph_key, inputs


def extract_corpus(corpus: list[Passage], extractor, cache_dir) -> dict[str, PassageExtraction]:
    """The extraction records of `corpus` from the cache that builds use (extracting what is missing)."""
    key = _sha({"corpus": corpus_hash(corpus), "extractor": extractor.identity()})[:24]
    return run_extraction(corpus, extractor, Path(cache_dir) / "kg" / "extractions" / f"{key}.jsonl")


def load_or_build(dataset: Dataset, graph_cfg=None, *, encoder, llm=None, cache_dir, extractor=None,
                  concurrency: int = 1, descriptions: bool = True) -> KnowledgeGraph:
    """The graph of `dataset.corpus` for these settings: from cache if it exists, else built and saved.

    `extractor` overrides the one named by `graph_cfg.extractor` (tests and benchmarks use it);
    `concurrency`: passages sent to the LLM at once by `graph.extractor=llm` (the run's setting);
    `descriptions`: the caller reads `description_embeddings` (`Retriever.needs_descriptions`);
    False leaves them to the first caller that does (kg/description_layer.py).
    """
    t0 = time.perf_counter()
    private_umask()  # graph folders and files are the user's only (hopbench.private)
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
                return _build(dataset, corpus, settings, extractor, encoder, llm, ext_key, graph_key,
                              inputs, root, folder, t0, descriptions)
    kg = load_graph(folder)
    kg.manifest["cache_hit"] = True
    if descriptions and kg.description_embeddings is None:
        with exclusive(lock, f"knowledge graph {graph_key}"):
            add_description_layer(kg, folder, encoder, settings)
    log.info("knowledge graph %s loaded from %s in %.1fs", graph_key, folder, time.perf_counter() - t0)
    return kg


def _build(dataset, corpus, settings, extractor, encoder, llm, ext_key, graph_key, inputs, root,
           folder, t0, descriptions: bool = True) -> KnowledgeGraph:
    log.info("building knowledge graph %s for %s (%d passages, extractor %s)", graph_key, dataset.name,
             len(corpus), settings["extractor"])
    timings: dict[str, float] = {}
    # an extractor that reads a file (graph=openie) refuses another corpus's file before any work
    check = getattr(extractor, "check_corpus", None)
    extraction_report = check(corpus) if check is not None else None
    # forking spaCy workers while a torch thread runs risks a deadlocked child: no overlap then
    overlap = settings["overlap_passage_embedding"] and not (
        settings["extractor"] == "spacy" and int(settings["spacy"]["n_process"]) > 1)
    pool = ThreadPoolExecutor(max_workers=1) if overlap else None
    try:
        passage_future: Future | None = None
        if pool is not None:
            passage_future = pool.submit(_encode_passages, encoder, corpus, timings)
        records = run_extraction(corpus, extractor, root / "extractions" / f"{ext_key}.jsonl", timings)
        passage_emb = passage_future.result() if passage_future else _encode_passages(encoder, corpus, timings)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    kg = assemble_graph(corpus, records, encoder, settings, passage_emb, llm=llm, timings=timings,
                        descriptions=descriptions)
    kg.manifest.update({
        "graph_key": graph_key, "extraction_key": ext_key, "inputs": inputs,
        "settings": semantic_settings(settings), "dataset": dataset.name,
        "build_seconds": time.perf_counter() - t0, "timings": timings,
    })
    if extraction_report is not None:
        kg.manifest["extraction_report"] = extraction_report
    with _timed(timings, "save"):  # after the manifest is written: in memory only
        save_graph(kg, folder)
    kg.manifest["cache_hit"] = False
    log.info("knowledge graph %s: %d entities, %d facts, %d passages (%d failed) in %.1fs", graph_key,
             kg.n_entities, kg.n_facts, kg.n_passages, len(kg.failed_passages), time.perf_counter() - t0)
    return kg


def _encode_passages(encoder, corpus: list[Passage], timings: dict) -> np.ndarray:
    """Exactly the texts `Services.passage_embeddings` encodes, so both share one cache entry."""
    with _timed(timings, "embed_passages"):
        return encoder.encode([clean_text(p.content) for p in corpus], desc="passages")


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (spaCy workers count once joined)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def _timed(timings: dict, stage: str):
    """Record wall seconds as `stage` and CPU seconds as `cpu_<stage>`: on a shared machine the
    CPU figure is the one that says what the stage costs (wall time depends on the load)."""
    t, c = time.perf_counter(), _cpu_seconds()
    try:
        yield
    finally:
        timings[stage] = time.perf_counter() - t
        timings[f"cpu_{stage}"] = _cpu_seconds() - c


def run_extraction(corpus: list[Passage], extractor, log_path: Path, timings: dict | None = None
                   ) -> dict[str, PassageExtraction]:
    """Extract every passage not yet in the log, appending each record as soon as it exists."""
    t, c = time.perf_counter(), _cpu_seconds()
    store = ExtractionLog(log_path)
    todo = [p for p in corpus if p.id not in store]
    if len(todo) < len(corpus):
        log.info("resuming extraction: %d of %d passages already in %s", len(corpus) - len(todo),
                 len(corpus), log_path)
    expected = {p.id for p in todo}
    if not todo:
        store.close()
        if timings is not None:
            timings["extract"], timings["extract_passages"] = time.perf_counter() - t, 0
            timings["cpu_extract"] = _cpu_seconds() - c
        return store.records
    failed = [0]
    try:
        with tqdm(total=len(todo), desc="extracting", unit="passage", disable=None, leave=False) as bar, \
                LLMProgress(bar, getattr(extractor, "llm", None), extra=lambda: f"failed {failed[0]}"):
            for rec in extractor.extract(todo):
                if rec.passage_id not in expected:
                    raise HopbenchError(f"extractor returned an unknown passage id {rec.passage_id!r}")
                store.append(rec)
                failed[0] += rec.status == "failed"
                bar.update()
    finally:
        store.close()
    if timings is not None:
        timings["extract"] = time.perf_counter() - t
        timings["cpu_extract"] = _cpu_seconds() - c
        timings["extract_passages"] = len(todo)
    return store.records


def assemble_graph(corpus: list[Passage], records: dict[str, PassageExtraction], encoder, settings: dict,
                   passage_emb: np.ndarray, llm=None, timings: dict | None = None,
                   descriptions: bool = True) -> KnowledgeGraph:
    """Normalise names, intern entities, deduplicate facts, build the three matrices and embeddings.

    `settings["construction"]` hipporag2: HippoRAG 2's own construction instead (kg/hipporag2.py).
    `descriptions` False: text-mode description vectors are deferred (kg/description_layer.py)."""
    timings = {} if timings is None else timings
    if settings.get("construction", "hopbench") == "hipporag2":
        from hopbench.kg.hipporag2 import assemble_hipporag2

        return assemble_hipporag2(corpus, records, encoder, settings, passage_emb,
                                  describe_and_embed=describe_and_embed, llm=llm, timings=timings,
                                  descriptions=descriptions)
    t = time.perf_counter()
    index: dict[str, int] = {}
    labels: list[str] = []
    first_seen: list[tuple[int, str]] = []  # (passage index, surface form) of each entity's first mention
    ctx_rows: list[int] = []
    ctx_cols: list[int] = []
    title_entity = np.full(len(corpus), -1, dtype=np.int64)
    facts: dict[tuple[int, str, int, int], None] = {}
    failed: list[str] = []
    n_empty = 0

    def intern(surface: str, p: int) -> int | None:
        name = normalize_name(surface)
        if not name:
            return None
        i = index.get(name)
        if i is None:
            i = index[name] = len(labels)
            labels.append(" ".join(surface.split()))
            first_seen.append((p, surface))
        return i

    for p_idx, passage in enumerate(corpus):
        rec = records.get(passage.id)
        if rec is None:
            raise HopbenchError(f"no extraction record for passage {passage.id} ({passage.title!r})")
        if rec.status != "ok":
            failed.append(passage.id)
        if not passage.text.strip():
            n_empty += 1
        ents: set[int] = set()
        t_idx = intern(clean_text(passage.title).strip(), p_idx)
        if t_idx is not None:
            title_entity[p_idx] = t_idx
            ents.add(t_idx)
        for surface in rec.entities:
            i = intern(surface, p_idx)
            if i is not None:
                ents.add(i)
        for s, r, o in rec.triples:
            si, oi = intern(s, p_idx), intern(o, p_idx)
            rel = " ".join(r.lower().split())
            if si is None or oi is None or si == oi or not rel:
                continue
            ents.update((si, oi))
            facts.setdefault((si, rel, oi, p_idx), None)
        for e in sorted(ents):
            ctx_rows.append(p_idx)
            ctx_cols.append(e)

    names = list(index)
    n_ent, n_pas = len(names), len(corpus)
    fact_list = list(facts)
    f_s = np.array([f[0] for f in fact_list], dtype=np.int64)
    f_r = [f[1] for f in fact_list]
    f_o = np.array([f[2] for f in fact_list], dtype=np.int64)
    f_p = np.array([f[3] for f in fact_list], dtype=np.int64)

    context = sp.csr_matrix((np.ones(len(ctx_rows), dtype=np.float32), (ctx_rows, ctx_cols)),
                            shape=(n_pas, n_ent))
    context.sum_duplicates()
    context.data[:] = 1.0
    rel_rows = np.concatenate([f_s, f_o])
    rel_cols = np.concatenate([f_o, f_s])
    relation = sp.csr_matrix((np.ones(len(rel_rows), dtype=np.float32), (rel_rows, rel_cols)),
                             shape=(n_ent, n_ent))
    relation.sum_duplicates()
    relation.sort_indices()
    timings["assemble"] = time.perf_counter() - t

    fact_texts = [f"{names[s]} {r} {names[o]}" for s, r, o in zip(f_s, f_r, f_o)]
    entity_descriptions, entity_emb, fact_emb, desc_emb = describe_and_embed(
        corpus, names, labels, first_seen, f_s, f_r, f_o, fact_texts, encoder, settings,
        passage_emb, llm, timings, descriptions)

    syn = settings["synonym"]
    with _timed(timings, "synonyms"):
        synonym = synonym_matrix(entity_emb, names, threshold=float(syn["threshold"]),
                                 max_neighbors=int(syn["max_neighbors"]),
                                 min_alnum_chars=int(syn["min_alnum_chars"]))

    manifest = {
        "counts": {"entities": n_ent, "passages": n_pas, "facts": len(fact_list),
                   "relation_edges": int(relation.nnz // 2), "synonym_edges": int(synonym.nnz // 2),
                   "context_edges": int(context.nnz), "failed_passages": len(failed),
                   "empty_passages": n_empty, "unique_fact_texts": len(set(fact_texts)),
                   "llm_descriptions": timings.pop("llm_descriptions", 0),
                   "llm_description_failures": timings.pop("llm_description_failures", 0)},
    }
    if desc_emb is None:
        manifest["description_embeddings"] = "deferred"
    return KnowledgeGraph(
        entity_names=names, entity_labels=labels, entity_descriptions=entity_descriptions,
        passage_ids=[p.id for p in corpus], fact_subject=f_s, fact_relation=f_r, fact_object=f_o,
        fact_passage=f_p, entity_embeddings=entity_emb, description_embeddings=desc_emb,
        passage_embeddings=passage_emb, fact_embeddings=fact_emb, relation=relation, synonym=synonym,
        context=context, passage_title_entity=title_entity, failed_passages=failed, manifest=manifest,
    )


def composed_description_embeddings(entity_emb: np.ndarray, fact_emb: np.ndarray, passage_emb: np.ndarray,
                                    described_facts: list[list[int]], first_passage: np.ndarray) -> np.ndarray:
    """`graph.description.embedding: composed`: each entity's description vector is the
    L2-normalised mean of vectors the build has already computed for the description's parts:
    the entity name, its (up to max_facts) described facts and the passage of its first mention.

    Why: encoding ~59k description texts is ~2M word pieces on 2Wiki, most of a cold build; the
    parts are encoded anyway (names, facts, passages), so composing them costs one sparse product.
    """
    n_ent, n_fact = len(entity_emb), len(fact_emb)
    rows, cols = [np.arange(n_ent)], [np.arange(n_ent)]
    for e, fs in enumerate(described_facts):
        if fs:
            rows.append(np.full(len(fs), e))
            cols.append(n_ent + np.asarray(fs, dtype=np.int64))
    rows.append(np.arange(n_ent))
    cols.append(n_ent + n_fact + np.asarray(first_passage, dtype=np.int64))
    r, c = np.concatenate(rows), np.concatenate(cols)
    parts = sp.csr_matrix((np.ones(len(r), dtype=np.float32), (r, c)),
                          shape=(n_ent, n_ent + n_fact + len(passage_emb)))
    stacked = np.vstack([entity_emb, fact_emb.reshape(-1, entity_emb.shape[1]),
                         passage_emb]).astype(np.float32, copy=False)
    out = np.asarray(parts @ stacked, dtype=np.float32)  # the sum; normalising makes it the mean's direction
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _describe(corpus, names, labels, first_seen, f_s, f_r, f_o, cfg: dict, llm, timings: dict
              ) -> tuple[list[str], list[list[int]]]:
    """(description text per entity, indices of the facts it describes, subject-facts first)."""
    t = time.perf_counter()
    max_facts, max_chars = int(cfg["max_facts"]), int(cfg["max_chars"])
    # facts per entity, subject-facts first, in corpus order
    per_entity: list[list[str]] = [[] for _ in names]
    fact_ids: list[list[int]] = [[] for _ in names]
    counts = np.zeros(len(names), dtype=np.int64)
    for f, (s, r, o) in enumerate(zip(f_s, f_r, f_o)):
        counts[s] += 1
        counts[o] += 1
        if len(per_entity[s]) < max_facts:
            per_entity[s].append(f"{labels[s]} {r} {labels[o]}")
            fact_ids[s].append(f)
    for f, (s, r, o) in enumerate(zip(f_s, f_r, f_o)):
        if len(per_entity[o]) < max_facts:
            per_entity[o].append(f"{labels[s]} {r} {labels[o]}")
            fact_ids[o].append(f)
    sentence_cache: dict[int, list[str]] = {}
    out: list[str] = []
    sentences_of: list[str | None] = []
    for e, (p_idx, surface) in enumerate(first_seen):
        sents = sentence_cache.get(p_idx)
        if sents is None:
            sents = sentence_cache[p_idx] = split_sentences(clean_text(corpus[p_idx].text))
        sentence = first_mention(sents, [surface, labels[e]])
        if sentence is None and normalize_name(corpus[p_idx].title) == names[e] and sents:
            sentence = sents[0]  # a title rarely appears verbatim; the lead sentence is about it
        sentences_of.append(sentence)
        out.append(default_description(labels[e], per_entity[e], sentence, max_chars))
    if cfg["source"] == "llm":
        if llm is None:
            raise HopbenchError("graph.description.source=llm needs an LLM; add llm=local (or openai/server)")
        done = failed = 0
        for e in tqdm(np.flatnonzero(counts >= int(cfg["llm_min_facts"])), desc="describing", disable=None,
                      leave=False):
            try:
                out[e] = llm_description(llm, labels[e], per_entity[e], sentences_of[e], max_chars,
                                         max_tokens=int(cfg["llm_max_tokens"]))
                done += 1
            except Exception as exc:
                if not is_passage_failure(exc):
                    raise  # server down: stop (the LLM cache keeps what was done)
                failed += 1  # keep the default description, count the failure
                log.warning("LLM description failed for %r: %s", labels[e], exc)
        timings["llm_descriptions"] = done
        timings["llm_description_failures"] = failed
    timings["describe"] = time.perf_counter() - t
    return out, fact_ids


def describe_and_embed(corpus, names, labels, first_seen, f_s, f_r, f_o, fact_texts, encoder,
                       settings: dict, passage_emb: np.ndarray, llm, timings: dict,
                       embed_descriptions: bool = True):
    """Entity descriptions and the embeddings of names, facts and descriptions: the same for
    every graph construction. (descriptions, entity_emb, fact_emb, desc_emb); desc_emb is None
    when text-mode description vectors are deferred (`embed_descriptions` False)."""
    descriptions, described_facts = _describe(corpus, names, labels, first_seen, f_s, f_r, f_o,
                                              settings["description"], llm, timings)
    with short_text_batches(encoder, settings["short_text_batch_size"]):
        with _timed(timings, "embed_entities"):
            entity_emb = encoder.encode(names, desc="entities")
        with _timed(timings, "embed_facts"):
            fact_emb = encode_unique(encoder, fact_texts, "facts")
        desc_emb = None  # text mode, deferred: made by the first retriever that reads them
        if settings["description"]["embedding"] == "composed":
            with _timed(timings, "embed_descriptions"):
                desc_emb = composed_description_embeddings(
                    entity_emb, fact_emb, passage_emb, described_facts,
                    np.array([p for p, _ in first_seen], dtype=np.int64))
        elif embed_descriptions:
            with _timed(timings, "embed_descriptions"):
                desc_emb = encode_descriptions(encoder, descriptions, settings)
    return descriptions, entity_emb, fact_emb, desc_emb
