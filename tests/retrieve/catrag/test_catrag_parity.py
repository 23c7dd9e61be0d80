"""hopbench's catrag_code against the top-10 lists the authors' CatRAG code produced
(benchmarks/parity/catrag/compare.py, kwunhang/CatRAG ce06b459, fixture committed in
tests/retrieve/catrag/data/official_catrag_top10.json): the same LLM decisions are replayed
(`DecisionReplay`), so no model and none of the authors' code is needed here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from hopbench.harness.compose import load_config
from hopbench.llm.decision_replay import DecisionReplay
from hopbench.retrieve.catrag.catrag import CatRAGRetriever

FIXTURE = Path(__file__).parent / "data" / "official_catrag_top10.json"
SCORE_TOL = 1e-6  # PPR: igraph's prpack (official) vs hopbench's power iteration (tol 1e-10)


@pytest.fixture(scope="module")
def fixture():
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def hipporag2_sub_kg(musique_sub, encoder, cache_dir):
    from hopbench.kg import load_or_build

    return load_or_build(
        musique_sub, {"construction": "hipporag2"}, encoder=encoder, cache_dir=cache_dir
    )


def _catrag_code(llm):
    cfg = OmegaConf.to_container(
        load_config(["retriever=catrag_code", "llm=local"]).retriever, resolve=True
    )
    for key in ("name", "_target_", "graph_construction"):
        cfg.pop(key, None)
    return CatRAGRetriever(**cfg)


def test_catrag_code_reproduces_the_official_top10_with_the_same_decisions(
    fixture, hipporag2_sub_kg, services, musique_sub
):
    assert fixture["dataset"] == "musique_sub" and fixture["official_commit"].startswith("ce06b459")
    llm = DecisionReplay({q["text"]: q["decisions"] for q in fixture["questions"]})
    services.llm = llm
    r = _catrag_code(llm)
    r.prepare(hipporag2_sub_kg, services)
    by_id = {q.id: q for q in musique_sub.questions}
    for fq in fixture["questions"]:
        res = r.retrieve(by_id[fq["id"]], fixture["k"])
        assert res.passage_ids == fq["official_top10"], fq["id"]
        np.testing.assert_allclose(res.scores, fq["official_scores"], atol=SCORE_TOL)
        assert not any(e["step"] == "neighbour_lines" for e in res.trace.get("fallback", []))
    assert not llm.undecided


def test_the_paper_constants_rank_differently_from_the_official_code(
    fixture, hipporag2_sub_kg, services, musique_sub
):
    """The check above can fail: catrag (the paper's constants) on the same decisions gives
    other PPR scores than the authors' code."""
    llm = DecisionReplay({q["text"]: q["decisions"] for q in fixture["questions"]})
    services.llm = llm
    r = CatRAGRetriever(llm_name="local")
    r.prepare(hipporag2_sub_kg, services)
    by_id = {q.id: q for q in musique_sub.questions}
    diffs = [
        np.max(
            np.abs(
                np.array(r.retrieve(by_id[fq["id"]], fixture["k"]).scores) - fq["official_scores"]
            )
        )
        for fq in fixture["questions"]
    ]
    assert max(diffs) > 100 * SCORE_TOL


def test_fact_edges_are_the_codes_own_direction_weights(hipporag2_sub_kg, services):
    """CatRAG's fact edges come from `relation_own_direction` (kg/hipporag2.py), not HippoRAG
    2's `relation`: with every own-direction weight removed, only synonym and passage edges stay."""
    import copy

    import scipy.sparse as sp

    kg = copy.copy(hipporag2_sub_kg)
    E = kg.n_entities
    r = _catrag_code(None)
    r.prepare(kg, services)
    want = 2.0 * kg.relation_own_direction + 6.0 * kg.synonym
    np.testing.assert_allclose(r.base[:E, :E].toarray(), want.toarray(), rtol=1e-6)
    kg.relation_own_direction = sp.csr_matrix(kg.relation.shape, dtype=np.float32)
    r.prepare(kg, services)
    np.testing.assert_allclose(r.base[:E, :E].toarray(), 6.0 * kg.synonym.toarray(), rtol=1e-6)
