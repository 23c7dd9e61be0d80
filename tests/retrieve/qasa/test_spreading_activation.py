"""Spreading activation on the real MuSiQue sub-corpus graph: the retriever is the kernel plus
the shared rules, the gate changes what it should, batch equals one-by-one."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.llm.errors import LLMServerError
from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa.passages import rank_passages
from hopbench.retrieve.qasa.spread import semantic_gate, spreading_activation
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.question import question_mentions
from tests.helpers.scripted_llm_server import error, reply


def _prepared(kg, services, **kw):
    r = SpreadingActivationRetriever(**kw)
    r.prepare(kg, services)
    return r


def test_retriever_equals_the_kernel_run_directly(musique_kg, services, musique_sub, encoder):
    r = _prepared(musique_kg, services)
    kg = musique_kg
    for q in musique_sub.questions:
        q_emb = services.query_embedding(q)
        mentions = question_mentions(q.text)
        idx, act, _ = rules.seed_activations(
            mentions, kg.entity_index, encoder.encode, kg.description_embeddings
        )
        assert idx.size > 0
        res = spreading_activation(
            rules.relation_matrix(kg),
            idx,
            act,
            semantic_gate(kg.description_embeddings, q_emb),
            decay=0.7,
            steps=3,
            threshold=0.01,
        )
        scores = kg.context.toarray() @ np.where(res.activated, res.activation, 0.0)
        dense = services.passage_embeddings @ q_emb
        want = rank_passages(scores, dense)[:10]
        got = r.retrieve(q, 10)
        assert got.passage_ids == [kg.passage_ids[j] for j in want]
        assert got.trace["mentions"] == mentions
        assert [s["activation"] for s in got.trace["seeds"]] == pytest.approx(act.tolist())
        assert got.trace["n_activated"] == int(res.activated.sum())
        for p in got.trace["paths"]:
            nodes = [kg.entity_index(n) for n in p["nodes"]]
            assert nodes[0] in set(idx.tolist()) and 2 <= len(nodes) <= 5
            assert p["weight"] == pytest.approx(np.mean(res.activation[nodes]))


def test_gate_scales_one_step_activation_by_the_description_cosine(
    musique_kg, services, musique_sub
):
    """With depth 1 a non-seed node's activation is δ·gate·Σ A a_u gated and δ·Σ A a_u ungated."""
    on = _prepared(musique_kg, services, depth=1, threshold=0.0)
    off = _prepared(musique_kg, services, depth=1, threshold=0.0, gate=False)
    differs = False
    for q in musique_sub.questions:
        _, idx, act, _ = on.seeds(q)
        gate = semantic_gate(musique_kg.description_embeddings, services.query_embedding(q))
        a_on = spreading_activation(on.adjacency, idx, act, gate, decay=0.7, steps=1, threshold=0.0)
        a_off = spreading_activation(
            off.adjacency, idx, act, None, decay=0.7, steps=1, threshold=0.0
        )
        grown = np.flatnonzero(a_on.activated & (a_on.first_step == 1))
        np.testing.assert_allclose(
            a_on.activation[grown], gate[grown] * a_off.activation[grown], rtol=1e-12
        )
        # nodes whose description is orthogonal or opposed to the question are never reached gated
        dead = (gate == 0) & (a_off.first_step == 1)
        assert not a_on.activated[dead].any()
        r_on, r_off = on.retrieve(q, 18), off.retrieve(q, 18)
        differs |= r_on.passage_ids != r_off.passage_ids
    assert differs, "the gate changed no ranking on any of the 3 questions"


def test_batch_equals_one_by_one(musique_kg, services, musique_sub):
    for gate in (True, False):
        r = _prepared(musique_kg, services, gate=gate)
        batch = r.retrieve_batch(musique_sub.questions, 10)
        for q, b in zip(musique_sub.questions, batch):
            one = r.retrieve(q, 10)
            # same activations up to the last bit (the batched gate is one matrix product)
            assert b.passage_ids == one.passage_ids
            assert [n for n, _ in b.trace["activations"]] == [
                n for n, _ in one.trace["activations"]
            ]
            assert [a for _, a in b.trace["activations"]] == pytest.approx(
                [a for _, a in one.trace["activations"]], rel=1e-12
            )
            assert [p["nodes"] for p in b.trace["paths"]] == [
                p["nodes"] for p in one.trace["paths"]
            ]


