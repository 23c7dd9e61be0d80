"""flow_diffusion_joint (hopbench's variant) on the MuSiQue sub-corpus graph: scores are x at passage nodes."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.qafd.flow import node_query_cosine, qafd
from hopbench.retrieve.qafd.flow_diffusion_joint import JointFlowDiffusionRetriever, keyword_seeds
from hopbench.retrieve.question import question_phrases


def _prepared(kg, services, **kw):
    r = JointFlowDiffusionRetriever(**kw)
    r.prepare(kg, services)
    return r


def test_passage_scores_are_x_at_passage_nodes(musique_kg, services, musique_sub, encoder):
    kg = musique_kg
    r = _prepared(kg, services)
    adj = kg.adjacency()
    node_emb = np.concatenate([kg.description_embeddings, services.passage_embeddings])
    for q in musique_sub.questions:
        q_emb = services.query_embedding(q)
        seeds, _ = keyword_seeds(
            encoder.encode(question_phrases(q.text)), kg.description_embeddings, 40
        )
        res = qafd(
            adj,
            node_query_cosine(node_emb, q_emb),
            seeds,
            None,
            variant="paper",
            alpha=50.0,
            epsilon=0.01,
            max_pushes=500,
        )
        x = res.x[kg.n_entities :]
        got = r.retrieve(q, kg.n_passages)
        by_id = dict(zip(got.passage_ids, got.scores))
        np.testing.assert_allclose([by_id[p] for p in kg.passage_ids], x, rtol=1e-12, atol=0)
        assert got.scores == sorted(got.scores, reverse=True)
        assert got.trace["converged"] is False and got.trace["pushes"] <= 500  # α = 50: unbounded
        assert len(got.trace["seeds"]) == min(40, kg.n_entities)


def test_small_alpha_converges_on_eps(musique_kg, services, musique_sub):
    # α = 0.5 is still unbounded here: the 40 seeds sit in components holding less than half the
    # graph's capacity; α = 0.1 is absorbed
    r = _prepared(musique_kg, services, alpha=0.1, max_pushes=None, epsilon=1e-6)
    got = r.retrieve(musique_sub.questions[0], 10)
    assert got.trace["converged"] is True and got.trace["excess"] <= 1e-6 * musique_kg.n_nodes


def test_unbounded_alpha_needs_a_push_budget():
    with pytest.raises(HopbenchError, match="max_pushes"):
        JointFlowDiffusionRetriever(alpha=50.0, max_pushes=None)


def test_seeding_from_the_hipporag_reset(musique_kg, services, musique_sub):
    r = _prepared(
        musique_kg,
        services,
        alpha=2.0,
        seeding="hipporag",
        node_embedding="name",
        uniform_seed_mass=False,
        relation_weight=2.0,
        synonym_weight=2.0,
        hipporag_seeding={"filter": False},
    )
    q = musique_sub.questions[1]
    reset, _, _ = r.hipporag_seeding.reset_vector(q)
    got = r.retrieve(q, 10)
    assert "fallback" not in got.trace and got.trace["pushes"] <= 500
    node_emb = np.concatenate([musique_kg.entity_embeddings, services.passage_embeddings])
    idx = np.flatnonzero(reset > 0)
    res = qafd(
        musique_kg.adjacency(relation=2, synonym=2),
        node_query_cosine(node_emb, services.query_embedding(q)),
        idx,
        reset[idx],
        variant="paper",
        alpha=2.0,
        epsilon=0.01,
        max_pushes=500,
    )
    x = res.x[musique_kg.n_entities :]
    assert got.scores == pytest.approx(sorted(x, reverse=True)[:10], rel=1e-12)
