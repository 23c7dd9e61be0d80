"""Response cache: identical requests never reach the server; anything that shapes the reply changes the key."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from hopbench.llm.cache import CachedResponse, ResponseCache, request_key
from hopbench.llm.client import LLMClient
from hopbench.llm.errors import LLMCacheMissError, LLMFormatError
from hopbench.llm.policy import is_recoverable
from tests.helpers.scripted_llm_server import completion, reply

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
MSGS = [{"role": "user", "content": "Who wrote Hamlet?"}]


def test_second_identical_request_is_served_from_the_cache(scripted, make_client):
    srv = scripted([reply('{"answer": "Shakespeare"}', prompt_tokens=30, completion_tokens=5)])
    llm = make_client(srv.base_url)
    first = llm.chat(MSGS, schema=SCHEMA)
    second = llm.chat(MSGS, schema=SCHEMA)
    assert len(srv.requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.data == first.data == {"answer": "Shakespeare"}
    assert second.usage == {"prompt_tokens": 30, "completion_tokens": 5}
    assert second.latency_s == first.latency_s  # stored with the row
    s = llm.stats_dict()
    assert s["llm_calls"] == 2 and s["llm_cache_hits"] == 1 and s["llm_prompt_tokens"] == 60


def test_cache_survives_a_new_client_and_needs_no_server(scripted, make_client, closed_port_url):
    srv = scripted([reply('{"answer": "Shakespeare"}')])
    make_client(srv.base_url).chat(MSGS, schema=SCHEMA)
    offline = make_client(closed_port_url)  # same identity, same cache file
    assert offline.chat(MSGS, schema=SCHEMA).data == {"answer": "Shakespeare"}
    assert offline.stats_dict()["llm_seconds"] == 0


def test_sampling_params_schema_and_model_are_part_of_the_key(scripted, make_client):
    srv = scripted([reply('{"answer": "a"}')] * 5)
    llm = make_client(srv.base_url)
    llm.chat(MSGS, schema=SCHEMA)
    llm.chat(MSGS, schema=SCHEMA, temperature=0.7)
    llm.chat(MSGS, schema=SCHEMA, max_tokens=17)
    llm.chat(MSGS, schema={**SCHEMA, "additionalProperties": False})
    make_client(srv.base_url, identity="another-model").chat(MSGS, schema=SCHEMA)
    assert len(srv.requests) == 5


def test_request_key_is_canonical():
    a = request_key("m", MSGS, {"temperature": 0.0, "max_tokens": 5}, {"s": 1, "t": 2})
    b = request_key("m", MSGS, {"max_tokens": 5, "temperature": 0.0}, {"t": 2, "s": 1})
    assert a == b and len(a) == 64
    assert a != request_key("m2", MSGS, {"temperature": 0.0, "max_tokens": 5}, {"s": 1, "t": 2})


def test_wal_mode_and_stored_columns(tmp_path):
    c = ResponseCache(tmp_path / "r.sqlite")
    assert c._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    c.put("k", "model", {"messages": MSGS}, CachedResponse("t", 3, 4, 0.5))
    c.put("k", "model", {"messages": MSGS}, CachedResponse("other", 9, 9, 9.0))  # first write wins
    assert c.get("k") == CachedResponse("t", 3, 4, 0.5) and len(c) == 1
    c.put("k", "model", {"messages": MSGS}, CachedResponse("new", 1, 1, 1.0), replace=True)
    assert c.get("k") == CachedResponse("new", 1, 1, 1.0) and len(c) == 1
    c.close()


def _writer(path: str, start: int, n: int) -> None:
    c = ResponseCache(path)
    for i in range(start, start + n):
        c.put(f"k{i % 150}", "m", {"i": i}, CachedResponse(str(i), 1, 1, 0.1))
    c.close()


def test_concurrent_processes_share_one_cache(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path).close()
    procs = [
        mp.get_context("spawn").Process(target=_writer, args=(path, s, 100)) for s in (0, 50, 100)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    c = ResponseCache(path)
    assert len(c) == 150  # overlapping keys written once each
    c.close()


def test_client_without_cache_always_asks(scripted):
    srv = scripted([reply('{"answer": "a"}')] * 2)
    llm = LLMClient(base_url=srv.base_url, model="m", identity="m", cache=None)
    llm.chat(MSGS)
    llm.chat(MSGS)
    assert len(srv.requests) == 2
    llm.close()


# ---- only replies that passed their checks are cached -----------------------------------
def test_schema_violating_reply_is_not_cached(scripted, make_client):
    srv = scripted([reply('{"answer": 42}'), reply('{"answer": "Shakespeare"}')])
    llm = make_client(srv.base_url)
    bad = llm.chat(MSGS, schema=SCHEMA)
    assert bad.error is not None and len(llm.cache) == 0
    good = llm.chat(MSGS, schema=SCHEMA)  # asked again, not replayed
    assert good.data == {"answer": "Shakespeare"} and not good.cached and len(srv.requests) == 2
    assert llm.chat(MSGS, schema=SCHEMA).cached and len(srv.requests) == 2


def test_empty_plain_text_reply_is_not_cached(scripted, make_client):
    srv = scripted([reply(""), reply("   "), reply("a summary")])
    llm = make_client(srv.base_url)
    assert llm.chat(MSGS).text == "" and llm.chat(MSGS).text.strip() == ""
    assert llm.chat(MSGS).text == "a summary" and llm.chat(MSGS).cached
    assert len(srv.requests) == 3 and len(llm.cache) == 1


def test_failed_chat_json_is_asked_again_on_a_rerun(scripted, make_client):
    """Issue #14.5: a run whose replies violated the schema must not replay them once the
    server is healthy: the rerun asks the original request again and gets the good reply."""
    broken = scripted([reply("not json")] * 3)
    with pytest.raises(LLMFormatError):
        make_client(broken.base_url).chat_json(MSGS, SCHEMA, retries=2)
    healthy = scripted([reply('{"answer": "Shakespeare"}')])
    trace: list = []
    llm = make_client(healthy.base_url)  # same identity, same cache file
    assert llm.chat_json(MSGS, SCHEMA, retries=2, trace=trace) == {"answer": "Shakespeare"}
    assert len(healthy.requests) == 1 and healthy.requests[0]["messages"] == MSGS
    assert [t["cached"] for t in trace] == [False] and llm.stats_dict()["llm_format_retries"] == 0


# ---- failed replies are recorded apart, and replayed only when asked (issue #29 item 4) ------
def test_a_failed_reply_is_recorded_apart_and_replayed_only_with_replay_failed(
    scripted, make_client, closed_port_url
):
    srv = scripted([reply('{"answer": 42}', prompt_tokens=7, completion_tokens=3)])
    bad = make_client(srv.base_url).chat(MSGS, schema=SCHEMA)
    assert bad.error is not None and not bad.cached
    offline = make_client(closed_port_url, replay_failed=True)  # same cache file, no server
    again = offline.chat(MSGS, schema=SCHEMA)
    assert len(offline.cache) == 0 and offline.cache.failed_count() == 1
    assert offline.cache.request(again.key)["messages"] == MSGS  # kept for audits
    assert (again.text, again.error, again.cached) == (bad.text, bad.error, True)
    assert again.usage == {"prompt_tokens": 7, "completion_tokens": 3}
    s = offline.stats_dict()
    assert s["llm_cache_hits"] == 1 and s["llm_seconds"] == 0
    assert s["llm_cached_seconds"] == pytest.approx(bad.latency_s, abs=0.01)  # stats round


def test_a_failed_cut_off_first_attempt_and_its_retry_regenerate_with_no_server(
    scripted, make_client, closed_port_url
):
    """The retry prompt quotes the first reply and its error ("cut off at max_tokens"), so the
    replay must give back both for the retry's key to match: the chain comes back exactly."""
    cut = completion('{"answer": "Shakesp')
    cut["choices"][0]["finish_reason"] = "length"
    srv = scripted([(200, cut, 0.0), reply('{"answer": "Shakespeare"}')])
    first: list = []
    live = make_client(srv.base_url)
    assert live.chat_json(MSGS, SCHEMA, retries=2, trace=first) == {"answer": "Shakespeare"}
    assert first[0]["error"].endswith("(the reply was cut off at max_tokens)")
    replay: list = []
    offline = make_client(closed_port_url, replay_failed=True)
    assert offline.chat_json(MSGS, SCHEMA, retries=2, trace=replay) == {"answer": "Shakespeare"}
    assert [t["error"] for t in replay] == [t["error"] for t in first]
    assert all(t["cached"] for t in replay) and len(srv.requests) == 2
    assert offline.stats_dict()["llm_format_retries"] == 1


