"""The Hydra entry point: one run = one dataset x one retriever (x one reader) configuration.

    python -m hopbench.run dataset=hotpotqa retriever=dense dataset.limit=20
    python -m hopbench.run -m dataset=musique,hotpotqa
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import hydra
from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

import hopbench.config_resolvers  # noqa: F401  (the resolvers configs/dataset/*.yaml use)
from hopbench.data import load_dataset
from hopbench.data.schema import Dataset
from hopbench.embed import Encoder
from hopbench.errors import DataError, HopbenchError
from hopbench.evaluate.fallbacks import fallback_summary, fallback_warning
from hopbench.evaluate.score import aggregate, score_question
from hopbench.provenance import software_versions
from hopbench.question_loop import run_questions
from hopbench.retrieve.base import Retriever, Services
from hopbench.run_config import check_run_config, config_yaml
from hopbench.runstore import RunStore, config_hash

log = logging.getLogger("hopbench.run")

CONFIG_DIR = str(Path(__file__).resolve().parents[2] / "configs")

# Keys that change where things live or how they are shown, never what is computed.
_DATASET_PATH_KEYS = ("questions_path", "corpus_path", "data_dir")
_EMBEDDING_RUNTIME_KEYS = ("batch_size", "show_progress", "device")
_LLM_RUNTIME_KEYS = ("api_key", "api_key_env", "timeout", "model_dir", "n_threads", "verbosity", "cache")


def build_dataset(cfg: DictConfig) -> Dataset:
    try:
        return load_dataset(**OmegaConf.to_container(cfg.dataset, resolve=True))
    except DataError as exc:
        if exc.problem != "file not found":
            raise
        raise DataError(exc.path, exc.record, exc.field,
                        f"file not found; benchmark files are read from paths.data_dir "
                        f"({Path(cfg.paths.data_dir).resolve()}): set paths.data_dir=DIR or "
                        "HOPBENCH_DATA_DIR, or point dataset.questions_path / dataset.corpus_path "
                        "at your files") from None


def build_encoder(cfg: DictConfig) -> Encoder:
    e = cfg.embedding
    return Encoder(model=e.model, batch_size=e.batch_size, cache_dir=cfg.paths.cache_dir,
                   max_seq_length=e.get("max_seq_length"), show_progress=cfg.progress,
                   backend=e.get("backend", "torch"), threads=e.get("threads"))


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
            raise HopbenchError(f"{group}={name}: {cause}") from None
        raise


def build_retriever(cfg: DictConfig) -> Retriever:
    return _instantiate("retriever", cfg.retriever)


def build_llm(cfg: DictConfig):
    """The configured LLM client, or None when `llm=none`."""
    llm_cfg = cfg.get("llm")
    if llm_cfg is None or llm_cfg.get("name", "none") == "none":
        return None
    from hopbench.llm import build_client

    return build_client(llm_cfg, cache_dir=cfg.paths.cache_dir,
                        concurrency=int(cfg.get("concurrency", 1)))


def build_reader(cfg: DictConfig, llm):
    reader_cfg = cfg.get("reader")
    if reader_cfg is None or reader_cfg.get("name", "none") == "none":
        return None
    reader = _instantiate("reader", reader_cfg)
    reader.bind(llm)
    return reader


def semantic_config(cfg: DictConfig, dataset: Dataset, retriever: Retriever) -> dict:
    """Everything that determines the numbers, and nothing that only says where files live."""
    c = OmegaConf.to_container(cfg, resolve=True)
    reader_on = c.get("reader", {}).get("name", "none") != "none"
    out = {
        "dataset": {k: v for k, v in c["dataset"].items() if k not in _DATASET_PATH_KEYS},
        "dataset_fingerprint": dataset.fingerprint,
        "retriever": c["retriever"],
        "embedding": {k: v for k, v in c["embedding"].items() if k not in _EMBEDDING_RUNTIME_KEYS},
        "reader": c.get("reader", {"name": "none"}),
        "top_k": c["top_k"],
    }
    if retriever.needs_graph and "graph" in c:
        from hopbench.kg.settings import resolve_settings, semantic_settings

        out["graph"] = semantic_settings(resolve_settings(c["graph"]))
    if (retriever.needs_llm or reader_on) and "llm" in c:
        out["llm"] = {k: v for k, v in c["llm"].items() if k not in _LLM_RUNTIME_KEYS}
    return out


COST_KEYS = ("llm_calls", "llm_cache_hits", "llm_prompt_tokens", "llm_completion_tokens",
             "llm_seconds", "llm_cached_seconds")


def llm_cost(scope) -> dict:
    """LLM calls, tokens, seconds and cache hits counted in one question's `cost_scope`."""
    d = scope.as_dict()
    return {k: round(d[k], 3) if "seconds" in k else d[k] for k in COST_KEYS}


