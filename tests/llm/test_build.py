"""build_client: each `llm=` config either gives a client or says exactly what is missing."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import CONFIG_DIR
from hopbench.llm import build_client


def _cfg(name: str, **over):
    cfg = OmegaConf.load(f"{CONFIG_DIR}/llm/{name}.yaml")
    return OmegaConf.merge(cfg, over)


def test_none_refuses_with_the_choices(tmp_path):
    with pytest.raises(HopbenchError, match="llm=local .*llm=openai or llm=server"):
        build_client(_cfg("none"), tmp_path)


def test_openai_needs_the_key_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(HopbenchError, match="OPENAI_API_KEY"):
        build_client(_cfg("openai"), tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm = build_client(_cfg("openai"), tmp_path)
    assert llm.identity == "openai:https://api.openai.com/v1:gpt-4o-mini"
    assert llm.transient_retries == 6 and llm.cache is not None
    llm.close()


def test_server_needs_base_url_and_model(tmp_path):
    with pytest.raises(HopbenchError, match="llm.model"):
        build_client(_cfg("server"), tmp_path)
    with pytest.raises(HopbenchError, match="llm.base_url"):
        build_client(_cfg("server", model="m"), tmp_path)
    llm = build_client(_cfg("server", model="m", base_url="http://127.0.0.1:9/v1"), tmp_path)
    assert llm.identity == "server:http://127.0.0.1:9/v1:m"
    llm.close()


def test_every_llm_config_has_a_name():
    for name in ("none", "local", "openai", "server"):
        assert _cfg(name).name == name