def test_a_later_good_reply_wins_over_a_recorded_failure(scripted, make_client):
    srv = scripted([reply("not json"), reply('{"answer": "Shakespeare"}')])
    make_client(srv.base_url).chat(MSGS, schema=SCHEMA)  # fails, recorded apart
    llm = make_client(srv.base_url)  # a normal rerun asks again
    assert llm.chat(MSGS, schema=SCHEMA).data == {"answer": "Shakespeare"}
    replaying = make_client(srv.base_url, replay_failed=True)
    assert replaying.chat(MSGS, schema=SCHEMA).data == {"answer": "Shakespeare"}
    assert len(srv.requests) == 2


def test_bad_reply_in_an_old_cache_is_a_miss_and_is_overwritten(scripted, make_client):
    srv = scripted([reply('{"answer": "Shakespeare"}', prompt_tokens=5, completion_tokens=2)])
    llm = make_client(srv.base_url)
    key = request_key(
        "scripted-model", MSGS, llm._params(None, None), {"name": "response", "schema": SCHEMA}
    )
    llm.cache.put(
        key, "scripted-model", {"messages": MSGS}, CachedResponse('{"answer": 1}', 9, 9, 1.0)
    )
    first = llm.chat(MSGS, schema=SCHEMA)
    assert not first.cached and first.data == {"answer": "Shakespeare"} and len(srv.requests) == 1
    assert llm.cache.get(key).text == '{"answer": "Shakespeare"}' and len(llm.cache) == 1
    assert llm.chat(MSGS, schema=SCHEMA).cached and len(srv.requests) == 1
    s = llm.stats_dict()
    assert s["llm_cache_hits"] == 1 and s["llm_prompt_tokens"] == 10  # the stale row cost nothing


