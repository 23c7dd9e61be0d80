"""`hopbench.llm.policy`: which LLM failures abort a run and which fall back for one reply."""

from __future__ import annotations

import pytest

from hopbench.core.errors import DataError, HopbenchError
from hopbench.core.fallback_field import DENSE, fallbacks, has_fallback, record_fallback
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
from hopbench.llm.policy import ask_json, fallback_on_bad_reply, is_recoverable

FATAL = [
    LLMUnavailableError("down"),
    LLMTimeoutError("slow"),
    LLMRateLimitError("429"),
    LLMAuthError("401"),
    LLMServerError("500"),
    LLMRequestError("404"),
    HopbenchError("other"),
    DataError("f.json", 1, "x", "bad"),
    RuntimeError("a bug"),
]


def _format_error():
    return LLMFormatError("fact_filter", 3, "not valid JSON", "oops")


def test_a_bad_reply_is_swallowed_recorded_and_flagged():
    trace: dict = {}
    with fallback_on_bad_reply(trace, "fact_filter", instead="no fact kept") as out:
        raise _format_error()
    assert out.failed and isinstance(out.error, LLMFormatError)
    [entry] = trace["fallback"]
    assert entry["step"] == "fact_filter"
    assert entry["reason"].startswith("LLM answer for 'fact_filter' did not match its JSON schema")
    assert entry["reason"].endswith("; no fact kept")


def test_a_good_reply_records_nothing():
    trace: dict = {}
    with fallback_on_bad_reply(trace, "fact_filter") as out:
        value = 42
    assert value == 42 and not out.failed and out.error is None and trace == {}


@pytest.mark.parametrize("error", FATAL, ids=lambda e: type(e).__name__)
def test_everything_else_propagates_and_records_nothing(error):
    trace: dict = {}
    with pytest.raises(type(error)):
        with fallback_on_bad_reply(trace, "fact_filter"):
            raise error
    assert trace == {} and not is_recoverable(error)


def test_context_overflow_falls_back_only_when_the_caller_cannot_trim():
    trace: dict = {}
    with fallback_on_bad_reply(trace, "qa_answer") as out:
        raise LLMContextOverflowError("too long")
    assert out.failed and fallbacks(trace)[0]["step"] == "qa_answer"
    with pytest.raises(LLMContextOverflowError):
        with fallback_on_bad_reply(trace, "qa_answer", overflow=False):
            raise LLMContextOverflowError("too long")
    assert len(trace["fallback"]) == 1


def test_entries_accumulate_and_old_string_fallbacks_still_read():
    trace: dict = {}
    record_fallback(trace, "question_entities", "no entity")
    record_fallback(trace, DENSE, "no seed entity")
    assert [e["step"] for e in fallbacks(trace)] == ["question_entities", DENSE]
    assert has_fallback(trace, DENSE) and not has_fallback(trace, "fact_filter")
    assert fallbacks({"fallback": "no seed entity"}) == [
        {"step": DENSE, "reason": "no seed entity"}
    ]
    assert fallbacks({}) == fallbacks(None) == fallbacks({"fallback": []}) == []


class _Prompt:
    SCHEMA = {"type": "object"}
    SCHEMA_NAME = "question_keywords"


class _LLM:
    def __init__(self, result):
        self.result, self.asked = result, []

    def chat_json(self, messages, schema, *, schema_name, max_tokens, trace):
        self.asked.append((messages, schema, schema_name, max_tokens, trace))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


def test_ask_json_returns_the_reply_or_none_with_the_fallback_recorded():
    trace: dict = {}
    calls: list = []
    llm = _LLM({"keywords": ["a"]})
    assert ask_json(
        llm, _Prompt, [{"role": "user", "content": "q"}], trace, calls=calls, max_tokens=96
    ) == {"keywords": ["a"]}
    assert llm.asked == [
        ([{"role": "user", "content": "q"}], _Prompt.SCHEMA, "question_keywords", 96, calls)
    ]
    assert trace == {}
    bad = _LLM(LLMFormatError("question_keywords", 3, "not valid JSON", "oops"))
    assert (
        ask_json(
            bad,
            _Prompt,
            [],
            trace,
            max_tokens=96,
            instead="phrases instead",
            schema={"type": "array"},
        )
        is None
    )
    assert bad.asked[0][1] == {"type": "array"}
    [entry] = trace["fallback"]
    assert entry["step"] == "question_keywords" and entry["reason"].endswith("; phrases instead")
    with pytest.raises(LLMUnavailableError):
        ask_json(_LLM(LLMUnavailableError("down")), _Prompt, [], {}, max_tokens=1)
