"""The digest of the embedding model's files, for a run's protocol card (hopbench.core.protocol_card).

Why: "the same embedder" by name is not the same weights (a re-release, a quantised copy), and
the embedder moves recall by points. The digest covers every file of the model folder hopbench
loads (weights, config, tokenizer), each by its relative path and sha256. Hashing 90 MB takes
about a second, so the result is cached in `<cache_dir>/models/weights_digests.json`, keyed by
the folder and checked against each file's size and modification time.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from hopbench.core.atomic import write_json

log = logging.getLogger(__name__)

CACHE_FILE = "weights_digests.json"
_CHUNK = 8 << 20


def _files(model_dir: Path) -> list[Path]:
    return sorted(p for p in model_dir.rglob("*") if p.is_file())


def _stamp(model_dir: Path, files: list[Path]) -> list[list]:
    """What a cached digest is checked against: each file's path, size and mtime."""
    out = []
    for p in files:
        st = p.stat()
        out.append([p.relative_to(model_dir).as_posix(), st.st_size, st.st_mtime_ns])
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def folder_digest(model_dir: Path) -> str:
    """'sha256:<hex>' over one line '<relative path> <sha256>' per file, in path order."""
    h = hashlib.sha256()
    for p in _files(model_dir):
        h.update(f"{p.relative_to(model_dir).as_posix()} {_sha256(p)}\n".encode())
    return "sha256:" + h.hexdigest()


def weights_digest(model_dir: str | Path, cache_dir: str | Path | None = None) -> str:
    """The folder's digest, from the cache when no file changed since it was computed."""
    model_dir = Path(model_dir).resolve()
    stamp = _stamp(model_dir, _files(model_dir))
    cache = Path(cache_dir) / "models" / CACHE_FILE if cache_dir else None
    known = _read(cache)
    entry = known.get(str(model_dir))
    if isinstance(entry, dict) and entry.get("files") == stamp and entry.get("digest"):
        return str(entry["digest"])
    digest = folder_digest(model_dir)
    if cache is not None:
        known[str(model_dir)] = {"files": stamp, "digest": digest}
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            write_json(cache, known)
        except OSError as exc:  # a read-only cache: computed again next time
            log.warning("%s: could not cache the embedder's digest (%s)", cache, exc)
    return digest


def _read(cache: Path | None) -> dict:
    if cache is None or not cache.is_file():
        return {}
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a damaged cache file is only a cache: computed again and rewritten
    return data if isinstance(data, dict) else {}
