"""Composition: the objects a config names, built from it (dataset, encoder, LLM, graph, retriever, reader).

The one place that turns a Hydra `DictConfig` into library objects, for a run
(`hopbench.harness.runner`), the subcommands (`hopbench.cli`) and the benchmarks alike. It sits above
the library packages (data, embed, llm, kg, retrieve, read) and below the entry points
(`hopbench.run`, `hopbench.cli`); no library module imports it.
"""

from __future__ import annotations

import os
from pathlib import Path

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

import hopbench.harness.config_resolvers  # noqa: F401  (the resolvers configs/dataset/*.yaml use)
from hopbench.core.errors import DataError, HopbenchError
from hopbench.core.paths import CONFIG_DIR
from hopbench.data import load_dataset
from hopbench.data.schema import Dataset
from hopbench.embed import Encoder
from hopbench.evaluate import token_budget
from hopbench.retrieve.base import Retriever, Services


def load_config(overrides: list[str]) -> DictConfig:
    """The run config `python -m hopbench.run OVERRIDES...` would run, composed without running."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def build_dataset(cfg: DictConfig) -> Dataset:
    """The dataset, its corpus registered for the token-budget metrics (R@Nt, counted lazily)."""
    try:
        dataset = load_dataset(**OmegaConf.to_container(cfg.dataset, resolve=True))
    except DataError as exc:
        if exc.problem != "file not found":
            raise
        raise DataError(
            exc.path,
            exc.record,
            exc.field,
            f"file not found; benchmark files are read from paths.data_dir "
            f"({Path(cfg.paths.data_dir).resolve()}): set paths.data_dir=DIR or "
            "HOPBENCH_DATA_DIR, or point dataset.questions_path / dataset.corpus_path "
            "at your files",
        ) from None
    token_budget.register(dataset.corpus)
    return dataset


def server_encoder_settings(cfg: DictConfig) -> dict:
    """The `embedding=server` settings as ServerEncoder's arguments, the key read from the
    environment variable `embedding.api_key_env` names (never from the config)."""
    e = OmegaConf.to_container(cfg.embedding, resolve=True)
    key_env = e.get("api_key_env")
    api_key = os.environ.get(key_env) if key_env else None
    if key_env and not api_key:
        raise HopbenchError(
            f"embedding.api_key_env names {key_env}, which is not set in the environment"
        )
    optional = (
        "identity",
        "query_instruction",
        "passage_instruction",
        "dim",
        "batch_size",
        "concurrency",
        "timeout",
        "transient_retries",
        "backoff_s",
    )
    return {
        "base_url": e.get("base_url"),
        "model": e.get("model"),
        **{k: e[k] for k in optional if e.get(k) is not None},
        "api_key": api_key,
        "api_key_env": key_env,
        "cache_dir": cfg.paths.cache_dir,
        "show_progress": cfg.progress,
    }


def build_encoder(cfg: DictConfig):
    """The local `Encoder`, or with `embedding=server` a `ServerEncoder` (same interface)."""
    e = cfg.embedding
    if e.get("name") == "server":
        from hopbench.embed.server import ServerEncoder

        return ServerEncoder(**server_encoder_settings(cfg))
    return Encoder(
        model=e.model,
        batch_size=e.batch_size,
        cache_dir=cfg.paths.cache_dir,
        max_seq_length=e.get("max_seq_length"),
        show_progress=cfg.progress,
        backend=e.get("backend", "torch"),
        threads=e.get("threads"),
    )


def check_encoder(cfg: DictConfig) -> None:
    """`embedding=server` settings checked before a run writes anything (nothing is sent)."""
    if cfg.embedding.get("name") == "server":
        build_encoder(cfg).close()


def _instantiate(group: str, cfg: DictConfig):
    """Hydra `instantiate`, with a bad setting told in one line (not Hydra's wrapped traceback)."""
    params = OmegaConf.to_container(cfg, resolve=True)
    name = params.pop("name", None)
    try:
        return instantiate(params, _convert_="all")
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, HopbenchError):
            raise cause from None
        if isinstance(cause, (TypeError, ValueError)):
            raise HopbenchError(f"{group}={name}: {cause}{_moved_hint(group, params)}") from None
        raise


# Settings that moved into a nested node (issue #58): a flat key of before gets told where it went.
_MOVED_TO_SEEDING = ("filter", "linking_top_k", "top_phrases", "passage_node_weight")


def _moved_hint(group: str, params: dict) -> str:
    moved = [
        k for k in _MOVED_TO_SEEDING if k in params and isinstance(params.get("seeding"), dict)
    ]
    if group != "retriever" or not moved:
        return ""
    return f" (HippoRAG's seeding settings are one node now: retriever.seeding.{moved[0]})"


def build_retriever(cfg: DictConfig) -> Retriever:
    return _instantiate("retriever", cfg.retriever)


def build_llm(cfg: DictConfig):
    """The configured LLM client, or None when `llm=none`."""
    llm_cfg = cfg.get("llm")
    if llm_cfg is None or llm_cfg.get("name", "none") == "none":
        return None
    from hopbench.llm import build_client

    return build_client(
        llm_cfg, cache_dir=cfg.paths.cache_dir, concurrency=int(cfg.get("concurrency", 1))
    )


def build_reader(cfg: DictConfig, llm):
    """The configured reader bound to `llm`, or None when `reader=none`."""
    reader_cfg = cfg.get("reader")
    if reader_cfg is None or reader_cfg.get("name", "none") == "none":
        return None
    reader = _instantiate("reader", reader_cfg)
    reader.bind(llm)
    return reader


def build_graph(
    cfg: DictConfig, dataset: Dataset, encoder: Encoder, llm=None, descriptions: bool = True
):
    """The knowledge graph of `graph` over the dataset's corpus (built once, then cached);
    `descriptions`: with its description vectors (`Retriever.needs_descriptions`)."""
    from hopbench.kg import load_or_build

    return load_or_build(
        dataset,
        cfg.graph,
        encoder=encoder,
        llm=llm,
        cache_dir=cfg.paths.cache_dir,
        concurrency=int(cfg.get("concurrency", 1)),
        descriptions=descriptions,
    )


def build_services(cfg: DictConfig, dataset: Dataset, retriever: Retriever, llm):
    """(Services, knowledge graph or None): the encoder, graph database settings and, for graph
    retrievers, the graph: everything `retriever.prepare` takes."""
    encoder = build_encoder(cfg)
    graphdb = (
        OmegaConf.to_container(cfg.graphdb, resolve=True)
        if retriever.needs_graphdb and "graphdb" in cfg
        else None
    )
    services = Services(dataset=dataset, encoder=encoder, llm=llm, graphdb=graphdb)
    kg = (
        build_graph(cfg, dataset, encoder, llm, descriptions=retriever.needs_descriptions)
        if retriever.needs_graph
        else None
    )
    return services, kg


def prepared_retriever(overrides: list[str]):
    """(config, dataset, retriever) with every question encoded and `prepare` done, from the same
    caches a run uses, without an LLM: what tests and benchmarks that call a retriever's parts
    directly need, built as `python -m hopbench.run OVERRIDES llm=none` would build them."""
    cfg = load_config([*overrides, "llm=none"])
    data = build_dataset(cfg)
    retriever = build_retriever(cfg)
    services, kg = build_services(cfg, data, retriever, None)
    services.encode_questions(data.questions)
    retriever.prepare(kg, services)
    return cfg, data, retriever
