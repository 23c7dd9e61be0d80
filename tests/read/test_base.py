"""`reader.context_tokens`: the reader is shown the ranking's top passages up to a token budget
(each whole, a prefix), the retriever's notes spent first; null keeps top_k as before."""

from __future__ import annotations

import json

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage, Question
from hopbench.llm.client import LLMClient
from hopbench.read import QAReader
from tests.helpers.scripted_llm_server import ScriptedServer, reply

# content "t\n" + n words: n word pieces ("t" is one more)
PASSAGES = [Passage(f"rb-{i}", "t", " ".join(["word"] * n)) for i, n in enumerate((99, 199, 49, 9))]
QUESTION = Question("q", "What?", ["x"])


def _answer(reader, notes=None):
    srv = ScriptedServer([reply(json.dumps({"reasoning": "r", "answer": "x"}))])
    try:
        llm = LLMClient(base_url=srv.base_url, model="scripted", identity="scripted", cache=None)
        out = reader.bind(llm).answer(QUESTION, PASSAGES, **({"notes": notes} if notes else {}))
    finally:
        srv.close()
    return out, srv.requests[0]["messages"][-1]["content"]


def test_the_budget_takes_a_prefix_of_whole_passages():
    # 100 + 200 = 300 fits in 320; the third (50) would make 350: it ends the prefix, and the
    # fourth (10), which would still fit, is not pulled in
    out, prompt = _answer(QAReader(top_k=1, context_tokens=320))
    assert out.trace["passage_ids"] == ["rb-0", "rb-1"]  # the budget, not top_k=1
    assert out.trace["context_budget"] == 320 and out.trace["context_tokens"] == 300
    assert prompt.count("Wikipedia Title: ") == 2
    out, _ = _answer(QAReader(context_tokens=355))
    assert (
        out.trace["passage_ids"] == ["rb-0", "rb-1", "rb-2"] and out.trace["context_tokens"] == 350
    )


def test_notes_are_paid_from_the_budget_first():
    note = " ".join(["word"] * 30)  # 30 tokens: 30 + 100 + 200 = 330 > 320
    out, _ = _answer(QAReader(context_extras=True, context_tokens=320), notes=[note])
    assert out.trace["passage_ids"] == ["rb-0"] and out.trace["context_tokens"] == 130
    assert out.trace["notes_tokens"] == 30  # R@Nt of the row counts them too (token_budget)


def test_without_a_budget_the_reader_is_as_before():
    out, _ = _answer(QAReader(top_k=3))
    assert out.trace["passage_ids"] == ["rb-0", "rb-1", "rb-2"]
    assert "context_tokens" not in out.trace and "context_budget" not in out.trace


@pytest.mark.parametrize("bad", [0, -5, 1.5, "512", True])
def test_a_bad_budget_is_one_clear_error(bad):
    with pytest.raises(HopbenchError, match="reader.context_tokens must be null or a positive"):
        QAReader(context_tokens=bad)
