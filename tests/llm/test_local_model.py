"""Model assembly and the sha256 gate, on small files (never the 1 GB model)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hopbench.llm import local_model
from hopbench.llm.local_model import (
    QWEN_CODER_1_5B,
    ModelFileError,
    ModelSpec,
    assemble,
    ensure_model,
    locate_parts,
    verify_file,
)


def _parts(tmp_path: Path) -> tuple[list[Path], str]:
    chunks = [b"GGUF" + bytes(range(256)) * 3, b"middle part", b"tail" * 1000]
    paths = []
    for i, c in enumerate(chunks, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(c)
        paths.append(p)
    return paths, hashlib.sha256(b"".join(chunks)).hexdigest()


def test_assemble_concatenates_in_order_and_verifies(tmp_path):
    parts, digest = _parts(tmp_path)
    out = assemble(parts, tmp_path / "models" / "m.gguf", digest)
    assert out.read_bytes() == b"".join(p.read_bytes() for p in parts)
    verify_file(out, digest)


def test_assemble_with_a_damaged_part_leaves_no_file(tmp_path):
    parts, digest = _parts(tmp_path)
    parts[1].write_bytes(b"middle pArt")
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelFileError, match="part packages is damaged"):
        assemble(parts, target, digest)
    assert list(target.parent.iterdir()) == []


def test_sha256_check_rejects_a_corrupted_model_file(tmp_path):
    parts, digest = _parts(tmp_path)
    model = assemble(parts, tmp_path / "m.gguf", digest)
    data = bytearray(model.read_bytes())
    data[100] ^= 0xFF  # one flipped byte
    model.write_bytes(bytes(data))
    with pytest.raises(
        ModelFileError, match=r"m\.gguf is corrupted: sha256 [0-9a-f]{64} but expected"
    ):
        verify_file(model, digest)


def test_ensure_model_refuses_a_corrupted_cached_file(tmp_path):
    spec = ModelSpec(
        filename="tiny.gguf",
        sha256="0" * 64,
        package_prefix="no-such-pkg-part",
        n_parts=1,
        version="1",
    )
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny.gguf").write_bytes(b"not the model")
    with pytest.raises(ModelFileError, match="is corrupted"):
        ensure_model(tmp_path, spec)


def test_missing_part_package_is_named(tmp_path):
    spec = ModelSpec(
        filename="tiny.gguf",
        sha256="0" * 64,
        package_prefix="no-such-pkg-part",
        n_parts=2,
        version="1",
    )
    with pytest.raises(ModelFileError, match=r"no-such-pkg-part1==1 \(part 1 of 2"):
        ensure_model(tmp_path, spec)


def test_installed_parts_are_found_through_package_metadata():
    try:
        parts = locate_parts(QWEN_CODER_1_5B)
    except ModelFileError as exc:
        pytest.skip(f"model parts not installed: {exc}")
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 23)]
    assert sum(p.stat().st_size for p in parts) > 900_000_000


def test_cli_prints_the_verified_path(tmp_path, monkeypatch, capsys):
    parts, digest = _parts(tmp_path)
    spec = ModelSpec(
        filename="tiny.gguf", sha256=digest, package_prefix="x", n_parts=3, version="1"
    )
    monkeypatch.setattr(local_model, "QWEN_CODER_1_5B", spec)
    monkeypatch.setattr(local_model, "locate_parts", lambda s: parts)
    assert local_model.main(["--cache-dir", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "c" / "models" / "tiny.gguf")
