from __future__ import annotations

import socket

import pytest

from hopbench.llm.cache import ResponseCache
from hopbench.llm.client import LLMClient
from tests.helpers.scripted_llm_server import ScriptedServer


@pytest.fixture
def scripted():
    servers = []

    def make(steps=None, respond=None) -> ScriptedServer:
        s = ScriptedServer(steps, respond)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


@pytest.fixture
def make_client(tmp_path):
    clients = []

    def make(base_url: str, *, cache: bool = True, **kw) -> LLMClient:
        kw.setdefault("identity", "scripted-model")
        c = LLMClient(
            base_url=base_url,
            model="scripted",
            cache=ResponseCache(tmp_path / "responses.sqlite") if cache else None,
            **kw,
        )
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


@pytest.fixture
def closed_port_url() -> str:
    """A base_url where nothing listens: bind a free port, then release it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
