"""The question loop: N questions in flight, rows as they finish, a failure stops it cleanly; and a
whole run at concurrency 4 against a server with a fixed latency gives the rows of concurrency 1."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import load_config
from hopbench.harness.question_loop import run_questions
from hopbench.harness.runner import execute
from tests.helpers.scripted_llm_server import ScriptedServer, completion
from tests.helpers.signals import sigint_as_default


def test_concurrent_loop_keeps_every_row_once_and_overlaps(in_flight):
    answer = in_flight.wrap(lambda q: {"id": q}, delay=0.05)
    rows: list[dict] = []
    t0 = time.perf_counter()
    run_questions(list(range(40)), answer, rows.append, concurrency=8, show=False)
    wall = time.perf_counter() - t0
    assert sorted(r["id"] for r in rows) == list(range(40))
    assert in_flight.peak == 8
    assert wall < 40 * 0.05 / 3  # 8 at a time: about 0.25 s, not 2 s


def test_a_failure_stops_new_questions_and_keeps_the_finished_ones():
    started: list[int] = []

    def answer(q):
        started.append(q)
        if q == 5:
            raise HopbenchError("LLM server at http://x is not reachable")
        time.sleep(0.02)
        return {"id": q}

    rows: list[dict] = []
    with pytest.raises(HopbenchError, match="not reachable"):
        run_questions(list(range(100)), answer, rows.append, concurrency=4, show=False)
    assert 5 in started and len(started) < 30  # at most 2 x 4 queued when it failed
    assert {r["id"] for r in rows} <= set(started) - {5}


def _overrides(tmp_path, data_dir, cache_dir, *extra) -> list[str]:
    return [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique",
        "dataset.limit=12",
        "retriever=oracle",
        "reader=qa",
        "llm=server",
        "llm.model=scripted",
        *extra,
    ]


def _cfg(tmp_path, data_dir, cache_dir, *extra):
    return load_config(_overrides(tmp_path, data_dir, cache_dir, *extra))


def _answer_after(seconds: float):
    """A reader reply that takes `seconds`, its answer the question's first characters, its
    prompt tokens a tenth of the request's length."""

    def respond(body):
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
        n = len(json.dumps(body))
        return (
            200,
            completion(
                json.dumps({"reasoning": "r", "answer": question[:12]}),
                prompt_tokens=n // 10,
                completion_tokens=5,
            ),
            seconds,
        )

    return respond


def _rows(tmp_path) -> dict[str, dict]:
    run = next((tmp_path / "runs").glob("musique/oracle/*/"))
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def test_a_run_at_concurrency_4_equals_concurrency_1(tmp_path, data_dir):
    """Same requests, same replies, same rows and per-question LLM cost; 4 in flight against a
    server that takes 0.2 s per request is faster than one at a time."""
    out = {}
    for n in (1, 4):
        srv = ScriptedServer(respond=_answer_after(0.2))
        try:
            m = execute(
                _cfg(
                    tmp_path / f"c{n}",
                    data_dir,
                    tmp_path / f"cache{n}",
                    f"llm.base_url={srv.base_url}",
                    f"concurrency={n}",
                )
            )
        finally:
            srv.close()
        out[n] = (
            m,
            _rows(tmp_path / f"c{n}"),
            sorted(json.dumps(r, sort_keys=True) for r in srv.requests),
        )
    (m1, rows1, req1), (m4, rows4, req4) = out[1], out[4]
    assert req1 == req4 and len(req1) == 12  # same requests, hence the same cache keys
    assert m4["concurrency"] == 4 and m1["concurrency"] == 1
    assert m4["question_concurrency"] == {"4": 12} and m1["question_concurrency"] == {"1": 12}
    assert {r["trace"]["llm_cost"]["concurrency"] for r in rows4.values()} == {4}
    assert rows1.keys() == rows4.keys()
    for qid, r in rows1.items():
        s = rows4[qid]
        assert (s["answer"], s["ranked_passage_ids"], s["metrics"]) == (
            r["answer"],
            r["ranked_passage_ids"],
            r["metrics"],
        )
        assert s["reader_trace"]["llm_cost"] == {
            **r["reader_trace"]["llm_cost"],
            "llm_seconds": s["reader_trace"]["llm_cost"]["llm_seconds"],
        }
        assert s["reader_trace"]["llm_cost"]["llm_calls"] == 1
    for key in ("em", "f1", "recall@5", "llm_calls", "llm_prompt_tokens", "llm_completion_tokens"):
        assert m1[key] == m4[key], key
    assert m4["questions_per_minute"] > 2 * m1["questions_per_minute"]


