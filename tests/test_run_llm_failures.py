"""Issue #14 items 2 and 5, end to end: a run against a misbehaving LLM server on 127.0.0.1.

An unusable server (nothing listening, HTTP 500 after retries, 401, HTTP 200 that is not
JSON) aborts the run: exit 2 with one line saying what to start or fix, no metrics.json, so
a relaunch against a healthy server computes the run instead of skipping it. A reply that
never matches its schema falls back for that question only, is recorded in trace.fallback
and counted in metrics.json, and is not cached: a forced rerun against a healthy server
gets the good reply and no fallback.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid

import pytest

from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from hopbench.llm.errors import LLMAuthError, LLMServerError
from tests.helpers.scripted_llm_server import ScriptedServer, error, raw, reply

GOOD_FILTER = '{"selected": [1, 2]}'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _overrides(
    tmp_path, data_dir, cache_dir, base_url: str, retriever: str = "hipporag", *extra
) -> list[str]:
    # a fresh cache identity per test: the LLM cache lives in the shared test cache_dir
    return [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
        f"retriever={retriever}",
        "llm=server",
        f"llm.base_url={base_url}",
        "llm.model=x",
        f"llm.identity=pytest-{uuid.uuid4().hex}",
        *extra,
    ]


def _cfg(overrides: list[str]):
    return load_config(overrides)


def _cli(overrides: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hopbench.run", *overrides],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _no_metrics(tmp_path) -> None:
    assert not list((tmp_path / "runs").glob("**/metrics.json"))


def _error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("hopbench: error:")]


def _rows(tmp_path) -> list[dict]:
    [pred] = (tmp_path / "runs").glob("musique_sub/*/*/predictions.jsonl")
    return [json.loads(line) for line in pred.read_text().splitlines()]


def _question(body: dict) -> str:
    """The question of a fact-filter request (its first user message; retries append more)."""
    first = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return first.split("Question: ", 1)[1].split("\n", 1)[0]


# ---- (a) nothing listening ------------------------------------------------------------------
@pytest.mark.parametrize(
    "retriever, extra", [("hipporag", ["retriever.seeding.filter=true"]), ("catrag", [])]
)
def test_unreachable_server_exits_2_with_what_to_start(
    retriever, extra, tmp_path, data_dir, cache_dir, musique_kg, child_env
):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    proc = _cli(_overrides(tmp_path, data_dir, cache_dir, url, retriever, *extra), child_env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    [line] = _error_lines(proc)
    assert f"LLM server at {url} is not reachable" in line
    assert "start the server (vLLM, Ollama, llama-server ...) or fix llm.base_url" in line
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "dense fallback" not in proc.stderr + proc.stdout
    _no_metrics(tmp_path)


# ---- (b) HTTP 500 after the retries -----------------------------------------------------------
def test_server_errors_after_retries_abort_and_a_relaunch_computes_the_run(
    tmp_path, data_dir, cache_dir, musique_kg
):
    state = {"healthy": False}
    srv = ScriptedServer(
        respond=lambda body: reply(GOOD_FILTER) if state["healthy"] else error(500, "model crashed")
    )
    try:
        overrides = _overrides(
            tmp_path,
            data_dir,
            cache_dir,
            srv.base_url,
            "hipporag",
            "retriever.seeding.filter=true",
            "llm.transient_retries=2",
            "llm.backoff_s=0.001",
        )
        with pytest.raises(LLMServerError) as exc:
            execute(_cfg(overrides))
        assert len(srv.requests) == 3  # first question: 1 attempt + 2 retries, then stop
        assert f"LLM server at {srv.base_url} kept failing (HTTP 500) after 3 attempt(s)" in str(
            exc.value
        )
        assert "server's log" in str(exc.value)
        _no_metrics(tmp_path)
        state["healthy"] = True  # the server is fixed: the run is not skipped
        m = execute(_cfg(overrides))
    finally:
        srv.close()
    assert m["n_questions"] == 3 and m["n_fallback"] == 0 and m["fallback_rate"] == 0.0
    assert m["llm_server_errors"] == 0 and len(srv.requests) == 3 + 3


# ---- (c) a refused key ------------------------------------------------------------------------
def test_refused_key_aborts_without_retrying(tmp_path, data_dir, cache_dir, musique_kg):
    srv = ScriptedServer(respond=lambda body: error(401, "Incorrect API key provided"))
    try:
        overrides = _overrides(
            tmp_path,
            data_dir,
            cache_dir,
            srv.base_url,
            "hipporag",
            "retriever.seeding.filter=true",
            "llm.transient_retries=3",
            "llm.backoff_s=0.001",
        )
        with pytest.raises(LLMAuthError) as exc:
            execute(_cfg(overrides))
    finally:
        srv.close()
    assert len(srv.requests) == 1
    assert f"LLM server at {srv.base_url} refused the API key (HTTP 401)" in str(exc.value)
    assert "llm.api_key_env" in str(exc.value)
    _no_metrics(tmp_path)


# ---- (d) HTTP 200 whose body is not JSON ------------------------------------------------------
def test_non_json_200_is_counted_and_aborts_without_a_traceback(
    tmp_path, data_dir, cache_dir, musique_kg, child_env
):
    srv = ScriptedServer(respond=lambda body: raw("<html>upstream is warming up</html>"))
    try:
        proc = _cli(
            _overrides(
                tmp_path,
                data_dir,
                cache_dir,
                srv.base_url,
                "hipporag",
                "retriever.seeding.filter=true",
                "llm.transient_retries=1",
                "llm.backoff_s=0.001",
            ),
            child_env,
        )
    finally:
        srv.close()
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    [line] = _error_lines(proc)
    assert (
        f"LLM server at {srv.base_url} answered HTTP 200 with something that is not a chat "
        f"completion, 2 time(s): the body is not JSON"
    ) in line
    assert "OpenAI-compatible /v1 endpoint" in line
    assert len(srv.requests) == 2
    _no_metrics(tmp_path)


# ---- (e) + (f) a bad reply for one question; then a healthy server ----------------------------
def test_bad_reply_falls_back_is_counted_and_is_not_replayed(
    tmp_path, data_dir, cache_dir, musique_kg, musique_sub
):
    bad_q = musique_sub.questions[1].text
    state = {"healthy": False}

    def respond(body):
        if _question(body) == bad_q and not state["healthy"]:
            return reply('{"selected": "one and two"}')  # valid JSON, violates the schema
        return reply(GOOD_FILTER)

    srv = ScriptedServer(respond=respond)
    try:
        overrides = _overrides(
            tmp_path, data_dir, cache_dir, srv.base_url, "hipporag", "retriever.seeding.filter=true"
        )
        m = execute(_cfg(overrides))
        rows = _rows(tmp_path)
        n_first = len(srv.requests)
        state["healthy"] = True
        m2 = execute(_cfg(overrides + ["force=true"]))
        rows2 = _rows(tmp_path)
    finally:
        srv.close()

    # (e) the run completes; the one bad question fell back, and says where and why
    assert n_first == 2 + 3  # two good questions, three attempts at the bad one
    assert m["n_questions"] == 3 and m["n_fallback"] == 1
    assert m["fallback_rate"] == pytest.approx(1 / 3)
    assert m["fallback_steps"] == {"dense_fallback": 1, "fact_filter": 1}
    assert m["llm_failures"] == 1
    by_q = {r["question"]: r for r in rows}
    fb = by_q[bad_q]["trace"]["fallback"]
    assert [e["step"] for e in fb] == ["fact_filter", "dense_fallback"]
    assert "did not match its JSON schema after 3 attempt(s)" in fb[0]["reason"]
    assert "'one and two' is not of type 'array'" in fb[0]["reason"]
    assert fb[1]["reason"] == "no fact survived the filter"
    assert all("fallback" not in r["trace"] for q, r in by_q.items() if q != bad_q)

    # (f) the bad reply was not cached: the rerun asks for it again and gets the good one
    assert len(srv.requests) == n_first + 1
    assert (
        _question(srv.requests[-1]) == bad_q and len(srv.requests[-1]["messages"]) == 2
    )  # not a retry
    assert m2["n_fallback"] == 0 and m2["fallback_steps"] == {}
    assert m2["llm_cache_hits"] == 2 and m2["llm_failures"] == 0
    assert all("fallback" not in r["trace"] for r in rows2)
    assert {r["question"]: r for r in rows2}[bad_q]["trace"]["facts"]
