"""The question loop of a run: one question at a time, or up to N at once for LLM-bound runs.

Why threads: an LLM-bound question spends nearly all its time waiting for the server, and a
server (llama.cpp with several slots, vLLM, an API) answers many requests at once. Each
question's retrieval and reading stay in one thread, so its LLM cost is counted per question
(`LLMClient.cost_scope`), and its row is appended as soon as it is scored, in whatever order
questions finish: resume, de-duplication and metrics never depend on the order. At most
2 x N questions are in flight, so memory stays bounded on any number of questions.
A fatal error (server gone, database down) stops the loop: the questions still running are
waited for and kept, nothing new starts, and the error reaches the caller
(`hopbench.core.concurrency.completed`).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable

from tqdm import tqdm

from hopbench.core.concurrency import completed
from hopbench.core.errors import HopbenchError
from hopbench.core.progress import LLMProgress
from hopbench.core.records import COST_KEYS, EVENT_KEYS, LLM_KEYS, QUESTION_CONCURRENCY, Row
from hopbench.evaluate.score import score_question
from hopbench.evaluate.token_budget import NOTES_TOKENS


def run_questions(
    todo: list,
    answer_one: Callable,
    on_row: Callable[[dict], None],
    *,
    concurrency: int = 1,
    desc: str = "",
    show: bool = True,
    llm=None,
) -> float:
    """Call `answer_one(q) -> row` for every question, `on_row(row)` in this thread as each
    finishes; return the loop's wall seconds (for throughput)."""
    start = time.perf_counter()
    with tqdm(total=len(todo), desc=desc, disable=not show, unit="q") as bar, LLMProgress(bar, llm):
        for row in completed(answer_one, todo, concurrency, name="question"):
            on_row(row)
            bar.update()
    return time.perf_counter() - start


def answer(question, *, retriever, reader, dataset, llm, top_k: int, concurrency: int = 1) -> Row:
    """One question: retrieve (timed), read (when a reader is set), score; each part's LLM cost
    goes into its trace as `llm_cost`, and the request keys of its calls as `llm_keys`. The
    retrieval's `llm_cost` also says how many questions were in flight (`concurrency`): a
    request's seconds include the wait for the others, and a resumed run may change it."""
    with cost_scope(llm) as retrieval_scope:
        start = time.perf_counter()
        result = retriever.retrieve(question, top_k)
        latency_ms = 1000 * (time.perf_counter() - start)
    answer_text, reader_trace = None, None
    if reader is not None:
        with cost_scope(llm) as reader_scope:  # the notes are for the answer: the reader pays them
            notes = reader_notes(question, result, retriever, reader, llm)
            passages = [dataset.passage(pid) for pid in result.passage_ids]
            out = (
                reader.answer(question, passages)
                if notes is None
                else reader.answer(question, passages, notes=notes)
            )
        answer_text, reader_trace = (
            out.answer,
            {**(out.trace or {}), "llm_cost": llm_cost(reader_scope), **llm_keys(reader_scope)},
        )
    if retrieval_scope is not None:
        result.trace["llm_cost"] = {**llm_cost(retrieval_scope), QUESTION_CONCURRENCY: concurrency}
        result.trace.update(llm_keys(retrieval_scope))
    return Row.of(
        question,
        result,
        answer=answer_text,
        latency_ms=latency_ms,
        reader_trace=reader_trace,
        metrics=score_question(
            question,
            result.passage_ids,
            answer_text,
            (reader_trace or {}).get(NOTES_TOKENS, 0),  # R@Nt counts them (token_budget)
        ),
    )


def reader_notes(question, result, retriever, reader, llm):
    """The retriever's extra context for a reader with `context_extras` (None otherwise):
    `retriever.reader_context(question, result, llm)`, e.g. QAFD's cluster summaries."""
    if not getattr(reader, "context_extras", False):
        return None
    make = getattr(retriever, "reader_context", None)
    if make is None:
        raise HopbenchError(
            f"reader.context_extras: retriever {type(retriever).__name__} gives no "
            "reader context (flow_diffusion does)"
        )
    return make(question, result, llm)


@contextmanager
def cost_scope(llm):
    """The LLM's per-thread cost counter for the block (None without an LLM)."""
    if llm is None:
        yield None
        return
    with llm.cost_scope() as scope:
        yield scope


def llm_cost(scope) -> dict:
    """LLM calls, tokens, seconds and cache hits counted in one question's `cost_scope`, and its
    failure counters that are not 0 (so rows without any keep the bytes they always had)."""
    d = scope.as_dict()
    cost = {k: round(d[k], 3) if "seconds" in k else d[k] for k in COST_KEYS}
    return {**cost, **{k: d[k] for k in EVENT_KEYS if d.get(k)}}


def llm_keys(scope) -> dict:
    """{"llm_keys": [request key, ...]} of the calls made in one question's `cost_scope`, in the
    order first made (nothing when none, e.g. without an LLM): the response cache entries the
    row depends on, which `hopbench replies export` collects."""
    keys = list(scope.keys) if scope is not None else []
    return {LLM_KEYS: keys} if keys else {}
