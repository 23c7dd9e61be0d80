"""Checks and redaction of a run's config, before anything is written.

A bad top-level setting must fail with one line and exit 2 before the run folder exists
(a config.yaml beside no predictions looks like a run), and the config.yaml a run keeps
must never hold a password or key (they come from the environment and stay there).
"""

from __future__ import annotations

import re

from omegaconf import DictConfig, OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.core.secret_values import REDACTED, SECRET_KEY, redact_url, url_credentials_error

# A name that becomes one folder of the run's path (runs_dir/<dataset>/<retriever>/<hash>): one
# path part, not hidden (leading dots are staging and lock siblings), nothing to climb out with.
_FOLDER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$")
PATH_NAME_KEYS = ("dataset.name", "retriever.name")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_run_config(cfg: DictConfig) -> None:
    """The run-level settings have the types the run needs (dataset/retriever check their own)."""
    top_k = cfg.get("top_k")
    if not _is_int(top_k) or top_k < 1:
        raise HopbenchError(
            f"top_k must be a whole number >= 1 (passages kept per question), got {top_k!r}"
        )
    concurrency = cfg.get("concurrency", 1)
    if not _is_int(concurrency) or not 1 <= concurrency <= 256:
        raise HopbenchError(
            f"concurrency must be a whole number from 1 to 256 (questions in flight), "
            f"got {concurrency!r}"
        )
    question_batch = cfg.get("question_batch", 1)
    if not _is_int(question_batch) or not 1 <= question_batch <= 4096:
        raise HopbenchError(
            f"question_batch must be a whole number from 1 to 4096 (questions a retriever "
            f"without an LLM is handed at once), got {question_batch!r}"
        )
    for key in ("force", "progress"):
        if not isinstance(cfg.get(key), bool):
            raise HopbenchError(f"{key} must be true or false, got {cfg.get(key)!r}")
    for key in ("runs_dir", "cache_dir", "data_dir"):
        v = cfg.paths.get(key)
        if not isinstance(v, str) or not v:
            raise HopbenchError(f"paths.{key} must be a folder path, got {v!r}")
    for key in PATH_NAME_KEYS:
        v = OmegaConf.select(cfg, key)
        if not isinstance(v, str) or not _FOLDER_NAME.match(v):
            raise HopbenchError(
                f"{key} must be a single folder name (letters, digits and _ . + -, "
                f"not starting with '.'; it names the run's folder under runs_dir), got {v!r}"
            )
    for group in ("llm", "embedding"):
        if problem := url_credentials_error(
            f"{group}.base_url", (cfg.get(group) or {}).get("base_url")
        ):
            raise HopbenchError(problem)
    wanted = (cfg.get("retriever") or {}).get("graph_construction")
    built = (cfg.get("graph") or {}).get("construction")
    if (
        wanted is not None and built is not None and wanted != built
    ):  # before a graph is built for nothing
        raise HopbenchError(
            f"retriever={cfg.retriever.get('name')} is run on graph.construction={wanted} "
            f"(retriever.graph_construction), but graph.construction={built} was set: leave "
            "graph.construction to follow the retriever, or choose the retriever of that "
            "construction (hipporag: hipporag2, hipporag_hb: hopbench)"
        )


def redacted(obj):
    """A copy of a plain config container with every secret-named value replaced, and the
    credentials of any URL (user:token@host) too."""
    if isinstance(obj, dict):
        return {
            k: (REDACTED if SECRET_KEY.search(str(k)) and v is not None else redacted(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [redacted(v) for v in obj]
    if isinstance(obj, str):
        return redact_url(obj)
    return obj


def config_yaml(cfg: DictConfig) -> str:
    """The resolved config as the run folder keeps it: everything but the secrets."""
    return OmegaConf.to_yaml(OmegaConf.create(redacted(OmegaConf.to_container(cfg, resolve=True))))
