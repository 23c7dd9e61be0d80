"""`hopbench paper`: the grid composes and hashes as the runner does, the plan counts complete runs,
the budget orders the work and stops cleanly, and the reference rows the grid does not make."""

from __future__ import annotations

import csv
import json
import signal
import sys
from pathlib import Path

import pytest

from hopbench.harness.compose import load_config
from hopbench.harness.paper.command import cli, llm_overrides
from hopbench.harness.paper.costs import Costs, add_committed_replies
from hopbench.harness.paper.execute import execute_plan, launch, run_child
from hopbench.harness.paper.grid import Row, expand, load_grid
from hopbench.harness.paper.plan import Planned, Planner, format_plan, plan_grid, work_order
from hopbench.harness.paper.reference import (
    REFERENCE_LEADERBOARD,
    reference_without_replies,
    unmatched_reference,
)
from hopbench.harness.runner import plan as runner_plan
from hopbench.llm.reply_file import read_reply_file

AWAITING = Path(REFERENCE_LEADERBOARD).with_name("awaiting_rerun.csv")
REPLY_FILE = Path(REFERENCE_LEADERBOARD).with_name("llm_replies.jsonl.gz")

TINY_GRID = """
paper: {llm_questions: 2, llm: local, max_llm_hours: null, default_seconds_per_question: 60,
        default_calls_per_question: 5, replies: null}
datasets:
  musique_sub: {graphs: [spacy], reader: qa}
cpu:
  - retriever: dense
  - retriever: spreading_activation
llm: []
sweeps: []
"""


def _paths(tmp_path, data_dir, cache_dir):
    return [
        f"paths.data_dir={data_dir}",
        f"runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
    ]


# ---- the default grid ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def default_plan(data_dir):
    extra = [f"paths.data_dir={data_dir}"]
    planner = Planner()
    rows = expand(
        load_grid(),
        extra,
        sizes=lambda ds: planner.size(ds, extra),
        llm_extra=llm_overrides([]),  # as `hopbench paper` runs them: replay_failed=true
    )
    return rows, plan_grid(rows, planner)


@pytest.mark.slow
def test_the_default_grid_composes_and_every_run_hashes(default_plan):
    rows, planned = default_plan
    assert not [(p.row.overrides, p.error) for p in planned if p.error]
    datasets = {p.row.dataset for p in planned}
    assert datasets == {"musique", "2wikimultihopqa", "hotpotqa", "hover"}
    assert all(len(p.config_hash) == 12 and p.run_dir.name == p.config_hash for p in planned)
    hashes = [(p.row.dataset, p.row.retriever, p.config_hash) for p in planned]
    assert len(hashes) == len(set(hashes))  # rows that come to one run are kept once
    assert any(p.row.override("graph") == "openie" for p in planned if p.row.dataset == "musique")
    assert not any(
        p.row.override("graph") == "openie" for p in planned if p.row.dataset != "musique"
    )
    for p in (
        planned
    ):  # CPU rows: no LLM, no reader; LLM rows: the dataset's reader or a retriever's LLM
        if p.row.kind in ("cpu", "sweep"):
            assert not p.needs_llm and p.row.reader == "none"
        else:
            assert p.needs_llm
            if p.row.reader != "none":
                assert p.row.reader == ("verify" if p.row.dataset == "hover" else "qa")
    assert {
        p.row.override("dataset.limit")
        for p in planned
        if p.row.dataset == "hover" and p.row.kind == "cpu"
    } == {"1000"}


@pytest.mark.slow
def test_the_plans_hash_is_the_runners(default_plan):
    """A sample of rows (one per dataset and kind): the same hash and folder as `runner.plan`."""
    _, planned = default_plan
    sample = {}
    for p in planned:
        sample.setdefault((p.row.dataset, p.row.kind, p.row.override("graph")), p)
    for p in sample.values():
        rp = runner_plan(load_config(list(p.row.overrides)))
        assert (rp.config_hash, rp.store.dir) == (p.config_hash, p.run_dir), p.row.overrides