def cost_summary(rows: list[dict]) -> dict:
    """Mean LLM cost per question of retrieval and of reading, from the rows (survives resumes)."""
    out: dict = {}
    n = max(len(rows), 1)
    for part, get in (("retrieval", lambda r: (r.get("trace") or {}).get("llm_cost")),
                      ("reader", lambda r: (r.get("reader_trace") or {}).get("llm_cost"))):
        costs = [c for c in map(get, rows) if c]
        if not costs:
            continue
        for k in COST_KEYS:
            out[f"{part}_{k}_per_question"] = sum(c.get(k, 0) for c in costs) / n
        out[f"{part}_llm_tokens_per_question"] = (out[f"{part}_llm_prompt_tokens_per_question"]
                                                  + out[f"{part}_llm_completion_tokens_per_question"])
        out[f"{part}_llm_seconds_uncached_per_question"] = (
            out[f"{part}_llm_seconds_per_question"] + out[f"{part}_llm_cached_seconds_per_question"])
    return out


def run_dir_for(cfg: DictConfig, h: str) -> Path:
    return Path(cfg.paths.runs_dir) / cfg.dataset.name / cfg.retriever.name / h


def _completed(store: RunStore) -> dict:
    log.info("run %s is complete; skipping (force=true reruns it)", store.dir)
    return json.loads(store.metrics_path.read_text())


def execute(cfg: DictConfig) -> dict:
    """Run (or resume, or skip) one configuration; return its metrics.

    Everything is checked and built before the run folder is touched; one process at a time
    works on a run (a second launch waits, then skips or resumes); `force=true` computes
    beside the finished run and replaces it only when the new one is complete.
    """
    t0 = time.perf_counter()
    check_run_config(cfg)
    dataset = build_dataset(cfg)
    retriever = build_retriever(cfg)
    h = config_hash(semantic_config(cfg, dataset, retriever))
    store = RunStore(run_dir_for(cfg, h))
    if store.complete and not cfg.force:
        return _completed(store)
    llm = build_llm(cfg)
    if retriever.needs_llm and llm is None:
        raise HopbenchError(f"retriever '{cfg.retriever.name}' needs an LLM; choose one with "
                            "llm=local (offline model), llm=openai or llm=server")
    reader = build_reader(cfg, llm)
    with store.lock():
        if store.complete and not cfg.force:  # finished by the launch this one waited for
            return _completed(store)
        work = store.staging() if cfg.force else store
        work.write_config(config_yaml(cfg))
        done = work.load_predictions()
        done_ids = {r["id"] for r in done}
        todo = [q for q in dataset.questions if q.id not in done_ids]
        log.info("%s / %s -> %s (%d done, %d to go)", dataset.name, cfg.retriever.name, store.dir,
                 len(done), len(todo))
        services, kg = prepare_services(cfg, dataset, retriever, llm)
        t_prep = time.perf_counter()
        retriever.prepare(kg, services)
        timings = {"prepare_seconds": time.perf_counter() - t_prep}
        t_enc = time.perf_counter()
        services.encode_questions(todo)
        timings["query_encoding_ms_per_question"] = 1000 * (time.perf_counter() - t_enc) / max(len(todo), 1)
        try:
            cpu0 = time.process_time()
            loop_s = answer_questions(cfg, dataset, retriever, reader, llm, todo, work, done)
            timings.update({"concurrency": question_concurrency(cfg, llm), "loop_seconds": loop_s,
                            "loop_cpu_seconds": time.process_time() - cpu0,
                            "questions_per_minute": 60 * len(todo) / loop_s if todo and loop_s > 0 else None})
        finally:
            work.close()
            if hasattr(retriever, "close"):
                retriever.close()
        metrics = finish_metrics(cfg, dataset, retriever, llm, h, done, timings, t0)
        work.write_metrics(metrics)
        if work is not store:
            store.promote(work)
    log.info("wrote %s", store.metrics_path)
    return metrics