@pytest.mark.slow  # a subprocess run plus its relaunch
def test_ctrl_c_keeps_the_rows_in_flight_exits_130_and_the_relaunch_computes_only_the_rest(
    tmp_path, data_dir, child_env
):
    """SIGINT to a run at concurrency 2: the two questions at the server are finished and kept,
    the queued ones never start, the exit is 130 with the run folder named and no traceback;
    the same command then computes only the questions without a row."""
    signalled = threading.Event()
    answer = _answer_after(0.5)

    def respond(body):
        # no reply to a 5th request before the SIGINT is sent: however slow this process is to
        # send it, the run cannot have finished every question first (and then exit 0)
        if len(srv.requests) > 4:
            signalled.wait(300)
        return answer(body)

    srv = ScriptedServer(respond=respond)
    overrides = _overrides(
        tmp_path, data_dir, tmp_path / "cache", f"llm.base_url={srv.base_url}", "concurrency=2"
    )
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hopbench.run", *overrides],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env,
            preexec_fn=sigint_as_default,  # also when the tests run as a background job
        )
        deadline = time.monotonic() + 300
        while len(srv.requests) < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        proc.send_signal(signal.SIGINT)
        signalled.set()
        out, err = proc.communicate(timeout=120)
        answered = len(srv.requests)
        assert proc.returncode == 130, err[-2000:]
        assert "Traceback" not in out + err and "hopbench: interrupted" in err
        log = out + err  # Hydra's console log is stdout
        assert "finishing the 2 question(s) still running" in log
        assert "the same command resumes the run" in log and "of 12 questions are in" in log
        rows = _rows(tmp_path)
        assert len(rows) == answered and 4 <= answered <= 6  # every answered question kept
        assert not list((tmp_path / "runs").glob("**/metrics.json"))
        m = execute(
            _cfg(
                tmp_path,
                data_dir,
                tmp_path / "cache",
                f"llm.base_url={srv.base_url}",
                "concurrency=2",
            )
        )
    finally:
        signalled.set()
        srv.close()
    assert m["n_questions"] == 12 and len(_rows(tmp_path)) == 12
    assert len(srv.requests) == 12  # the kept rows were not asked again


def test_a_row_records_the_request_key_of_each_llm_call_once(scripted_http_llm, musique_sub):
    """Retrieval and reading each list the cache keys of their calls, in first-use order, each
    once (`hopbench replies export` reads them); a part without calls writes no `llm_keys`."""
    from types import SimpleNamespace

    from hopbench.harness.question_loop import answer
    from hopbench.retrieve.base import Retrieval

    srv, llm = scripted_http_llm([])
    srv.respond = lambda body: (200, completion("r: " + body["messages"][-1]["content"]), 0.0)
    q = musique_sub.questions[0]
    made: dict[str, list[str]] = {"retrieval": [], "reader": []}

    def ask(part, text):
        made[part].append(llm.chat([{"role": "user", "content": text}]).key)

    class Stub:
        def __init__(self, prompts):
            self.prompts = prompts

        def retrieve(self, question, k):
            for p in self.prompts:
                ask("retrieval", p)
            return Retrieval([p.id for p in musique_sub.corpus[:k]], [1.0] * k, {})

        def answer(self, question, passages):
            ask("reader", "read")
            return SimpleNamespace(answer="a", trace={})

    row = answer(
        q,
        retriever=Stub(["one", "two", "one"]),
        reader=Stub([]),
        dataset=musique_sub,
        llm=llm,
        top_k=2,
    ).to_dict()
    assert (
        row["trace"]["llm_keys"] == made["retrieval"][:2]
        and made["retrieval"][2] == made["retrieval"][0]
    )
    assert row["trace"]["llm_cost"]["llm_calls"] == 3
    assert row["reader_trace"]["llm_keys"] == made["reader"]
    quiet = answer(
        q, retriever=Stub([]), reader=None, dataset=musique_sub, llm=llm, top_k=2
    ).to_dict()
    assert "llm_keys" not in quiet["trace"] and quiet["trace"]["llm_cost"]["llm_calls"] == 0