@pytest.mark.slow
def test_the_reference_rows_the_grid_does_not_make_are_exactly_those_awaiting_a_rerun(
    default_plan,
):
    """Issue #29 items 2 and 4: every reference row is one `make paper` produces, with its LLM
    replies in the committed reply file, or is listed in results/reference/awaiting_rerun.csv with
    why and what replaces it. A new row of older code fails here, so does an LLM row whose replies
    were not exported, and so does a listed row that is gone or that is now made and exported."""
    _, planned = default_plan
    head, _ = read_reply_file(REPLY_FILE)
    missing = unmatched_reference(REFERENCE_LEADERBOARD, planned)
    missing += reference_without_replies(REFERENCE_LEADERBOARD, planned, set(head["runs"]))
    with open(AWAITING, newline="", encoding="utf-8") as fh:
        awaiting = list(csv.DictReader(fh))
    assert all(r["why"] and r["replaced_by"] for r in awaiting)
    key = lambda r: (r["dataset"], r["retriever"], r["config_hash"])  # noqa: E731
    assert sorted(map(key, missing)) == sorted(map(key, awaiting))


# ---- plan and completeness on a real run ---------------------------------------------------------
def test_the_plan_counts_a_complete_run(tmp_path, data_dir, cache_dir, capsys):
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(TINY_GRID)
    extra = _paths(tmp_path, data_dir, cache_dir)
    planned = plan_grid(expand(load_grid(path=grid_file), extra))
    assert [p.row.retriever for p in planned] == ["dense", "spreading_activation"]
    assert not any(p.complete for p in planned)
    dense = planned[0]
    assert launch(dense.row) == 0  # a real run, through `python -m hopbench.run`
    assert (dense.run_dir / "metrics.json").is_file()

    again = plan_grid(expand(load_grid(path=grid_file), extra))
    assert [p.complete for p in again] == [True, False]
    assert again[0].config_hash == dense.config_hash

    assert cli(["--plan-only", "--grid", str(grid_file), *extra]) == 0
    out = capsys.readouterr().out
    assert "plan: 2 runs (2 CPU-only, 0 LLM), 1 complete, 1 to run" in out
    assert "complete  musique_sub" in out and dense.config_hash in out


def test_plan_only_launches_nothing_and_an_llm_row_is_estimated(
    tmp_path, data_dir, cache_dir, capsys
):
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(
        TINY_GRID.replace("llm: []", "llm:\n  - {retriever: dense, reader: dataset}")
    )
    extra = _paths(tmp_path, data_dir, cache_dir)
    assert cli(["--plan-only", "--grid", str(grid_file), *extra]) == 0
    out = capsys.readouterr().out
    assert "plan: 3 runs (2 CPU-only, 1 LLM), 0 complete" in out
    assert "reader=qa llm=local dataset.limit=2" in out
    assert not (tmp_path / "runs").exists()


def test_a_spent_budget_stops_cleanly_before_the_llm_rows(tmp_path, data_dir, cache_dir, capsys):
    """paper.max_llm_hours=0: the CPU rows (none left here) and then no LLM row: exit 0, what is left."""
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(
        TINY_GRID.replace(
            "cpu:\n  - retriever: dense\n  - retriever: spreading_activation\n", "cpu: []\n"
        ).replace("llm: []", "llm:\n  - {retriever: dense, reader: dataset}")
    )
    extra = _paths(tmp_path, data_dir, cache_dir)
    assert cli(["--grid", str(grid_file), "--no-report", "paper.max_llm_hours=0", *extra]) == 0
    out = capsys.readouterr().out
    assert "stopped with 1 run(s) left" in out and "run the same command again" in out
    assert not (tmp_path / "runs").exists()


# ---- budget ordering with injected costs ----------------------------------------------------------
def _planned(name, needs_llm, hours=0.0, complete=False):
    row = Row(
        "llm" if needs_llm else "cpu", "d", name, ("dataset=d", f"retriever={name}"), needs_llm
    )
    return Planned(
        row,
        config_hash=name,
        run_dir=Path(name),
        complete=complete,
        n_questions=100,
        needs_llm=needs_llm,
        seconds_per_q=hours * 36,
        calls_per_q=2,
    )


