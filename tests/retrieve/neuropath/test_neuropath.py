"""NeuroPath's robust handling (neuropath_robust) on the real MuSiQue sub-corpus graph with a
scripted tracker: the exact mechanics.

Coreference sets against a brute-force loop, seeds, pruning counts (and that kept paths are
never pruned), the stop rules, the hop limit, the replay ordering and q', the two ablation
switches, and a tracker failure that ends the loop without losing what was found.
"""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.llm.errors import LLMFormatError
from hopbench.llm.prompts import question_entities
from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever, coreference_sets
from hopbench.retrieve.neuropath.prompts import path_tracker

Q_JOURNAL = 0  # "Who was the first president of the association which published Journal of ..."


def _ner(*names):
    return {"named_entities": list(names)}


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
    kw = {"handling": "robust", "prompts": "compact", "tracker_max_tokens": 200, **kw}
    r = NeuroPathRetriever(llm_name="scripted", **kw)
    r.prepare(kg, services)
    return r


def _shown_paths(prompt) -> list[str]:
    """The numbered path lines of a tracker prompt, in order (checks the numbering too)."""
    body = prompt[-1]["content"].split("Paths:\n", 1)[1].splitlines()
    for i, line in enumerate(body):
        assert line.startswith(f"{i}: ")
    return [line.split(": ", 1)[1] for line in body]


def _seeds_for(kg, encoder, mention):
    """Brute force: nearest entity to the normalised mention, plus its top-4 names with cos >= 0.8."""
    emb = np.asarray(kg.entity_embeddings, dtype=np.float64)
    m = encoder.encode([mention.lower()])[0]
    e = int(np.argmax(emb @ m))
    others = sorted(
        (j for j in range(kg.n_entities) if j != e), key=lambda j: (-float(emb[e] @ emb[j]), j)
    )[:4]
    return [e] + [j for j in others if float(emb[e] @ emb[j]) >= 0.8]


def _initial_facts(kg, seeds):
    """Hop-1 paths by hand: facts touching the seeds, seed order then fact order, triples unique."""
    out, seen = [], set()
    for e in seeds:
        for f in range(kg.n_facts):
            if (
                e in (int(kg.fact_subject[f]), int(kg.fact_object[f]))
                and kg.fact_triple(f) not in seen
            ):
                seen.add(kg.fact_triple(f))
                out.append(f)
    return out


def _render_fact(kg, f):
    lab = kg.entity_labels
    return f"{lab[kg.fact_subject[f]]} -> {kg.fact_relation[f]} -> {lab[kg.fact_object[f]]}"


# ---- coreference sets and seeds -----------------------------------------------------------
def test_coreference_sets_match_a_brute_force_loop(musique_kg):
    emb = np.asarray(musique_kg.entity_embeddings, dtype=np.float64)
    got = coreference_sets(musique_kg.entity_embeddings, 5, 0.8, block=37)  # blocks cross rows
    n = len(emb)
    nontrivial = 0
    for e in range(n):
        sims = [(float(emb[e] @ emb[j]), j) for j in range(n) if j != e]
        best = sorted(sims, key=lambda t: (-t[0], t[1]))[:4]
        want = [e] + [j for s, j in best if s >= 0.8]
        assert got[e] == want
        nontrivial += len(want) > 1
    assert nontrivial > 0  # the threshold matters on this graph
    # a low threshold keeps exactly the 4 nearest others
    assert all(len(c) == 5 for c in coreference_sets(musique_kg.entity_embeddings, 5, -1.0))


def test_seeds_use_the_shared_ner_prompt_and_coreference(
    musique_kg, services, musique_sub, encoder, scripted_llm
):
    q = musique_sub.questions[Q_JOURNAL]
    llm = scripted_llm(_ner("Journal of Psychotherapy Integration"), _reply(valid=[0]))
    r = _prepared(musique_kg, services, llm)
    res = r.retrieve(q, 10)
    assert llm.prompts[0] == question_entities.messages(
        q.text
    )  # same request as CatRAG's -> shared cache
    want = _seeds_for(musique_kg, encoder, "journal of psychotherapy integration")
    assert res.trace["seeds"] == [musique_kg.entity_names[e] for e in want]
    assert res.trace["mention_source"] == "llm"
    # hop 1 shows every triple touching the seeds (fewer than filter_k here), all expandable
    facts = _initial_facts(musique_kg, want)
    shown = _shown_paths(llm.prompts[1])
    assert [s.split(" [expand: ")[0] for s in shown] == [_render_fact(musique_kg, f) for f in facts]
    assert all("[expand: " in s for s in shown)


