"""The console entry points as a user meets them."""

import subprocess
import sys


def _run(*args, **kw):
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, **kw
    )


def test_help_lists_config_groups():
    out = _run("-m", "hopbench.run", "--help")
    assert out.returncode == 0
    groups = dict(
        line.split(": ", 1)
        for line in out.stdout.splitlines()
        if line.split(":")[0] in ("dataset", "retriever", "llm", "reader") and ", " in line
    )
    assert {"musique", "2wikimultihopqa", "hotpotqa", "hover"} <= set(groups["dataset"].split(", "))
    assert {
        "dense",
        "hipporag",
        "spreading_activation",
        "flow_diffusion",
        "catrag",
        "neuropath",
    } <= set(groups["retriever"].split(", "))
    assert "local" in groups["llm"] and "qa" in groups["reader"]


def test_bad_path_exits_2_with_a_clear_message(tmp_path):
    out = _run(
        "-m", "hopbench.run", f"paths.runs_dir={tmp_path}", "dataset.questions_path=/nope/q.json"
    )
    assert out.returncode == 2
    assert "hopbench: error: /nope/q.json: file not found" in out.stderr


def test_subcommand_list():
    out = _run("-m", "hopbench.cli", "commands")
    assert out.returncode == 0 and "report" in out.stdout and "kg-stats" in out.stdout
