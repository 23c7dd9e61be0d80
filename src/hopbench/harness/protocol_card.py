"""A run's protocol card (hopbench.core.protocol_card), built from what the run was given.

Written into metrics.json's `protocol` when the run finishes; never into `semantic_config`, so
the card is in no run hash (it describes the run, it does not choose what the run computes).
"""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig

from hopbench.core.protocol_card import CARD_VERSION, DEFAULT_CHUNKING, RECALL_DEFINITION
from hopbench.data.corpus_digest import corpus_digest
from hopbench.data.schema import Dataset
from hopbench.kg.settings import graph_label
from hopbench.retrieve.base import Retriever

log = logging.getLogger(__name__)

LOCAL_DIGEST = "gguf-sha256:"  # how the local LLM's identity names its file's sha256


def chunking(cfg: DictConfig) -> str:
    """How the corpus was cut into retrieval units (`dataset.chunking`, hopbench.data.chunking),
    and its order when not as given: 'passages as given', 'tokens: 1000 (overlap 100, by ...)'."""
    d = cfg.dataset
    text = DEFAULT_CHUNKING
    if d.get("chunking", "passages") == "tokens":
        text = (
            f"tokens: {d.get('chunk_size')} (overlap {d.get('chunk_overlap')}, "
            f"by {d.get('chunk_tokenizer')})"
        )
    if d.get("corpus_order", "given") != "given":
        text += f"; order {d.get('corpus_order')} (seed {d.get('corpus_seed')})"
    return text


def retrieval_unit(cfg: DictConfig) -> str:
    """What a ranked id names: a passage of the corpus, or a chunk of it."""
    return "chunk" if cfg.dataset.get("chunking", "passages") == "tokens" else "passage"


def recall_definition(cfg: DictConfig) -> str:
    if retrieval_unit(cfg) == "chunk":
        return RECALL_DEFINITION + " (the gold passages credited to chunks: hopbench.data.chunking)"
    return RECALL_DEFINITION


def embedder(cfg: DictConfig, encoder) -> dict:
    """{name, digest}: the model (with its backend when not torch) and the sha256 of its files;
    a server's model by the identity it is cached under (its weights are not on this machine)."""
    e = cfg.embedding
    if e.get("name") == "server":
        return {"name": str(e.get("model")), "digest": f"identity:{encoder.identity}"}
    backend = e.get("backend", "torch")
    name = str(e.model) + ("" if backend == "torch" else f" ({backend})")
    return {"name": name, "digest": _weights_digest(str(e.model), cfg.paths.cache_dir)}


def _weights_digest(model: str, cache_dir) -> str | None:
    from hopbench.embed.encoder import resolve_model_path
    from hopbench.embed.weights_digest import weights_digest

    folder = Path(resolve_model_path(model))
    if not folder.is_dir():  # a hub name sentence-transformers resolves itself: not found here
        log.warning("embedding model %s: no local folder, so its card has no weights digest", model)
        return None
    try:
        return weights_digest(folder, cache_dir)
    except OSError as exc:
        log.warning("embedding model %s: its files could not be read (%s)", model, exc)
        return None


def llm_roles(cfg: DictConfig, retriever: Retriever, reader) -> list[str]:
    """The steps the LLM plays: extraction (graph=llm), retrieval, reader."""
    roles = []
    graph = cfg.get("graph") or {}
    if retriever.needs_graph and graph.get("extractor") == "llm":
        roles.append("extraction")
    if retriever.needs_llm:
        roles.append("retrieval")
    if reader is not None:
        roles.append("reader")
    return roles


def llm_record(cfg: DictConfig, llm, roles: list[str]) -> dict | None:
    """{name, digest, roles}, or None when no step of the run calls an LLM. The local GGUF's
    digest is its sha256 (checked when it is assembled); a server's model is named by identity."""
    if llm is None or not roles:
        return None
    identity = str(getattr(llm, "identity", "") or "")
    if identity.startswith(LOCAL_DIGEST):
        digest = "sha256:" + identity.removeprefix(LOCAL_DIGEST)
    else:
        digest = f"identity:{identity}" if identity else None
    name = (cfg.get("llm") or {}).get("model") or getattr(llm, "model", None)
    return {"name": str(name), "digest": digest, "roles": roles}


def reader_context(cfg: DictConfig, reader) -> str | None:
    """The reader's budget: 'top-5 passages', or '<n> tokens (by <tokenizer>)' with
    `reader.context_tokens` (counted by hopbench.evaluate.token_budget's tokenizer)."""
    if reader is None:
        return None
    tokens = (cfg.get("reader") or {}).get("context_tokens")
    if tokens:
        from hopbench.evaluate.token_budget import TOKENIZER

        return f"{int(tokens)} tokens (by {TOKENIZER})"
    return f"top-{int(getattr(reader, 'top_k', cfg.reader.get('top_k')))} passages"


def protocol_card(
    cfg: DictConfig,
    dataset: Dataset,
    retriever: Retriever,
    *,
    encoder,
    llm,
    reader,
    graph_sizes: dict | None,
    scores: dict,
) -> dict:
    """metrics.json's `protocol`; `scores` are the run's aggregate (n_questions, n_retrieval_scored,
    question_set_digest), `graph_sizes` the counts of the graph it read (kg.stats.graph_sizes)."""
    graph = None
    if retriever.needs_graph and graph_sizes is not None:
        graph = {"label": graph_label(cfg.get("graph") or {}), **graph_sizes}
    return {
        "version": CARD_VERSION,
        "retrieval_unit": retrieval_unit(cfg),
        "chunking": chunking(cfg),
        "corpus_digest": corpus_digest(dataset.corpus),
        "question_set_digest": scores.get("question_set_digest"),
        "n_questions": scores.get("n_questions"),
        "n_retrieval_scored": scores.get("n_retrieval_scored"),
        "recall": recall_definition(cfg),
        "retrieval_depth": int(cfg.top_k),
        "embedder": embedder(cfg, encoder),
        "llm": llm_record(cfg, llm, llm_roles(cfg, retriever, reader)),
        "reader_context": reader_context(cfg, reader),
        "graph": graph,
    }
