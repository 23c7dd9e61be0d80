"""Bounded, unordered parallel map over threads, for work that waits on a server (LLM calls).

At most 2 x n items are in flight, so memory stays bounded on any number of items. Results are
yielded in the order they finish. On the first failure nothing new starts, the items already
running are finished and yielded, and then the error is raised: work done is never thrown away.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def completed(fn: Callable[[T], R], items: Iterable[T], n: int, name: str = "worker") -> Iterator[R]:
    """fn(item) for every item, n at a time, as they finish (n <= 1: in order, in this thread)."""
    if n <= 1:
        for item in items:
            yield fn(item)
        return
    pending: set[Future] = set()
    queue = iter(items)
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix=name) as pool:
        while True:
            while error is None and len(pending) < 2 * n:
                item = next(queue, _END)
                if item is _END:
                    break
                pending.add(pool.submit(fn, item))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                if fut.cancelled():
                    continue
                exc = fut.exception()
                if exc is None:
                    yield fut.result()
                elif error is None:  # the first failure is the one reported
                    error = exc
                    for queued in pending:
                        queued.cancel()  # not started yet: never starts; running: finished
    if error is not None:
        raise error


_END = object()
