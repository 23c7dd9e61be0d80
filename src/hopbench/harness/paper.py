"""`hopbench paper` (`make paper`): the whole comparison grid, planned, then run within a budget.

    hopbench paper --plan-only                        # the plan: runs, complete, LLM hours left
    hopbench paper paper.max_llm_hours=2              # CPU rows, then LLM rows while 2 h last
    hopbench paper llm=server concurrency=32 paper.llm_questions=1000

The grid is configs/paper.yaml: every retriever with its named variants and ablations on MuSiQue,
2Wiki, HotpotQA and HoVer (spaCy graph everywhere, OpenIE too on MuSiQue), CPU-only rows
(llm=none, reader=none) on the full bundled sets (HoVer: 1,000 claims), LLM rows (a retriever
that calls the LLM, or a reader) on `paper.llm_questions` questions per set. `paper.KEY=VALUE`
changes a grid setting; `llm=X` the LLM of the LLM rows; any other KEY=VALUE is passed to every
run (paths.data_dir=..., concurrency=32).

Before anything runs it prints the plan: each run (dataset, retriever, overrides, config hash,
computed by the runner's own `semantic_config` and `config_hash`), whether it is complete in
runs_dir, and for LLM rows the calls and hours still to spend, from the LLM seconds per question
that runs of the same method recorded (retrieval: same retriever; reading: same reader; complete
runs, and runs still going with 5 or more questions), else those of the committed reference
leaderboard, else `paper.default_seconds_per_question`; each divided by the concurrency it was
recorded at (a request's seconds include the wait for the other questions in flight), so the
hours are wall-clock hours on a server as busy as then. A row whose replies the committed reply
file carries (counted from its entries, not its header; the file is checked against its digest
list first) costs 0 h: it is imported first, so every call is a cache hit,
and such a row runs whatever the budget (`paper.max_llm_hours=0`: everything that needs no
model; add `llm.cache_only=true` to make a miss an error instead of a model call).
The LLM rows run with `llm.replay_failed=true` (not part of the config hash): a reply recorded
as failed is replayed rather than asked again, so the reference rows regenerate exactly
(`llm.replay_failed=false` asks the server again). Then: the committed reply file is imported
into the response cache (if there is one), the CPU
rows run, then the LLM rows cheapest first, each finished before the next starts, one
`python -m hopbench.run` each. An LLM row starts only if its estimate fits in what is left of
`paper.max_llm_hours`; when it does not, the command stops (exit 0) saying what is left: run the
same command again to go on (complete runs are skipped, a killed one resumes). Then it prints
the wall-clock hours of the CPU-only and of the LLM runs it made, and last runs `hopbench
report` (`--check-reference`, as `make paper` runs it: and compares the reference rows with the
committed reference). Exit code 2 for a grid or setting that does not compose (a
`paper.max_llm_hours` that is not a number >= 0) or a reply file that is damaged or does not
match its digest list, 1 when a run failed or differs from the reference.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from omegaconf import OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import CONFIG_DIR, REPO_REFERENCE

GRID_PATH = Path(CONFIG_DIR) / "paper.yaml"
REFERENCE_LEADERBOARD = REPO_REFERENCE / "leaderboard.csv"


# ---- the grid ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One run of the grid, as the overrides `python -m hopbench.run` takes."""

    kind: str  # cpu | llm | sweep
    dataset: str
    retriever: str
    overrides: tuple[str, ...]
    uses_llm: bool
    n_extra: int = 0  # the last overrides are the command line's, passed to every run

    def override(self, key: str) -> str | None:
        for o in reversed(self.overrides):
            if o.startswith(key + "="):
                return o.split("=", 1)[1]
        return None

    @property
    def reader(self) -> str:
        return self.override("reader") or "none"

    @property
    def shown(self) -> str:
        """The overrides beyond dataset= and retriever=, as the plan prints them."""
        own = self.overrides[: len(self.overrides) - self.n_extra]
        return " ".join(o for o in own if not o.startswith(("dataset=", "retriever=")))


