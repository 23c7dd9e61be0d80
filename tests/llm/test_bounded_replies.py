"""Replies are bounded (issue #28, items 9-11): `llm.timeout` is a deadline for the whole
request, not for each socket read; a body past the byte cap is a bad reply, not read to its
end; what of a reply goes into errors, traces and logs is short; a reply that is not valid
Unicode (a lone surrogate) is a bad reply and is never cached. Each against a real server on
127.0.0.1 that misbehaves so."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from hopbench.core.http_transport import MAX_REPLY_BYTES
from hopbench.llm.errors import LLMFormatError, LLMServerError, LLMTimeoutError
from tests.helpers.misbehaving_llm_server import MisbehavingServer, huge, trickle
from tests.helpers.scripted_llm_server import completion, raw, reply

MSGS = [{"role": "user", "content": "Who wrote Hamlet?"}]
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


@pytest.fixture
def misbehaving():
    servers = []

    def make(answer) -> MisbehavingServer:
        servers.append(MisbehavingServer(answer))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_a_server_trickling_one_byte_at_a_time_hits_the_deadline(misbehaving, make_client):
    """Each byte comes well within the timeout, the whole body never does: before the fix every
    read reset the clock and the request took the full 40 s of the trickle."""
    body = json.dumps(completion('{"answer": "Shakespeare"}')).encode()
    srv = misbehaving(trickle(body, every_s=0.2))
    llm = make_client(srv.base_url, timeout=1.0)
    t0 = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 1 s"):
        llm.chat(MSGS)
    assert time.monotonic() - t0 < 3.0
    assert llm.stats_dict()["llm_timeouts"] == 1


def test_the_deadline_holds_for_every_slot_at_once(misbehaving, make_client):
    """concurrency=4 against the trickling server: all four requests end at the deadline."""
    srv = misbehaving(trickle(json.dumps(completion("x")).encode(), every_s=0.2))
    llm = make_client(srv.base_url, timeout=1.0)
    errors = []

    def ask(i):
        try:
            llm.chat([{"role": "user", "content": f"q{i}"}])
        except LLMTimeoutError as exc:
            errors.append(exc)

    t0 = time.monotonic()
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(errors) == 4 and time.monotonic() - t0 < 3.0


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_reply_past_the_byte_cap_is_a_bad_reply(misbehaving, make_client, chunked):
    """A 50 MB body: refused after the cap (counted in llm_bad_responses, retried like one,
    then LLMServerError), not read into memory, predictions or logs."""
    srv = misbehaving(huge(50 << 20, chunked=chunked))
    llm = make_client(srv.base_url, timeout=60.0, transient_retries=1, backoff_s=0.01)
    t0 = time.monotonic()
    with pytest.raises(LLMServerError, match="cap") as exc:
        llm.chat(MSGS)
    assert len(str(exc.value)) < 1000
    assert time.monotonic() - t0 < 10
    s = llm.stats_dict()
    assert s["llm_bad_responses"] == 2 and srv.requests == 2
    assert len(llm.cache) == 0


def test_a_reply_just_under_the_cap_is_read_whole(scripted, make_client):
    text = json.dumps({"answer": "y" * (MAX_REPLY_BYTES - 400)})
    srv = scripted([reply(text)])
    assert make_client(srv.base_url).chat_json(MSGS, SCHEMA) == json.loads(text)


def test_what_a_long_bad_reply_leaves_in_errors_traces_and_logs_is_short(
    scripted, make_client, caplog
):
    """The validator quotes the offending value: 500 kB of it went into the error, the fallback
    reason and every log line."""
    long = json.dumps({"answer": ["z" * 500_000]})
    srv = scripted([reply(long)] * 3)
    llm = make_client(srv.base_url)
    trace: list = []
    with caplog.at_level(logging.INFO), pytest.raises(LLMFormatError) as exc:
        llm.chat_json(MSGS, SCHEMA, retries=2, trace=trace)
    assert len(str(exc.value)) < 1500 and len(exc.value.problem) < 600
    assert all(len(t["error"]) < 600 for t in trace)
    assert all(len(r.getMessage()) < 1500 for r in caplog.records)
    # the retry prompt says what is wrong in as few words
    assert len(srv.requests[1]["messages"][-1]["content"]) < 800


SURROGATE_BODY = (
    '{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
    '"content": %s}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}'
)


@pytest.mark.parametrize(
    "content",
    ['"\\ud83d"', '"{\\"answer\\": \\"\\\\ud83d\\"}"'],
    ids=["in-the-reply", "in-the-reply-json"],
)
def test_a_reply_with_a_lone_surrogate_is_bad_and_not_cached(scripted, make_client, content):
    """Before: the reply went to the cache write (UnicodeEncodeError traceback), or into the
    parsed answer, where the row write crashed."""
    srv = scripted([raw(SURROGATE_BODY % content)] * 3)
    llm = make_client(srv.base_url, transient_retries=0)
    if content.startswith('"\\u'):
        with pytest.raises(LLMServerError, match="not valid Unicode"):
            llm.chat(MSGS)
        assert llm.stats_dict()["llm_bad_responses"] == 1
    else:
        with pytest.raises(LLMFormatError, match="not valid Unicode"):
            llm.chat_json(MSGS, SCHEMA, retries=2)
    assert len(llm.cache) == 0


def test_a_surrogate_reply_cached_by_an_older_version_is_asked_again(
    scripted, make_client, tmp_path
):
    """A relaunch over a cache that already holds such a reply does not crash: the row is a
    miss, asked again, and replaced by the good answer."""
    from hopbench.llm.cache import CachedResponse

    srv = scripted([reply("Shakespeare")])
    llm = make_client(srv.base_url)
    from hopbench.llm.cache import request_key

    k = request_key(llm.identity, MSGS, llm._params(None, None), None)
    llm.cache._conn.execute(
        "INSERT INTO responses VALUES (?, ?, ?, CAST(? AS TEXT), 1, 1, 0.1, 0)",
        (k, llm.identity, "{}", b"\xed\xa0\xbd"),
    )  # UTF-8 bytes of a lone \ud83d
    assert llm.chat(MSGS).text == "Shakespeare" and len(srv.requests) == 1
    assert llm.cache.get(k) == CachedResponse("Shakespeare", 11, 7, llm.cache.get(k).latency_s)
