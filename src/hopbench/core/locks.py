"""Exclusive work on a shared folder across processes: an flock the kernel drops when the process dies.

Runs (one process per run folder) and knowledge-graph builds (one build per graph, however many
Hydra jobs need it) take one; whoever comes second waits, then finds the work done.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from contextlib import contextmanager
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.private import private_opener

log = logging.getLogger(__name__)


class Busy(Exception):
    """Raised by `exclusive(wait=False)` when another process holds the lock."""


@contextmanager
def exclusive(lock_path: str | Path, what: str, wait: bool = True):
    """Hold `lock_path` for the block. The holder's pid is written in the file so that the one who
    waits can say whom it waits for; the lock itself is the flock, not the file."""
    lock_path = Path(lock_path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(lock_path, "a+", encoding="utf-8", opener=private_opener)
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            if not wait:
                raise Busy(f"{what} is being computed by {holder}") from None
            log.warning("%s is being computed by %s; waiting for it to finish", what, holder)
            fcntl.flock(fh, fcntl.LOCK_EX)
        except OSError as exc:  # ENOLCK, EOPNOTSUPP, ENOSYS: a file system without flock
            raise HopbenchError(
                f"cannot lock {lock_path}: its file system does not support flock "
                f"({exc.strerror}); put runs and caches on a local disk, NFS, or "
                "Lustre mounted with -o flock (docs/run.md, 'Shared storage')"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
        fh.flush()
        yield
    finally:
        fh.close()  # closing the descriptor releases the flock
