"""Shared fixtures: where the real benchmark files are, and a per-session cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets")).resolve()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.exists():
        pytest.fail(f"benchmark data not found at {DATA_DIR}; set HOPBENCH_DATA_DIR")
    return DATA_DIR


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """Embedding/graph cache shared by the whole session (HOPBENCH_TEST_CACHE to keep it across sessions)."""
    env = os.environ.get("HOPBENCH_TEST_CACHE")
    if env:
        Path(env).mkdir(parents=True, exist_ok=True)
        return Path(env)
    return tmp_path_factory.mktemp("hopbench-cache")


@pytest.fixture(scope="session")
def encoder(cache_dir):
    from hopbench.embed import Encoder

    return Encoder(cache_dir=cache_dir, show_progress=False)