# ---- cache_only: every reply from the cache, a miss an error, no server (issue #29) -----------
def test_cache_only_answers_hits_and_replayed_failures_and_refuses_a_miss(scripted, make_client):
    srv = scripted([reply('{"answer": "Shakespeare"}'), reply("not json")])
    live = make_client(srv.base_url)
    good = live.chat(MSGS, schema=SCHEMA)
    other = [{"role": "user", "content": "Who wrote Faust?"}]
    live.chat(other, schema=SCHEMA)  # fails its check: recorded apart
    offline = make_client("", cache_only=True, replay_failed=True)  # no server URL at all
    assert offline.chat(MSGS, schema=SCHEMA).text == good.text
    assert offline.chat(other, schema=SCHEMA).error is not None  # the recorded failure, replayed
    with pytest.raises(LLMCacheMissError, match="not in the response cache.*llm.cache_only=true"):
        offline.chat([{"role": "user", "content": "Who wrote Ulysses?"}], schema=SCHEMA)
    strict = make_client("", cache_only=True)  # without replay_failed the failure is a miss
    with pytest.raises(LLMCacheMissError):
        strict.chat(other, schema=SCHEMA)
    assert len(srv.requests) == 2
    s = offline.stats_dict()
    assert s["llm_cache_hits"] == 2 and s["llm_seconds"] == 0


def test_a_cache_miss_under_cache_only_aborts_rather_than_falls_back():
    assert not is_recoverable(LLMCacheMissError("miss"))


def test_two_threads_asking_one_request_use_one_reply(scripted, make_client):
    """Two questions in flight needing the same request (an entity summary both reach): the
    server is asked once and both use that reply, since a rerun finds only one in the cache.
    The server here answers each request differently, as llama.cpp can when it batches two."""
    import itertools
    import threading

    count = itertools.count(1)
    srv = scripted(respond=lambda body: (200, completion(f"reply {next(count)}"), 0.3))
    llm = make_client(srv.base_url)
    start, texts = threading.Barrier(2), []

    def ask():
        start.wait()
        texts.append(llm.chat(MSGS).text)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert texts == ["reply 1", "reply 1"] and len(srv.requests) == 1
    assert llm.stats_dict()["llm_calls"] == 2 and llm.stats_dict()["llm_cache_hits"] == 1
    assert not llm._in_flight  # no lock left behind


def test_a_reply_another_process_stored_first_is_the_one_used(scripted, make_client):
    """Two runs (two clients on one cache file) racing on a request: the one that stores second
    uses the reply stored first, so every row that used the key replays from the cache."""
    other: list = []

    def respond(body):
        if not other:  # the first request: while it is out, another run asks and stores first
            other.append(make_client(srv.base_url))
            assert other[0].chat(MSGS).text == "first stored"
            return reply("arrived second")
        return reply("first stored")

    srv = scripted(respond=respond)
    late = make_client(srv.base_url)
    result = late.chat(MSGS)
    assert result.text == "first stored" and not result.cached
    assert len(srv.requests) == 2
    assert late.chat(MSGS).text == "first stored"  # and the cache holds it
