"""benchmarks.common, the plumbing every parity room starts the authors' code with: a worker's
environment holds the authors' folders and the repository, never the caller's PYTHONPATH; a
failing worker ends the benchmark with its log's tail; placeholder modules raise when called.

Why: these decide what code the authors' side runs. A hopbench module leaking onto their
PYTHONPATH, or a worker failure read as a result, would make a parity figure meaningless.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.common import paths, shims, worker
from benchmarks.common.suite import chosen, suite_parser

ROOT = Path(__file__).resolve().parents[1]


def test_worker_env_puts_the_authors_folders_first_and_drops_the_callers_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere/src")
    env = worker.worker_env({"PYTHONHASHSEED": "0"}, pythonpath=["auth/src", Path("auth/pkg")])
    assert env["PYTHONPATH"].split(os.pathsep) == ["auth/src", "auth/pkg", str(ROOT)]
    assert env["PYTHONHASHSEED"] == "0"


def test_a_worker_starts_as_a_module_of_this_checkout():
    cmd = worker.worker_command(
        Path("venv/bin/python"), ROOT / "benchmarks/parity/qafd/worker.py", 1
    )
    assert cmd == ["venv/bin/python", "-m", "benchmarks.parity.qafd.worker", "1"]
    assert paths.module_name(ROOT / "benchmarks" / "speed" / "dense.py") == "benchmarks.speed.dense"
    assert paths.command_line([str(ROOT / "benchmarks/speed/dense.py"), "--out", "x"]) == (
        "python -m benchmarks.speed.dense --out x"
    )


def test_a_failing_worker_ends_with_its_logs_tail(tmp_path):
    """The worker runs with the caller's interpreter as a stand-in venv; benchmarks.common.shims
    has no main, so importing it as __main__ succeeds and `-m benchmarks.nowhere` fails."""
    log = tmp_path / "w.log"
    worker.run_worker(Path(sys.executable), ROOT / "benchmarks/common/shims.py", log=log)
    assert log.read_text() == ""
    with pytest.raises(SystemExit, match=r"the authors' code failed; see .*w\.log:\n.*nowhere"):
        worker.run_worker(Path(sys.executable), ROOT / "benchmarks/nowhere.py", log=log)


def test_the_worker_sees_the_folders_it_is_given_on_its_path(tmp_path):
    (tmp_path / "authors_module_x.py").write_text("VALUE = 41 + 1\n")
    probe = tmp_path / "probe.py"
    probe.write_text("import authors_module_x\nprint(authors_module_x.VALUE)\n")
    out = subprocess.run(
        [sys.executable, str(probe)],
        env=worker.worker_env(pythonpath=[tmp_path]),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "42"


def test_placeholders_import_and_raise_when_called():
    finder = shims.PlaceholderFinder(("fake_vllm_for_test",), "this test")
    sys.meta_path.insert(0, finder)
    try:
        import fake_vllm_for_test.engine as engine  # noqa: PLC0415

        assert engine.LLM.__name__ == "fake_vllm_for_test.engine.LLM"
        with pytest.raises(
            RuntimeError, match="fake_vllm_for_test.engine.LLM was called: this test"
        ):
            engine.LLM("model")
    finally:
        sys.meta_path.remove(finder)
        for name in [m for m in sys.modules if m.startswith("fake_vllm_for_test")]:
            del sys.modules[name]


def test_an_unknown_suite_member_is_a_usage_error(capsys):
    ap = suite_parser("x", Path("out"))
    assert chosen(ap, "", ["a", "b"]) == ["a", "b"]
    assert chosen(ap, "b", ["a", "b"]) == ["b"]
    with pytest.raises(SystemExit) as e:
        chosen(ap, "c", ["a", "b"])
    assert e.value.code == 2
    assert "unknown name(s) ['c']" in capsys.readouterr().err


def test_the_official_and_out_flags_default_inside_the_repository():
    """--venv and --out default to folders of this checkout, never to one machine's folders."""
    import argparse

    from benchmarks.common import args as common_args

    script = str(ROOT / "benchmarks" / "parity" / "qasa" / "compare.py")
    ap = argparse.ArgumentParser()
    common_args.add_official_args(ap, "qasa", "a checkout", required=False)
    common_args.add_out_arg(ap, script, "official_qasa")
    got = ap.parse_args([])
    assert got.official_src is None
    assert got.venv == ROOT / ".cache" / "official-qasa"
    assert got.out == ROOT / "benchmarks" / "parity" / "qasa" / "results" / "official_qasa"
    got = ap.parse_args(["--official-src", "../qasa-graph-rag", "--out", "x/y"])
    assert got.official_src == Path("../qasa-graph-rag") and got.out == Path("x/y")
    strict = argparse.ArgumentParser()
    common_args.add_official_args(strict, "qasa", "a checkout")
    with pytest.raises(SystemExit) as stop:  # a usage error: exit code 2
        strict.parse_args([])
    assert stop.value.code == 2
