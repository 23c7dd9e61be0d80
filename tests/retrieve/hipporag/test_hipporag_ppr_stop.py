"""`retriever.ppr_stop=certified_topk` (issue #59) on the 100 real MuSiQue questions: the same
top 10 as the default solve, question by question, scores within the stated tolerance, the
same rows from a block as from one question, and the account of each solve in the trace."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.catrag.catrag import CatRAGRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever

DEFAULT_TOL = 1e-9  # the default solve's own error (ppr_tol 1e-10, in L1) with a margin


def certified_scores_agree(default, cut) -> bool:
    """The stored scores of a certified solve are within 2ε of the default's (ε: the trace's
    L1 bound on the unnormalised iterate y; y >= p elementwise, so Σy >= 1 and normalising
    at most doubles it); a solve the certificate could not stop equals the default bit for bit.
    True when the solve was certified."""
    info = cut.trace.get("ppr")
    if info is None:  # the dense fallback: no PPR
        assert cut.scores == default.scores
        return False
    assert info["stop"] == "certified_topk" and info["matvecs"] > 0
    if not info["certified"]:
        assert cut.scores == default.scores
        return False
    tol = 2 * info["bound"] + DEFAULT_TOL
    np.testing.assert_allclose(cut.scores, default.scores, rtol=0, atol=tol)
    return True


CASES = {
    "hipporag": lambda **kw: HippoRAGRetriever(seeding={"filter": False}, **kw),
    # CatRAG without its LLM steps: its own graph per question, solved by power iteration
    "catrag": lambda **kw: CatRAGRetriever(
        seeding={"filter": False}, ner="spacy", edge_weighting=False, **kw
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_certified_stop_returns_the_default_top10(
    name, musique_dataset, musique_graph, musique_services
):
    default, cut = CASES[name](), CASES[name](ppr_stop="certified_topk")
    for r in (default, cut):
        r.prepare(musique_graph, musique_services)
    certified = 0
    for q in musique_dataset.questions:
        a, b = default.retrieve(q, 10), cut.retrieve(q, 10)
        assert b.passage_ids == a.passage_ids, q.id
        assert "ppr" not in a.trace
        certified += certified_scores_agree(a, b)
    assert certified > 80, certified


def test_a_block_under_the_certified_stop_gives_each_question_its_row(
    musique_dataset, musique_graph, musique_services
):
    r = HippoRAGRetriever(seeding={"filter": False}, ppr_stop="certified_topk")
    r.prepare(musique_graph, musique_services)
    qs = musique_dataset.questions[:40]
    for q, b in zip(qs, r.retrieve_batch(qs, 10), strict=True):
        one = r.retrieve(q, 10)
        assert (b.passage_ids, b.scores, b.trace) == (one.passage_ids, one.scores, one.trace)


def test_an_unknown_stop_is_refused_with_the_accepted_values():
    with pytest.raises(HopbenchError, match="tol, certified_topk"):
        HippoRAGRetriever(ppr_stop="early")
