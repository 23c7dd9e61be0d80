"""Child processes that end with their parent, however the parent ends (kill -9 included).

Why: the spaCy pool's workers and the joblib launcher's job processes each hold a loaded model
(over a gigabyte); a parent killed with SIGKILL cannot stop them, and they went on computing,
unowned, for minutes. Each arms itself at start (`die_with_parent`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent_pid: int, poll_seconds: float = 0.5, use_prctl: bool = True) -> str:
    """Make this (child) process end when `parent_pid`, its parent, ends, however it ends.

    On Linux the kernel sends SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG; the signal
    comes when the thread that forked this process exits, so fork from a long-lived thread).
    Elsewhere, or if prctl fails, a daemon thread exits the process once it is re-parented. A
    parent that died before this ran is caught by the getppid check. Returns the mechanism used
    ("prctl" or "watcher"; `use_prctl=False` forces the watcher).
    """
    how = "watcher"
    if use_prctl and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                how = "prctl"
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(1)
    if how == "watcher":
        threading.Thread(
            target=_watch_parent,
            args=(parent_pid, poll_seconds),
            daemon=True,
            name="die-with-parent",
        ).start()
    return how


def _watch_parent(parent_pid: int, poll_seconds: float) -> None:
    while os.getppid() == parent_pid:
        time.sleep(poll_seconds)
    os._exit(1)
