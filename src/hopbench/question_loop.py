"""The question loop of a run: one question at a time, or up to N at once for LLM-bound runs.

Why threads: an LLM-bound question spends nearly all its time waiting for the server, and a
server (llama.cpp with several slots, vLLM, an API) answers many requests at once. Each
question's retrieval and reading stay in one thread, so its LLM cost is counted per question
(`LLMClient.cost_scope`), and its row is appended as soon as it is scored, in whatever order
questions finish: resume, de-duplication and metrics never depend on the order. At most
2 x N questions are in flight, so memory stays bounded on any number of questions.
A fatal error (server gone, database down) stops the loop: the questions still running are
waited for and kept, nothing new starts, and the error reaches the caller.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable

from tqdm import tqdm


class LLMProgress:
    """Keeps a progress bar's postfix on the LLM's calls, tokens and cache hits, refreshed from a
    timer thread, so a bar waiting on a slow question still shows the work going on."""

    def __init__(self, bar: tqdm, llm, every_s: float = 2.0):
        self.bar, self.llm, self.every_s = bar, llm, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "LLMProgress":
        if self.llm is not None and not self.bar.disable:
            self._start = self.llm.stats_dict()
            self._thread.start()
        return self

    def refresh(self) -> None:
        now = self.llm.stats_dict()
        delta = {k: now[k] - self._start.get(k, 0) for k in ("llm_calls", "llm_cache_hits",
                                                             "llm_prompt_tokens", "llm_completion_tokens")}
        self.bar.set_postfix_str(f"LLM calls {delta['llm_calls']}, cache hits {delta['llm_cache_hits']}, "
                                 f"tokens {delta['llm_prompt_tokens'] + delta['llm_completion_tokens']}",
                                 refresh=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.refresh()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
            self.refresh()


def run_questions(todo: list, answer_one: Callable, on_row: Callable[[dict], None], *,
                  concurrency: int = 1, desc: str = "", show: bool = True, llm=None) -> float:
    """Call `answer_one(q) -> row` for every question, `on_row(row)` in this thread as each
    finishes; return the loop's wall seconds (for throughput)."""
    start = time.perf_counter()
    with tqdm(total=len(todo), desc=desc, disable=not show, unit="q") as bar, LLMProgress(bar, llm):
        if concurrency <= 1:
            for q in todo:
                on_row(answer_one(q))
                bar.update()
        else:
            _concurrently(todo, answer_one, on_row, concurrency, bar)
    return time.perf_counter() - start


def _concurrently(todo: Iterable, answer_one: Callable, on_row: Callable, n: int, bar: tqdm) -> None:
    pending: set[Future] = set()
    queue = iter(todo)
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="question") as pool:
        while True:
            while error is None and len(pending) < 2 * n:
                q = next(queue, None)
                if q is None:
                    break
                pending.add(pool.submit(answer_one, q))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                if fut.cancelled():
                    continue
                exc = fut.exception()
                if exc is not None:
                    if error is None:  # the first failure is the one reported
                        error = exc
                        for queued in pending:
                            queued.cancel()  # not started yet: never starts; running: kept
                    continue
                on_row(fut.result())
                bar.update()
    if error is not None:
        raise error