def test_llm_mentions_replace_spacy_when_asked(musique_kg, services, musique_sub, scripted_llm):
    services.llm = scripted_llm(
        {
            "entities": [
                {
                    "name": "Journal of Psychotherapy Integration",
                    "search_hint": "journal of psychotherapy integration",
                },
                {"name": "president", "search_hint": "president of the society"},
            ]
        }
    )
    r = SpreadingActivationRetriever(mentions="llm", llm_name="local")
    assert r.needs_llm
    r.prepare(musique_kg, services)
    got = r.retrieve(musique_sub.questions[0], 5)
    assert got.trace["mentions"] == ["journal of psychotherapy integration", "president"]
    assert got.trace["search_hints"] == [
        "journal of psychotherapy integration",
        "president of the society",
    ]
    assert got.trace["seeds"][0] == {
        "entity": "e:journal of psychotherapy integration",
        "activation": 1.0,
        "mention": "journal of psychotherapy integration",
        "match": "exact",
    }
    # the unmatched mention is searched by its hint, not by its name
    assert "president of the society" in r.vectors._memo
    vec = [s for s in got.trace["seeds"] if s["match"] == "vector"]
    assert vec and all(s["search_hint"] == "president of the society" for s in vec)


def test_gate_vector_equals_semantic_gate(musique_kg, services, musique_sub):
    r = _prepared(musique_kg, services)
    for q in musique_sub.questions:
        q_emb = services.query_embedding(q)
        np.testing.assert_allclose(
            r.gate_vector(q_emb),
            semantic_gate(musique_kg.description_embeddings, q_emb),
            rtol=1e-12,
            atol=1e-15,
        )


# ---- mentions: llm under hopbench.llm.policy, against a real HTTP server -------------------
@pytest.fixture
def keyword_server(scripted_http_llm):
    """(ScriptedServer, LLMClient on it), from the shared `scripted_http_llm`."""
    return lambda steps: scripted_http_llm(steps, identity="scripted-sa")


def test_llm_mentions_bad_reply_falls_back_to_spacy_and_is_recorded(
    musique_kg, services, musique_sub, keyword_server
):
    q = musique_sub.questions[0]
    spacy = _prepared(musique_kg, services).retrieve(q, 10)
    srv, llm = keyword_server(
        [reply("not json at all")] * 3
        + [reply('{"entities": [{"name": "president", "search_hint": "president"}]}')]
    )
    services.llm = llm
    r = SpreadingActivationRetriever(mentions="llm", llm_name="server")
    r.prepare(musique_kg, services)
    got = r.retrieve(q, 10)
    assert len(srv.requests) == 3  # the schema retries, then the fallback
    [fb] = got.trace["fallback"]
    assert fb["step"] == "qasa_question_entities"
    assert "after 3 attempt(s)" in fb["reason"] and fb["reason"].endswith(
        "; spaCy mentions instead"
    )
    assert got.trace["mention_source"] == "spacy"
    assert len(got.trace["llm_calls"]) == 3  # every attempt is in the trace
    # the fallback is `mentions: spacy` exactly
    assert got.trace["mentions"] == spacy.trace["mentions"]
    assert got.passage_ids == spacy.passage_ids and got.scores == spacy.scores
    # the next question's good reply is used, and nothing is recorded as a fallback
    ok = r.retrieve(q, 10)
    assert ok.trace["mentions"] == ["president"] and ok.trace["mention_source"] == "llm"
    assert "fallback" not in ok.trace and len(ok.trace["llm_calls"]) == 1


def test_llm_mentions_unusable_server_aborts(musique_kg, services, musique_sub, keyword_server):
    srv, llm = keyword_server([error(500, "boom")] * 2)
    services.llm = llm
    r = SpreadingActivationRetriever(mentions="llm", llm_name="server")
    r.prepare(musique_kg, services)
    with pytest.raises(LLMServerError):
        r.retrieve(musique_sub.questions[0], 10)
    with pytest.raises(LLMServerError):  # the batched path obeys the same policy
        r.retrieve_batch(musique_sub.questions[:1], 10)


def test_llm_mentions_batch_keeps_each_questions_record(
    musique_kg, services, musique_sub, keyword_server
):
    qs = musique_sub.questions[:2]
    _, llm = keyword_server(
        [reply("{}")] * 3
        + [reply('{"entities": [{"name": "president", "search_hint": "president"}]}')]
    )
    services.llm = llm
    r = SpreadingActivationRetriever(mentions="llm", llm_name="server")
    r.prepare(musique_kg, services)
    bad, good = r.retrieve_batch(qs, 10)
    assert [e["step"] for e in bad.trace["fallback"]] == ["qasa_question_entities"]
    assert bad.trace["mentions"] == question_mentions(qs[0].text)
    assert "fallback" not in good.trace and good.trace["mentions"] == ["president"]
