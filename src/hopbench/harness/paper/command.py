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
the wall-clock hours of the CPU-only and of the LLM runs it made, writes the claims ledger
(`hopbench claims`: results/reference/claims.md), and last runs `hopbench
report` (`--check-reference`, as `make paper` runs it: and compares the reference rows with the
committed reference). Exit code 2 for a grid or setting that does not compose (a
`paper.max_llm_hours` that is not a number >= 0) or a reply file that is damaged or does not
match its digest list, 1 when a run failed or differs from the reference.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.harness.paper.costs import (
    Costs,
    add_committed_replies,
    add_costs,
    budget_hours,
    reply_runs_of,
)
from hopbench.harness.paper.execute import Outcome, child_env, execute_plan
from hopbench.harness.paper.grid import expand, load_grid
from hopbench.harness.paper.plan import Planner, format_plan, plan_grid
from hopbench.harness.paper.reference import REFERENCE_LEADERBOARD

USAGE = """usage: hopbench paper [--plan-only] [--no-report] [--check-reference] [--grid FILE]
                      [--part K/N] [paper.KEY=VALUE ...] [llm=X] [KEY=VALUE ...]

  --plan-only   print the plan and stop (nothing is imported, run or written)
  --no-report   do not run `hopbench report` at the end
  --check-reference  run it as `hopbench report --check-reference`: the runs that are reference
                rows must match the committed reference (exit 1 if not; `make paper` does this)
  --grid FILE   another grid declaration (default: configs/paper.yaml)
  --part K/N    run only part K of N: every N-th run not complete, from the K-th (N such commands on
                one runs folder share the grid; a run two of them need waits on its lock). No
                report or claims: run the command once more without --part for those
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


def llm_overrides(words: list[str]) -> list[str]:
    """The `llm.KEY=VALUE` words, for the LLM rows only; `llm.replay_failed=true` unless given, so
    a row that met a bad reply comes back as it was computed."""
    out = [w for w in words if w.startswith("llm.")]
    if not any(w.startswith("llm.replay_failed=") for w in out):
        out.append("llm.replay_failed=true")
    return out


class UsageError(ValueError):
    """A command line `hopbench paper` does not take: printed with the usage, exit code 2."""


@dataclass
class Args:
    """The command line sorted by whom each part is for."""

    flags: set[str]  # --plan-only, --no-report, --check-reference
    grid_path: str | None  # --grid FILE
    settings: list[str]  # the grid's: paper.KEY=VALUE, and llm=X as paper.llm=X
    extra: list[str]  # every run's: any other KEY=VALUE
    llm_extra: list[str]  # the LLM rows': llm.KEY=VALUE (llm_overrides)
    part: tuple[int, int] | None = None  # --part K/N: (K, N)


def parse_part(value: str | None) -> tuple[int, int]:
    """'K/N' with 1 <= K <= N, as (K, N)."""
    try:
        k, n = (int(x) for x in (value or "").split("/"))
    except ValueError:
        raise UsageError(f"--part takes K/N (for example 1/2), got {value!r}") from None
    if not 1 <= k <= n:
        raise UsageError(f"--part K/N needs 1 <= K <= N, got {value!r}")
    return k, n


def take_part(planned: list, part: tuple[int, int] | None) -> list:
    """The runs of part K of N: every N-th of those not complete, from the K-th, in the plan's
    order (so the parts share out the work left, not the finished runs)."""
    if part is None:
        return planned
    k, n = part
    return [p for p in planned if not p.complete][k - 1 :: n]


def _pop_option(args: list[str], flags: set[str], name: str) -> tuple[bool, str | None]:
    """(given, its value or None): `name VALUE` taken out of `args` and `flags`."""
    if name not in args:
        return False, None
    i = args.index(name)
    value = args[i + 1] if i + 1 < len(args) else None
    del args[i : i + 2]
    flags.discard(name)
    return True, value


def parse_args(argv: list[str]) -> Args:
    flags = {a for a in argv if a.startswith("--") and "=" not in a}
    args = list(argv)
    _, grid_path = _pop_option(args, flags, "--grid")
    given, part_value = _pop_option(args, flags, "--part")
    part = parse_part(part_value) if given else None
    if unknown := flags - {"--plan-only", "--no-report", "--check-reference"}:
        raise UsageError(f"unknown option {sorted(unknown)[0]}")
    words = [a for a in args if not a.startswith("--")]
    if bad := [w for w in words if "=" not in w]:
        raise UsageError(f"{bad[0]!r} is not KEY=VALUE")
    settings = [w for w in words if w.startswith("paper.")]
    settings += [f"paper.llm={w.split('=', 1)[1]}" for w in words if w.startswith("llm=")]
    extra = [w for w in words if not w.startswith(("paper.", "llm=", "llm."))]
    return Args(flags, grid_path, settings, extra, llm_overrides(words), part)


def plan_runs(args: Args):
    """(grid, budget in hours or None, planned runs) of a command line; raises when the grid or a
    setting does not compose."""
    grid = load_grid(args.settings, args.grid_path)
    max_h = budget_hours(grid.paper.max_llm_hours)
    planner = Planner()
    paths = [e for e in args.extra if e.startswith("paths.")]
    rows = expand(
        grid,
        args.extra,
        sizes=lambda ds: planner.size(ds, paths),
        llm_extra=args.llm_extra,
    )
    return grid, max_h, plan_grid(rows, planner)


def default_cost(grid) -> tuple[float, float]:
    """(seconds, calls) per question of a method no run and no reference row recorded."""
    return (
        float(grid.paper.default_seconds_per_question),
        float(grid.paper.default_calls_per_question),
    )


def say_outcome(out: Outcome, max_h: float | None) -> int:
    """The runs that failed (exit status 1) and what the budget left undone."""
    status = 0
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
    return status


def run_report(args: Args) -> int:
    """`hopbench report` over the runs (--check-reference passed on), in a process of its own."""
    from hopbench.harness.compose import load_config

    cfg = load_config(args.extra)
    return subprocess.call(
        [
            sys.executable,
            "-m",
            "hopbench.cli",
            "report",
            "--runs-dir",
            str(cfg.paths.runs_dir),
            "--results-dir",
            str(cfg.paths.results_dir),
            *(["--check-reference"] if "--check-reference" in args.flags else []),
        ],
        env=child_env(),
    )


def run_claims(args: Args) -> int:
    """`hopbench claims`: the claims ledger (results/reference/claims.md) from the reference
    rows, the runs pairing the rows the leaderboard did not pair; in a process of its own."""
    from hopbench.harness.compose import load_config

    cfg = load_config(args.extra)
    return subprocess.call(
        [
            sys.executable,
            "-m",
            "hopbench.cli",
            "claims",
            "--runs-dir",
            str(cfg.paths.runs_dir),
        ],
        env=child_env(),
    )


def cli(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip() + "\n\n" + USAGE)
        return 0
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print(f"hopbench paper: error: {exc}\n\n{USAGE}", file=sys.stderr)
        return 2
    try:
        grid, max_h, planned = plan_runs(args)
    except Exception as exc:  # noqa: BLE001 - a grid that does not compose: one line
        print(f"hopbench paper: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    from hopbench.harness.compose import load_config

    runs_dir = load_config(args.extra).paths.runs_dir
    add_costs(planned, Costs.from_runs(runs_dir, REFERENCE_LEADERBOARD, default_cost(grid)))
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
    if "--plan-only" in args.flags:
        return 0
    if args.part is not None:
        planned = take_part(planned, args.part)
        print(
            f"hopbench paper: part {args.part[0]}/{args.part[1]}: {len(planned)} of the runs above"
        )
    if replies and Path(replies).is_file():
        try:
            _import_replies(replies, args.extra)
        except HopbenchError as exc:  # as `hopbench replies import` says it: one line
            print(f"hopbench paper: error: {exc}", file=sys.stderr)
            return 2
    out = execute_plan(planned, max_h)
    print(out.timing())
    if out.interrupted:
        print(
            f"hopbench paper: interrupted; {len(out.left)} run(s) left: run the same command to resume",
            file=sys.stderr,
        )
        return 130
    status = say_outcome(out, max_h)
    if args.part is not None:
        print("hopbench paper: --part: no claims or report; run once more without --part for them")
    elif "--no-report" not in args.flags:
        rc = run_claims(args)  # before the report, whose reference check is the last word
        status = status or (1 if rc else 0)
        rc = run_report(args)
        status = status or (1 if rc else 0)
    return status
