from __future__ import annotations

import pytest

from tests.helpers.embedding_server import EmbeddingServer


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
