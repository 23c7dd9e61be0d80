from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Test helpers next to this file (pytest runs with --import-mode=importlib, which adds no paths).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding_server import EmbeddingServer  # noqa: E402


@pytest.fixture(scope="session")
def minilm_uncached():
    """The local all-MiniLM-L6-v2 encoder without a cache: what the test server computes with."""
    from hopbench.embed import Encoder

    return Encoder(cache_dir=None, show_progress=False)


@pytest.fixture
def embedding_server(minilm_uncached):
    """make(**options) -> an EmbeddingServer on 127.0.0.1 (closed after the test)."""
    servers = []

    def make(**options) -> EmbeddingServer:
        s = EmbeddingServer(minilm_uncached, **options)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()
