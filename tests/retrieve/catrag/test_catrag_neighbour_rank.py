"""CatRAG's neighbour ranking (issue #55): with more than k_edge neighbours, a seed sends the LLM
the k_edge neighbours best by cos(question, fact) (the best fact joining seed and neighbour),
and an edge to a neighbour no seed scored gets `pruned_weight`. The bundled fixtures never have
more than 15 neighbours per seed, so k_edge is set to 3 here. The reference is computed in the
test from the graph's own arrays (every fact with the seed at one end, numpy cosines), not by
the retriever's `neighbour_sims`. Two seeds sharing a neighbour: test_catrag_max_merge.py."""

from __future__ import annotations

import numpy as np
import pytest

from tests.retrieve.catrag.test_catrag import RuleLLM, _catrag, _seeds_and_multipliers

K_EDGE = 3
PRUNED_WEIGHT = 0.3


def _best_neighbours(kg, q_emb, seed: int) -> list[int]:
    """Every entity sharing a fact with `seed`, best cos(question, joining fact) first."""
    cos = np.asarray(kg.fact_embeddings, dtype=np.float64) @ np.asarray(q_emb, dtype=np.float64)
    subj, obj = np.asarray(kg.fact_subject), np.asarray(kg.fact_object)
    best: dict[int, float] = {}
    for f in np.flatnonzero((subj == seed) | (obj == seed)):
        other = int(obj[f]) if int(subj[f]) == seed else int(subj[f])
        if other != seed:
            best[other] = max(best.get(other, -np.inf), float(cos[f]))
    return sorted(best, key=lambda v: (-best[v], v))


def _case(kg, services, musique_sub):
    """The first question with a stage-I seed of more than K_EDGE neighbours."""
    for q in musique_sub.questions[:40]:
        asked: list[str] = []
        llm = RuleLLM(score=lambda name, asked=asked: asked.append(name) or 8)
        r = _catrag(
            kg,
            services,
            llm,
            anchoring=False,
            passage_boost=False,
            k_edge=K_EDGE,
            pruned_weight=PRUNED_WEIGHT,
            score_merge="max_target",
            neighbour_copies=False,
        )
        _, _, rel_m, ctx_m, trace = _seeds_and_multipliers(r, q)
        if any(e["pruned"] for e in trace.get("edge_scores", [])):
            return q, r, rel_m, ctx_m, trace, asked
    pytest.fail("no question in the first 40 has a seed with more than k_edge neighbours")


def test_the_k_edge_best_neighbours_by_question_fact_cosine_are_scored(
    musique_kg, services, musique_sub
):
    kg = musique_kg
    q, _, _, _, trace, asked = _case(kg, services, musique_sub)
    q_emb = services.query_embedding(q)
    want_asked = []
    for e in trace["edge_scores"]:
        ranked = _best_neighbours(kg, q_emb, kg.entity_index(e["seed"]))
        want = [kg.entity_names[v] for v in ranked[:K_EDGE]]
        assert [n for n, _ in e["scored"]] == want, e["seed"]
        assert e["pruned"] == max(len(ranked) - K_EDGE, 0), e["seed"]
        want_asked += want
    assert sorted(asked) == sorted(want_asked)  # the names the LLM saw, nothing else


def test_neighbours_beyond_k_edge_that_no_seed_scored_get_the_pruned_weight(
    musique_kg, services, musique_sub
):
    kg = musique_kg
    q, r, rel_m, ctx_m, trace, _ = _case(kg, services, musique_sub)
    q_emb = services.query_embedding(q)
    seeds = [kg.entity_index(n) for n in trace["stage1_seeds"]]
    ranked = {u: _best_neighbours(kg, q_emb, u) for u in seeds}
    scored = {v for u in seeds for v in ranked[u][:K_EDGE]}
    pruned = {v for u in seeds for v in ranked[u][K_EDGE:]} - scored
    assert pruned
    a, aq = r.base.toarray(), r.adapted_graph(rel_m, ctx_m).toarray()
    checked = 0
    for u in seeds:
        for v in np.flatnonzero(a[u, : kg.n_entities]):
            if v in pruned:
                assert aq[u, v] == pytest.approx(a[u, v] * PRUNED_WEIGHT, rel=1e-12), (u, v)
                checked += 1
            elif v in scored:
                assert aq[u, v] != pytest.approx(a[u, v] * PRUNED_WEIGHT, rel=1e-12), (u, v)
    assert checked