def load_grid(settings: Iterable[str] = (), path: str | Path | None = None):
    """configs/paper.yaml with `paper.KEY=VALUE` settings applied."""
    grid = OmegaConf.load(path or GRID_PATH)
    settings = list(settings)
    if settings:
        grid = OmegaConf.merge(grid, OmegaConf.from_dotlist(settings))
    return grid


def expand(
    grid,
    extra: Iterable[str] = (),
    sizes: Callable[[str], int] | None = None,
    llm_extra: Iterable[str] = (),
) -> list[Row]:
    """Every row of the grid (before hashing: rows that come to the same run are merged later).
    `sizes(dataset)` gives the number of questions of a bundled set (an LLM row takes all of a
    set no larger than paper.llm_questions, without a limit, as the reference runs did)."""
    extra, llm_extra = tuple(extra), tuple(extra) + tuple(llm_extra)  # llm.X=...: the LLM rows only
    p = grid.paper
    n_llm = int(p.llm_questions)
    rows: list[Row] = []
    for ds, spec in grid.datasets.items():
        graphs = list(spec.get("graphs") or ["spacy"])
        cpu_ov = tuple(spec.get("cpu_overrides") or ())
        for item in grid.get("cpu") or ():
            for g in graphs:
                rows.append(
                    Row(
                        "cpu",
                        ds,
                        item.retriever,
                        (
                            f"dataset={ds}",
                            f"retriever={item.retriever}",
                            f"graph={g}",
                            "reader=none",
                            "llm=none",
                            *cpu_ov,
                            *(item.get("overrides") or ()),
                            *extra,
                        ),
                        False,
                        len(extra),
                    )
                )
        limit = () if sizes is not None and sizes(ds) <= n_llm else (f"dataset.limit={n_llm}",)
        for item in grid.get("llm") or ():
            reader = spec.reader if item.get("reader", "dataset") == "dataset" else item.reader
            for g in graphs:
                rows.append(
                    Row(
                        "llm",
                        ds,
                        item.retriever,
                        (
                            f"dataset={ds}",
                            f"retriever={item.retriever}",
                            f"graph={g}",
                            f"reader={reader}",
                            f"llm={p.llm}",
                            *limit,
                            *(item.get("overrides") or ()),
                            *llm_extra,
                        ),
                        True,
                        len(llm_extra),
                    )
                )
    for sw in grid.get("sweeps") or ():
        keys = list(sw.params)
        for values in itertools.product(*(list(sw.params[k]) for k in keys)):
            rows.append(
                Row(
                    "sweep",
                    sw.dataset,
                    sw.retriever,
                    (
                        f"dataset={sw.dataset}",
                        f"retriever={sw.retriever}",
                        "graph=spacy",
                        "reader=none",
                        "llm=none",
                        *(sw.get("overrides") or ()),
                        *(f"{k}={v}" for k, v in zip(keys, values)),
                        *extra,
                    ),
                    False,
                    len(extra),
                )
            )
    return rows


# ---- the plan ----------------------------------------------------------------------------------
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


