"""HippoRAG 2 on the real MuSiQue sub-corpus graph: seeds, resets, PPR against networkx, fallback."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.baselines.dense import DenseRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever, phrase_seed_weights


def _prepared(kg, services, **kw):
    r = HippoRAGRetriever(**kw)
    r.prepare(kg, services)
    return r


def _hand_reset(kg, services, q, kept_positions=None):
    """The reset by hand: plain loops over facts, entities and passages."""
    qv = services.query_embedding(q).astype(float)
    raw = [float(np.dot(kg.fact_embeddings[f], qv)) for f in range(kg.n_facts)]
    lo, hi = min(raw), max(raw)
    score = [(r - lo) / (hi - lo) for r in raw]
    ranked = sorted(range(kg.n_facts), key=lambda f: (-score[f], f))[:5]
    kept = ranked if kept_positions is None else [ranked[i] for i in kept_positions]
    sums, occ = {}, {}
    for f in kept:
        for e in (int(kg.fact_subject[f]), int(kg.fact_object[f])):
            n = len(kg.passages_of_entity(e))
            sums[e] = sums.get(e, 0.0) + score[f] / n
            occ[e] = occ.get(e, 0) + 1
    avg = {e: sums[e] / occ[e] for e in sums}
    top = sorted(avg, key=lambda e: (-avg[e], e))[:5]
    reset = np.zeros(kg.n_nodes)
    for e in top:
        reset[e] = avg[e]
    dense = [float(np.dot(services.passage_embeddings[j], qv)) for j in range(kg.n_passages)]
    dlo, dhi = min(dense), max(dense)
    for j, d in enumerate(dense):
        reset[kg.n_entities + j] = 0.05 * (d - dlo) / (dhi - dlo)
    return reset, ranked


def test_seeds_and_resets_match_a_hand_computation(musique_kg, services, musique_sub):
    r = _prepared(musique_kg, services, seeding={"filter": False})
    for q in musique_sub.questions:
        reset, dense, trace = r.seeding.reset_vector(q)
        want, ranked = _hand_reset(musique_kg, services, q)
        np.testing.assert_allclose(reset, want, rtol=1e-9, atol=1e-12)
        assert 0 < np.count_nonzero(reset[: musique_kg.n_entities]) <= 5
        assert [c[:3] for c in trace["candidate_facts"]] == [
            list(musique_kg.fact_triple(f)) for f in ranked
        ]
        assert reset[musique_kg.n_entities :].max() == pytest.approx(0.05)
        assert reset[musique_kg.n_entities :].min() == 0.0


def test_phrase_weights_average_repeated_entities():
    # facts 0 (0-1) and 1 (0-2) with scores 1.0 and 0.5; entity 0 in 2 passages, 1 in 1, 2 in 4
    w = phrase_seed_weights(
        np.array([0, 1]),
        np.array([1.0, 0.5]),
        np.array([0, 0]),
        np.array([1, 2]),
        np.array([2, 1, 4]),
        top_phrases=2,
    )
    # e0: (1/2 + 0.5/2) / 2 = 0.375; e1: 1.0; e2: 0.125 -> dropped by top 2
    np.testing.assert_allclose(w, [0.375, 1.0, 0.0])


def test_ppr_ranking_equals_networkx_pagerank_with_the_same_reset(
    musique_kg, services, musique_sub
):
    r = _prepared(musique_kg, services, seeding={"filter": False})
    g = musique_kg.to_networkx()
    for _, _, d in g.edges(data=True):  # HippoRAG's effective weights
        d["w"] = 2 * d.get("relation", 0.0) + 2 * d.get("synonym", 0.0) + d.get("context", 0.0)
    ids = musique_kg.node_ids
    for q in musique_sub.questions:
        reset, _, _ = r.seeding.reset_vector(q)
        ref = nx.pagerank(
            g,
            alpha=0.5,
            personalization={ids[i]: reset[i] for i in range(len(ids))},
            weight="w",
            tol=1e-14,
            max_iter=10_000,
        )
        ref_p = np.array([ref[pid] for pid in musique_kg.passage_ids])
        got = r.retrieve(q, musique_kg.n_passages)
        by_id = dict(zip(got.passage_ids, got.scores))
        np.testing.assert_allclose([by_id[p] for p in musique_kg.passage_ids], ref_p, atol=1e-8)
        assert got.passage_ids[:5] == [
            musique_kg.passage_ids[i] for i in np.argsort(-ref_p, kind="stable")[:5]
        ]
        assert "fallback" not in got.trace


def test_filter_keeps_only_the_selected_facts(musique_kg, services, musique_sub, scripted_llm):
    q = musique_sub.questions[0]
    services.llm = scripted_llm({"selected": [2, 4, 9]})  # 9 is out of range and ignored
    r = _prepared(musique_kg, services, llm_name="local", seeding={"filter": True})
    reset, _, trace = r.seeding.reset_vector(q)
    want, _ = _hand_reset(musique_kg, services, q, kept_positions=[1, 3])
    np.testing.assert_allclose(reset, want, rtol=1e-9, atol=1e-12)
    assert "Candidate facts" in services.llm.prompts[0][1]["content"]
    assert len(trace["facts"]) == 2


def test_dense_fallback_when_no_fact_survives(musique_kg, services, musique_sub, scripted_llm):
    services.llm = scripted_llm(*[{"selected": []}] * 3)
    r = _prepared(musique_kg, services, llm_name="local", seeding={"filter": True})
    dense = DenseRetriever()
    dense.prepare(None, services)
    for q in musique_sub.questions:
        got = r.retrieve(q, 10)
        assert got.trace["fallback"] == [
            {"step": "dense_fallback", "reason": "no fact survived the filter"}
        ]
        assert got.trace["facts"] == []
        ref = dense.retrieve(q, 10)
        assert got.passage_ids == ref.passage_ids
        np.testing.assert_allclose(got.scores, ref.scores, atol=1e-6)


def test_filter_needs_an_llm_and_auto_follows_the_llm_choice():
    with pytest.raises(HopbenchError, match="llm=local"):
        HippoRAGRetriever(llm_name="none", seeding={"filter": True})
    assert HippoRAGRetriever(llm_name="none", seeding={"filter": "auto"}).needs_llm is False
    assert HippoRAGRetriever(llm_name="local", seeding={"filter": "auto"}).needs_llm is True
    assert HippoRAGRetriever(llm_name="local", seeding={"filter": False}).needs_llm is False


def test_hipporag1_seeds_nearest_entity_with_node_specificity(musique_kg, services, musique_sub):
    r = _prepared(musique_kg, services, seeding={"method": "hipporag1"})
    q = musique_sub.questions[0]
    reset, _, trace = r.seeding.reset_vector(q)
    ent = reset[: musique_kg.n_entities]
    for name in trace["linked"]:
        e = musique_kg.entity_index(name)
        assert ent[e] == pytest.approx(1.0 / len(musique_kg.passages_of_entity(e)))
    assert np.count_nonzero(ent) == len(set(trace["linked"]))
    # an exact mention links to itself
    assert "journal of psychotherapy integration" in trace["linked"]


def test_batch_equals_one_by_one(musique_kg, services, musique_sub):
    r = _prepared(musique_kg, services, seeding={"filter": False})
    batch = r.retrieve_batch(musique_sub.questions, 10)
    for q, b in zip(musique_sub.questions, batch):
        one = r.retrieve(q, 10)
        assert b.passage_ids == one.passage_ids
        np.testing.assert_allclose(b.scores, one.scores, atol=1e-9)


def test_the_graph_must_be_of_the_construction_asked_for(
    musique_sub, musique_kg, encoder, cache_dir, services
):
    from hopbench.kg import load_or_build
    from hopbench.kg.hipporag2 import text_processing

    with pytest.raises(HopbenchError, match="graph.construction=hopbench"):
        _prepared(musique_kg, services, graph_construction="hipporag2", seeding={"filter": False})
    kg2 = load_or_build(
        musique_sub, {"construction": "hipporag2"}, encoder=encoder, cache_dir=cache_dir
    )
    with pytest.raises(HopbenchError, match="graph.construction=hipporag2"):
        _prepared(kg2, services, graph_construction="hopbench", seeding={"filter": False})
    r = _prepared(kg2, services, graph_construction="hipporag2", seeding={"filter": False})
    q = musique_sub.questions[0]
    reset, _, trace = r.seeding.reset_vector(q)
    want, _ = _hand_reset(kg2, services, q)  # the divisors: passages whose triples name the entity
    np.testing.assert_allclose(reset, want, rtol=1e-9, atol=1e-12)
    # HippoRAG.add_fact_edges: ent_node_to_chunk_ids = the passages whose triples contain the entity
    from hopbench.kg.extraction_run import extract_corpus, make_extractor
    from hopbench.kg.settings import resolve_settings

    records = extract_corpus(
        list(musique_sub.corpus), make_extractor(resolve_settings(None)), cache_dir
    )
    for e in np.flatnonzero(reset[: kg2.n_entities]):
        name = kg2.entity_names[e]
        hand = sum(
            any(
                name in (text_processing(t[0]), text_processing(t[2]))
                for t in records[p.id].triples
            )
            for p in musique_sub.corpus
        )
        assert r.seeding.passage_counts[e] == hand
    assert all(kg2.fact_text(i).startswith("('") for i in range(kg2.n_facts))