def test_the_work_is_cpu_first_then_llm_cheapest_first_within_the_budget():
    planned = [
        _planned("llm_3h", True, 3),
        _planned("cpu_a", False),
        _planned("llm_1h", True, 1),
        _planned("done_llm", True, 0.5, complete=True),
        _planned("llm_2h", True, 2),
        _planned("cpu_b", False),
    ]
    assert [p.config_hash for p in work_order(planned)] == [
        "cpu_a",
        "cpu_b",
        "done_llm",
        "llm_1h",
        "llm_2h",
        "llm_3h",
    ]

    now = [0.0]
    launched = []

    def run(row):  # an LLM run takes its estimated time on a fake clock, a CPU run 15 min
        launched.append(row.retriever)
        now[0] += (next(p.hours_left for p in planned if p.row is row) or 0.25) * 3600
        return 0

    out = execute_plan(
        planned, max_llm_hours=3.5, run=run, clock=lambda: now[0], say=lambda s: None
    )
    assert launched == ["cpu_a", "cpu_b", "llm_1h", "llm_2h"]  # the complete row is skipped
    assert [p.config_hash for p in out.left] == ["llm_3h"]  # 3 h more would pass 3.5 h: stop
    assert out.llm_hours_spent == pytest.approx(3.0) and not out.failed
    assert out.budget_hours_spent == pytest.approx(3.0)
    assert out.cpu_hours_spent == pytest.approx(0.5)
    assert out.timing().endswith("2 CPU-only run(s) 0.50 h, 2 LLM run(s) 3.00 h")

    launched.clear()
    out = execute_plan(
        planned, max_llm_hours=None, run=run, clock=lambda: now[0], say=lambda s: None
    )
    assert launched == ["cpu_a", "cpu_b", "llm_1h", "llm_2h", "llm_3h"] and not out.left


def test_a_failed_run_is_reported_and_the_next_goes_on_an_interrupt_stops():
    planned = [_planned("cpu_a", False), _planned("cpu_b", False), _planned("llm_1h", True, 1)]
    codes = {"cpu_a": 2, "cpu_b": 0, "llm_1h": 0}
    out = execute_plan(planned, None, run=lambda r: codes[r.retriever], say=lambda s: None)
    assert [p.config_hash for p in out.failed] == ["cpu_a"] and len(out.ran) == 2
    for code in (130, -signal.SIGINT):  # its own handler's code, or killed during imports
        codes["cpu_b"] = code
        out = execute_plan(planned, None, run=lambda r: codes[r.retriever], say=lambda s: None)
        assert out.interrupted and [p.config_hash for p in out.left] == ["cpu_b", "llm_1h"]


def test_a_ctrl_c_during_a_run_reaches_the_run_not_the_waiting_command():
    # The child sends SIGINT to its parent (as a terminal's Ctrl-C reaches the whole group),
    # reports whether it has Python's own handler (not an inherited SIG_IGN), and exits 130.
    child = (
        "import os, signal, sys, time\n"
        "ok = signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "os.kill(os.getppid(), signal.SIGINT)\n"
        "time.sleep(0.3)\n"
        "sys.exit(130 if ok else 3)\n"
    )
    before = signal.getsignal(signal.SIGINT)
    assert run_child([sys.executable, "-c", child]) == 130
    assert signal.getsignal(signal.SIGINT) is before


def test_costs_come_from_complete_runs_of_the_same_method_else_the_reference_else_the_default(
    tmp_path,
):

    for i, (retr, reader, rs, ds) in enumerate(
        [("catrag", "qa", 40.0, 10.0), ("catrag", "none", 20.0, None), ("dense", "qa", None, 6.0)]
    ):
        d = tmp_path / "runs" / "musique" / retr / f"h{i}"
        d.mkdir(parents=True)
        m = {"retriever": retr, "reader": reader, "n_questions": 10}
        if rs is not None:
            m |= {
                "retrieval_llm_seconds_uncached_per_question": rs,
                "retrieval_llm_calls_per_question": 10,
            }
        if ds is not None:
            m |= {
                "reader_llm_seconds_uncached_per_question": ds,
                "reader_llm_calls_per_question": 1,
            }
        (d / "metrics.json").write_text(json.dumps(m))
    ref = tmp_path / "lb.csv"
    ref.write_text(
        "dataset,retriever,reader,config_hash,llm_seconds_per_q,llm_calls_per_q\n"
        "musique,neuropath,qa,aaa,100,3\nmusique,dense,verify,bbb,50,1\n"
    )
    costs = Costs.from_runs(tmp_path / "runs", ref, default=(60.0, 5.0))
    assert costs.estimate("catrag", "qa", True) == (30.0 + 8.0, 10.0 + 1.0, "runs")
    assert costs.estimate("dense", "qa", False) == (8.0, 1.0, "runs")
    assert costs.estimate("neuropath", "qa", True) == (100.0, 3.0, "reference")
    assert costs.estimate("oracle", "verify", False)[:2] == (50.0, 1.0)
    assert costs.estimate("neuropath", "verify", True) == (60.0, 5.0, "default")


