"""CatRAG's max merge (issue #55): a target scored by several seeds is weighted by the best score
any seed gave it, not by the last seed's. The scripted LLM scores each call lower than the one
before (10, 9, 8, ...), so a neighbour shared by two seeds always gets two different scores and
the last is never the best; the reference here is the maximum over the trace's scores."""

from __future__ import annotations

import numpy as np
import pytest

from tests.retrieve.catrag.test_catrag import (
    RuleLLM,
    _catrag,
    _code_mapping,
    _seeds_and_multipliers,
)


class FallingScores(RuleLLM):
    """Every name of the k-th scoring call gets max(10 - k, 0)."""

    def __init__(self):
        super().__init__(score=self._score)

    def _score(self, name: str) -> int:
        return max(10 - self.n("neighbour_scores") + 1, 0)


@pytest.fixture(scope="module")
def hipporag2_kg(musique_sub, encoder, cache_dir):
    from hopbench.kg import load_or_build

    return load_or_build(
        musique_sub, {"construction": "hipporag2"}, encoder=encoder, cache_dir=cache_dir
    )


def _shared_case(kg, services, musique_sub):
    """The first question whose seeds score a common neighbour, with its retriever and trace."""
    for q in musique_sub.questions[:40]:
        llm = FallingScores()
        r = _catrag(kg, services, llm, anchoring=False, passage_boost=False)
        _, _, rel_m, ctx_m, trace = _seeds_and_multipliers(r, q)
        by_target: dict[int, list[int]] = {}
        for e in trace["edge_scores"]:
            for name, s in e["scored"]:
                by_target.setdefault(kg.entity_index(name), []).append(s)
        if any(len(set(s)) > 1 for s in by_target.values()):
            return r, rel_m, ctx_m, trace, by_target
    pytest.fail("no question in the first 40 has two seeds scoring one neighbour")


def test_a_shared_target_takes_the_best_score_of_any_seed(hipporag2_kg, services, musique_sub):
    kg = hipporag2_kg
    r, rel_m, ctx_m, trace, by_target = _shared_case(kg, services, musique_sub)
    best = {v: max(s) for v, s in by_target.items()}  # the reference: a plain maximum
    seeds = [kg.entity_index(n) for n in trace["stage1_seeds"]]
    a, aq = r.base.toarray(), r.adapted_graph(rel_m, ctx_m).toarray()
    checked = 0
    for u in seeds:
        for v in np.flatnonzero(a[u]):
            if v in best:
                want = a[u, v] * _code_mapping(best[v])  # phi_scale 1: the paper's phi
                assert aq[u, v] == pytest.approx(want, abs=1e-12), (u, v, by_target[v])
                checked += len(set(by_target[v])) > 1
    assert checked, "no edge to a target with two different scores was checked"
