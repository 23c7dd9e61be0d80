"""What the folder a cache or the runs live on can do: local disk, or a file system shared by nodes.

hopbench relies on two things from it: `flock` (one process per run, per graph build, per
report folder; `hopbench.core.locks`) and, for the LLM response cache, SQLite's locking. On a local
file system both work. On a network file system:

- SQLite's WAL mode does not work (it needs shared memory between the processes; SQLite's
  documentation says so), so the response cache uses a rollback journal there
  (`journal_mode_for`), whose POSIX locks NFS carries between nodes;
- `flock` is seen by other nodes only on some: NFS (the Linux client maps it to POSIX locks;
  NFSv4, or v3 with its lock manager), GPFS, CephFS, and Lustre mounted with `-o flock`.
  Lustre without it, `localflock` Lustre, SMB/CIFS, sshfs and other FUSE file systems keep
  locks on one machine: sharing the folder between nodes there could compute a run twice or
  interleave its rows, so `storage_warning` says so (once per folder, in the log).

The type comes from /proc/self/mountinfo (Linux); elsewhere it is "unknown" and treated as local.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

NETWORK_FS = (
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "lustre",
    "gpfs",
    "beegfs",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "9p",
    "afs",
    "ocfs2",
    "gfs2",
)
# network file systems whose flock other nodes see (Lustre only when mounted with -o flock)
SHARED_LOCKS = ("nfs", "nfs4", "gpfs", "ceph", "ocfs2", "gfs2")


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def parse_mountinfo(text: str) -> list[tuple[str, str, str]]:
    """(mount point, file system type, mount and super-block options) per line of mountinfo."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, rest = left.split(), right.split()
        if len(fields) < 6 or len(rest) < 2:
            continue
        options = fields[5] + ("," + rest[2] if len(rest) > 2 else "")
        mounts.append((_unescape(fields[4]), rest[0], options))
    return mounts


def mount_of(path: str | Path, mounts: list[tuple[str, str, str]]) -> tuple[str, str, str] | None:
    """The mount holding `path` (the longest mount point above it; the last one mounted wins)."""
    p = os.path.realpath(path)
    best = None
    for m in mounts:
        point = m[0].rstrip("/") or "/"
        if p == point or p.startswith(point.rstrip("/") + "/") or point == "/":
            if best is None or len(point) >= len(best[0].rstrip("/") or "/"):
                best = m
    return best


def _existing(path: str | Path) -> Path:
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def filesystem(path: str | Path) -> tuple[str, str]:
    """(type, options) of the file system `path` is (or will be) on; ("unknown", "") off Linux."""
    try:
        text = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown", ""
    m = mount_of(_existing(path), parse_mountinfo(text))
    return (m[1], m[2]) if m else ("unknown", "")


def is_network(fstype: str) -> bool:
    return fstype in NETWORK_FS or fstype.split(".")[0] in NETWORK_FS


def journal_mode_for(path: str | Path) -> str:
    """SQLite journal mode for a database at `path`: WAL on local disks, a rollback journal
    (DELETE) on network file systems, where WAL does not work."""
    return "DELETE" if is_network(filesystem(path)[0]) else "WAL"


def storage_warning(path: str | Path, what: str) -> str | None:
    """One line when `path` is on a network file system whose flock other nodes do not see."""
    fstype, options = filesystem(path)
    if not is_network(fstype):
        return None
    opts = set(options.split(","))
    if fstype == "lustre" and "flock" in opts:
        return None
    if fstype in SHARED_LOCKS and "local_lock=all" not in opts and "local_lock=flock" not in opts:
        return None
    why = (
        "mounted without -o flock"
        if fstype == "lustre"
        else "mounted with local_lock"
        if fstype in SHARED_LOCKS
        else "its locks are not seen by other machines"
    )
    return (
        f"{what} {path} is on {fstype} ({why}): use it from one machine only, or give each node "
        "its own folder (see docs/run.md, 'Shared storage')"
    )


@lru_cache(maxsize=64)
def warn_once(path: str, what: str) -> None:
    if warning := storage_warning(path, what):
        log.warning("%s", warning)
