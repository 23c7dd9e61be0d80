"""Secrets never reach a file: not the run folder, not Hydra's records, not the cache or the hash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.core.secret_values import move_secret_overrides, redact_url
from hopbench.harness.run_config import redacted
from hopbench.llm.build import build_client

PASSWORD = "S3cret-on-the-cli-42"
TOKEN = "tok-9f8e7d6c5b4a"


def _files_with(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_secret_overrides_move_into_the_environment():
    env: dict[str, str] = {}
    argv = [
        "hopbench",
        "dataset=musique",
        f"graphdb.password={PASSWORD}",
        "+llm.api_key='k y'",
        "graphdb.password=null",
        "graphdb.user=me",
        "-m",
        f"llm.base_url=http://u:{TOKEN}@h/v1",
        "llm.base_url=http://h/v1",
    ]
    assert move_secret_overrides(argv, env) == [
        "hopbench",
        "dataset=musique",
        "graphdb.password=${oc.env:HOPBENCH_SECRET_GRAPHDB_PASSWORD}",
        "+llm.api_key=${oc.env:HOPBENCH_SECRET_LLM_API_KEY}",
        "graphdb.password=null",
        "graphdb.user=me",
        "-m",
        "llm.base_url=${oc.env:HOPBENCH_SECRET_LLM_BASE_URL}",
        "llm.base_url=http://h/v1",
    ]
    assert env == {
        "HOPBENCH_SECRET_GRAPHDB_PASSWORD": PASSWORD,
        "HOPBENCH_SECRET_LLM_API_KEY": "k y",
        "HOPBENCH_SECRET_LLM_BASE_URL": f"http://u:{TOKEN}@h/v1",
    }


def test_url_credentials_are_redacted_wherever_a_config_is_shown():
    assert (
        redact_url(f"http://user:{TOKEN}@127.0.0.1:8000/v1")
        == "http://<redacted>@127.0.0.1:8000/v1"
    )
    assert redact_url("http://127.0.0.1:8000/v1?a=b@c") == "http://127.0.0.1:8000/v1?a=b@c"
    assert redacted({"graphdb": {"uri": f"bolt://neo4j:{TOKEN}@db:7687", "password": "x"}}) == {
        "graphdb": {"uri": "bolt://<redacted>@db:7687", "password": "<redacted>"}
    }


def test_a_password_on_the_command_line_reaches_no_file(tmp_path, data_dir, cache_dir, child_env):
    """Hydra writes .hydra/{config,hydra,overrides}.yaml per job and multirun.yaml per sweep:
    none of them, nor the run folder, holds the password; the run itself still gets it."""
    runs = tmp_path / "runs"
    base = [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={runs}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
        f"graphdb.password={PASSWORD}",
    ]
    for extra in ([], ["-m"]):
        res = subprocess.run(
            [sys.executable, "-m", "hopbench.run", *base, *extra],
            cwd=tmp_path,
            env=child_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert res.returncode == 0, res.stderr
        assert PASSWORD not in res.stdout + res.stderr
    hydra_files = {p.name for p in (runs / ".hydra").rglob("*.yaml")}
    assert {"config.yaml", "hydra.yaml", "overrides.yaml", "multirun.yaml"} <= hydra_files
    assert _files_with(runs, PASSWORD) == []
    assert (
        "HOPBENCH_SECRET_GRAPHDB_PASSWORD"
        in next((runs / ".hydra").rglob("overrides.yaml")).read_text()
    )
    config = next(runs.glob("musique_sub/dense/*/config.yaml")).read_text()
    assert "password: <redacted>" in config


def test_the_run_gets_the_moved_password(monkeypatch):
    """The override Hydra sees resolves to the value the user typed."""
    from hopbench.harness.compose import load_config

    env: dict[str, str] = {}
    argv = move_secret_overrides([f"graphdb.password={PASSWORD}"], env)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert load_config(argv).graphdb.password == PASSWORD


def test_a_token_in_the_llm_url_is_refused_before_anything_is_written(
    tmp_path, data_dir, cache_dir, child_env
):
    runs = tmp_path / "runs"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
            "dataset=musique_sub",
            "llm=server",
            "reader=qa",
            "llm.model=x",
            f"llm.base_url=http://user:{TOKEN}@127.0.0.1:9/v1",
        ],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 2
    errors = [line for line in res.stderr.splitlines() if line.startswith("hopbench: error:")]
    assert (
        len(errors) == 1
        and "llm.base_url=http://<redacted>@127.0.0.1:9/v1 holds credentials" in errors[0]
    )
    assert TOKEN not in res.stdout + res.stderr
    assert not list(runs.glob("musique_sub/**/config.yaml"))
    assert _files_with(tmp_path, TOKEN) == []


def test_the_llm_client_refuses_a_token_in_its_url(tmp_path):
    with pytest.raises(HopbenchError, match="holds credentials") as info:
        build_client(
            {"name": "server", "model": "x", "base_url": f"http://u:{TOKEN}@127.0.0.1:9/v1"},
            cache_dir=tmp_path,
        )
    assert TOKEN not in str(info.value)
