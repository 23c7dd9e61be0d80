"""Client plumbing against a scripted OpenAI-compatible HTTP server (the real request path over HTTP)."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.llm.errors import (
    LLMAuthError,
    LLMContextOverflowError,
    LLMFormatError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from tests.helpers.scripted_llm_server import completion, error, raw, reply, slow

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
MSGS = [{"role": "user", "content": "Who wrote Hamlet?"}]


def test_asks_for_json_schema_output_and_parses_it(scripted, make_client):
    srv = scripted([reply('{"answer": "Shakespeare"}', prompt_tokens=30, completion_tokens=5)])
    llm = make_client(srv.base_url)
    assert llm.chat_json(MSGS, SCHEMA, schema_name="qa") == {"answer": "Shakespeare"}
    body = srv.requests[0]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "qa", "schema": SCHEMA},
    }
    assert body["temperature"] == 0.0 and body["messages"] == MSGS
    s = llm.stats_dict()
    assert (s["llm_calls"], s["llm_prompt_tokens"], s["llm_completion_tokens"]) == (1, 30, 5)
    assert s["llm_cache_hits"] == 0 and s["llm_seconds"] > 0


def test_schema_violation_is_shown_to_the_model_then_retried(scripted, make_client):
    srv = scripted([reply('{"answer": 42}'), reply('{"answer": "Shakespeare"}')])
    llm = make_client(srv.base_url)
    trace: list = []
    assert llm.chat_json(MSGS, SCHEMA, retries=2, trace=trace) == {"answer": "Shakespeare"}
    assert len(srv.requests) == 2
    retry_msgs = srv.requests[1]["messages"]
    assert retry_msgs[:1] == MSGS and retry_msgs[1] == {
        "role": "assistant",
        "content": '{"answer": 42}',
    }
    assert "does not match the required JSON schema" in retry_msgs[2]["content"]
    assert "42 is not of type 'string'" in retry_msgs[2]["content"]
    assert [t["error"] is None for t in trace] == [False, True]
    s = llm.stats_dict()
    assert s["llm_format_retries"] == 1 and s["llm_failures"] == 0


def test_retry_exhaustion_raises_and_is_counted(scripted, make_client):
    srv = scripted([reply("not json at all"), reply('{"answer": 1}'), reply('{"wrong": "x"}')])
    llm = make_client(srv.base_url)
    with pytest.raises(LLMFormatError) as exc:
        llm.chat_json(MSGS, SCHEMA, schema_name="qa", retries=2)
    assert exc.value.attempts == 3 and "'answer' is a required property" in exc.value.problem
    assert len(srv.requests) == 3
    s = llm.stats_dict()
    assert s["llm_failures"] == 1 and s["llm_format_retries"] == 2 and s["llm_calls"] == 3


def test_fenced_json_from_a_server_without_schema_support_is_accepted(scripted, make_client):
    srv = scripted([reply('Sure:\n```json\n{"answer": "Shakespeare"}\n```')])
    assert make_client(srv.base_url).chat_json(MSGS, SCHEMA) == {"answer": "Shakespeare"}


def test_timeout_is_a_clear_counted_error(scripted, make_client):
    srv = scripted([slow(3.0)])
    llm = make_client(srv.base_url, timeout=0.5)
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 0.5 s"):
        llm.chat(MSGS)
    assert llm.stats_dict()["llm_timeouts"] == 1


def test_unreachable_server_names_the_url(closed_port_url, make_client):
    llm = make_client(closed_port_url, name="server")
    with pytest.raises(LLMUnavailableError) as exc:
        llm.chat(MSGS)
    assert f"LLM server at {closed_port_url} is not reachable" in str(exc.value)
    assert "llm.base_url" in str(exc.value)


def test_rate_limit_backs_off_then_succeeds(scripted, make_client):
    srv = scripted([error(429, "slow down"), error(429, "slow down"), reply('{"answer": "ok"}')])
    llm = make_client(srv.base_url, transient_retries=3, backoff_s=0.01)
    assert llm.chat_json(MSGS, SCHEMA) == {"answer": "ok"}
    assert llm.stats_dict()["llm_rate_limited"] == 2 and len(srv.requests) == 3


def test_rate_limit_exhaustion_raises(scripted, make_client):
    srv = scripted([error(429, "slow down")] * 3)
    llm = make_client(srv.base_url, transient_retries=2, backoff_s=0.01)
    with pytest.raises(LLMRateLimitError, match="after 3 attempt"):
        llm.chat(MSGS)


def test_llama_cpp_context_overflow_is_recognised(scripted, make_client):
    srv = scripted(
        [
            error(
                400,
                "the request exceeds the available context size, try increasing it",
                code="exceed_context_size_error",
            )
        ]
    )
    llm = make_client(srv.base_url)
    with pytest.raises(LLMContextOverflowError):
        llm.chat(MSGS)
    assert llm.stats_dict()["llm_context_overflows"] == 1


def test_other_bad_requests_are_not_mistaken_for_overflow(scripted, make_client):
    srv = scripted([error(400, "unknown field 'foo'")])
    with pytest.raises(HopbenchError, match="rejected the request") as exc:
        make_client(srv.base_url).chat(MSGS)
    assert not isinstance(exc.value, LLMContextOverflowError)


def test_invalid_schema_is_refused_before_any_request(scripted, make_client):
    srv = scripted([])
    with pytest.raises(HopbenchError, match="JSON schema 'bad' is invalid"):
        make_client(srv.base_url).chat(MSGS, schema={"type": "nonsense"}, schema_name="bad")
    assert srv.requests == []


# ---- failures that abort a run: typed, counted, retried where a retry can help -------------
def test_server_errors_are_retried_then_raised_with_what_to_check(scripted, make_client):
    srv = scripted([error(500, "boom")] * 3)
    llm = make_client(srv.base_url, transient_retries=2, backoff_s=0.001)
    with pytest.raises(LLMServerError) as exc:
        llm.chat(MSGS)
    assert len(srv.requests) == 3
    msg = str(exc.value)
    assert f"LLM server at {srv.base_url} kept failing (HTTP 500) after 3 attempt(s)" in msg
    assert "server's log" in msg and "llm.transient_retries" in msg
    assert llm.stats_dict()["llm_server_errors"] == 3


def test_one_server_error_then_a_reply_is_not_a_failure(scripted, make_client):
    srv = scripted([error(503, "loading model"), reply('{"answer": "ok"}')])
    llm = make_client(srv.base_url, transient_retries=2, backoff_s=0.001)
    assert llm.chat_json(MSGS, SCHEMA) == {"answer": "ok"}
    s = llm.stats_dict()
    assert s["llm_server_errors"] == 1 and s["llm_failures"] == 0


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_is_an_auth_error_naming_the_variable(status, scripted, make_client):
    srv = scripted([error(status, "invalid api key")] * 3)
    llm = make_client(srv.base_url, transient_retries=2, backoff_s=0.001, api_key_env="MY_LLM_KEY")
    with pytest.raises(LLMAuthError) as exc:
        llm.chat(MSGS)
    assert len(srv.requests) == 1  # a refused key is not retried
    assert f"LLM server at {srv.base_url} refused the API key (HTTP {status})" in str(exc.value)
    assert "environment variable MY_LLM_KEY" in str(exc.value)


def test_refused_key_without_a_variable_says_how_to_name_one(scripted, make_client):
    srv = scripted([error(401, "no key")])
    with pytest.raises(LLMAuthError, match="llm.api_key_env"):
        make_client(srv.base_url).chat(MSGS)


@pytest.mark.parametrize(
    "body, content_type",
    [
        ("<html><body>502 Bad Gateway</body></html>", "text/html"),  # a proxy's page
        ("<html><body>not json</body></html>", "application/json"),  # mislabelled: JSONDecodeError
        ('{"choices": [', "application/json"),  # cut off
        ('{"id": "x", "choices": []}', "application/json"),  # no choices
        ('"just a string"', "application/json"),
    ],
)
def test_http_200_that_is_not_a_completion_is_counted_retried_and_typed(
    body, content_type, scripted, make_client
):
    srv = scripted([raw(body, content_type=content_type)] * 3)
    llm = make_client(srv.base_url, transient_retries=2, backoff_s=0.001)
    with pytest.raises(LLMServerError) as exc:  # not a raw JSONDecodeError / AttributeError
        llm.chat_json(MSGS, SCHEMA)
    assert len(srv.requests) == 3
    assert "answered HTTP 200 with something that is not a chat completion, 3 time(s)" in str(
        exc.value
    )
    assert "OpenAI-compatible /v1 endpoint" in str(exc.value)
    s = llm.stats_dict()
    assert s["llm_bad_responses"] == 3 and s["llm_failures"] == 0
    assert len(llm.cache) == 0


def test_one_non_json_200_then_a_reply_recovers(scripted, make_client):
    srv = scripted([raw("oops", content_type="text/plain"), reply('{"answer": "ok"}')])
    llm = make_client(srv.base_url, transient_retries=1, backoff_s=0.001)
    assert llm.chat_json(MSGS, SCHEMA) == {"answer": "ok"}
    assert llm.stats_dict()["llm_bad_responses"] == 1


def test_no_transient_retries_means_the_first_bad_200_is_raised(scripted, make_client):
    srv = scripted([raw("not json"), reply('{"answer": "never asked"}')])
    with pytest.raises(LLMServerError, match="1 time"):
        make_client(srv.base_url, transient_retries=0).chat(MSGS)
    assert len(srv.requests) == 1


def test_unknown_model_is_a_request_error_naming_llm_model(scripted, make_client):
    srv = scripted([error(404, "model 'nope' not found")])
    with pytest.raises(LLMRequestError) as exc:
        make_client(srv.base_url).chat(MSGS)
    assert "(HTTP 404)" in str(exc.value) and "llm.model ('scripted')" in str(exc.value)


def test_a_reply_with_null_content_is_empty_text(scripted, make_client):
    body = completion("x")
    body["choices"][0]["message"]["content"] = None
    srv = scripted([(200, body, 0.0)])
    assert make_client(srv.base_url).chat(MSGS).text == ""


def test_a_reply_cut_off_at_max_tokens_says_so_and_is_a_format_error(scripted, make_client):
    cut = completion('{"answer": "Shakesp')
    cut["choices"][0]["finish_reason"] = "length"
    srv = scripted([(200, cut, 0.0)] * 2)
    llm = make_client(srv.base_url)
    with pytest.raises(LLMFormatError) as exc:  # per reply: the caller falls back
        llm.chat_json(MSGS, SCHEMA, retries=1, max_tokens=5)
    assert "not valid JSON" in exc.value.problem
    assert exc.value.problem.endswith("(the reply was cut off at max_tokens)")
    assert len(llm.cache) == 0


def test_each_thread_sends_through_its_own_connection_and_close_closes_all(scripted, make_client):
    """Concurrent requests never wait on each other's connection: one per thread."""
    import threading

    srv = scripted(respond=lambda body: reply('{"answer": "x"}'))
    llm = make_client(srv.base_url, cache=False)
    seen = []

    def ask():
        llm.chat_json(MSGS, SCHEMA, schema_name="qa")
        seen.append(llm._http.connection)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(a) for a in seen}) == 3 and len(srv.requests) == 3
    llm.close()
    assert all(a.sock is None for a in seen)
