"""`load_dataset(cfg)`: one entry point from a Hydra dataset config to a validated Dataset."""

from __future__ import annotations

import hashlib
import random
from os import PathLike
from pathlib import Path
from typing import Callable

from hopbench.core.errors import DataError, HopbenchError
from hopbench.core.hash_inputs import omit_defaults
from hopbench.data.hotpotqa import load_context_format
from hopbench.data.hover import load_hover
from hopbench.data.hub import DEFAULT_REPO, fetch_hipporag_files
from hopbench.data.io import file_digest
from hopbench.data.musique import load_musique
from hopbench.data.protocol import (
    DEFAULT_TOKENIZER,
    apply_protocol,
    check_protocol,
    fingerprint_parts,
)
from hopbench.data.schema import Dataset
from hopbench.data.text_limit import (
    DEFAULT_MAX_TEXT_CHARS,
    check_limit_setting,
    load_within_limit,
)
from hopbench.data.twowiki import load_2wiki_linearrag

FORMATS: dict[str, Callable] = {
    "musique": load_musique,
    "hotpotqa": load_context_format,
    "2wiki": load_context_format,
    "2wiki_linearrag": load_2wiki_linearrag,
    "hover": load_hover,
}


def register_format(name: str, loader: Callable) -> None:
    """Make `dataset.format=<name>` read files with `loader` (CONTRIBUTING.md, "Adding a dataset format").

    For a format kept outside the repository: a launcher script registers it, then calls
    `hopbench.run.entry()`, so no file of hopbench changes. `loader(questions_path, corpus_path)`
    returns `(questions, corpus)` as `hopbench.data.schema` defines them and raises `DataError`
    for bad input. A name that is taken is refused, so a bundled format is never replaced.
    """
    if not isinstance(name, str) or not name.strip():
        raise HopbenchError(f"a dataset format needs a non-empty name, got {_show(name)}")
    if not callable(loader):
        raise HopbenchError(
            f"the loader of dataset format '{name}' is not callable: {_show(loader)}"
        )
    if name in FORMATS and FORMATS[name] is not loader:
        raise HopbenchError(
            f"dataset format '{name}' is already registered ({FORMATS[name].__module__}."
            f"{FORMATS[name].__qualname__})"
        )
    FORMATS[name] = loader


def load_dataset(
    name: str,
    format: str,
    questions_path: str | None = None,
    corpus_path: str | None = None,
    limit: int | None = None,
    source: str = "local",
    hub_repo: str = DEFAULT_REPO,
    hub_name: str | None = None,
    hub_revision: str | None = None,
    sample_seed: int | None = None,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    corpus_order: str = "given",
    corpus_seed: int = 0,
    chunking: str = "passages",
    chunk_size: int = 1000,
    chunk_overlap: int = 100,
    chunk_tokenizer: str = DEFAULT_TOKENIZER,
    **_ignored,
) -> Dataset:
    """Load a dataset; the corpus is always built from the whole file, `limit` only cuts questions.

    `sample_seed`: put the questions in a seeded random order first, so that `limit` takes a
    random sample rather than the file's first questions (HoVer's dev file lists every
    SUPPORTED claim before the first NOT_SUPPORTED one).

    `max_text_chars`: a longer text (passage, title, question, answer) is refused, naming its
    record (`hopbench.data.text_limit`); a check only, so it is in no fingerprint or hash.

    The retrieval protocol (`hopbench.data.protocol`; docs/results.md, "Protocol settings"):
    `corpus_order` "given" or "shuffled" by `corpus_seed`; `chunking` "passages" (as given) or
    "tokens": windows of `chunk_size` tokens overlapping by `chunk_overlap`, by
    `chunk_tokenizer`, the gold credited to chunks. At their defaults they change no fingerprint.

    Every argument is checked before any file is read: a wrong type is one HopbenchError naming
    the `dataset.<key>` (nothing is coerced: `limit` is null or a positive integer, never "5").
    """
    _check_str("name", name)
    _check_str("format", format)
    _check_str("source", source)
    check_limit_setting(max_text_chars)
    protocol = {
        "corpus_order": corpus_order,
        "corpus_seed": corpus_seed,
        "chunking": chunking,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "chunk_tokenizer": chunk_tokenizer,
    }
    check_protocol(protocol)
    if format not in FORMATS:
        raise HopbenchError(
            f"dataset.format '{format}' is unknown; choose one of {sorted(FORMATS)}"
        )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise HopbenchError(f"dataset.limit must be null or a positive integer, got {_show(limit)}")
    if sample_seed is not None and (
        isinstance(sample_seed, bool) or not isinstance(sample_seed, int)
    ):
        raise HopbenchError(
            f"dataset.sample_seed must be null or an integer, got {_show(sample_seed)}"
        )
    if source == "hub":
        for key, value in (
            ("hub_repo", hub_repo),
            ("hub_name", hub_name),
            ("hub_revision", hub_revision),
        ):
            if value is not None:
                _check_str(key, value)
        questions_path, corpus_path = fetch_hipporag_files(hub_name or name, hub_repo, hub_revision)
    elif source != "local":
        raise HopbenchError(f"dataset.source must be 'local' or 'hub', got '{source}'")
    for key, value in (("questions_path", questions_path), ("corpus_path", corpus_path)):
        if value is not None and not isinstance(value, (str, PathLike)):
            raise HopbenchError(f"dataset.{key} must be a file path (a string), got {_show(value)}")
    if not questions_path:
        raise HopbenchError(f"dataset '{name}': set dataset.questions_path")
    questions_path = Path(questions_path)
    corpus_path = Path(corpus_path) if corpus_path else None
    questions, corpus = load_within_limit(
        FORMATS[format], questions_path, corpus_path, max_text_chars
    )
    if sample_seed is not None:
        questions = list(questions)
        random.Random(sample_seed).shuffle(questions)
    if limit is not None:
        questions = questions[:limit]
    if not questions:  # loaders reject an empty file; this guards any loader that filters
        raise DataError(questions_path, "-", None, "no questions to run")
    questions, corpus, notes = apply_protocol(questions, corpus, protocol)
    parts = [format, file_digest(questions_path), file_digest(corpus_path), str(limit)]
    # settings added after fingerprints existed: absent at their old default (hash_inputs)
    added = omit_defaults({"sample_seed": sample_seed}, {"sample_seed": None})
    added |= fingerprint_parts(protocol)
    parts += [f"{k}={v}" for k, v in added.items()]
    fp = hashlib.sha256("|".join(parts).encode()).hexdigest()
    notes |= {
        "n_questions": len(questions),
        "n_passages": len(corpus),
        "n_retrieval_excluded": sum(not q.retrieval_scorable for q in questions),
    }
    return Dataset(name=name, questions=questions, corpus=corpus, fingerprint=fp, notes=notes)


def _show(value) -> str:
    return f"{value!r:.60} ({'null' if value is None else type(value).__name__})"


def _check_str(key: str, value) -> None:
    if not isinstance(value, str) or not value.strip():
        raise HopbenchError(f"dataset.{key} must be a non-empty string, got {_show(value)}")
