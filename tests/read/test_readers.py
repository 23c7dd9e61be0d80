"""Readers over a scripted server: prompt shape, answer extraction, trimming, failures, binding."""

from __future__ import annotations

import json

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import CONFIG_DIR
from hopbench.data.schema import Question
from hopbench.llm.client import LLMClient
from hopbench.read import ClaimVerifier, QAReader
from tests.helpers.scripted_llm_server import ScriptedServer, error, reply


@pytest.fixture
def server():
    servers = []

    def make(steps=None, respond=None):
        servers.append(ScriptedServer(steps, respond))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def _llm(srv) -> LLMClient:
    return LLMClient(base_url=srv.base_url, model="scripted", identity="scripted", cache=None)


def _last_user(body: dict) -> str:
    return body["messages"][-1]["content"]


def test_reader_without_llm_says_which_config_to_choose():
    for reader in (QAReader(), ClaimVerifier()):
        with pytest.raises(HopbenchError, match=r"llm=local .*llm=openai or llm=server"):
            reader.bind(None)


def test_readers_are_built_from_their_hydra_configs():
    for name, cls in (("qa", QAReader), ("verify", ClaimVerifier)):
        params = OmegaConf.to_container(OmegaConf.load(f"{CONFIG_DIR}/reader/{name}.yaml"))
        assert params.pop("name") == name
        reader = instantiate(params, _convert_="all")
        assert isinstance(reader, cls) and reader.top_k == 5


def test_qa_reader_shows_top5_as_wikipedia_titles_and_extracts_the_answer(server, musique_sub):
    srv = server(
        [
            reply(
                json.dumps({"reasoning": "APA was founded by Hall.", "answer": " G. Stanley Hall "})
            )
        ]
    )
    q = musique_sub.questions[0]
    passages = musique_sub.corpus[:7]
    out = QAReader().bind(_llm(srv)).answer(q, passages)
    assert out.answer == "G. Stanley Hall"
    body = srv.requests[0]
    user = _last_user(body)
    assert user.count("Wikipedia Title: ") == 5
    assert user.startswith(f"Wikipedia Title: {passages[0].title}\n{passages[0].text}")
    assert user.endswith(f"Question: {q.text}")
    assert body["response_format"]["json_schema"]["name"] == "qa_answer"
    assert out.trace["passage_ids"] == [p.id for p in passages[:5]]
    assert out.trace["calls"][0]["reasoning"] == "APA was founded by Hall."


def test_context_overflow_drops_lowest_ranked_passages_whole(server, musique_sub):
    def respond(body):
        if _last_user(body).count("Wikipedia Title: ") > 3:
            return error(400, "the request exceeds the available context size, try increasing it")
        return reply('{"reasoning": "r", "answer": "a"}')

    srv = server(respond=respond)
    llm = _llm(srv)
    passages = musique_sub.corpus[:5]
    out = QAReader().bind(llm).answer(musique_sub.questions[0], passages)
    assert out.answer == "a"
    assert out.trace["trimmed_passage_ids"] == [passages[4].id, passages[3].id]
    assert out.trace["passage_ids"] == [p.id for p in passages[:3]]
    assert llm.stats_dict()["llm_context_overflows"] == 2


def test_answer_that_never_fits_the_schema_is_scored_empty_and_traced(server, musique_sub):
    srv = server([reply('{"reasoning": "r"}')] * 3)
    llm = _llm(srv)
    out = QAReader(retries=2).bind(llm).answer(musique_sub.questions[0], musique_sub.corpus[:2])
    assert out.answer == ""
    [fb] = out.trace["fallback"]
    assert (
        fb["step"] == "qa_answer"
        and "did not match its JSON schema after 3 attempt(s)" in fb["reason"]
    )
    assert llm.stats_dict()["llm_failures"] == 1


def test_a_prompt_that_overflows_with_one_passage_left_is_an_empty_answer(server, musique_sub):
    srv = server(respond=lambda body: error(400, "the request exceeds the available context size"))
    llm = _llm(srv)
    passages = musique_sub.corpus[:3]
    out = QAReader().bind(llm).answer(musique_sub.questions[0], passages)
    assert out.answer == "" and len(srv.requests) == 3  # trimmed to one passage, then gave up
    assert out.trace["trimmed_passage_ids"] == [passages[2].id, passages[1].id]
    [fb] = out.trace["fallback"]
    assert fb["step"] == "qa_answer" and "context window" in fb["reason"]


@pytest.mark.parametrize("status, kind", [(500, "LLMServerError"), (401, "LLMAuthError")])
def test_a_failing_server_aborts_the_reader(status, kind, server, musique_sub):
    srv = server([error(status, "no")] * 2)
    with pytest.raises(HopbenchError) as exc:
        QAReader().bind(_llm(srv)).answer(musique_sub.questions[0], musique_sub.corpus[:2])
    assert type(exc.value).__name__ == kind and srv.base_url in str(exc.value)


def test_verifier_returns_a_label_and_retries_an_invalid_one(server, musique_sub):
    srv = server(
        [
            reply('{"reasoning": "r", "label": "MAYBE"}'),
            reply('{"reasoning": "r", "label": "SUPPORTED"}'),
        ]
    )
    claim = Question(
        id="c1",
        text="Stanley Hall was the first APA president.",
        answers=[],
        kind="claim",
        label="SUPPORTED",
    )
    out = ClaimVerifier().bind(_llm(srv)).answer(claim, musique_sub.corpus[:3])
    assert out.answer == "SUPPORTED"
    assert _last_user(srv.requests[0]).endswith(f"Claim: {claim.text}")
    assert "'MAYBE' is not one of" in srv.requests[1]["messages"][-1]["content"]
