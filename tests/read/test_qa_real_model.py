"""The QA reader with the real local model (Qwen2.5-Coder-1.5B Q4_K_M via llama.cpp) on real questions.

Given only the gold passages of the 3 questions in MuSiQue's small subset, the reader's
answers are scored with the project's metrics; the expected values below are what this
model produced at temperature 0 (greedy), recorded when the test was written. The rerun is
served from the response cache by a client whose server address is dead, which proves no
request was sent.
"""

from __future__ import annotations

import socket

import pytest

from hopbench.evaluate.score import score_question
from hopbench.llm import build_client
from hopbench.llm.cache import ResponseCache
from hopbench.llm.client import LLMClient
from hopbench.llm.local_model import default_cache_dir
from hopbench.read import QAReader

pytestmark = pytest.mark.llm

# question id -> (answer, em, f1) observed at temperature 0 with the gold passages only
# (recorded 2026-11-30). The 1.5B model gets all three wrong: it names the journal's editor
# instead of the APA's first president, counts Publix stores in the wrong state, and returns
# the church courts instead of the Anglican Communion. The strings pin the greedy output.
EXPECTED = {
    "2hop__150763_14904": ("Jennifer Callahan", 0.0, 0.0),  # gold: G. Stanley Hall
    "4hop1__709382_146811_31223_91015": ("42", 0.0, 0.0),  # gold: 35
    "2hop__6584_6587": ("ecclesiastical courts", 0.0, 0.0),  # gold: the Anglican Communion
}


@pytest.fixture(scope="module")
def local_llm(cache_dir):
    # Responses go to the test session's cache (fresh unless HOPBENCH_TEST_CACHE is set); the
    # 1 GB model file is the one `make install` assembled in the user's cache.
    llm = build_client(
        {"name": "local", "model_dir": str(default_cache_dir() / "models")}, cache_dir
    )
    yield llm
    llm.close()


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _answer_all(reader, ds):
    got = {}
    for q in ds.questions:
        gold = [ds.passage(pid) for pid in q.gold_passage_ids]
        out = reader.answer(q, gold)
        m = score_question(q, q.gold_passage_ids, out.answer)
        got[q.id] = (out.answer, m["em"], round(m["f1"], 4))
    return got


def test_qa_reader_scores_on_gold_passages_then_reruns_from_cache(local_llm, musique_sub):
    got = _answer_all(QAReader().bind(local_llm), musique_sub)
    assert got == EXPECTED
    s = local_llm.stats_dict()
    assert s["llm_calls"] == 3 + s["llm_format_retries"]
    assert s["llm_failures"] == 0 and s["llm_prompt_tokens"] > 0

    offline = LLMClient(
        base_url=_dead_url(),
        model="unused",
        identity=local_llm.identity,
        cache=ResponseCache(local_llm.cache.path),
        name="local",
    )
    assert _answer_all(QAReader().bind(offline), musique_sub) == got
    s2 = offline.stats_dict()
    assert s2["llm_cache_hits"] == s2["llm_calls"] == s["llm_calls"] and s2["llm_seconds"] == 0
    offline.close()


def test_identity_is_the_model_file_hash(local_llm):
    assert (
        local_llm.identity
        == "gguf-sha256:cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    )