def test_empty_ner_falls_back_to_spacy_mentions(musique_kg, services, musique_sub, scripted_llm):
    from hopbench.retrieve.question import question_mentions

    q = musique_sub.questions[Q_JOURNAL]
    llm = scripted_llm(_ner(), _reply(valid=[0]))
    res = _prepared(musique_kg, services, llm).retrieve(q, 10)
    assert res.trace["mention_source"] == "spacy"
    assert res.trace["mentions"] == question_mentions(q.text)


# ---- pruning ------------------------------------------------------------------------------
Q_PUBLIX = 1  # "How many Publix stores are in the state ... where Hello Love's performer lived ..."
PUBLIX_NER = ("Publix", "Hello Love")


def _coref_by_hand(kg, e):
    emb = np.asarray(kg.entity_embeddings, dtype=np.float64)
    others = sorted(
        (j for j in range(kg.n_entities) if j != e), key=lambda j: (-float(emb[e] @ emb[j]), j)
    )[:4]
    return [e] + [j for j in others if float(emb[e] @ emb[j]) >= 0.8]


def _hop1_pruned(kg, services, encoder, q, filter_k, mentions):
    seeds = []
    for m in mentions:
        for e in _seeds_for(kg, encoder, m):
            if e not in seeds:
                seeds.append(e)
    facts = _initial_facts(kg, seeds)
    qv = services.query_embedding(q).astype(np.float64)
    ranked = sorted(range(len(facts)), key=lambda i: (-float(kg.fact_embeddings[facts[i]] @ qv), i))
    return facts, [facts[i] for i in ranked[:filter_k]]


def _expansions_by_hand(kg, f1, link_label, kept_facts):
    ell = next(
        e
        for e in (int(kg.fact_subject[f1]), int(kg.fact_object[f1]))
        if kg.entity_labels[e] == link_label
    )
    kept_triples = {kg.fact_triple(f) for f in kept_facts}
    cands = []
    for e in _coref_by_hand(kg, ell):
        for f in range(kg.n_facts):
            if (
                e in (int(kg.fact_subject[f]), int(kg.fact_object[f]))
                and f != f1
                and kg.fact_triple(f) not in kept_triples
                and f not in cands
            ):
                cands.append(f)
    return cands


def test_pruning_keeps_exactly_filter_k_new_paths_and_never_the_kept_ones(
    musique_kg, services, musique_sub, encoder, scripted_llm
):
    kg = musique_kg
    q = musique_sub.questions[Q_PUBLIX]
    k = 3
    facts, top = _hop1_pruned(kg, services, encoder, q, k, [m.lower() for m in PUBLIX_NER])
    assert len(facts) > k
    # expand the hop-1 path whose link phrase has the most expansions; two others stay valid
    llm0 = scripted_llm(_ner(*PUBLIX_NER), _reply(valid=[0]))
    _prepared(kg, services, llm0, filter_k=k).retrieve(q, 10)
    shown1 = _shown_paths(llm0.prompts[1])
    assert [s.split(" [expand: ")[0] for s in shown1] == [_render_fact(kg, f) for f in top]
    n_exp = [
        len(_expansions_by_hand(kg, top[i], shown1[i].split(" [expand: ")[1][:-1], [top[i]]))
        for i in range(k)
    ]
    j = int(np.argmax(n_exp))
    valid = [i for i in range(k) if i != j][:2]
    kept = sorted(valid + [j])
    req = "the state where Hank Snow lived when he died"
    llm = scripted_llm(
        _ner(*PUBLIX_NER),
        _reply(valid=valid, expand=[j], cont=1, req=req),
        _reply(valid=[0], cont=0),
    )
    res = _prepared(kg, services, llm, filter_k=k).retrieve(q, 10)
    hop1, hop2 = res.trace["hops"]
    assert (hop1["new_before_pruning"], hop1["new_after_pruning"]) == (len(facts), k)
    # hop 2: the kept paths (valid and expanded, in id order) first, untagged, never pruned
    shown2 = _shown_paths(llm.prompts[2])
    assert shown2[:3] == [shown1[i].split(" [expand: ")[0] for i in kept]
    assert hop2["kept"] == 3
    cands = _expansions_by_hand(
        kg, top[j], shown1[j].split(" [expand: ")[1][:-1], [top[i] for i in kept]
    )
    assert hop2["new_before_pruning"] == len(cands) > k
    assert hop2["new_after_pruning"] == k == len(shown2) - 3
    # the new ones are the expansions closest to the expansion requirement (brute force)
    texts = [f"{kg.fact_text(top[j])}; {kg.fact_text(f)}" for f in cands]
    g = encoder.encode([req])[0].astype(np.float64)
    sims = encoder.encode(texts).astype(np.float64) @ g
    best = sorted(range(len(cands)), key=lambda i: (-sims[i], i))[:k]
    assert [s.split(" [expand: ")[0] for s in shown2[3:]] == [
        f"{_render_fact(kg, top[j])}; {_render_fact(kg, cands[i])}" for i in best
    ]
    assert all("[expand: " in s for s in shown2[3:]) and "So far:" in llm.prompts[2][-1]["content"]