def test_cost_estimates_count_a_run_still_going_from_its_rows(tmp_path):
    """A run without metrics.json (still going) gives its method's estimate from its rows once it
    has `min_partial` questions; below that it is ignored."""

    def row(s, cached, reader_s):
        return {
            "trace": {
                "llm_cost": {"llm_calls": 10, "llm_seconds": s, "llm_cached_seconds": cached}
            },
            "reader_trace": {"reader": "qa", "llm_cost": {"llm_calls": 1, "llm_seconds": reader_s}},
        }

    going = tmp_path / "runs" / "musique" / "catrag" / "h1"
    going.mkdir(parents=True)
    rows = [row(100.0, 20.0, 5.0), row(80.0, 0.0, 7.0)]
    (going / "predictions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n{cut")
    few = tmp_path / "runs" / "musique" / "neuropath" / "h2"
    few.mkdir(parents=True)
    (few / "predictions.jsonl").write_text(json.dumps(row(1.0, 0.0, 1.0)) + "\n")
    costs = Costs.from_runs(tmp_path / "runs", None, default=(60.0, 5.0), min_partial=2)
    assert costs.estimate("catrag", "qa", True) == (100.0 + 6.0, 11.0, "runs")
    assert costs.estimate("neuropath", "qa", True) == (60.0, 5.0, "default")
    (going / "config.yaml").write_text("concurrency: 2\n")
    costs = Costs.from_runs(tmp_path / "runs", None, default=(60.0, 5.0), min_partial=2)
    assert costs.estimate("catrag", "qa", True) == (53.0, 11.0, "runs")


def test_cost_estimates_read_the_runs_the_report_reads(tmp_path):
    """Costs come from the one run discovery (core/run_folders): a `<hash>.bak` copy, a run
    linked from outside the runs folder and a hidden staging folder are not runs, finished or
    still going, so none of them moves an estimate."""
    runs = tmp_path / "runs" / "musique"

    def run(folder: Path, seconds: float, hash_: str) -> None:
        folder.mkdir(parents=True)
        m = {"retriever": "catrag", "reader": "none", "config_hash": hash_}
        m |= {"retrieval_llm_seconds_uncached_per_question": seconds}
        (folder / "metrics.json").write_text(json.dumps(m))

    run(runs / "catrag" / "h1", 10.0, "h1")
    run(runs / "catrag" / "h1.bak", 1000.0, "h1")  # a copy: its name is not its hash
    run(tmp_path / "elsewhere" / "h2", 1000.0, "h2")
    (runs / "catrag" / "h2").symlink_to(tmp_path / "elsewhere" / "h2", target_is_directory=True)
    staging = runs / "catrag" / ".h3.rerun"  # hidden: a rerun being staged, not a run
    staging.mkdir()
    row = {"trace": {"llm_cost": {"llm_calls": 1, "llm_seconds": 1000.0}}}
    (staging / "predictions.jsonl").write_text((json.dumps(row) + "\n") * 5)
    costs = Costs.from_runs(tmp_path / "runs", None, default=(60.0, 5.0), min_partial=2)
    assert costs.estimate("catrag", "none", True) == (10.0, 0.0, "runs")


