"""Issue #14.2 at the retriever level: every LLM-using retriever obeys `hopbench.llm.policy`.

A server that cannot be reached (or keeps failing) propagates out of `retrieve`, so the run
aborts instead of filing dense numbers under the method's name; a reply that never matches
its schema falls back for that step and says so in `trace["fallback"]`.
"""

from __future__ import annotations

import pytest

from hopbench.llm.errors import (
    LLMAuthError,
    LLMFormatError,
    LLMServerError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from hopbench.retrieve.catrag.catrag import CatRAGRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever
from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever
from hopbench.retrieve.qafd.flow_diffusion import FlowDiffusionRetriever
from hopbench.retrieve.qafd.flow_diffusion_joint import JointFlowDiffusionRetriever
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever


class FailingLLM:
    """Raises `error` on every request (tests only)."""

    def __init__(self, error: Exception):
        self.error = error
        self.schemas: list[str] = []

    def chat_json(
        self, messages, schema, *, schema_name="response", max_tokens=None, retries=2, trace=None
    ):
        self.schemas.append(schema_name)
        raise self.error

    def chat(self, messages, **kw):
        self.schemas.append("entity_summary")
        raise self.error


# retriever, its first LLM step
RETRIEVERS = {
    "hipporag": (
        lambda: HippoRAGRetriever(llm_name="server", seeding={"filter": True}),
        "fact_filter",
    ),
    "catrag": (
        lambda: CatRAGRetriever(
            ner="llm",
            llm_name="server",
            edge_weighting=False,
            passage_boost=False,
            seeding={"filter": False},
        ),
        "question_entities",
    ),
    "neuropath_robust": (
        lambda: NeuroPathRetriever(
            handling="robust", prompts="compact", ner="llm", llm_name="server"
        ),
        "question_entities",
    ),
    "flow_diffusion": (
        lambda: FlowDiffusionRetriever(keywords=True, llm_name="server"),
        "qafd_keywords",
    ),
    "flow_diffusion_joint": (
        lambda: JointFlowDiffusionRetriever(keywords=True, llm_name="server"),
        "question_keywords",
    ),
    "spreading_activation": (
        lambda: SpreadingActivationRetriever(mentions="llm", llm_name="server"),
        "qasa_question_entities",
    ),
}

FATAL = [
    LLMUnavailableError("LLM server at http://127.0.0.1:9/v1 is not reachable: start the server"),
    LLMTimeoutError("did not answer within 1 s"),
    LLMAuthError("refused the API key"),
    LLMServerError("kept failing (HTTP 500) after 3 attempt(s)"),
]


def _prepared(name, kg, services, llm):
    services.llm = llm
    r = RETRIEVERS[name][0]()
    r.prepare(kg, services)
    return r


@pytest.mark.parametrize("name", RETRIEVERS)
@pytest.mark.parametrize("error", FATAL, ids=lambda e: type(e).__name__)
def test_an_unusable_server_aborts_instead_of_falling_back(
    name, error, musique_kg, services, musique_sub
):
    llm = FailingLLM(error)
    r = _prepared(name, musique_kg, services, llm)
    with pytest.raises(type(error)):
        r.retrieve(musique_sub.questions[0], 10)
    assert llm.schemas == [RETRIEVERS[name][1]]  # the first step raised; nothing after it ran


@pytest.mark.parametrize("name", RETRIEVERS)
def test_a_bad_reply_falls_back_for_that_step_and_is_recorded(
    name, musique_kg, services, musique_sub
):
    step = RETRIEVERS[name][1]
    llm = FailingLLM(LLMFormatError(step, 3, "not valid JSON", "oops"))
    r = _prepared(name, musique_kg, services, llm)
    got = r.retrieve(musique_sub.questions[0], 10)
    assert len(got.passage_ids) == 10
    entries = got.trace["fallback"]
    assert entries[0]["step"] == step
    assert (
        "did not match its JSON schema after 3 attempt(s): not valid JSON" in entries[0]["reason"]
    )
    assert all(set(e) == {"step", "reason"} for e in entries)
    for old in (
        "filter_error",
        "ner_error",
        "scoring_errors",
        "tracker_error",
        "keywords_error",
        "dense_fallback",
    ):
        assert old not in got.trace


def test_hipporag_bad_filter_reply_gives_the_dense_ranking_and_says_both(
    musique_kg, services, musique_sub
):
    llm = FailingLLM(
        LLMFormatError("fact_filter", 3, "at (root): 'selected' is a required property", "{}")
    )
    got = _prepared("hipporag", musique_kg, services, llm).retrieve(musique_sub.questions[0], 10)
    assert [e["step"] for e in got.trace["fallback"]] == ["fact_filter", "dense_fallback"]
    assert got.trace["fallback"][0]["reason"].endswith("; no fact kept")
    assert got.trace["fallback"][1]["reason"] == "no fact survived the filter"
