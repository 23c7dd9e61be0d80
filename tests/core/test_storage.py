"""What hopbench claims about the storage under runs and caches (docs/run.md, 'Shared storage'):
the file system is read from the real mount table, the response cache leaves WAL for a rollback
journal on network file systems, that mode works with several writers, and a file system without
flock, or one whose flock other nodes do not see, is named in one line.

No NFS or Lustre server is available here: their mount lines are parsed from text, and the
rollback-journal cache is exercised by real processes on the local disk."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest

import hopbench.core.storage as storage
from hopbench.core.errors import HopbenchError
from hopbench.core.locks import exclusive
from hopbench.llm.cache import ResponseCache

MOUNTINFO = textwrap.dedent("""\
    27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
    40 27 0:50 / /shared rw,relatime shared:1 - nfs4 srv:/export rw,vers=4.2,hard,proto=tcp
    41 27 0:51 / /shared/old rw,relatime - nfs srv:/old rw,vers=3,local_lock=all
    42 27 0:52 / /lustre rw - lustre 10.0.0.1@tcp:/fs rw,flock
    43 27 0:53 / /lustre_noflock rw - lustre 10.0.0.1@tcp:/fs rw,localflock
    44 27 0:54 / /mnt/my\\040share rw - cifs //srv/share rw,vers=3.0
    45 27 0:55 / /scratch rw - tmpfs tmpfs rw
""")


def test_the_mount_holding_a_path_is_the_deepest_one():
    mounts = storage.parse_mountinfo(MOUNTINFO)
    assert storage.mount_of("/shared/runs/x", mounts)[1] == "nfs4"
    assert storage.mount_of("/shared/old/cache", mounts)[1] == "nfs"
    assert storage.mount_of("/sharedX/a", mounts)[1] == "ext4"
    assert storage.mount_of("/mnt/my share/cache", mounts)[1] == "cifs"
    assert storage.mount_of("/var/u/.cache", mounts)[1] == "ext4"


@pytest.mark.parametrize(
    "path, journal, warned",
    [
        ("/var/u/.cache/hopbench", "WAL", None),
        ("/scratch/cache", "WAL", None),
        ("/shared/cache", "DELETE", None),  # NFSv4: flock is cluster-wide
        ("/shared/old/cache", "DELETE", "mounted with local_lock"),  # NFS with local locks
        ("/lustre/cache", "DELETE", None),  # -o flock
        ("/lustre_noflock/cache", "DELETE", "mounted without -o flock"),
        ("/mnt/my share/cache", "DELETE", "not seen by other machines"),
    ],
)
def test_journal_mode_and_warning_per_file_system(monkeypatch, path, journal, warned):
    mounts = storage.parse_mountinfo(MOUNTINFO)
    monkeypatch.setattr(storage, "filesystem", lambda p: storage.mount_of(p, mounts)[1:])
    assert storage.journal_mode_for(path + "/llm/responses.sqlite") == journal
    warning = storage.storage_warning(path, "the cache folder")
    if warned is None:
        assert warning is None
    else:
        assert warned in warning and path in warning and "\n" not in warning


def test_a_real_tmpfs_mount_is_recognised(tmp_path):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    point = tmp_path / "mnt"
    point.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(point)]).returncode
        != 0
    ):
        pytest.skip("mount is not permitted here")
    try:
        assert (
            storage.filesystem(point / "cache" / "llm")[0] == "tmpfs"
        )  # not created yet: its parent
        assert storage.filesystem(tmp_path)[0] != "tmpfs" or os.path.ismount(tmp_path)
        cache = ResponseCache(point / "llm" / "responses.sqlite")
        assert cache._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        cache.close()
    finally:
        subprocess.run(["umount", str(point)], check=True)


WRITER = textwrap.dedent("""
    import sys
    import hopbench.core.storage as storage
    storage.filesystem = lambda p: ("nfs4", "rw")    # as on an NFS mount
    from hopbench.llm.cache import CachedResponse, ResponseCache
    cache = ResponseCache(sys.argv[1])
    mode = cache._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "delete", mode
    for i in range(200):
        cache.put(f"{sys.argv[2]}-{i}", "m", {"i": i}, CachedResponse(f"reply {i}", 1, 1, 0.0))
    cache.close()
""")


def test_the_rollback_journal_cache_takes_writers_from_several_processes(tmp_path, child_env):
    db = tmp_path / "llm" / "responses.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), name],
            env=child_env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b", "c")
    ]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errs
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 600
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert not db.with_name(db.name + "-wal").exists()
    conn.close()


def test_a_file_system_without_flock_is_one_clear_line(tmp_path, monkeypatch):
    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_flock)
    lock = tmp_path / ".run.lock"
    with pytest.raises(HopbenchError) as info, exclusive(lock, "run x"):
        pass
    msg = str(info.value)
    assert msg.startswith(
        f"cannot lock {lock}: its file system does not support flock (No locks available)"
    )
    assert "\n" not in msg