def test_cost_estimates_are_wall_clock_at_the_recorded_concurrency(tmp_path):
    """Seconds recorded at concurrency c (each request waiting for the others) count 1/c."""
    d = tmp_path / "runs" / "musique" / "neuropath" / "h"
    d.mkdir(parents=True)
    m = {"retriever": "neuropath", "reader": "qa", "concurrency": 4}
    m |= {
        "retrieval_llm_seconds_uncached_per_question": 40.0,
        "retrieval_llm_calls_per_question": 3,
    }
    m |= {"reader_llm_seconds_uncached_per_question": 8.0, "reader_llm_calls_per_question": 1}
    (d / "metrics.json").write_text(json.dumps(m))
    ref = tmp_path / "lb.csv"
    ref.write_text(
        "dataset,retriever,reader,config_hash,llm_seconds_per_q,llm_calls_per_q,concurrency\n"
        "musique,catrag,qa,aaa,100,12,2\nmusique,dense,qa,bbb,30,1,\n"
    )
    costs = Costs.from_runs(tmp_path / "runs", ref)
    assert costs.estimate("neuropath", "qa", True) == (12.0, 4.0, "runs")
    assert costs.estimate("catrag", "verify", True)[:2] == (60.0, 5.0)
    assert costs.estimate("catrag", "none", True)[:2] == (60.0, 5.0)
    m["question_concurrency"] = {"1": 1, "4": 3, "unrecorded": 6}  # mean over recorded: 3.25
    (d / "metrics.json").write_text(json.dumps(m))
    costs = Costs.from_runs(tmp_path / "runs", ref)
    assert costs.estimate("neuropath", "qa", True)[0] == 48.0 / 3.25
    costs = Costs.from_runs(tmp_path / "nothing", ref)
    assert costs.estimate("catrag", "qa", True) == (50.0, 12.0, "reference")
    assert costs.estimate("oracle", "qa", False) == (30.0, 1.0, "reference (dense's reading)")
    # a leaderboard row holds question_concurrency as JSON text (the CSV's cell)
    ref.write_text(
        "dataset,retriever,reader,config_hash,llm_seconds_per_q,llm_calls_per_q,concurrency,"
        'question_concurrency\nmusique,catrag,qa,aaa,100,12,2,"{""4"": 10}"\n'
        "musique,dense,qa,bbb,30,1,,\n"
    )
    costs = Costs.from_runs(tmp_path / "nothing", ref)
    assert costs.estimate("catrag", "qa", True) == (25.0, 12.0, "reference")
    assert costs.estimate("dense", "qa", True)[:2] == (30.0, 1.0)


# ---- unmatched reference rows ---------------------------------------------------------------------
def test_unmatched_reference_lists_the_rows_no_planned_run_makes(tmp_path):
    planned = [_planned("abc123abc123", False), _planned("def456def456", True, 1)]
    ref = tmp_path / "leaderboard.csv"
    with open(ref, "w", newline="") as fh:
        w = csv.DictWriter(fh, ["dataset", "retriever", "reader", "config_hash"])
        w.writeheader()
        w.writerows(
            [
                {
                    "dataset": "d",
                    "retriever": "abc123abc123",
                    "reader": "none",
                    "config_hash": "abc123abc123",
                },
                {"dataset": "d", "retriever": "old", "reader": "qa", "config_hash": "0ld0ld0ld0ld"},
                {
                    "dataset": "other",
                    "retriever": "def456def456",
                    "reader": "qa",
                    "config_hash": "def456def456",
                },
            ]
        )
    missing = unmatched_reference(ref, planned)
    assert [(r["dataset"], r["config_hash"]) for r in missing] == [
        ("d", "0ld0ld0ld0ld"),
        ("other", "def456def456"),
    ]


