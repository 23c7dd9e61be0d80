"""Bounded, unordered parallel map over threads, for work that waits on a server (LLM calls).

At most 2 x n items are in flight, so memory stays bounded on any number of items. Results are
yielded in the order they finish. On the first failure nothing new starts, the items already
running are finished and yielded, and then the error is raised: work done is never thrown away.
Ctrl-C is such a failure (a second one stops the wait), and a consumer that stops early (an
error in its own code) leaves the queued items unstarted: threads cannot be killed, so only
the running ones are waited for.
"""

from __future__ import annotations

import logging
import queue
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("hopbench.core.concurrency")


def completed(
    fn: Callable[[T], R], items: Iterable[T], n: int, name: str = "worker"
) -> Iterator[R]:
    """fn(item) for every item, n at a time, as they finish (n <= 1: in order, in this thread).

    Workers hand their results over a queue: waiting on the queue costs the same with 2 or 128
    items in flight (`concurrent.futures.wait` locks every pending future on every call)."""
    if n <= 1:
        for item in items:
            yield fn(item)
        return
    done: queue.SimpleQueue = queue.SimpleQueue()

    def work(item):
        try:
            done.put((True, fn(item)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            done.put((False, exc))

    source = iter(items)
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix=name) as pool:
        # the futures not done yet, for cancelling after a failure; each leaves the set as it
        # finishes (scanning every pending future on every result cost O(n) per result)
        waiting: set[Future] = set()

        def cancel_queued() -> int:
            """Not started yet: never starts (and never reports); running: finished, kept."""
            return sum(f.cancel() for f in list(waiting))

        in_flight = 0
        try:
            while True:
                while error is None and in_flight < 2 * n:
                    item = next(source, _END)
                    if item is _END:
                        break
                    f = pool.submit(work, item)
                    waiting.add(f)
                    f.add_done_callback(waiting.discard)  # set.discard is atomic under the GIL
                    in_flight += 1
                if in_flight == 0:
                    break
                try:
                    ok, value = done.get()
                except KeyboardInterrupt as exc:  # Ctrl-C: stop as on a failure; again: stop now
                    if error is not None:
                        raise
                    error = exc
                    in_flight -= cancel_queued()
                    log.warning(
                        "interrupted: finishing the %d %s(s) still running and keeping "
                        "them (Ctrl-C again to stop without them)",
                        in_flight,
                        name,
                    )
                    continue
                in_flight -= 1
                if ok:
                    yield value
                elif error is None:  # the first failure is the one reported
                    error = value
                    in_flight -= cancel_queued()
        finally:  # also when the consumer stopped early: nothing queued starts after it
            cancel_queued()
    if error is not None:
        raise error


_END = object()