# ---- cost estimates ----------------------------------------------------------------------------
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
    """metrics.json of every complete run; for a run still going (predictions, no metrics.json)
    with at least `min_partial` questions, the same cost keys summed from its rows, so the
    estimate of a method being run for the first time is its own recorded cost, not a guess."""
    from hopbench.core.metrics_file import read_metrics
    from hopbench.evaluate.costs import concurrency_counts, cost_summary

    root = Path(runs_dir)
    if not root.is_dir():
        return
    for d in sorted(p for p in root.glob("*/*/*") if p.is_dir()):
        m = read_metrics(d / "metrics.json") if (d / "metrics.json").is_file() else None
        if m:
            yield m
            continue
        rows = _read_rows(d / "predictions.jsonl")
        if len(rows) >= min_partial:
            yield {
                "retriever": d.parent.name,
                "reader": _reader_of(rows),
                "concurrency": _config_concurrency(d / "config.yaml"),
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


# ---- running -----------------------------------------------------------------------------------
def child_env() -> dict[str, str]:
    """The environment of a run's process: this package's code first on its path, so the run
    computes the very config hash the plan showed (whatever other checkout is installed)."""
    src = str(Path(__file__).resolve().parents[2])
    path = [src, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != src)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def launch(row: Row) -> int:
    """One run through the run entry point (a process of its own)."""
    return run_child([sys.executable, "-m", "hopbench.run", *row.overrides], child_env())


def run_child(argv: list[str], env: dict[str, str] | None = None) -> int:
    """Run `argv` and return its exit code. A Ctrl-C reaches the child and this process alike
    (one process group); the child's handler finishes its questions in flight and exits 130, so
    here it is only noted, never raised mid-wait. A Python handler, unlike SIG_IGN, is not
    inherited across exec, so the child keeps the default one."""
    previous = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        return subprocess.call(argv, env=env)
    finally:
        signal.signal(signal.SIGINT, previous)


# A run stopped by Ctrl-C: 130 from its own handler, -SIGINT if the signal came before that
# handler was installed (during imports).
INTERRUPTED = (130, -int(signal.SIGINT))


@dataclass
class Outcome:
    ran: list[Planned] = field(default_factory=list)
    failed: list[Planned] = field(default_factory=list)
    left: list[Planned] = field(default_factory=list)
    llm_hours_spent: float = 0.0  # wall-clock of every LLM row run (reply-file rows too)
    cpu_hours_spent: float = 0.0  # wall-clock of the CPU-only rows run (README's timing, #29)
    budget_hours_spent: float = 0.0  # wall-clock of the rows that needed the model (needs_model)
    interrupted: bool = False

    def timing(self) -> str:
        """One line: how many rows of each kind ran and their wall-clock hours."""
        n_cpu = sum(not p.needs_llm for p in self.ran + self.failed)
        n_llm = len(self.ran) + len(self.failed) - n_cpu
        return (
            f"hopbench paper: wall-clock: {n_cpu} CPU-only run(s) {self.cpu_hours_spent:.2f} h, "
            f"{n_llm} LLM run(s) {self.llm_hours_spent:.2f} h"
        )


def execute_plan(
    planned: list[Planned],
    max_llm_hours: float | None,
    run: Callable[[Row], int] = launch,
    clock: Callable[[], float] = time.monotonic,
    say: Callable[[str], None] = print,
) -> Outcome:
    """Run what is not complete in `work_order`, each row finished before the next starts; an
    LLM row starts only if its estimate fits in what is left of the budget (else stop)."""
    out = Outcome()
    todo = [p for p in work_order(planned) if not p.complete]
    for i, p in enumerate(todo):
        if (
            p.needs_model
            and max_llm_hours is not None
            and out.budget_hours_spent + p.hours_left > max_llm_hours
        ):
            out.left = todo[i:]
            return out
        say(
            f"hopbench paper: [{i + 1}/{len(todo)}] {p.row.dataset} {p.row.retriever} {p.row.shown} "
            f"({p.config_hash})"
        )
        started = clock()
        rc = run(p.row)
        hours = (clock() - started) / 3600
        if p.needs_llm:
            out.llm_hours_spent += hours
            if p.needs_model:
                out.budget_hours_spent += hours
        else:
            out.cpu_hours_spent += hours
        (out.ran if rc == 0 else out.failed).append(p)
        if rc in INTERRUPTED:  # interrupted: stop here, as the run did
            out.interrupted = True
            out.left = todo[i:]
            return out
    return out


# ---- the reference rows the grid does not make -------------------------------------------------
def unmatched_reference(reference_csv: str | Path, planned: list[Planned]) -> list[dict]:
    """The rows of a leaderboard (dataset, retriever, config_hash) that no planned run produces."""
    made = {(p.row.dataset, p.row.retriever, p.config_hash) for p in planned if p.config_hash}
    return [r for r in _reference_rows(reference_csv) if _row_key(r) not in made]


def reference_without_replies(
    reference_csv: str | Path, planned: list[Planned], reply_runs: set[str]
) -> list[dict]:
    """The rows of a leaderboard that a planned LLM run makes but whose replies are not in the
    reply file (`reply_runs`: its header's `dataset/retriever/hash` labels). A fresh clone could
    not bring such a row back without the model: it waits for a rerun and an export."""
    llm = {(p.row.dataset, p.row.retriever, p.config_hash) for p in planned if p.needs_llm}
    return [
        r
        for r in _reference_rows(reference_csv)
        if _row_key(r) in llm and "/".join(_row_key(r)) not in reply_runs
    ]


def _reference_rows(reference_csv: str | Path) -> list[dict]:
    with open(reference_csv, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _row_key(r: dict) -> tuple[str, str, str]:
    """A leaderboard row's run: (dataset, retriever, config_hash), as a planned run names it."""
    return r["dataset"], r["retriever"], r["config_hash"]


# ---- the command -------------------------------------------------------------------------------
USAGE = """usage: hopbench paper [--plan-only] [--no-report] [--check-reference] [--grid FILE]
                      [paper.KEY=VALUE ...] [llm=X] [KEY=VALUE ...]

  --plan-only   print the plan and stop (nothing is imported, run or written)
  --no-report   do not run `hopbench report` at the end
  --check-reference  run it as `hopbench report --check-reference`: the runs that are reference
                rows must match the committed reference (exit 1 if not; `make paper` does this)
  --grid FILE   another grid declaration (default: configs/paper.yaml)
  paper.llm_questions=N    questions per set for the LLM rows (default 100)
  paper.max_llm_hours=H    LLM budget for this invocation (default: no limit)
  llm=X                    the LLM of the LLM rows (default local); llm.KEY=VALUE: theirs only
  llm.cache_only=true      every LLM reply from the response cache (a miss is an error): with
                           paper.max_llm_hours=0, what the reply file brings back, no model
  KEY=VALUE                passed to every run (paths.data_dir=DIR, concurrency=32, ...)
"""


def _import_replies(path: str, extra: list[str]) -> None:
    from hopbench.harness.compose import load_config
    from hopbench.llm.cache import ResponseCache
    from hopbench.llm.replies import import_replies

    cache_dir = load_config([o for o in extra if o.startswith("paths.")]).paths.cache_dir
    cache = ResponseCache.in_dir(str(cache_dir))
    try:
        result = import_replies(path, cache)
    finally:
        cache.close()
    print(
        f"hopbench paper: {path} into the response cache ({cache.path}): {result.added} added, "
        f"{result.same} already there, {len(result.conflicts)} conflict(s) kept as the cache has them"
    )


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


def llm_overrides(words: list[str]) -> list[str]:
    """The `llm.KEY=VALUE` words, for the LLM rows only; `llm.replay_failed=true` unless given, so
    a row that met a bad reply comes back as it was computed."""
    out = [w for w in words if w.startswith("llm.")]
    if not any(w.startswith("llm.replay_failed=") for w in out):
        out.append("llm.replay_failed=true")
    return out


def cli(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip() + "\n\n" + USAGE)
        return 0
    flags = {a for a in argv if a.startswith("--") and "=" not in a}
    grid_path = None
    args = list(argv)
    if "--grid" in args:
        i = args.index("--grid")
        grid_path = args[i + 1] if i + 1 < len(args) else None
        del args[i : i + 2]
        flags.discard("--grid")
    if unknown := flags - {"--plan-only", "--no-report", "--check-reference"}:
        print(
            f"hopbench paper: error: unknown option {sorted(unknown)[0]}\n\n{USAGE}",
            file=sys.stderr,
        )
        return 2
    words = [a for a in args if not a.startswith("--")]
    if bad := [w for w in words if "=" not in w]:
        print(f"hopbench paper: error: {bad[0]!r} is not KEY=VALUE\n\n{USAGE}", file=sys.stderr)
        return 2
    settings = [w for w in words if w.startswith("paper.")]
    settings += [f"paper.llm={w.split('=', 1)[1]}" for w in words if w.startswith("llm=")]
    extra = [w for w in words if not w.startswith(("paper.", "llm=", "llm."))]
    llm_extra = llm_overrides(words)
    try:
        grid = load_grid(settings, grid_path)
        max_h = budget_hours(grid.paper.max_llm_hours)
        planner = Planner()
        rows = expand(
            grid,
            extra,
            sizes=lambda ds: planner.size(ds, [e for e in extra if e.startswith("paths.")]),
            llm_extra=llm_extra,
        )
        planned = plan_grid(rows, planner)
    except Exception as exc:  # noqa: BLE001 - a grid that does not compose: one line
        print(f"hopbench paper: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    from hopbench.harness.compose import load_config

    runs_dir = load_config(extra).paths.runs_dir
    add_costs(
        planned,
        Costs.from_runs(
            runs_dir,
            REFERENCE_LEADERBOARD,
            (
                float(grid.paper.default_seconds_per_question),
                float(grid.paper.default_calls_per_question),
            ),
        ),
    )
    replies = grid.paper.get("replies")
    try:
        add_committed_replies(planned, reply_runs_of(replies))
    except HopbenchError as exc:  # a damaged reply file: one line naming it
        print(f"hopbench paper: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"hopbench paper: runs_dir {runs_dir}; LLM cost estimates from runs of the same "
        f"method there (complete, or 5+ questions done), else the reference leaderboard, else "
        f"{float(grid.paper.default_seconds_per_question):g} s and "
        f"{float(grid.paper.default_calls_per_question):g} calls per question (default)"
    )
    print(format_plan(planned, max_h))
    if "--plan-only" in flags:
        return 0
    if replies and Path(replies).is_file():
        try:
            _import_replies(replies, extra)
        except HopbenchError as exc:  # as `hopbench replies import` says it: one line
            print(f"hopbench paper: error: {exc}", file=sys.stderr)
            return 2
    out = execute_plan(planned, max_h)
    print(out.timing())
    status = 0
    if out.interrupted:
        print(
            f"hopbench paper: interrupted; {len(out.left)} run(s) left: run the same command to resume",
            file=sys.stderr,
        )
        return 130
    if out.failed:
        print(
            f"hopbench paper: {len(out.failed)} run(s) failed: "
            + ", ".join(f"{p.row.dataset}/{p.row.retriever}/{p.config_hash}" for p in out.failed),
            file=sys.stderr,
        )
        status = 1
    if out.left:
        print(
            f"hopbench paper: stopped with {len(out.left)} run(s) left (~{sum(p.hours_left for p in out.left):.1f} "
            f"LLM h estimated; {out.budget_hours_spent:.2f} h of the {max_h:g} h budget spent): run the same "
            "command again to go on, or raise paper.max_llm_hours"
            if max_h is not None
            else f"hopbench paper: stopped with {len(out.left)} run(s) left: run the same command again to go on"
        )
    if "--no-report" not in flags:
        cfg = load_config(extra)
        rc = subprocess.call(
            [
                sys.executable,
                "-m",
                "hopbench.cli",
                "report",
                "--runs-dir",
                str(cfg.paths.runs_dir),
                "--results-dir",
                str(cfg.paths.results_dir),
                *(["--check-reference"] if "--check-reference" in flags else []),
            ],
            env=child_env(),
        )
        status = status or (1 if rc else 0)
    return status
