"""Rows to planned runs (config hash, folder, what is done), the order they run in, and the plan
as `hopbench paper` prints it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from omegaconf import OmegaConf

from hopbench.harness.paper.grid import Row


@dataclass
class Planned:
    row: Row
    config_hash: str | None = None
    run_dir: Path | None = None
    complete: bool = False
    n_questions: int = 0
    n_done: int = 0
    needs_llm: bool = False  # the run calls an LLM (its retriever or its reader)
    retrieval_llm: bool = False  # its retriever does
    seconds_per_q: float = 0.0
    calls_per_q: float = 0.0
    cost_source: str = ""
    error: str | None = None

    @property
    def n_left(self) -> int:
        return 0 if self.complete else max(self.n_questions - self.n_done, 0)

    @property
    def hours_left(self) -> float:
        return self.n_left * self.seconds_per_q / 3600 if self.needs_llm else 0.0

    @property
    def needs_model(self) -> bool:
        """Model time is still to spend: what `paper.max_llm_hours` bounds. A row the reply file
        answers (0 h) spends none, so it runs whatever the budget."""
        return self.hours_left > 0

    @property
    def calls_left(self) -> float:
        return self.n_left * self.calls_per_q if self.needs_llm else 0.0


class Planner:
    """Composes each row's config as `python -m hopbench.run` would and hashes it with the runner's
    own functions (`semantic_config`, `config_hash`, `run_dir_for`); a dataset is loaded once."""

    def __init__(self):
        self._datasets: dict[str, object] = {}

    def dataset(self, cfg):
        from hopbench.harness.compose import build_dataset

        key = json.dumps(
            OmegaConf.to_container(cfg.dataset, resolve=True), sort_keys=True, default=str
        )
        if key not in self._datasets:
            self._datasets[key] = build_dataset(cfg)
        return self._datasets[key]

    def size(self, name: str, extra: Iterable[str] = ()) -> int:
        from hopbench.harness.compose import load_config

        return len(self.dataset(load_config([f"dataset={name}", *extra])).questions)

    def plan(self, row: Row) -> Planned:
        from hopbench.harness.compose import build_retriever, check_encoder, load_config
        from hopbench.harness.run_store import RunStore, config_hash
        from hopbench.harness.runner import run_dir_for, semantic_config

        out = Planned(row)
        try:
            cfg = load_config(list(row.overrides))
            from hopbench.harness.run_config import check_run_config

            check_run_config(cfg)
            check_encoder(cfg)
            dataset = self.dataset(cfg)
            retriever = build_retriever(cfg)
            out.config_hash = config_hash(semantic_config(cfg, dataset, retriever))
        except Exception as exc:  # noqa: BLE001 - shown in the plan; the row is not run
            out.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return out
        out.run_dir = run_dir_for(cfg, out.config_hash)
        store = RunStore(out.run_dir)
        out.complete = store.complete
        out.n_questions = len(dataset.questions)
        out.n_done = _count_lines(store.predictions_path) if not out.complete else out.n_questions
        reader_on = (cfg.get("reader") or {}).get("name", "none") != "none"
        out.retrieval_llm = bool(retriever.needs_llm)
        out.needs_llm = bool(retriever.needs_llm or reader_on)
        return out


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


def plan_grid(rows: list[Row], planner: Planner | None = None) -> list[Planned]:
    """Each row planned, rows that come to the same run (same folder) kept once."""
    planner = planner or Planner()
    out, seen = [], set()
    for row in rows:
        p = planner.plan(row)
        key = (row.dataset, row.retriever, p.config_hash) if p.config_hash else id(p)
        if key in seen:
            continue
        seen.add(key)
        out.append(p)
    return out


def work_order(planned: list[Planned]) -> list[Planned]:
    """CPU runs first (grid order), then LLM runs cheapest first; rows that do not compose last."""
    ok = [p for p in planned if p.config_hash]
    cpu = [p for p in ok if not p.needs_llm]
    llm = sorted(
        (p for p in ok if p.needs_llm), key=lambda p: (p.hours_left, p.row.dataset, p.row.retriever)
    )
    return cpu + llm


def format_plan(planned: list[Planned], max_llm_hours: float | None) -> str:
    lines = [
        f"{'#':>3}  {'state':<9} {'dataset':<16} {'retriever':<34} {'hash':<12}  {'n':>5}  "
        f"{'LLM calls':>9} {'LLM h':>6}  overrides"
    ]
    for i, p in enumerate(work_order(planned) + [p for p in planned if not p.config_hash], 1):
        if p.error:
            state = "ERROR"
        elif p.complete:
            state = "complete"
        elif p.n_done:
            state = f"{p.n_done}/{p.n_questions}"
        else:
            state = "todo"
        calls = f"{p.calls_left:9.0f}" if p.needs_llm else f"{'-':>9}"
        hours = f"{p.hours_left:6.2f}" if p.needs_llm else f"{'-':>6}"
        est = (
            f" [{p.cost_source}: {p.seconds_per_q:.1f} s/q]"
            if p.needs_llm and not p.complete
            else ""
        )
        lines.append(
            f"{i:>3}  {state:<9} {p.row.dataset:<16} {p.row.retriever:<34} "
            f"{p.config_hash or '-':<12}  {p.n_questions:>5}  {calls} {hours}  {p.row.shown}{est}"
            + (f"  ({p.error})" if p.error else "")
        )
    ok = [p for p in planned if p.config_hash]
    n_llm = sum(p.needs_llm for p in ok)
    done = sum(p.complete for p in ok)
    llm_left = [p for p in ok if p.needs_llm and not p.complete]
    budget = "no limit" if max_llm_hours is None else f"{max_llm_hours:g} h"
    lines.append(
        f"plan: {len(ok)} runs ({len(ok) - n_llm} CPU-only, {n_llm} LLM), {done} complete, "
        f"{len(ok) - done} to run; LLM still to spend: ~{sum(p.calls_left for p in llm_left):,.0f} "
        f"calls, ~{sum(p.hours_left for p in llm_left):.1f} h in {len(llm_left)} runs "
        f"(budget paper.max_llm_hours: {budget})"
    )
    if from_file := sum(p.cost_source == "reply file" for p in llm_left):
        lines.append(
            f"{from_file} of those LLM runs are answered by the committed reply file (0 h: no "
            "model time; they run whatever the budget)"
        )
    if errors := [p for p in planned if p.error]:
        lines.append(f"{len(errors)} row(s) do not compose and are not run (shown as ERROR)")
    return "\n".join(lines)
