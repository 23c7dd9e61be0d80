"""One run (dataset x retriever x reader), in four steps: plan -> prepare -> loop -> finish.

  plan     check the config, build dataset and retriever, hash what determines the numbers
           (`semantic_config`), name the run folder; nothing is written yet
  prepare  under the run's lock: write config.yaml, load the rows already done, build the
           services and graph, `retriever.prepare`, encode the questions left
  loop     answer the questions left (`hopbench.harness.question_loop`), appending each row
  finish   metrics.json from every row (scores, identity, timings, costs, fallbacks)

Everything is checked and built before the run folder is touched; one process at a time works
on a run (a second launch waits, then skips or resumes); `force=true` computes beside the
finished run and replaces it only when the new one is complete.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import yaml
from omegaconf import DictConfig, OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.core.hash_inputs import omit_defaults
from hopbench.core.private import private_umask
from hopbench.core.protocol_card import CARD_KEY
from hopbench.core.provenance import software_versions
from hopbench.core.question_set import QUESTION_SET_DIGEST, question_gold, question_set_digest
from hopbench.core.records import Row
from hopbench.core.storage import warn_once
from hopbench.data.protocol import PROTOCOL_DEFAULTS
from hopbench.data.schema import Dataset, Question
from hopbench.evaluate.costs import concurrency_counts, cost_summary, llm_totals
from hopbench.evaluate.fallbacks import fallback_summary, fallback_warning
from hopbench.evaluate.score import aggregate
from hopbench.harness.compose import (
    build_dataset,
    build_llm,
    build_reader,
    build_retriever,
    build_services,
    check_encoder,
)
from hopbench.harness.method_info import method_record
from hopbench.harness.protocol_card import protocol_card
from hopbench.harness.question_blocks import (
    answer_block,
    batches,
    question_batch_counts,
    run_blocks,
)
from hopbench.harness.question_loop import answer, run_questions
from hopbench.harness.run_config import check_run_config, config_yaml
from hopbench.harness.run_store import RunStore, config_hash
from hopbench.kg.settings import graph_label
from hopbench.kg.stats import graph_sizes
from hopbench.read.base import ADDED_DEFAULTS as READER_ADDED_DEFAULTS
from hopbench.retrieve.base import Retriever, Services
from hopbench.retrieve.registry import registry_name

log = logging.getLogger("hopbench.run")

# Keys that change where things live or how they are shown, never what is computed.
# where files live, and max_text_chars: a check on the input that changes no number
_DATASET_PATH_KEYS = ("questions_path", "corpus_path", "data_dir", "max_text_chars")
_EMBEDDING_RUNTIME_KEYS = (
    "batch_size",
    "show_progress",
    "device",
    # embedding=server: how requests are sent, and a check of the reply
    "concurrency",
    "api_key_env",
    "timeout",
    "transient_retries",
    "backoff_s",
    "dim",
)
_LLM_RUNTIME_KEYS = (
    "api_key",
    "api_key_env",
    "timeout",
    "model_dir",
    "n_threads",
    "verbosity",
    "cache",
    "replay_failed",
    "cache_only",
)


def semantic_config(cfg: DictConfig, dataset: Dataset, retriever: Retriever) -> dict:
    """Everything that determines the numbers, and nothing that only says where files live.

    The retriever's class enters by its registry name, not its `_target_` (a Python import
    path): moving a class to another module changes no run hash (issue #58)."""
    c = OmegaConf.to_container(cfg, resolve=True)
    reader_on = c.get("reader", {}).get("name", "none") != "none"
    out = {
        "dataset": omit_defaults(
            {k: v for k, v in c["dataset"].items() if k not in _DATASET_PATH_KEYS},
            PROTOCOL_DEFAULTS,
        ),
        "dataset_fingerprint": dataset.fingerprint,
        "retriever": {
            **omit_defaults(
                {k: v for k, v in c["retriever"].items() if k != "_target_"},
                type(retriever).added_defaults,
            ),
            "class": registry_name(type(retriever)),
        },
        "embedding": {k: v for k, v in c["embedding"].items() if k not in _EMBEDDING_RUNTIME_KEYS},
        "reader": omit_defaults(c.get("reader", {"name": "none"}), READER_ADDED_DEFAULTS),
        "top_k": c["top_k"],
    }
    if retriever.needs_graph and "graph" in c:
        from hopbench.kg.settings import resolve_settings, semantic_settings

        out["graph"] = semantic_settings(resolve_settings(c["graph"]))
    if (retriever.needs_llm or reader_on) and "llm" in c:
        out["llm"] = {k: v for k, v in c["llm"].items() if k not in _LLM_RUNTIME_KEYS}
    return out


def run_dir_for(cfg: DictConfig, h: str) -> Path:
    return Path(cfg.paths.runs_dir) / cfg.dataset.name / cfg.retriever.name / h


def question_concurrency(cfg: DictConfig, llm) -> int:
    """Questions in flight: `concurrency` for runs that call an LLM; CPU-only retrievers keep one
    (their time is CPU, which threads would only share out)."""
    return int(cfg.concurrency) if llm is not None else 1


# ---- 1. plan -----------------------------------------------------------------------------
@dataclass
class Plan:
    """What is run and where: built and checked, nothing written."""

    cfg: DictConfig
    dataset: Dataset
    retriever: Retriever
    config_hash: str
    store: RunStore
    started: float  # perf_counter at the start (metrics.json's wall_seconds)

    @property
    def skip(self) -> bool:
        """The run is complete and `force=true` was not asked for."""
        return self.store.complete and not self.cfg.force


def plan(cfg: DictConfig) -> Plan:
    started = time.perf_counter()
    check_run_config(cfg)
    check_encoder(cfg)
    dataset = build_dataset(cfg)
    retriever = build_retriever(cfg)
    h = config_hash(semantic_config(cfg, dataset, retriever))
    return Plan(cfg, dataset, retriever, h, RunStore(run_dir_for(cfg, h)), started)


def build_models(p: Plan):
    """(LLM or None, reader or None), checked against what the retriever needs."""
    llm = build_llm(p.cfg)
    if p.retriever.needs_llm and llm is None:
        raise HopbenchError(
            f"retriever '{p.cfg.retriever.name}' needs an LLM; choose one with "
            "llm=local (offline model), llm=openai or llm=server"
        )
    return llm, build_reader(p.cfg, llm)


# ---- 2. prepare --------------------------------------------------------------------------
@dataclass
class Job:
    """A prepared run: where rows go, what is done and left, the retriever ready."""

    plan: Plan
    work: RunStore  # the run folder, or its staging sibling under force=true
    llm: object
    reader: object
    services: Services
    done: list[dict]
    todo: list[Question]
    timings: dict = field(default_factory=dict)
    graph_sizes: dict | None = None  # the counts of the graph read, for the protocol card


def prepare(p: Plan, llm, reader) -> Job:
    cfg, retriever = p.cfg, p.retriever
    work = p.store.staging() if cfg.force else p.store
    work.write_config(config_yaml(cfg))
    done = work.load_predictions()
    done_ids = {r["id"] for r in done}
    todo = [q for q in p.dataset.questions if q.id not in done_ids]
    log.info(
        "%s / %s -> %s (%d done, %d to go)",
        p.dataset.name,
        cfg.retriever.name,
        p.store.dir,
        len(done),
        len(todo),
    )
    services, kg = build_services(cfg, p.dataset, retriever, llm)
    t_prep = time.perf_counter()
    retriever.prepare(kg, services)
    timings = {"prepare_seconds": time.perf_counter() - t_prep}
    t_enc = time.perf_counter()
    services.encode_questions(todo)
    timings["query_encoding_ms_per_question"] = (
        1000 * (time.perf_counter() - t_enc) / max(len(todo), 1)
    )
    sizes = graph_sizes(kg) if kg is not None else None
    return Job(p, work, llm, reader, services, done, todo, timings, sizes)


# ---- 3. loop -----------------------------------------------------------------------------
def loop(job: Job) -> None:
    """Every question left, up to `concurrency` at once when the run calls an LLM; each row is
    appended as soon as it is scored. The run folder and the retriever are closed after it."""
    p, cfg = job.plan, job.plan.cfg
    n = question_concurrency(cfg, job.llm)

    def keep(row: Row) -> None:
        job.work.append(row)
        job.done.append(row.to_dict())

    one = partial(
        answer,
        retriever=p.retriever,
        reader=job.reader,
        dataset=p.dataset,
        llm=job.llm,
        top_k=cfg.top_k,
        concurrency=n,
    )
    block = batches(cfg, job.llm, job.reader, p.retriever)
    desc = f"{cfg.retriever.name} on {p.dataset.name}"
    try:
        cpu0 = time.process_time()
        if block > 1:  # no LLM: blocks of questions, one retrieve_batch call each
            loop_s = run_blocks(
                job.todo,
                partial(answer_block, retriever=p.retriever, top_k=cfg.top_k),
                keep,
                block=block,
                desc=desc,
                show=cfg.progress,
            )
        else:
            loop_s = run_questions(
                job.todo,
                one,
                keep,
                concurrency=n,
                show=cfg.progress,
                llm=job.llm,
                desc=desc,
            )
        job.timings.update(
            {
                "concurrency": n,
                "question_batch": block,  # this process's; per row: question_batch_counts
                "loop_seconds": loop_s,
                "loop_cpu_seconds": time.process_time() - cpu0,
                "questions_per_minute": 60 * len(job.todo) / loop_s
                if job.todo and loop_s > 0
                else None,
            }
        )
    except KeyboardInterrupt:
        log.warning(
            "interrupted: %d of %d questions are in %s (every row written is kept); the "
            "same command resumes the run",
            len(job.done),
            len(p.dataset.questions),
            job.work.dir,
        )
        raise
    finally:
        job.work.close()
        if hasattr(p.retriever, "close"):
            p.retriever.close()
        if hasattr(job.services.encoder, "close"):  # embedding=server: its request threads
            job.services.encoder.close()


# ---- 4. finish ---------------------------------------------------------------------------
def finish(job: Job) -> dict:
    """metrics.json (written last: it marks the run complete), then the staged run promoted."""
    metrics = run_metrics(job)
    job.work.write_metrics(metrics)
    if job.work is not job.plan.store:
        job.plan.store.promote(job.work)
    return metrics


def run_metrics(job: Job) -> dict:
    """The scores of every row, the run's identity, timings, the retriever's own counts
    (`Retriever.run_metrics`), costs and software versions."""
    p, cfg = job.plan, job.plan.cfg
    # in id order, not the order questions finished (concurrency, resumption): float sums are
    # then the same to the last bit however the run was interrupted
    done = sorted(job.done, key=lambda r: str(r["id"]))
    metrics = aggregate(done)
    metrics.update(
        {
            "dataset": p.dataset.name,
            "retriever": cfg.retriever.name,
            "config_hash": p.config_hash,
            "reader": cfg.reader.name if "reader" in cfg else "none",
            # the questions and gold the rows must be (hopbench.report.run_check)
            QUESTION_SET_DIGEST: question_set_digest(map(question_gold, p.dataset.questions)),
            "n_retrieval_excluded": p.dataset.notes["n_retrieval_excluded"],
            **job.timings,
            "wall_seconds": time.perf_counter() - p.started,
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "software": software_versions(),
            "graph": graph_label(cfg.graph) if p.retriever.needs_graph and "graph" in cfg else None,
            "method": _method(cfg, p.retriever),
        }
    )
    metrics.update(p.retriever.run_metrics(done))  # the method's own counts (Retriever.run_metrics)
    if job.llm is not None:
        metrics.update(llm_totals(done))  # every row's, not this process's (a resumed run)
    metrics.update(cost_summary(done))
    metrics.update(concurrency_counts(done))
    metrics.update(question_batch_counts(done))
    metrics.update(fallback_summary(done))
    metrics[CARD_KEY] = protocol_card(  # metadata: in no run hash (semantic_config)
        cfg,
        p.dataset,
        p.retriever,
        encoder=job.services.encoder,
        llm=job.llm,
        reader=job.reader,
        graph_sizes=job.graph_sizes,
        scores=metrics,
    )
    if warning := fallback_warning(metrics):
        log.warning("%s", warning)
    return metrics


def _method(cfg: DictConfig, retriever: Retriever) -> dict:
    """metrics.json's `method` (hopbench.harness.method_info): what the report shows of the settings."""
    config = yaml.safe_load(config_yaml(cfg)) or {}
    return method_record(
        config.get("retriever") or {}, config, retriever.family or str(cfg.retriever.name)
    )


# ---- the run -----------------------------------------------------------------------------
@contextmanager
def _named(folder: Path):
    """An OSError raised by a write that did not say to which file (a full disk: `write()`
    names none) gets the run folder, so the one line the user sees says where."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(folder)) from exc
        raise


def _completed(store: RunStore) -> dict:
    log.info("run %s is complete; skipping (force=true reruns it)", store.dir)
    return json.loads(store.metrics_path.read_text())  # readable: `store.complete` checked it


def execute(cfg: DictConfig) -> dict:
    """Run (or resume, or skip) one configuration; return its metrics."""
    private_umask()  # everything the run writes is its user's only (hopbench.core.private)
    warn_once(str(cfg.paths.runs_dir), "the runs folder")  # flock not shared between nodes there
    warn_once(str(cfg.paths.cache_dir), "the cache folder")
    p = plan(cfg)
    if p.skip:
        p.store.tidy()  # a killed force=true rerun's staging folder, if no one is working on it
        return _completed(p.store)
    llm, reader = build_models(p)
    with _named(p.store.dir), p.store.lock():
        if p.skip:  # finished by the launch this one waited for
            return _completed(p.store)
        job = prepare(p, llm, reader)
        loop(job)
        metrics = finish(job)
    log.info("wrote %s", p.store.metrics_path)
    return metrics