def prepare_services(cfg: DictConfig, dataset: Dataset, retriever: Retriever, llm):
    """The encoder, graph database settings and (for graph retrievers) the knowledge graph."""
    encoder = build_encoder(cfg)
    graphdb = (OmegaConf.to_container(cfg.graphdb, resolve=True)
               if retriever.needs_graphdb and "graphdb" in cfg else None)
    services = Services(dataset=dataset, encoder=encoder, llm=llm, graphdb=graphdb)
    kg = None
    if retriever.needs_graph:
        from hopbench.kg import load_or_build

        kg = load_or_build(dataset, cfg.graph, encoder=encoder, llm=llm, cache_dir=cfg.paths.cache_dir,
                           concurrency=int(cfg.concurrency))
    return services, kg


def answer_questions(cfg, dataset: Dataset, retriever: Retriever, reader, llm, todo, store: RunStore,
                     done: list[dict]) -> float:
    """Retrieve (and read) each question, up to `concurrency` at once when the run calls an LLM;
    append each row as soon as it is scored. Returns the loop's wall seconds."""

    def answer_one(q) -> dict:
        with _cost_scope(llm) as retrieval_scope:
            start = time.perf_counter()
            result = retriever.retrieve(q, cfg.top_k)
            latency_ms = 1000 * (time.perf_counter() - start)
        answer, reader_trace = None, None
        if reader is not None:
            with _cost_scope(llm) as reader_scope:
                out = reader.answer(q, [dataset.passage(pid) for pid in result.passage_ids])
            answer, reader_trace = out.answer, {**(out.trace or {}), "llm_cost": llm_cost(reader_scope)}
        if retrieval_scope is not None:
            result.trace["llm_cost"] = llm_cost(retrieval_scope)
        row = {
            "id": q.id, "question": q.text, "gold_answers": q.answers,
            "gold_passage_ids": q.gold_passage_ids, "gold_complete": q.gold_complete,
            "kind": q.kind, "label": q.label, "meta": q.meta,
            "ranked_passage_ids": result.passage_ids, "scores": result.scores,
            "answer": answer, "metrics": score_question(q, result.passage_ids, answer),
            "latency_ms": latency_ms, "trace": result.trace,
        }
        if reader_trace is not None:
            row["reader_trace"] = reader_trace
        return row

    def keep(row: dict) -> None:
        store.append(row)
        done.append(row)

    return run_questions(todo, answer_one, keep, concurrency=question_concurrency(cfg, llm),
                         desc=f"{cfg.retriever.name} on {dataset.name}", show=cfg.progress, llm=llm)


def question_concurrency(cfg: DictConfig, llm) -> int:
    """Questions in flight: `concurrency` for runs that call an LLM; CPU-only retrievers keep one
    (their time is CPU, which threads would only share out)."""
    return int(cfg.concurrency) if llm is not None else 1


@contextmanager
def _cost_scope(llm):
    if llm is None:
        yield None
        return
    with llm.cost_scope() as scope:
        yield scope


def finish_metrics(cfg, dataset: Dataset, retriever: Retriever, llm, h: str, done: list[dict],
                   timings: dict, t0: float) -> dict:
    """metrics.json: the scores of every row, the run's identity, costs and software versions."""
    from hopbench.kg.settings import graph_label

    metrics = aggregate(done)
    metrics.update({
        "dataset": dataset.name, "retriever": cfg.retriever.name, "config_hash": h,
        "reader": cfg.reader.name if "reader" in cfg else "none",
        "n_retrieval_excluded": dataset.notes["n_retrieval_excluded"],
        **timings, "wall_seconds": time.perf_counter() - t0,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "software": software_versions(),
        "graph": graph_label(cfg.graph) if retriever.needs_graph and "graph" in cfg else None,
    })
    if retriever.needs_graphdb:  # questions whose database query timed out (dense ranking instead)
        metrics["n_query_timeouts"] = sum(1 for r in done if (r.get("trace") or {}).get("query_timeout"))
    if llm is not None:
        metrics.update(llm.stats_dict())
    metrics.update(cost_summary(done))
    metrics.update(fallback_summary(done))
    if warning := fallback_warning(metrics):
        log.warning("%s", warning)
    return metrics


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg: DictConfig) -> None:
    try:
        metrics = execute(cfg)
    except HopbenchError as exc:
        log.error("%s", exc)
        print(f"hopbench: error: {exc}", file=sys.stderr)
        sys.exit(2)
    keys = ["n_questions", "n_retrieval_scored", "recall@2", "recall@5", "fcr@5", "em", "f1", "latency_ms_p50"]
    print(" ".join(f"{k}={metrics.get(k):.4g}" if isinstance(metrics.get(k), float) else f"{k}={metrics.get(k)}"
                   for k in keys))


if __name__ == "__main__":
    main()
