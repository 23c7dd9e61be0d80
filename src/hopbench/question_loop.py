"""The question loop of a run: one question at a time, or up to N at once for LLM-bound runs.

Why threads: an LLM-bound question spends nearly all its time waiting for the server, and a
server (llama.cpp with several slots, vLLM, an API) answers many requests at once. Each
question's retrieval and reading stay in one thread, so its LLM cost is counted per question
(`LLMClient.cost_scope`), and its row is appended as soon as it is scored, in whatever order
questions finish: resume, de-duplication and metrics never depend on the order. At most
2 x N questions are in flight, so memory stays bounded on any number of questions.
A fatal error (server gone, database down) stops the loop: the questions still running are
waited for and kept, nothing new starts, and the error reaches the caller
(`hopbench.concurrency.completed`).
"""

from __future__ import annotations

import time
from typing import Callable

from tqdm import tqdm

from hopbench.concurrency import completed
from hopbench.progress import LLMProgress


def run_questions(todo: list, answer_one: Callable, on_row: Callable[[dict], None], *,
                  concurrency: int = 1, desc: str = "", show: bool = True, llm=None) -> float:
    """Call `answer_one(q) -> row` for every question, `on_row(row)` in this thread as each
    finishes; return the loop's wall seconds (for throughput)."""
    start = time.perf_counter()
    with tqdm(total=len(todo), desc=desc, disable=not show, unit="q") as bar, LLMProgress(bar, llm):
        for row in completed(answer_one, todo, concurrency, name="question"):
            on_row(row)
            bar.update()
    return time.perf_counter() - start
