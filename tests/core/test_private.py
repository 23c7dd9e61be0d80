"""One permission model: everything hopbench writes under the runs and cache folders is its
user's alone (files 0600, folders 0700), whatever the umask it was started with."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hopbench.llm.cache import CachedResponse, ResponseCache
from tests.helpers.scripted_llm_server import ScriptedServer, reply


def _open_to_others(root: Path) -> list[str]:
    return [
        f"{oct(stat.S_IMODE(p.lstat().st_mode))} {p}"
        for p in [root, *root.rglob("*")]
        if not p.is_symlink() and stat.S_IMODE(p.lstat().st_mode) & 0o077
    ]


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_run_with_a_graph_and_an_llm_writes_nothing_others_can_read(
    tmp_path, data_dir, child_env
):
    """A fresh cache (embeddings, spaCy graph, LLM responses) and runs folder (the run, its lock,
    Hydra's .hydra/ records and log) from a process started with umask 022."""
    srv = ScriptedServer(respond=lambda body: reply(json.dumps({"reasoning": "r", "answer": "x"})))
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    try:
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "hopbench.run",
                f"paths.data_dir={data_dir}",
                f"paths.runs_dir={runs}",
                f"paths.cache_dir={cache}",
                "progress=false",
                "dataset=musique_sub",
                "retriever=spreading_activation",
                "reader=qa",
                "llm=server",
                f"llm.base_url={srv.base_url}",
                "llm.model=scripted",
                "llm.transient_retries=0",
            ],
            cwd=tmp_path,
            env=child_env,
            capture_output=True,
            text=True,
            timeout=900,
            preexec_fn=lambda: os.umask(0o022),
        )
    finally:
        srv.close()
    assert res.returncode == 0, res.stderr[-3000:]
    assert list(runs.glob("musique_sub/spreading_activation/*/metrics.json"))
    assert (cache / "llm" / "responses.sqlite").exists() and list(
        (cache / "kg" / "graphs").iterdir()
    )
    assert list((runs / ".hydra").rglob("*.log")) and list((runs / ".hydra").rglob("config.yaml"))
    assert _open_to_others(runs) == []
    assert _open_to_others(cache) == []


def test_the_response_cache_and_its_wal_files_are_private(tmp_path, umask_022):
    path = tmp_path / "llm" / "responses.sqlite"
    cache = ResponseCache(path)
    cache.put("k", "m", {"q": 1}, CachedResponse("reply", 1, 1, 0.1))
    try:
        files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        assert all(p.exists() for p in files)
        assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in files] == ["0o600"] * 3
        assert oct(stat.S_IMODE(path.parent.stat().st_mode)) == "0o700"
    finally:
        cache.close()


def test_an_existing_readable_cache_is_made_private(tmp_path, umask_022):
    path = tmp_path / "responses.sqlite"
    ResponseCache(path).close()
    path.chmod(0o644)
    ResponseCache(path).close()
    assert oct(stat.S_IMODE(path.stat().st_mode)) == "0o600"