def test_help_and_a_bad_option(capsys):
    assert cli(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--plan-only" in out and "paper.max_llm_hours" in out and "make paper" in out
    assert cli(["--frobnicate"]) == 2
    assert cli(["musique"]) == 2


def test_an_llm_row_takes_a_whole_set_no_larger_than_llm_questions():
    sizes = {"musique": 100, "2wikimultihopqa": 1000, "hotpotqa": 100, "hover": 3436}
    rows = expand(load_grid(), ["paths.data_dir=/x"], sizes=sizes.__getitem__)
    limits = {(r.dataset, r.override("dataset.limit")) for r in rows if r.kind == "llm"}
    assert limits == {
        ("musique", None),
        ("hotpotqa", None),
        ("2wikimultihopqa", "100"),
        ("hover", "100"),
    }
    assert all(
        r.overrides[-1] == "paths.data_dir=/x" and "paths.data_dir" not in r.shown for r in rows
    )
    rows = expand(
        load_grid(["paper.llm_questions=20", "paper.llm=server"]), sizes=sizes.__getitem__
    )
    assert {r.override("dataset.limit") for r in rows if r.kind == "llm"} == {"20"}
    assert {r.override("llm") for r in rows if r.kind == "llm"} == {"server"}


def test_the_llm_rows_replay_recorded_failures_unless_told_not_to():
    assert llm_overrides(["llm=local", "llm.timeout=9", "x=1"]) == [
        "llm.timeout=9",
        "llm.replay_failed=true",
    ]
    assert llm_overrides(["llm.replay_failed=false"]) == ["llm.replay_failed=false"]


def test_llm_settings_go_to_the_llm_rows_only():
    sizes = {"musique": 100, "2wikimultihopqa": 1000, "hotpotqa": 100, "hover": 3436}
    rows = expand(
        load_grid(), ["concurrency=4"], sizes=sizes.__getitem__, llm_extra=["llm.timeout=600"]
    )
    assert all("concurrency=4" in r.overrides for r in rows)
    assert {("llm.timeout=600" in r.overrides) == (r.kind == "llm") for r in rows} == {True}


def test_reference_without_replies_lists_the_llm_rows_the_reply_file_lacks(tmp_path):
    planned = [
        _planned("cpu000cpu000", False),
        _planned("llm111llm111", True, 1),
        _planned("llm222llm222", True, 1),
    ]
    ref = tmp_path / "leaderboard.csv"
    with open(ref, "w", newline="") as fh:
        w = csv.DictWriter(fh, ["dataset", "retriever", "config_hash"])
        w.writeheader()
        for name in ("cpu000cpu000", "llm111llm111", "llm222llm222", "0ld0ld0ld0ld"):
            w.writerow({"dataset": "d", "retriever": name, "config_hash": name})
    exported = {"d/llm111llm111/llm111llm111"}
    missing = reference_without_replies(ref, planned, exported)
    # the CPU row needs no reply and the unplanned row is unmatched_reference's business
    assert [r["config_hash"] for r in missing] == ["llm222llm222"]


# ---- rows the reply file carries: 0 h, run whatever the budget, no model (issue #29) ----------
def test_rows_the_reply_file_carries_cost_nothing_and_run_whatever_the_budget():
    planned = [
        _planned("cpu_a", False),
        _planned("llm_1h", True, 1),
        _planned("filed_a", True, 2),
        _planned("filed_b", True, 3),
    ]
    add_committed_replies(planned, {"d/filed_a/filed_a", "d/filed_b/filed_b", "d/x/y"})
    assert [(p.hours_left, p.cost_source) for p in planned[2:]] == [(0, "reply file")] * 2
    assert planned[1].hours_left == pytest.approx(1.0) and planned[3].calls_left == 200
    now, launched = [0.0], []

    def run(row):  # every run takes 10 minutes of wall-clock
        launched.append(row.retriever)
        now[0] += 600
        return 0

    out = execute_plan(planned, 0, run=run, clock=lambda: now[0], say=lambda s: None)
    assert launched == ["cpu_a", "filed_a", "filed_b"]  # after the first, the budget is spent
    assert [p.config_hash for p in out.left] == ["llm_1h"]
    assert out.llm_hours_spent == pytest.approx(1 / 3) and out.budget_hours_spent == 0
    assert "1 of those LLM runs" not in format_plan(planned, 0)
    assert "2 of those LLM runs are answered by the committed reply file" in format_plan(planned, 0)


def test_a_fresh_cache_regenerates_a_filed_row_with_no_model_and_leaves_the_rest(
    tmp_path, data_dir, cache_dir, capsys
):
    """The "done when" of #29 in small: a row made by a (scripted) server, its replies exported;
    then `hopbench paper paper.max_llm_hours=0 llm.cache_only=true` from an empty response cache
    and runs folder, with the server gone, imports the file, makes that row again identical
    (same folder name, same answers) and leaves the row whose replies the file lacks."""
    from hopbench.cli import main
    from tests.helpers.scripted_llm_server import ScriptedServer, reply

    def respond(body):
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
        return reply(json.dumps({"reasoning": "r", "answer": question[:12]}))

    filed = tmp_path / "replies.jsonl.gz"
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(
        TINY_GRID.replace("cpu:\n  - retriever: dense\n  - retriever: spreading_activation\n", "")
        .replace("llm: local", "llm: server")
        .replace("replies: null", f"replies: {filed}")
        .replace("llm: []", "cpu: []\nllm:\n  - {retriever: oracle, reader: dataset}")
    )
    srv = ScriptedServer(respond=respond)
    url = srv.base_url
    llm = [f"llm.base_url={url}", "llm.model=scripted"]

    def extra(name):
        return [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / name / 'runs'}",
            f"paths.cache_dir={tmp_path / name / 'cache'}",
            "progress=false",
        ]

    try:
        assert cli(["--grid", str(grid_file), "--no-report", *llm, *extra("live")]) == 0
    finally:
        srv.close()
    live = next((tmp_path / "live" / "runs").glob("musique_sub/oracle/*/"))
    export = ["replies", "export", "--runs-dir", str(tmp_path / "live" / "runs")]
    export += ["--cache-dir", str(tmp_path / "live" / "cache"), "--out", str(filed)]
    assert main(export) == 0
    grid_file.write_text(
        grid_file.read_text().replace(
            "llm:\n  - {retriever: oracle, reader: dataset}",
            "llm:\n  - {retriever: oracle, reader: dataset}\n  - {retriever: dense, reader: dataset}",
        )
    )
    capsys.readouterr()
    words = ["paper.max_llm_hours=0", "llm.cache_only=true", *llm, *extra("cold")]
    assert cli(["--grid", str(grid_file), "--no-report", *words]) == 0
    out = capsys.readouterr().out
    assert "1 of those LLM runs are answered by the committed reply file" in out
    assert "[reply file: 0.0 s/q]" in out and "stopped with 1 run(s) left" in out
    again = tmp_path / "cold" / "runs" / "musique_sub" / "oracle" / live.name
    assert json.loads((again / "metrics.json").read_text())["llm_cache_hits"] == 2
    assert not (tmp_path / "cold" / "runs" / "musique_sub" / "dense").exists()

    def answers(run):
        rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
        return {r["id"]: (r["answer"], r["metrics"]) for r in rows}

    assert answers(again) == answers(live) and len(answers(live)) == 2
    # and the report says so: the live run made the reference, the cold one is checked against it
    ref, report = tmp_path / "reference", ["report", "--no-figures", "--resamples", "200"]
    update = [*report, "--runs-dir", str(tmp_path / "live" / "runs"), "--reference-dir", str(ref)]
    assert main([*update, "--update-reference"]) == 0
    check = [*report, "--runs-dir", str(tmp_path / "cold" / "runs"), "--reference-dir", str(ref)]
    capsys.readouterr()
    assert main([*check, "--results-dir", str(tmp_path / "results"), "--check-reference"]) == 0
    assert "reference check: 1 of your 1 run(s) are reference rows; 1 identical, 0 differ" in (
        capsys.readouterr().out
    )


