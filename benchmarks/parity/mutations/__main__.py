"""Mutation suite (issue #55): each listed mutation applied to a scratch copy, the method's tests
run, caught or not recorded.

    python -m benchmarks.parity.mutations [--only NAME,...] [--methods catrag,...]
        [--kind rule|default] [--defaults N] [--table-first] [--worktree]
        [--out runs/parity/mutations/mutations]

The list is mutations.yaml (this folder); the room's README says what each field means and how
the committed results/mutations.md was made. Exit code 1 when a mutation that ran was not
caught (and is not marked equivalent) or a method's baseline failed, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.common.paths import REPO, command_line
from benchmarks.common.report import write_json_and_md
from benchmarks.parity.mutations import catalogue, scratch
from benchmarks.parity.mutations.baselines import Baselines
from benchmarks.parity.mutations.report import TIMEOUT, markdown, status


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated mutation names (default: all)")
    ap.add_argument("--methods", default="", help="comma-separated methods (default: all)")
    ap.add_argument("--kind", choices=["rule", "default"], help="only this kind")
    ap.add_argument(
        "--defaults",
        type=int,
        default=None,
        help="at most N config defaults per method (audit ones always)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="mutations run at once")
    ap.add_argument(
        "--table-first",
        action="store_true",
        help="a default mutation runs its method's rows of the defaults table first; the whole"
        " selection only when the table passes",
    )
    ap.add_argument("--worktree", action="store_true", help="copy the working tree, not HEAD")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per test run")
    ap.add_argument("--out", type=Path, default=Path("runs/parity/mutations/mutations"))
    ap.add_argument("--note", default="", help="a sentence for the results file")
    return ap, ap.parse_args(argv)


def select(muts, args, ap):
    names = [n for n in args.only.split(",") if n]
    unknown = sorted(set(names) - {m.name for m in muts})
    if unknown:
        ap.error(f"unknown mutation(s): {unknown}")
    methods = [m for m in args.methods.split(",") if m]
    picked, per_method = [], {}
    for m in muts:
        if names and m.name not in names or methods and m.method not in methods:
            continue
        if args.kind and m.kind != args.kind:
            continue
        if args.defaults is not None and m.config and not m.audit:
            per_method[m.method] = per_method.get(m.method, 0) + 1
            if per_method[m.method] > args.defaults:
                continue
        picked.append(m)
    return picked


def run_one(m, tests, work: Path, args, baselines) -> dict:
    """Applies `m` to a fresh copy and runs its method's tests there. With --table-first a
    default mutation meets the defaults table alone first (seconds, not minutes); the rest of
    the selection runs only when the table did not catch it. A stage whose baseline fails
    makes the row "not run"."""
    selection = tests[m.method]
    table_first = args.table_first and m.kind == "default" and selection.get("table")
    if table_first and not baselines.passed(m.method, table_only=True):
        return not_run(m)
    root = work / m.name
    scratch.make_copy(root, args.worktree)
    try:
        catalogue.apply(m, root)
        scratch.imported_from(root)
        got, stage = None, "selection"
        if table_first:
            got = scratch.run_tests(root, scratch.table_only(selection), m.method, args.timeout)
            stage = "defaults table"
        if got is None or got["passed"]:
            if not baselines.passed(m.method):
                return not_run(m)
            spent = got["seconds"] if got else 0
            got = scratch.run_tests(root, selection, m.method, args.timeout)
            got["seconds"] = round(got["seconds"] + spent, 1)
            stage = "selection"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        **described(m),
        "caught": not got["passed"] and got["failed"] != [TIMEOUT],
        "caught_by_stage": stage if not got["passed"] else None,
        "failed": got["failed"],
        "seconds": got["seconds"],
        "equivalent": m.equivalent,
        "catch_with": m.catch_with,
    }


def described(m) -> dict:
    """What a result row says of its mutation, run or not."""
    return {
        "name": m.name,
        "method": m.method,
        "kind": m.kind,
        "audit": m.audit,
        "edit": m.edit,
        "why": m.why,
    }


def order(picked: list) -> list:
    """The audit's five first, then one mutation per method in turn (a stopped run covers all)."""
    seen: dict[str, int] = {}
    rank = []
    for m in picked:
        seen[m.method] = seen.get(m.method, 0) + 1
        rank.append((not m.audit, seen[m.method]))
    return [m for _, m in sorted(zip(rank, picked, strict=True), key=lambda x: x[0])]


def not_run(m) -> dict:
    return {
        **described(m),
        "caught": False,
        "failed": [],
        "seconds": 0,
        "baseline_failed": True,
    }


def main(argv=None) -> int:
    ap, args = parse(argv)
    tests, muts = catalogue.load()
    picked = order(select(muts, args, ap))
    for m in picked:  # a stale entry stops the suite before anything runs
        if m.file:
            catalogue.check_text(m, REPO)
    t0 = time.perf_counter()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    results, lock = [], threading.Lock()
    with tempfile.TemporaryDirectory(prefix="hopbench-mutations-") as tmp:
        work = Path(tmp)
        baselines = Baselines(tests, work, args.worktree, args.timeout)

        def one(m):
            r = run_one(m, tests, work, args, baselines)
            with lock:
                results.append(r)
                print(f"{m.name}: {status(r)} {r['seconds']} s {r['failed'][:1]}", flush=True)
                save(args, t0, load, muts, baselines.snapshot(), results, argv, final=False)

        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(one, picked))
    return save(args, t0, load, muts, baselines.snapshot(), results, argv, final=True)


def save(args, t0, load, muts, baselines, results, argv, final: bool) -> int:
    """Writes OUT.json and OUT.md; after each mutation too, so a stopped run keeps what ran."""
    res = {
        "command": command_line(sys.argv if argv is None else [__file__, *argv]).replace(
            ".__main__", ""
        ),
        "source": "the working tree" if args.worktree else "the commit HEAD (git archive)",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": round(time.perf_counter() - t0, 1),
        "load": load,
        "listed": len(muts),
        "note": args.note,
        "baselines": baselines,
        "results": results,
    }
    if not final:
        res["note"] = (args.note + " Run in progress (or stopped): the table has what ran.").strip()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(res, indent=1), encoding="utf-8")
        args.out.with_suffix(".md").write_text(markdown(res), encoding="utf-8")
        return 0
    write_json_and_md(args.out, res, markdown)
    bad = [r for r in results if status(r) != "caught" and status(r) != "equivalent"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
