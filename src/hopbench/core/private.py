"""One permission model: what hopbench writes is its user's alone (files 0600, folders 0700).

Runs and caches hold every prompt, reply, passage and score; on a machine shared with other
accounts none of it should be readable by them. Rather than choosing a mode at each of the many
places that create files (hopbench's own, but also Hydra's .hydra/ logs, SQLite's -wal/-shm
files, model downloads), a hopbench process runs with umask 077 (`private_umask`, called by the
entry points, `runner.execute`, the graph build and the response cache); the files opened for
appending are also created 0600 explicitly (`private_opener`), and the response cache, whose
-wal/-shm files SQLite creates with the database file's mode, is made 0600 when it is opened.
Folders and files made before this model keep their modes.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_umask() -> None:
    """Add group and other to this process's umask (its children inherit it); stricter bits the
    user already has are kept."""
    old = os.umask(0o077)
    os.umask(old | 0o077)


def private_opener(path: str, flags: int) -> int:
    """`open(..., opener=private_opener)`: a file it creates is 0600 whatever the umask."""
    return os.open(path, flags, FILE_MODE)


def make_private(path: str | Path) -> None:
    """Create `path` empty with mode 0600 if missing; an existing file of ours is set to 0600."""
    path = Path(path)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
    st = path.stat()
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        path.chmod(FILE_MODE)
