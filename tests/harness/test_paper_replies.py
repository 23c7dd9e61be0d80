"""`hopbench paper` and the reply file it imports (issue #54): the runs the file covers are counted
from its entries, a damaged or tampered file is one line and exit code 2, the budget is a real
number of hours, and `make paper` ends by checking the reference rows."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from hopbench.cli import main
from hopbench.harness.paper.command import cli, llm_overrides
from hopbench.harness.paper.costs import run_label
from hopbench.harness.paper.grid import expand, load_grid
from hopbench.harness.paper.plan import Planner, plan_grid
from hopbench.llm.reply_file import Reply, write_reply_file

REPO = Path(__file__).resolve().parents[2]

GRID = """
paper: {llm_questions: 2, llm: server, max_llm_hours: null, default_seconds_per_question: 60,
        default_calls_per_question: 5, replies: REPLIES}
datasets:
  musique_sub: {graphs: [spacy], reader: qa}
cpu: []
llm: LLM
sweeps: []
"""


def _grid(tmp_path, replies, llm="[]") -> Path:
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.replace("REPLIES", str(replies)).replace("LLM", llm))
    return grid


def _extra(tmp_path, data_dir) -> list[str]:
    return [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={tmp_path / 'cache'}",
        "progress=false",
    ]


def _replies(path: Path, n: int = 3) -> Path:
    write_reply_file(path, [Reply(f"{i:064x}", "m", f"r {i}", 1, 1, 0.1) for i in range(n)], {})
    return path


def _damage_line_2(path: Path, old: str, new: str) -> None:
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    lines[1] = lines[1].replace(old, new)
    path.write_bytes(gzip.compress("".join(lines).encode()))


# ---- 4: a run the header lists but the entries do not cover needs the model --------------------
def test_a_listed_run_without_replies_is_model_time_and_the_model_is_not_called(
    tmp_path, data_dir, capsys
):
    from tests.helpers.scripted_llm_server import ScriptedServer, reply

    filed = tmp_path / "replies.jsonl.gz"
    grid = _grid(tmp_path, filed, "\n  - {retriever: oracle, reader: dataset}")
    srv = ScriptedServer(respond=lambda body: reply(json.dumps({"reasoning": "r", "answer": "x"})))
    llm = [f"llm.base_url={srv.base_url}", "llm.model=scripted"]
    extra = _extra(tmp_path, data_dir)
    try:
        rows = expand(
            load_grid([], grid),
            extra,
            sizes=lambda ds: Planner().size(ds, extra),
            llm_extra=llm_overrides(llm),
        )
        (planned,) = plan_grid(rows, Planner())
        # the header lists the run (2 questions' keys), the file holds no reply of it
        write_reply_file(filed, [], {run_label(planned): 2})
        capsys.readouterr()
        words = ["paper.max_llm_hours=0", *llm, *extra]
        assert cli(["--grid", str(grid), "--no-report", *words]) == 0
        out = capsys.readouterr().out
    finally:
        srv.close()
    assert srv.requests == []  # the budget of 0 h held: no model time spent
    assert "answered by the committed reply file" not in out
    assert "[reply file" not in out and "stopped with 1 run(s) left" in out


# ---- 8: a damaged reply file: the line `replies import` gives, exit 2 ----------------------------
def test_a_damaged_reply_file_is_the_same_one_line_as_replies_import(tmp_path, data_dir, capsys):
    filed = _replies(tmp_path / "replies.jsonl.gz")
    _damage_line_2(filed, '"prompt_tokens":1', '"prompt_tokens":-1')
    assert main(["replies", "import", str(filed), "--cache-dir", str(tmp_path / "c")]) == 2
    said = capsys.readouterr().err.split(": error: ", 1)[1]
    grid = _grid(tmp_path, filed)
    assert cli(["--grid", str(grid), "--no-report", *_extra(tmp_path, data_dir)]) == 2
    err = capsys.readouterr().err
    assert err == f"hopbench paper: error: {said}" and "line 2, prompt_tokens" in err


# ---- 9: a tampered reply stops paper before it plans or imports anything -----------------------
def test_a_tampered_reply_stops_paper_even_in_a_plan(tmp_path, data_dir, capsys):
    filed = _replies(tmp_path / "replies.jsonl.gz")
    _damage_line_2(filed, '"text":"r 0"', '"text":"r 9"')
    grid = _grid(tmp_path, filed)
    assert cli(["--grid", str(grid), "--plan-only", *_extra(tmp_path, data_dir)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2: does not match its digest" in err
    assert not (tmp_path / "cache").exists()


# ---- 10: the budget is a number of hours >= 0 ------------------------------------------------------
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "-0.5", "lots"])
def test_a_budget_that_is_not_hours_is_refused(tmp_path, data_dir, capsys, value):
    grid = _grid(tmp_path, "null")
    words = [f"paper.max_llm_hours={value}", *_extra(tmp_path, data_dir)]
    assert cli(["--grid", str(grid), "--plan-only", *words]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "paper.max_llm_hours" in err and "Traceback" not in err


@pytest.mark.parametrize("value, shown", [("0", "0 h"), ("2.5", "2.5 h"), ("null", "no limit")])
def test_a_budget_of_hours_or_null_is_taken(tmp_path, data_dir, capsys, value, shown):
    grid = _grid(tmp_path, "null")
    words = [f"paper.max_llm_hours={value}", *_extra(tmp_path, data_dir)]
    assert cli(["--grid", str(grid), "--plan-only", *words]) == 0
    assert f"(budget paper.max_llm_hours: {shown})" in capsys.readouterr().out


# ---- and `make paper` ends with the reference check ----------------------------------------------
def test_make_paper_ends_checking_the_reference_a_plan_does_not(tmp_path, monkeypatch):
    def dry(paper_words: str) -> str:
        return subprocess.run(
            # under `make test` a child make prints "Entering directory" lines unless told not to
            ["make", "--no-print-directory", "-n", "paper", f"PAPER={paper_words}"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    assert dry("paper.max_llm_hours=0").endswith("--check-reference")
    assert "--check-reference" not in dry("--plan-only paper.max_llm_hours=4")
    calls = []
    monkeypatch.setattr(subprocess, "call", lambda argv, **kw: calls.append(argv) or 0)
    grid = _grid(tmp_path, "null")
    extra = [f"paths.runs_dir={tmp_path / 'runs'}", f"paths.results_dir={tmp_path / 'res'}"]
    assert cli(["--grid", str(grid), "--check-reference", *extra]) == 0
    assert calls and calls[-1][3] == "report" and calls[-1][-1] == "--check-reference"
    # the claims ledger just before it, its pairs read from the same runs folder
    assert calls[-2][3] == "claims" and calls[-2][-2:] == ["--runs-dir", str(tmp_path / "runs")]
