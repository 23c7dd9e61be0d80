"""NeuroPath's reference handling (the default) on the real MuSiQue sub-corpus graph, scripted LLM.

The reference's rules, one by one: processed NER mentions and argmax linking; hop-1 paths in
the reference's order and text; a reply it cannot apply (id out of range, missing key, no JSON)
drops everything and the question gets the plain dense list; negative ids index from the end;
q' is the raw concatenation; the hop statistics and run_metrics count all of it.
"""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.retrieve.neuropath import reference as ref
from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever, merge_ranking
from hopbench.retrieve.neuropath.prompts import neuropath_ner, neuropath_tracker

Q = 0  # "Who was the first president of the association which published Journal of ..."
NER = {"named_entities": ["Journal of Psychotherapy Integration"]}


def _reply(valid=(), expand=(), cont=0, chain="", req=""):
    return {
        "current_chain": chain,
        "valid_ids": list(valid),
        "expansion_requirements": req,
        "need_expand_ids": list(expand),
        "continue": cont,
    }


def _prepared(kg, services, llm, **kw):
    services.llm = llm
    r = NeuroPathRetriever(llm_name="scripted", **kw)
    r.prepare(kg, services)
    return r


def _dense_top(r, q, k=10):
    scores = r.passage_emb32 @ r.vectors([q.text])[0]
    return [r.kg.passage_ids[i] for i in merge_ranking([], scores, k, 100)[0]]


def _hop1_texts(kg, encoder, mention):
    """Hop-1 path texts by brute force: triples touching the linked phrase or a near name."""
    emb = np.asarray(kg.entity_embeddings, dtype=np.float32)
    e = int(np.argmax(emb @ encoder.encode([mention])[0]))
    near = [j for j in range(kg.n_entities) if j != e and float(emb[e] @ emb[j]) >= 0.8]
    near = sorted(near, key=lambda j: -float(emb[e] @ emb[j]))[:4]
    phrases = {e, *near}
    texts = {
        f"{kg.entity_names[kg.fact_subject[f]]}->{kg.fact_relation[f]}->"
        f"{kg.entity_names[kg.fact_object[f]]}; "
        for f in range(kg.n_facts)
        if int(kg.fact_subject[f]) in phrases or int(kg.fact_object[f]) in phrases
    }
    return texts


def test_default_is_the_reference_with_its_own_prompts(
    musique_kg, services, musique_sub, encoder, scripted_llm
):
    q = musique_sub.questions[Q]
    llm = scripted_llm(NER, _reply(valid=[0], chain="A", req="B"))
    r = _prepared(musique_kg, services, llm)
    res = r.retrieve(q, 10)
    assert llm.prompts[0] == neuropath_ner.messages(q.text)
    assert res.trace["mentions"] == ["journal of psychotherapy integration"]
    hop = res.trace["hops"][0]
    assert set(hop["paths"]) == _hop1_texts(
        musique_kg, encoder, "journal of psychotherapy integration"
    )
    system, user = llm.prompts[1]
    assert system == {"role": "system", "content": neuropath_tracker.SYSTEM}
    lines = user["content"].split("Paths:\n", 1)[1].removesuffix("\nOutput:\n").splitlines()
    assert user["content"].startswith(f"Query: {q.text}\nPaths:\n")
    assert [
        ln.startswith(f"{i}: {p} <expandable>: [")
        for i, (ln, p) in enumerate(zip(lines, hop["paths"]))
    ] == [True] * len(hop["paths"]) and len(lines) == len(hop["paths"])
    # valid path 0's passage first, then dense on the raw concatenation question + chain + req
    assert res.trace["replay_query"] == q.text + "A" + "B"
    assert res.trace["hop_stats"]["tracker_calls"] == 1
    assert res.trace["hop_stats"]["failed_replies"] == 0
    assert "fallback" not in res.trace


@pytest.mark.parametrize(
    "bad,why",
    [
        (_reply(valid=[0, 999], chain="x"), "id_out_of_range"),
        (
            {"valid_ids": [0], "need_expand_ids": [], "continue": 0, "current_chain": "x"},
            "missing_key:expansion_requirements",
        ),
        ("no json here", "no_valid_ids"),
        (_reply(valid=["0"], chain="x"), "bad_value:TypeError"),
    ],
)
def test_a_reply_the_reference_cannot_apply_gives_the_dense_list(
    bad, why, musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q]
    r = _prepared(musique_kg, services, scripted_llm(NER, bad))
    res = r.retrieve(q, 10)
    assert res.passage_ids == _dense_top(r, q)
    assert res.trace["hop_stats"]["failure_reasons"] == [why]
    assert res.trace["hop_stats"]["differs_from_dense"] is False
    assert res.trace["fallback"][0]["step"] == "dense_fallback"


def test_empty_ner_gives_the_dense_list_without_a_tracker_call(
    musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q]
    llm = scripted_llm({"named_entities": []})
    r = _prepared(musique_kg, services, llm)
    res = r.retrieve(q, 10)
    assert len(llm.prompts) == 1
    assert res.passage_ids == _dense_top(r, q)
    assert res.trace["hop_stats"]["tracker_calls"] == 0
    m = r.run_metrics([{"trace": res.trace}])
    assert m["neuropath_no_ner_share"] == 1.0 and m["neuropath_differs_from_dense_share"] == 0.0


def test_negative_ids_index_from_the_end_and_second_hop_runs(
    musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q]
    llm = scripted_llm(
        NER,
        _reply(valid=[-1], expand=[0], cont=1, chain="c", req="r"),
        _reply(valid=[0, 1], chain="c2"),
    )
    r = _prepared(musique_kg, services, llm)
    res = r.retrieve(q, 10)
    hop1, hop2 = res.trace["hops"]
    assert hop1["valid_paths"] == [hop1["paths"][-1]]
    assert hop2["kept"] == len({0, len(hop1["paths"]) - 1})
    assert res.trace["hop_stats"]["tracker_calls"] == 2
    assert res.trace["replay_query"] == q.text + "c2"
    # hop 2: new paths extend the expanded one and are the only tagged lines
    lines = llm.prompts[2][1]["content"].split("Paths:\n")[1].split("\nOutput:")[0].splitlines()
    for i, p in enumerate(hop2["paths"]):
        assert lines[i].startswith(f"{i}: {p}")
        assert ("<expandable>" in lines[i]) == (i >= hop2["kept"])
        if i >= hop2["kept"]:
            assert p.startswith(hop1["paths"][0])


def test_reply_reading_follows_the_reference():
    assert ref.extract_json_dict('text {"a": {"b": 1}} more') == {"a": {"b": 1}}
    assert ref.extract_json_dict("{bad json}") == {}
    assert ref.read_tracker_reply('{"continue": 1}')[1] == "no_valid_ids"
    assert ref.read_ner_reply('{"named_entities": ["St. Mary\'s", "X-Men"]}') == (
        ["st  mary s", "x men"],
        None,
    )
    assert ref.read_ner_reply('{"named_entities": [], "ok": true}')[0] == []
    assert ref.processing_phrases("  Hello, World! ") == "hello  world"


def test_an_unusable_server_aborts_the_reference_too(musique_kg, services, musique_sub):
    from hopbench.llm.errors import LLMUnavailableError

    class Down:
        def chat(self, messages, **kw):
            raise LLMUnavailableError("LLM server at http://127.0.0.1:9/v1 is not reachable")

    r = _prepared(musique_kg, services, Down())
    with pytest.raises(LLMUnavailableError):
        r.retrieve(musique_sub.questions[Q], 10)
