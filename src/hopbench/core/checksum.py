"""Checksums of cache files: written with each file, checked before it is used.

Why: a cache file whose bytes changed after it was written (a disk error, a stray write, a
half-copied cache folder) loaded as data, silently: overwritten bytes in an embedding file
changed a run's recall and the run was filed as complete. Each cache now carries the digest of
the bytes it was written with; a file that does not match is never used (an embedding is
encoded again, a graph is refused with the file named, an LLM reply is asked again).

128-bit XXH3 when the `xxhash` package is installed (tens of gigabytes a second: checking a
graph costs a few percent of loading it), else BLAKE2b from the standard library (about fifty
times slower: benchmarks/speed/results/cache_checksums.md). A digest names its algorithm
("xxh3_128:<hex>"; a bare hex digest is BLAKE2b), so either reads what the other wrote.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from pathlib import Path

import numpy as np

from hopbench.core.atomic import atomic_path, write_text

log = logging.getLogger(__name__)

SUFFIX = ".b2"  # the sidecar of a single cache file: `<file>.b2`, the digest in hex
_CHUNK = 1 << 22


try:
    import xxhash
except ImportError:  # pragma: no cover - xxhash is installed with the locked versions
    xxhash = None

ALGORITHM = "xxh3_128" if xxhash is not None else "blake2b"


def _hasher(algorithm: str = ALGORITHM):
    if algorithm == "xxh3_128":
        if xxhash is None:
            raise Damaged(
                Path("?"), "its checksum is XXH3, and the xxhash package is not installed"
            )
        return xxhash.xxh3_128()
    return hashlib.blake2b(digest_size=16)


def _named(h, algorithm: str = ALGORITHM) -> str:
    return h.hexdigest() if algorithm == "blake2b" else f"{algorithm}:{h.hexdigest()}"


def algorithm_of(digest: str) -> str:
    return digest.split(":", 1)[0] if ":" in digest else "blake2b"


def digest_bytes(data: bytes | memoryview, algorithm: str = ALGORITHM) -> str:
    h = _hasher(algorithm)
    h.update(data)
    return _named(h, algorithm)


def digest_text(*parts) -> str:
    """The digest of several values (an LLM cache row's text and numbers), each repr'd; always
    BLAKE2b (rows are small, and the digest must not depend on what is installed)."""
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogateescape"))
        h.update(b"\x00")
    return h.hexdigest()


def digest_file(path: str | Path, algorithm: str = ALGORITHM) -> str:
    h = _hasher(algorithm)
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return _named(h, algorithm)


class Damaged(Exception):
    """A cache file whose bytes do not match the digest written with it (or that has none)."""

    def __init__(self, path: Path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


def sidecar(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def save_npy(path: str | Path, array: np.ndarray) -> None:
    """The array as .npy with its digest beside it. The digest goes first: a kill between the
    two leaves a digest without a file (a miss), never a file without its digest."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    data = buf.getbuffer()
    try:
        write_text(sidecar(path), digest_bytes(data) + "\n")
        with atomic_path(path, suffix=".npy") as tmp, open(tmp, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:  # write() names no file: say which
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def load_npy(path: str | Path) -> np.ndarray:
    """The array of a .npy written by `save_npy`; `Damaged` when its bytes do not match their
    digest, when the digest is missing, or when the bytes are not an array."""
    path = Path(path)
    try:
        data = path.read_bytes()
        want = sidecar(path).read_text(encoding="ascii").strip()
    except FileNotFoundError as exc:
        raise Damaged(path, f"no checksum ({Path(exc.filename).name} is missing)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise Damaged(path, f"unreadable ({exc})") from None
    try:
        ok = digest_bytes(data, algorithm_of(want)) == want
    except Damaged as exc:
        raise Damaged(path, exc.problem) from None
    if not ok:
        raise Damaged(path, "its bytes do not match the checksum written with it")
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:  # cannot happen unless written so
        raise Damaged(path, f"not an array ({exc})") from None


def remove(path: str | Path) -> None:
    """A damaged cache file and its digest, so the recomputed one replaces them."""
    for p in (Path(path), sidecar(path)):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def digests(folder: str | Path, names) -> dict[str, str]:
    """{file name: digest} of the files of a folder (a graph's manifest holds them)."""
    return {name: digest_file(Path(folder) / name) for name in names}


def verify(folder: str | Path, expected: dict[str, str]) -> None:
    """`Damaged` naming the first file of `folder` whose digest is not the expected one."""
    for name, want in expected.items():
        path = Path(folder) / name
        try:
            got = digest_file(path, algorithm_of(want))
        except OSError as exc:
            raise Damaged(path, f"unreadable ({exc.strerror or exc})") from None
        except Damaged as exc:
            raise Damaged(path, exc.problem) from None
        if got != want:
            raise Damaged(path, "its bytes do not match the checksum in the manifest")
