"""What a planned LLM run will cost (model seconds and calls per question, from recorded runs,
the reference leaderboard or a default; 0 h when the reply file answers it) and the budget
setting those hours are held to."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from omegaconf import OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.harness.paper.plan import Planned


@dataclass
class Costs:
    """Mean LLM seconds and calls per question, of retrieval by retriever and of reading by
    reader, from complete runs' metrics.json; whole-row costs by (retriever, reader) from a
    leaderboard (the committed reference) where no run recorded one."""

    retrieval: dict[str, tuple[float, float]] = field(default_factory=dict)
    reading: dict[str, tuple[float, float]] = field(default_factory=dict)
    rows: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    default: tuple[float, float] = (60.0, 5.0)

    @classmethod
    def from_runs(
        cls,
        runs_dir: str | Path,
        leaderboard: str | Path | None = None,
        default: tuple[float, float] = (60.0, 5.0),
        min_partial: int = 5,
    ) -> "Costs":
        ret: dict[str, list] = {}
        rea: dict[str, list] = {}
        for m in _run_costs(runs_dir, min_partial):
            c = _in_flight(m)
            s = m.get("retrieval_llm_seconds_uncached_per_question")
            if s is not None:
                ret.setdefault(m.get("retriever"), []).append(
                    (s / c, m.get("retrieval_llm_calls_per_question", 0))
                )
            s = m.get("reader_llm_seconds_uncached_per_question")
            if s is not None:
                rea.setdefault(m.get("reader"), []).append(
                    (s / c, m.get("reader_llm_calls_per_question", 0))
                )
        rows: dict[tuple[str, str], list] = {}
        if leaderboard and Path(leaderboard).is_file():
            with open(leaderboard, newline="", encoding="utf-8") as fh:
                for r in csv.DictReader(fh):
                    if r.get("llm_seconds_per_q"):
                        rows.setdefault((r["retriever"], r["reader"]), []).append(
                            (
                                float(r["llm_seconds_per_q"]) / _in_flight(r),
                                float(r.get("llm_calls_per_q") or 0),
                            )
                        )
        return cls(_means(ret), _means(rea), _means(rows), default)

    def estimate(
        self, retriever: str, reader: str, retriever_calls_llm: bool
    ) -> tuple[float, float, str]:
        """(seconds, calls, where from) per question of a row."""
        r = self.retrieval.get(retriever) if retriever_calls_llm else (0.0, 0.0)
        d = self.reading.get(reader) if reader != "none" else (0.0, 0.0)
        if r is not None and d is not None:
            return r[0] + d[0], r[1] + d[1], "runs"
        if (retriever, reader) in self.rows:
            s, c = self.rows[(retriever, reader)]
            return s, c, "reference"
        if not retriever_calls_llm and ("dense", reader) in self.rows:  # reading only: as dense's
            s, c = self.rows[("dense", reader)]
            return s, c, "reference (dense's reading)"
        return *self.default, "default"


def _in_flight(m: dict) -> float:
    """A run's questions in flight. Its LLM seconds per question are each request's latency, which
    at `concurrency` c on a saturated server (the local model) includes waiting for the c-1 others:
    c questions finish per latency, so the wall-clock cost of a question is seconds / c. The mean
    over the questions that recorded it (`question_concurrency`: a dict in metrics.json, its JSON
    text in a leaderboard CSV), else the run's `concurrency`."""
    recorded = m.get("question_concurrency")
    if isinstance(recorded, str):
        try:
            recorded = json.loads(recorded)
        except ValueError:
            recorded = None
    if not isinstance(recorded, dict):
        recorded = {}
    counts = {float(k): n for k, n in recorded.items() if _number(k)}
    if counts:
        return max(1.0, sum(k * n for k, n in counts.items()) / sum(counts.values()))
    c = m.get("concurrency")
    return max(1.0, float(c)) if _number(c) else 1.0


def _number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _run_costs(runs_dir: str | Path, min_partial: int) -> Iterator[dict]:
    """metrics.json of every complete run (the runs `hopbench report` reads: run_folders); for a
    run still going (predictions, no metrics.json) with at least `min_partial` questions, the
    same cost keys summed from its rows, so the estimate of a method being run for the first
    time is its own recorded cost, not a guess."""
    from hopbench.core.metrics_file import read_metrics
    from hopbench.core.run_folders import run_folders, unfinished_run_folders
    from hopbench.evaluate.costs import concurrency_counts, cost_summary

    if not Path(runs_dir).is_dir():
        return
    for folder in run_folders(runs_dir, "the paper's cost estimate"):
        yield read_metrics(folder / "metrics.json")
    for folder in unfinished_run_folders(runs_dir, "the paper's cost estimate"):
        rows = _read_rows(folder / "predictions.jsonl")
        if len(rows) >= min_partial:
            yield {
                "retriever": folder.parent.name,
                "reader": _reader_of(rows),
                "concurrency": _config_concurrency(folder / "config.yaml"),
                **cost_summary(rows),
                **concurrency_counts(rows),
            }


def _config_concurrency(path: Path):
    if not path.is_file():
        return None
    return OmegaConf.select(OmegaConf.load(path), "concurrency", default=None)


def _read_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by a kill: the run rewrites it on resume
                continue
    return out


def _reader_of(rows: list[dict]) -> str:
    return ((rows[0].get("reader_trace") or {}).get("reader")) or "none"


def _means(d: dict) -> dict:
    return {
        k: (sum(v[0] for v in vs) / len(vs), sum(v[1] for v in vs) / len(vs))
        for k, vs in d.items()
        if vs
    }


def add_costs(planned: list[Planned], costs: Costs) -> None:
    for p in planned:
        if p.needs_llm and p.config_hash:
            p.seconds_per_q, p.calls_per_q, p.cost_source = costs.estimate(
                p.row.retriever, p.row.reader, p.retrieval_llm
            )


def run_label(p: Planned) -> str:
    """A planned run as reply files and the reference name it: `dataset/retriever/config_hash`."""
    return f"{p.row.dataset}/{p.row.retriever}/{p.config_hash}"


def add_committed_replies(planned: list[Planned], reply_runs: set[str]) -> None:
    """An LLM row whose replies the reply file carries (`reply_runs`: its header's run labels)
    costs no model time: once the file is imported, every call is a cache hit. Its estimate
    becomes 0 h (calls stay: they are made, and answered from the cache)."""
    for p in planned:
        if p.needs_llm and p.config_hash and run_label(p) in reply_runs:
            p.seconds_per_q, p.cost_source = 0.0, "reply file"


def reply_runs_of(path: str | Path | None) -> set[str]:
    """The run labels whose replies a reply file holds, counted from its entries, not taken from
    its header (`covered_runs`), after checking every line and its digest list; none when there
    is no such file. A run the header lists but the entries do not cover is planned as model
    time."""
    if not path or not Path(path).is_file():
        return set()
    from hopbench.llm.reply_digests import read_verified
    from hopbench.llm.reply_file import covered_runs

    return covered_runs(*read_verified(path))


def budget_hours(value) -> float | None:
    """`paper.max_llm_hours` as hours: null is no limit; anything else a finite number >= 0 (nan
    compares false with everything, so it would mean no limit too)."""
    if value is None:
        return None
    try:
        hours = float(value)
    except (TypeError, ValueError):
        hours = math.nan
    if not math.isfinite(hours) or hours < 0:
        raise HopbenchError(
            f"paper.max_llm_hours={value!r}: expected a number of hours >= 0, or null for no limit"
        )
    return hours
