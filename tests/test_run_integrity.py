"""A run never records what it did not compute and never loses what it did: concurrent launches,
failed `force=true` reruns, bad run settings, secrets and software versions (issue #14)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import build_dataset, build_retriever, load_config
from hopbench.harness.run_store import RunStore, config_hash
from hopbench.harness.runner import execute, run_dir_for, semantic_config
from tests.helpers.scripted_llm_server import ScriptedServer, reply


def _overrides(tmp_path, data_dir, cache_dir, *extra):
    return [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
        *extra,
    ]


def _cfg(tmp_path, data_dir, cache_dir, *extra):
    return load_config(_overrides(tmp_path, data_dir, cache_dir, *extra))


def _store(cfg) -> RunStore:
    h = config_hash(semantic_config(cfg, build_dataset(cfg), build_retriever(cfg)))
    return RunStore(run_dir_for(cfg, h))


def _lines(store: RunStore) -> list[dict]:
    return [json.loads(line) for line in store.predictions_path.read_text().splitlines()]


def test_two_identical_launches_compute_each_question_once(
    tmp_path, data_dir, cache_dir, child_env
):
    """Both launches wait on a run the test holds, then race: one computes, the other skips."""
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    store = _store(cfg)
    cmd = [
        sys.executable,
        "-m",
        "hopbench.run",
        *_overrides(tmp_path, data_dir, cache_dir),
        "hydra.job_logging.root.level=INFO",
    ]
    with store.lock():
        procs = [
            subprocess.Popen(
                cmd,
                cwd=tmp_path,
                env=child_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(2)
        ]
        deadline = time.monotonic() + 240
        waits = 0
        while waits < 2 and time.monotonic() < deadline and all(p.poll() is None for p in procs):
            time.sleep(0.5)  # Hydra's job log of each launch says when it starts to wait
            waits = sum(
                f.read_text().count("is being computed by")
                for f in (tmp_path / "runs" / ".hydra").glob("**/*.log")
            )
        assert waits == 2, [p.poll() for p in procs]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    rows = _lines(store)
    assert len(rows) == 3 and len({r["id"] for r in rows}) == 3
    assert json.loads(store.metrics_path.read_text())["n_questions"] == 3
    assert sum("complete; skipping" in o for o in outs) == 1, outs


def test_failed_force_rerun_keeps_the_finished_run(tmp_path, data_dir, cache_dir, musique_sub):
    """force=true against an LLM server that has gone away: the finished run stays as it was."""
    gold = {q.text: q.answers[0] for q in musique_sub.questions}

    def respond(body):
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
        return reply(json.dumps({"reasoning": "r", "answer": gold[question]}))

    srv = ScriptedServer(respond=respond)
    llm = [
        "retriever=oracle",
        "reader=qa",
        "llm=server",
        f"llm.base_url={srv.base_url}",
        "llm.model=scripted",
        "llm.transient_retries=0",
    ]
    try:
        first = execute(_cfg(tmp_path, data_dir, tmp_path / "cache", *llm))
    finally:
        srv.close()
    store = _store(_cfg(tmp_path, data_dir, tmp_path / "cache", *llm))
    before = (store.metrics_path.read_bytes(), store.predictions_path.read_bytes())
    assert first["em"] == 1.0
    # the cache would answer without the server: switch it off so the rerun must reach it
    with pytest.raises(HopbenchError, match="not reachable"):
        execute(_cfg(tmp_path, data_dir, tmp_path / "cache", *llm, "force=true", "llm.cache=false"))
    assert (store.metrics_path.read_bytes(), store.predictions_path.read_bytes()) == before


def test_force_rerun_replaces_the_run_when_complete(tmp_path, data_dir, cache_dir):
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    first = execute(cfg)
    store = _store(cfg)
    again = execute(_cfg(tmp_path, data_dir, cache_dir, "force=true"))
    assert (
        again["finished_at"] >= first["finished_at"]
        and again["wall_seconds"] != first["wall_seconds"]
    )
    assert json.loads(store.metrics_path.read_text())["wall_seconds"] == again["wall_seconds"]
    assert len(_lines(store)) == 3
    assert sorted(p.name for p in store.dir.parent.iterdir()) == [
        f".{store.dir.name}.lock",
        store.dir.name,
    ]


def test_a_corrupt_row_in_the_middle_is_computed_again(tmp_path, data_dir, cache_dir):
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    reference = execute(cfg)
    store = _store(cfg)
    rows = _lines(store)
    lines = [json.dumps(rows[0]), '{"id": "broken", "rank', json.dumps(rows[2])]
    store.predictions_path.write_text("\n".join(lines) + "\n")
    store.metrics_path.unlink()
    metrics = execute(cfg)
    again = _lines(store)
    assert sorted(r["id"] for r in again) == sorted(r["id"] for r in rows)
    assert again[-1]["id"] == rows[1]["id"]  # only the lost question was recomputed
    for key in ("recall@2", "recall@5", "fcr@5", "n_questions"):
        assert metrics[key] == reference[key]


@pytest.mark.parametrize(
    "override,message",
    [
        ("top_k=0", "top_k must be a whole number >= 1"),
        ("top_k=abc", "top_k must be a whole number >= 1"),
        ("force=maybe", "force must be true or false"),
    ],
)
def test_bad_run_settings_fail_before_anything_is_written(
    tmp_path, data_dir, cache_dir, override, message
):
    with pytest.raises(HopbenchError, match=message):
        execute(_cfg(tmp_path, data_dir, cache_dir, override))
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "override,message",
    [
        ("top_k=0", "top_k must be a whole number >= 1 (passages kept per question), got 0"),
        (
            "retriever=spreading_activation retriever.decay=-1",
            "retriever.decay must be in (0, 1], got -1",
        ),
        (
            "retriever=catrag",
            "retriever.edge_weighting=true (catrag) needs an LLM: add llm=local (offline "
            "model), llm=openai or llm=server, or set retriever.edge_weighting=false",
        ),
    ],
)
def test_bad_setting_is_one_line_and_exit_2(
    tmp_path, data_dir, cache_dir, override, message, child_env
):
    """Not Hydra's 'Error in call to target' traceback with exit 1: one hopbench line, exit 2."""
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            *_overrides(tmp_path, data_dir, cache_dir, *override.split()),
        ],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2
    errors = [line for line in res.stderr.splitlines() if line.startswith("hopbench: error:")]
    assert errors == [f"hopbench: error: {message}"], res.stderr
    assert "Traceback" not in res.stderr and "Error in call to target" not in res.stderr
    assert not list((tmp_path / "runs").glob("musique_sub/**/config.yaml"))