def test_pruning_off_sends_every_new_path(musique_kg, services, musique_sub, encoder, scripted_llm):
    q = musique_sub.questions[Q_PUBLIX]
    facts, _ = _hop1_pruned(musique_kg, services, encoder, q, 4, [m.lower() for m in PUBLIX_NER])
    llm = scripted_llm(_ner(*PUBLIX_NER), _reply(valid=[0]))
    res = _prepared(musique_kg, services, llm, filter_k=4, pruning=False).retrieve(q, 10)
    assert len(_shown_paths(llm.prompts[1])) == len(facts) > 4
    assert res.trace["hops"][0]["new_after_pruning"] == len(facts)


# ---- stop rules and hop limit -----------------------------------------------------------
def test_continue_zero_stops_after_one_tracker_call(
    musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q_JOURNAL]
    llm = scripted_llm(
        _ner("Journal of Psychotherapy Integration"),
        _reply(valid=[1], expand=[0], cont=0, req="more"),
    )  # a 2nd call would pop an empty list
    res = _prepared(musique_kg, services, llm, max_hop=3).retrieve(q, 10)
    assert len(llm.prompts) == 2
    assert [h["stop"] for h in res.trace["hops"]] == ["continue=0"]
    assert len(res.trace["llm_calls"]) == 2


@pytest.mark.parametrize("max_hop", [1, 2, 3])
def test_hop_limit_bounds_tracker_calls_and_path_length(
    max_hop, musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q_PUBLIX]
    replies = [_reply(valid=[0], expand=range(30), cont=1, req="Hank Snow") for _ in range(max_hop)]
    llm = scripted_llm(_ner(*PUBLIX_NER), *replies, _reply())  # one spare reply: must stay unused
    res = _prepared(musique_kg, services, llm, max_hop=max_hop).retrieve(q, 10)
    assert len(llm.prompts) == 1 + max_hop  # NER + one tracker call per hop
    assert len(llm.replies) == 1
    assert len(res.trace["hops"]) == max_hop and res.trace["hops"][-1]["stop"] == "hop limit"
    longest = max(len(s.split("; ")) for s in _shown_paths(llm.prompts[-1]))
    assert longest == max_hop  # a hop adds one triple to the expanded paths
    assert ("So far:" in llm.prompts[-1][-1]["content"]) == (max_hop > 1)


# ---- replay -------------------------------------------------------------------------------
def _dense_order(services, text):
    v = services.encoder.encode([text])[0].astype(np.float64)
    s = np.asarray(services.passage_embeddings, dtype=np.float64) @ v
    return sorted(range(len(s)), key=lambda i: (-s[i], i))


def _path_passages(kg, prompt_paths, valid):
    """Passages of the valid paths by hand: the provenance of each shown triple, in order."""
    by_text = {_render_fact(kg, f): int(kg.fact_passage[f]) for f in range(kg.n_facts)}
    out = []
    for i in valid:
        for t in prompt_paths[i].split(" [expand: ")[0].split("; "):
            if by_text[t] not in out:
                out.append(by_text[t])
    return out


def test_replay_lists_valid_path_passages_then_dense_on_q_prime(
    musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q_JOURNAL]
    chain, req = "The journal is published by an association.", "its first president"
    llm = scripted_llm(
        _ner("Journal of Psychotherapy Integration"),
        _reply(valid=[3, 99, 0, 3], cont=0, chain=chain, req=req),
    )  # 99: out of range
    res = _prepared(musique_kg, services, llm).retrieve(q, 10)
    shown = _shown_paths(llm.prompts[1])
    first = _path_passages(musique_kg, shown, [3, 0])
    q2 = f"{q.text} {chain} {req}"
    assert res.trace["replay_query"] == q2
    want = first + [p for p in _dense_order(services, q2) if p not in first]
    assert res.passage_ids == [musique_kg.passage_ids[p] for p in want[:10]]
    assert res.scores[: len(first)] == [1.0] * len(first)
    assert len(res.trace["valid_paths"]) == 2
    # the plain question's ranking differs from q', so the test tells them apart
    assert _dense_order(services, q.text) != _dense_order(services, q2)


