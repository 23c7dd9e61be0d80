"""`build_client(llm_cfg, cache_dir)`: the `llm=` config group turned into an LLMClient."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.core.secret_values import url_credentials_error
from hopbench.llm.cache import ResponseCache
from hopbench.llm.client import LLMClient

log = logging.getLogger(__name__)

_COMMON = (
    "temperature",
    "seed",
    "max_tokens",
    "timeout",
    "strict_schema",
    "replay_failed",
    "cache_only",
)


def _as_dict(llm_cfg) -> dict:
    if isinstance(llm_cfg, DictConfig):
        return OmegaConf.to_container(llm_cfg, resolve=True)
    return dict(llm_cfg)


def _common(cfg: dict) -> dict:
    return {k: cfg[k] for k in _COMMON if cfg.get(k) is not None}


def _cache(cfg: dict, cache_dir) -> ResponseCache | None:
    return ResponseCache.in_dir(cache_dir) if cfg.get("cache", True) else None


def local_slots(cfg: dict, concurrency: int) -> int:
    """llama.cpp slots for the local server: one per question in flight (each slot keeps the full
    `n_ctx`, so prompts fit as they do with one), never fewer than `llm.n_parallel`."""
    return max(int(cfg.get("n_parallel", 1) or 1), int(concurrency))


def _local_endpoint(cfg: dict, cache_dir, concurrency: int) -> tuple[str, str]:
    """(base_url, model) of the in-process llama.cpp server, assembling the GGUF if needed."""
    from hopbench.llm.local_model import QWEN_CODER_1_5B, ensure_model
    from hopbench.llm.local_server import shared_server

    path = ensure_model(cache_dir, QWEN_CODER_1_5B, model_dir=cfg.get("model_dir"))
    slots = local_slots(cfg, concurrency)
    if slots > 1:
        log.info(
            "local LLM: %d parallel slots of %d tokens each (concurrency=%d); llama.cpp "
            "rounds batched requests differently, so fresh replies can differ from "
            "concurrency=1 (cached ones do not)",
            slots,
            cfg.get("n_ctx", 8192),
            concurrency,
        )
    server = shared_server(
        path,
        n_ctx=cfg.get("n_ctx", 8192),
        n_threads=cfg.get("n_threads", 2),
        n_parallel=slots,
        verbosity=cfg.get("verbosity", 0),
    )
    return server.base_url, path.name


def build_client(llm_cfg, cache_dir: str | Path, concurrency: int = 1) -> LLMClient:
    cfg = _as_dict(llm_cfg)
    name = cfg.get("name", "none")
    if cfg.get("cache_only") and not cfg.get("cache", True):
        raise HopbenchError("llm.cache_only=true needs the response cache (llm.cache=true)")
    if name == "local":
        from hopbench.llm.local_model import QWEN_CODER_1_5B

        if cfg.get("cache_only"):  # every reply from the cache: no model file, no server
            base_url, model = "", str(cfg.get("model") or "local")
        else:
            base_url, model = _local_endpoint(cfg, cache_dir, concurrency)
        return LLMClient(
            name="local",
            base_url=base_url,
            model=model,
            identity=f"gguf-sha256:{QWEN_CODER_1_5B.sha256}",
            cache=_cache(cfg, cache_dir),
            transient_retries=0,
            **_common(cfg),
        )
    if name in ("openai", "server"):
        key_env = cfg.get("api_key_env") or ("OPENAI_API_KEY" if name == "openai" else None)
        api_key = os.environ.get(key_env) if key_env else None
        if name == "openai" and not api_key and not cfg.get("cache_only"):
            raise HopbenchError(
                f"llm=openai needs an API key in the environment variable {key_env}"
            )
        model = cfg.get("model")
        if not model:
            raise HopbenchError(f"llm={name} needs llm.model (the model name the server serves)")
        base_url = cfg.get("base_url") or (
            "https://api.openai.com/v1" if name == "openai" else None
        )
        if not base_url:
            raise HopbenchError(
                "llm=server needs llm.base_url, e.g. llm.base_url=http://127.0.0.1:8000/v1"
            )
        if problem := url_credentials_error("llm.base_url", base_url):  # it would be in `identity`
            raise HopbenchError(problem)
        identity = cfg.get("identity") or f"{name}:{base_url}:{model}"
        return LLMClient(
            name=name,
            base_url=base_url,
            model=model,
            identity=identity,
            api_key=api_key or "not-needed",
            api_key_env=key_env,
            cache=_cache(cfg, cache_dir),
            transient_retries=cfg.get("transient_retries", 6),
            backoff_s=cfg.get("backoff_s", 2.0),
            **_common(cfg),
        )
    if name == "none":
        raise HopbenchError(
            "no LLM configured; choose llm=local (offline model), llm=openai or llm=server"
        )
    raise HopbenchError(f"unknown llm '{name}'; choose llm=local, llm=openai or llm=server")
