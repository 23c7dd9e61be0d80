"""The planned runs, each as `python -m hopbench.run` in a process of its own, in work order and
within the LLM budget."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from hopbench.harness.paper.grid import Row
from hopbench.harness.paper.plan import Planned, work_order


def child_env() -> dict[str, str]:
    """The environment of a run's process: this package's code first on its path, so the run
    computes the very config hash the plan showed (whatever other checkout is installed)."""
    src = str(Path(__file__).resolve().parents[3])
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
    cpu_hours_spent: float = 0.0  # wall-clock of CPU-only rows (docs/results.md, #29)
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