def test_completion_off_pads_with_the_plain_question_ranking(
    musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q_JOURNAL]
    llm = scripted_llm(
        _ner("Journal of Psychotherapy Integration"),
        _reply(valid=[3, 0], cont=0, chain="a long chain of thought", req="x"),
    )
    res = _prepared(musique_kg, services, llm, completion=False).retrieve(q, 10)
    first = _path_passages(musique_kg, _shown_paths(llm.prompts[1]), [3, 0])
    want = first + [p for p in _dense_order(services, q.text) if p not in first]
    assert res.passage_ids == [musique_kg.passage_ids[p] for p in want[:10]]
    assert "replay_query" not in res.trace


# ---- robustness ---------------------------------------------------------------------------
def test_tracker_failure_keeps_the_previous_hop(musique_kg, services, musique_sub, scripted_llm):
    class FailingLLM(scripted_llm):
        def chat_json(self, messages, schema, **kw):
            if isinstance(self.replies[0], Exception):
                self.prompts.append(messages)
                raise self.replies.pop(0)
            return super().chat_json(messages, schema, **kw)

    q = musique_sub.questions[Q_JOURNAL]
    chain, req = "first chain", "the association"
    llm = FailingLLM(
        _ner("Journal of Psychotherapy Integration"),
        _reply(valid=[2], expand=[1], cont=1, chain=chain, req=req),
        LLMFormatError(path_tracker.SCHEMA_NAME, 3, "not json", "oops"),
    )
    res = _prepared(musique_kg, services, llm).retrieve(q, 10)
    assert len(llm.prompts) == 3
    [fb] = res.trace["fallback"]
    assert (
        fb["step"] == "path_tracker" and "did not match" in fb["reason"] and "hop 2" in fb["reason"]
    )
    assert res.trace["hops"][1]["stop"] == "tracker reply did not match its schema"
    first = _path_passages(musique_kg, _shown_paths(llm.prompts[1]), [2])
    assert res.trace["replay_query"] == f"{q.text} {chain} {req}"
    assert [musique_kg.passage_ids.index(p) for p in res.passage_ids[: len(first)]] == first
    assert len(res.passage_ids) == 10 and len(set(res.passage_ids)) == 10


def test_tracker_prompt_ids_helper_drops_bad_ids():
    assert path_tracker.ids([3, "1", 3, -1, 7, "x", None], 5) == [3, 1]


def test_expansion_skips_triples_already_on_the_path_or_shown_alone(
    musique_kg, services, scripted_llm
):
    from hopbench.retrieve.neuropath.neuropath import Path

    kg = musique_kg
    r = _prepared(kg, services, scripted_llm())
    # a fact a = (s, X) and another fact b touching X: b may extend a unless b is already a path
    a, x, b = next(
        (a, int(kg.fact_object[a]), b)
        for a in range(kg.n_facts)
        for b in range(kg.n_facts)
        if b != a
        and int(kg.fact_object[a]) in (int(kg.fact_subject[b]), int(kg.fact_object[b]))
        and kg.fact_triple(a) != kg.fact_triple(b)
    )
    pa = Path((a,), x)
    grown = {p.facts for p in r.expansions([pa], [pa])}
    assert (a, b) in grown and all(p[0] == a and p[1] != a for p in grown)
    shown_alone = Path((b,), -1)
    assert (a, b) not in {p.facts for p in r.expansions([pa, shown_alone], [pa])}


def test_one_shot_example_matches_the_schema_and_can_be_switched_off():
    import json

    import jsonschema

    jsonschema.validate(json.loads(path_tracker.EXAMPLE_A), path_tracker.SCHEMA)
    with_example = path_tracker.messages("q?", ["a -> r -> b [expand: b]"], one_shot=True)
    without = path_tracker.messages("q?", ["a -> r -> b [expand: b]"], one_shot=False)
    assert [m["role"] for m in with_example] == ["system", "user", "assistant", "user"]
    assert [m["role"] for m in without] == ["system", "user"] and without[-1] == with_example[-1]
    assert without[-1]["content"] == "Question: q?\nPaths:\n0: a -> r -> b [expand: b]"
