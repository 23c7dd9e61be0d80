"""spaCy extraction in worker processes that end with their parent.

Why a pool of our own rather than `nlp.pipe(n_process=...)`: spaCy's workers outlive a parent
killed with SIGKILL (they block forever on a queue whose other end they hold themselves); ours
are armed to die with it (hopbench.core.lifetime). Each worker runs the very same `extract_stream`
on the same batches as a single process does, so the records are identical.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from hopbench.core.errors import HopbenchError
from hopbench.core.lifetime import die_with_parent
from hopbench.core.text_bounds import cut_for_spacy
from hopbench.data.schema import Passage
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.spacy_pipeline import load_pipeline
from hopbench.kg.spacy_rules import doc_to_extraction
from hopbench.kg.text import clean_text


def extract_stream(
    nlp, passages: list[Passage], batch_size: int, resolve_pronouns: bool
) -> Iterator[PassageExtraction]:
    """One record per passage as soon as it is parsed (the build logs each one: resumable)."""
    # cut_for_spacy: past spaCy's own maximum a text is cut (it would raise), not parsed whole
    texts = (cut_for_spacy(clean_text(p.text)) for p in passages)
    docs = nlp.pipe(texts, batch_size=batch_size)
    for p, doc in zip(passages, docs):
        yield doc_to_extraction(p, doc, resolve_pronouns)


def extract_in_workers(
    passages: list[Passage], model: str, batch_size: int, n_process: int, resolve_pronouns: bool
) -> Iterator[PassageExtraction]:
    """Batches of `batch_size` passages on `n_process` worker processes, results in input order
    (the module docstring says why the pool is ours)."""
    load_pipeline(
        model
    )  # loaded before forking: forked workers inherit it instead of loading it again
    batches = [passages[i : i + batch_size] for i in range(0, len(passages), batch_size)]
    # fork (spaCy's own choice on Linux) from this thread; spawn where fork is not safe
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(n_process, len(batches)),
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(), model),
    )
    n = len(batches)
    try:
        for records in pool.map(_worker_extract, batches, [batch_size] * n, [resolve_pronouns] * n):
            yield from records
    except BrokenProcessPool as exc:
        raise HopbenchError(
            f"a spaCy worker process died ({exc}); was it killed or out of memory? "
            "Rerunning resumes the extraction where it stopped"
        ) from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_WORKER: dict = {}


def _worker_init(parent_pid: int, model: str) -> None:
    die_with_parent(parent_pid)
    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl-C is the parent's to handle (it shuts us down)
    _WORKER["nlp"] = load_pipeline(model)  # inherited when forked, loaded when spawned


def _worker_extract(
    passages: list[Passage], batch_size: int, resolve_pronouns: bool
) -> list[PassageExtraction]:
    return list(extract_stream(_WORKER["nlp"], passages, batch_size, resolve_pronouns))
