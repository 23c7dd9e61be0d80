"""`completed`: every item once, at most n running, and on a failure the running items are
finished and yielded, the queued ones never start, and the first error is raised."""

from __future__ import annotations

import threading
import time

import pytest

from hopbench.core.concurrency import completed
from tests.helpers.signals import sigint_as_default


def test_every_item_once_at_most_n_running(in_flight):
    out = list(completed(in_flight.wrap(lambda x: x * x, delay=0.002), range(500), 16))
    assert sorted(out) == [x * x for x in range(500)]
    assert in_flight.peak == 16


def test_one_at_a_time_runs_in_order_in_this_thread():
    threads = []
    out = list(completed(lambda x: threads.append(threading.get_ident()) or x, range(5), 1))
    assert out == list(range(5)) and set(threads) == {threading.get_ident()}


def test_a_failure_finishes_the_running_items_and_starts_no_more():
    started: list[int] = []
    slow_may_finish = threading.Event()

    def fn(x):
        started.append(x)
        if x == 0:
            slow_may_finish.wait(5)  # still running when item 1 fails
            return "slow"
        if x == 1:
            slow_may_finish.set()
            raise RuntimeError("first")
        time.sleep(0.05)
        return x

    got = []
    with pytest.raises(RuntimeError, match="first"):
        for value in completed(fn, range(1000), 2):
            got.append(value)
    assert "slow" in got  # running when the failure came: kept
    assert len(started) <= 4  # 2 x n queued at most: the rest never started
    assert set(got) <= set(started) - {1} | {"slow"}


def test_a_consumer_that_stops_early_leaves_the_queued_items_unstarted():
    started: list[int] = []

    def fn(x):
        started.append(x)
        time.sleep(0.02 if x == 0 else 0.5)
        return x

    with pytest.raises(RuntimeError, match="consumer"):
        for _ in completed(fn, range(100), 4):
            raise RuntimeError("consumer")
    # item 0's result stops the consumer: the 3 others running and at most the one item 0's
    # worker took next are run (the old loop ran all 8 it had queued)
    assert len(started) <= 5, started


CTRL_C = """
import faulthandler, os, signal, sys, threading, time
faulthandler.dump_traceback_later(25)  # a hang prints every thread's stack before the timeout
from hopbench.core.concurrency import completed
started, got = [], []
def fn(x):
    started.append(x)
    if x == 0:
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    time.sleep(1.0)
    return x
try:
    for v in completed(fn, range(100), 3):
        got.append(v)
except KeyboardInterrupt:
    print("interrupted", sorted(started), sorted(got))
"""


def test_ctrl_c_keeps_the_running_items_and_starts_no_more(child_env):
    """Run in a child process: the SIGINT must not reach pytest itself."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", CTRL_C],
        capture_output=True,
        text=True,
        timeout=30,
        env=child_env,
        preexec_fn=sigint_as_default,  # also when the tests run as a background job
    )
    assert "interrupted" in out.stdout, out.stderr
    assert "finishing the 3 worker(s) still running" in out.stderr
    started, got = out.stdout.split("interrupted ", 1)[1].strip().split("] [")
    # the three running at Ctrl-C were finished and yielded; the three queued never started
    assert started.strip("[]") == got.strip("[]") == "0, 1, 2"