def test_the_reply_files_rows_spend_wall_clock_but_no_budget():
    """A budget of 1 h after 2 h of reply-file rows still runs a 1 h row that needs the model."""
    planned = [_planned("filed_a", True, 2), _planned("llm_1h", True, 1)]
    add_committed_replies(planned, {"d/filed_a/filed_a"})
    now, launched = [0.0], []

    def run(row):  # the filed row replays for 2 h of wall-clock, the other takes its hour
        launched.append(row.retriever)
        now[0] += 7200 if row.retriever == "filed_a" else 3600
        return 0

    out = execute_plan(planned, 1, run=run, clock=lambda: now[0], say=lambda s: None)
    assert launched == ["filed_a", "llm_1h"] and not out.left
    assert out.llm_hours_spent == pytest.approx(3.0)
    assert out.budget_hours_spent == pytest.approx(1.0)


def test_parts_share_out_the_runs_left_and_a_bad_part_is_a_usage_error(capsys):
    """--part K/N: every N-th run not complete, from the K-th; the N parts cover the work left
    exactly once; K/N outside 1 <= K <= N is refused with exit code 2."""
    from types import SimpleNamespace

    from hopbench.harness.paper.command import cli, parse_args, take_part

    planned = [SimpleNamespace(i=i, complete=i in (0, 3)) for i in range(8)]
    left = [p.i for p in planned if not p.complete]
    parts = [[p.i for p in take_part(planned, (k, 3))] for k in (1, 2, 3)]
    assert parts == [[1, 5], [2, 6], [4, 7]]
    assert sorted(sum(parts, [])) == left
    assert take_part(planned, None) is planned
    args = parse_args(["--part", "2/3", "--no-report", "paths.data_dir=x"])
    assert args.part == (2, 3) and args.extra == ["paths.data_dir=x"]
    assert args.flags == {"--no-report"}
    for bad in (["--part", "0/2"], ["--part", "3/2"], ["--part", "a/b"], ["--part"]):
        assert cli(bad) == 2
        assert "--part" in capsys.readouterr().err