def test_no_secret_in_the_run_folder(tmp_path, data_dir, cache_dir, monkeypatch):
    monkeypatch.setenv("HOPBENCH_NEO4J_PASSWORD", "s3cret-Neo4j-pw")
    monkeypatch.setenv("MY_LLM_KEY", "sk-very-secret-key")
    cfg = _cfg(
        tmp_path,
        data_dir,
        cache_dir,
        "llm=server",
        "llm.api_key_env=MY_LLM_KEY",
        "llm.base_url=http://127.0.0.1:9/v1",
        "llm.model=x",
    )
    execute(cfg)  # dense reads no LLM: the client is built but never called
    store = _store(cfg)
    for path in store.dir.iterdir():
        text = path.read_text()
        assert "s3cret-Neo4j-pw" not in text and "sk-very-secret-key" not in text, path
    assert "password: <redacted>" in store.config_path.read_text()
    assert "api_key_env: MY_LLM_KEY" in store.config_path.read_text()  # a name, not a secret


def test_metrics_record_the_software_versions(tmp_path, data_dir, cache_dir):
    import faiss
    import scipy

    m = execute(_cfg(tmp_path, data_dir, cache_dir))
    pkgs = m["software"]["packages"]
    assert pkgs["numpy"] == np.__version__ and pkgs["scipy"] == scipy.__version__
    assert pkgs["faiss-cpu"] == faiss.__version__
    assert m["software"]["python"] == ".".join(map(str, sys.version_info[:3]))
    # versions describe the run; they do not change which run it is
    assert "software" not in json.dumps(
        semantic_config(
            _cfg(tmp_path, data_dir, cache_dir),
            build_dataset(_cfg(tmp_path, data_dir, cache_dir)),
            build_retriever(_cfg(tmp_path, data_dir, cache_dir)),
        )
    )
