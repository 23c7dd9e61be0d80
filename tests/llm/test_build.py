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


def test_cache_only_local_loads_no_model_and_starts_no_server(tmp_path, monkeypatch):
    """llm=local llm.cache_only=true: the GGUF is never assembled nor served; same identity, so
    the cache keys are those of the model's own runs."""
    import hopbench.llm.local_model as local_model
    import hopbench.llm.local_server as local_server

    def refuse(*a, **k):
        raise AssertionError("cache_only must not touch the model")

    monkeypatch.setattr(local_model, "ensure_model", refuse)
    monkeypatch.setattr(local_server, "shared_server", refuse)
    llm = build_client(_cfg("local", cache_only=True), tmp_path)
    assert llm.identity == f"gguf-sha256:{local_model.QWEN_CODER_1_5B.sha256}"
    assert llm.cache_only and llm.cache is not None
    llm.close()
    with pytest.raises(HopbenchError, match="llm.cache_only=true needs the response cache"):
        build_client(_cfg("local", cache_only=True, cache=False), tmp_path)


def test_cache_only_openai_needs_no_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = build_client(_cfg("openai", cache_only=True), tmp_path)
    assert llm.identity == "openai:https://api.openai.com/v1:gpt-4o-mini" and llm.cache_only
    llm.close()
    with pytest.raises(HopbenchError, match="llm.cache_only=true needs the response cache"):
        build_client(_cfg("openai", cache_only=True, cache=False), tmp_path)
