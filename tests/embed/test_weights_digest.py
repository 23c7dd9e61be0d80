"""The embedder's weights digest: every file of its folder, cached, recomputed when one changes."""

from __future__ import annotations

import hashlib
import os

from hopbench.embed import weights_digest as wd


def _model(tmp_path):
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "1_Pooling" / "config.json").write_text("{}")
    return folder


def test_the_digest_covers_each_file_by_path_and_sha256(tmp_path):
    folder = _model(tmp_path)
    lines = "".join(
        f"{name} {hashlib.sha256(data).hexdigest()}\n"
        for name, data in (("1_Pooling/config.json", b"{}"), ("model.safetensors", b"weights"))
    )
    expected = "sha256:" + hashlib.sha256(lines.encode()).hexdigest()
    assert wd.weights_digest(folder) == wd.folder_digest(folder) == expected


def test_it_is_cached_until_a_file_changes(tmp_path, monkeypatch):
    folder, cache = _model(tmp_path), tmp_path / "cache"
    first = wd.weights_digest(folder, cache)
    assert (cache / "models" / wd.CACHE_FILE).is_file()
    calls = []
    real = wd.folder_digest
    monkeypatch.setattr(wd, "folder_digest", lambda d: calls.append(d) or real(d))
    assert wd.weights_digest(folder, cache) == first and calls == []
    (folder / "model.safetensors").write_bytes(b"other weights")
    st = (folder / "model.safetensors").stat()
    os.utime(folder / "model.safetensors", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    second = wd.weights_digest(folder, cache)
    assert second != first and len(calls) == 1


def test_a_damaged_cache_file_is_recomputed(tmp_path):
    folder, cache = _model(tmp_path), tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / wd.CACHE_FILE).write_text("{not json")
    assert wd.weights_digest(folder, cache) == wd.folder_digest(folder)
