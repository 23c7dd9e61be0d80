"""`mentions: llm` for the Neo4j retriever (plumbing only, against a scripted HTTP LLM server): the
same mention step as in memory (`hopbench.retrieve.qasa.mentions`), the search hint is what the
vector seeds embed, and a bad reply falls back to the spaCy mentions, recorded in trace.fallback."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.llm.errors import LLMServerError
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.qasa.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever
from tests.helpers.scripted_llm_server import error, reply

from .conftest import make_services

pytestmark = pytest.mark.neo4j

PAIRS = (
    '{"entities": [{"name": "Journal of Psychotherapy Integration", '
    '"search_hint": "journal of psychotherapy integration"}, '
    '{"name": "president", "search_hint": "president of the society"}]}'
)


@pytest.fixture
def llm_server(scripted_http_llm):
    """(ScriptedServer, LLMClient on it), from the shared `scripted_http_llm`."""
    return lambda steps: scripted_http_llm(steps, identity="scripted-sa-neo4j")


def test_llm_pairs_seed_as_in_memory(
    graphdb, musique_sub, musique_kg, encoder, graphdb_settings, llm_server
):
    """Same reply on both sides: same mentions and hints in the trace, same seeds (the unmatched
    "president" searched by its hint's vector), same top passages."""
    q = musique_sub.questions[0]
    services = make_services(musique_sub, encoder, graphdb_settings)
    srv, services.llm = llm_server([reply(PAIRS), reply(PAIRS)])
    neo = SpreadingActivationNeo4jRetriever(
        mentions="llm", llm_name="server", gate_function="exact"
    )
    assert neo.needs_llm
    neo.prepare(musique_kg, services, db=graphdb)
    got = neo.retrieve(q, 5)
    mem = SpreadingActivationRetriever(mentions="llm", llm_name="server", top_paths=0)
    mem.prepare(musique_kg, services)
    want = mem.retrieve(q, 5)
    assert len(srv.requests) == 2
    assert (
        got.trace["mentions"]
        == want.trace["mentions"]
        == ["journal of psychotherapy integration", "president"]
    )
    assert got.trace["search_hints"] == [
        "journal of psychotherapy integration",
        "president of the society",
    ]
    assert got.trace["mention_source"] == "llm" and len(got.trace["llm_calls"]) == 1
    assert "president of the society" in neo.vectors._memo and "president" not in neo.vectors._memo
    seeds = {s["entity"]: s["activation"] for s in got.trace["seeds"]}
    expect = {s["entity"]: s["activation"] for s in want.trace["seeds"]}
    assert set(seeds) == set(expect)
    np.testing.assert_allclose([seeds[e] for e in expect], list(expect.values()), rtol=1e-9)
    assert got.passage_ids == want.passage_ids


def test_bad_reply_falls_back_to_spacy_and_is_recorded(
    graphdb, musique_sub, musique_kg, encoder, graphdb_settings, llm_server
):
    q = musique_sub.questions[0]
    services = make_services(musique_sub, encoder, graphdb_settings)
    spacy = SpreadingActivationNeo4jRetriever()
    spacy.prepare(musique_kg, services, db=graphdb)
    plain = spacy.retrieve(q, 10)
    srv, services.llm = llm_server([reply("not json at all")] * 3)
    neo = SpreadingActivationNeo4jRetriever(mentions="llm", llm_name="server")
    neo.prepare(musique_kg, services, db=graphdb)
    got = neo.retrieve(q, 10)
    assert len(srv.requests) == 3  # the schema retries, then the fallback
    [fb] = got.trace["fallback"]
    assert fb["step"] == "qasa_question_entities" and fb["reason"].endswith(
        "; spaCy mentions instead"
    )
    assert got.trace["mention_source"] == "spacy" and len(got.trace["llm_calls"]) == 3
    assert got.trace["mentions"] == plain.trace["mentions"] and "search_hints" not in got.trace
    assert got.passage_ids == plain.passage_ids


def test_unusable_server_aborts(
    graphdb, musique_sub, musique_kg, encoder, graphdb_settings, llm_server
):
    services = make_services(musique_sub, encoder, graphdb_settings)
    _, services.llm = llm_server([error(500, "boom")] * 2)
    neo = SpreadingActivationNeo4jRetriever(mentions="llm", llm_name="server")
    neo.prepare(musique_kg, services, db=graphdb)
    with pytest.raises(LLMServerError):
        neo.retrieve(musique_sub.questions[0], 10)


def test_timeout_keeps_the_mention_fallback(
    graphdb_settings, musique_sub, musique_kg, encoder, llm_server
):
    """A question whose LLM reply fell back and whose query then timed out records both steps."""
    from hopbench.graphdb.connection import GraphDBSettings, connect

    services = make_services(musique_sub, encoder, graphdb_settings)
    _, services.llm = llm_server([reply("not json at all")] * 3)
    db = connect(
        GraphDBSettings(
            uri=graphdb_settings.uri,
            user=graphdb_settings.user,
            password=graphdb_settings.password,
            query_timeout=0.5,
        )
    )
    try:
        neo = SpreadingActivationNeo4jRetriever(mentions="llm", llm_name="server")
        neo.prepare(musique_kg, services, db=db)
        neo.cypher = (
            "UNWIND range(1, 1000000000) AS x WITH x WHERE x < 0 RETURN x"  # runs for minutes
        )
        got = neo.retrieve(musique_sub.questions[0], 5)
    finally:
        db.close()
    assert got.trace["query_timeout"] is True and got.trace["mention_source"] == "spacy"
    assert [f["step"] for f in got.trace["fallback"]] == [
        "qasa_question_entities",
        "dense_fallback",
    ]
