"""The extraction step of a build: the configured extractor over every passage, resumable.

Each passage's record is appended to a content-addressed log (`kg/extraction.py`) as soon as it
exists, so an interrupted build (an LLM extractor can take hours) resumes where it stopped.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from tqdm import tqdm

from hopbench.core.errors import HopbenchError
from hopbench.core.progress import LLMProgress
from hopbench.data.schema import Passage
from hopbench.kg.cache_keys import extraction_key
from hopbench.kg.extraction import ExtractionLog, PassageExtraction
from hopbench.kg.llm_extractor import LLMExtractor
from hopbench.kg.openie_file import OpenIEFileExtractor
from hopbench.kg.spacy_extractor import SpacyExtractor
from hopbench.kg.stage_timing import cpu_seconds

log = logging.getLogger(__name__)


def make_extractor(settings: dict, llm=None, concurrency: int = 1):
    if settings["extractor"] == "spacy":
        s = settings["spacy"]
        return SpacyExtractor(
            model=s["model"],
            batch_size=int(s["batch_size"]),
            n_process=int(s["n_process"]),
            resolve_pronouns=bool(s["resolve_pronouns"]),
        )
    if settings["extractor"] == "openie":
        return OpenIEFileExtractor(settings["openie"]["path"])
    if llm is None:
        raise HopbenchError(
            "graph.extractor=llm needs an LLM; add llm=local (or llm=openai / llm=server)"
        )
    s = settings["llm_extraction"]
    return LLMExtractor(
        llm,
        max_tokens_ner=int(s["max_tokens_ner"]),
        max_tokens_triples=int(s["max_tokens_triples"]),
        concurrency=concurrency,
    )


def extract_corpus(corpus: list[Passage], extractor, cache_dir) -> dict[str, PassageExtraction]:
    """The extraction records of `corpus` from the cache that builds use (extracting what is missing)."""
    key = extraction_key(corpus, extractor)
    return run_extraction(
        corpus, extractor, Path(cache_dir) / "kg" / "extractions" / f"{key}.jsonl"
    )


def run_extraction(
    corpus: list[Passage], extractor, log_path: Path, timings: dict | None = None
) -> dict[str, PassageExtraction]:
    """Extract every passage not yet in the log, appending each record as soon as it exists."""
    t, c = time.perf_counter(), cpu_seconds()
    store = ExtractionLog(log_path)
    todo = [p for p in corpus if p.id not in store]
    if len(todo) < len(corpus):
        log.info(
            "resuming extraction: %d of %d passages already in %s",
            len(corpus) - len(todo),
            len(corpus),
            log_path,
        )
    expected = {p.id for p in todo}
    if not todo:
        store.close()
        if timings is not None:
            timings["extract"], timings["extract_passages"] = time.perf_counter() - t, 0
            timings["cpu_extract"] = cpu_seconds() - c
        return store.records
    failed = [0]
    try:
        with (
            tqdm(
                total=len(todo), desc="extracting", unit="passage", disable=None, leave=False
            ) as bar,
            LLMProgress(bar, getattr(extractor, "llm", None), extra=lambda: f"failed {failed[0]}"),
        ):
            for rec in extractor.extract(todo):
                if rec.passage_id not in expected:
                    raise HopbenchError(
                        f"extractor returned an unknown passage id {rec.passage_id!r}"
                    )
                store.append(rec)
                failed[0] += rec.status == "failed"
                bar.update()
    finally:
        store.close()
    if timings is not None:
        timings["extract"] = time.perf_counter() - t
        timings["cpu_extract"] = cpu_seconds() - c
        timings["extract_passages"] = len(todo)
    return store.records
