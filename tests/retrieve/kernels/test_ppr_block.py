"""The block PPR equals the one-question PPR to the last bit, column by column, on the real
MuSiQue graph (1,890 passages) with resets shaped as HippoRAG's: a few entity seeds plus a
small weight on every passage."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.retrieve.kernels.ppr import (
    personalized_pagerank,
    personalized_pagerank_batch,
    prepare_ppr,
)
from hopbench.retrieve.kernels.ppr_block import personalized_pagerank_block


@pytest.fixture(scope="module")
def graph_and_resets(musique_graph, musique_dataset):
    kg = musique_graph
    ppr = prepare_ppr(kg.adjacency(relation=2.0, synonym=2.0, context=1.0))
    pos = {pid: j for j, pid in enumerate(kg.passage_ids)}
    ctx = kg.context.tocsr()  # P x E
    rng = np.random.default_rng(59)
    cols = []
    for q in musique_dataset.questions[:40]:
        reset = np.zeros(kg.n_nodes)
        for pid in q.gold_passage_ids[:2]:  # the entities of its gold passages seed it
            ents = ctx.indices[ctx.indptr[pos[pid]] : ctx.indptr[pos[pid] + 1]]
            reset[ents[:5]] = 1.0 / (1 + np.arange(min(5, ents.size)))
        # every passage a little, as HippoRAG's 0.05 x min-max(dense); half the columns none,
        # so the columns converge after different numbers of steps
        if len(cols) % 2:
            reset[kg.n_entities :] = 0.05 * rng.random(kg.n_passages)
        cols.append(reset)
    return ppr, np.stack(cols, axis=1)


def test_every_column_is_the_one_question_solve_to_the_last_bit(graph_and_resets):
    ppr, resets = graph_and_resets
    block = personalized_pagerank_block(ppr, resets)
    for j in range(resets.shape[1]):
        one = personalized_pagerank(ppr, resets[:, j])
        assert np.array_equal(block[:, j], one), f"column {j} differs"


def test_the_columns_stop_apart_where_the_shared_stop_does_not_match(graph_and_resets):
    """Why the block kernel exists: the older batch solves every column to the slowest one's
    step, so some column differs from its own solve (within tol), and a ranking can flip."""
    ppr, resets = graph_and_resets
    shared = personalized_pagerank_batch(ppr, resets)
    one = np.stack([personalized_pagerank(ppr, resets[:, j]) for j in range(resets.shape[1])], 1)
    assert not np.array_equal(shared, one)
    np.testing.assert_allclose(shared, one, rtol=0, atol=1e-9)


def test_tight_and_loose_tolerances_and_power_method(graph_and_resets):
    ppr, resets = graph_and_resets
    few = resets[:, :6]
    for kw in ({"tol": 1e-4}, {"tol": 1e-13}, {"damping": 0.85}, {"method": "power"}):
        block = personalized_pagerank_block(ppr, few, **kw)
        for j in range(few.shape[1]):
            assert np.array_equal(block[:, j], personalized_pagerank(ppr, few[:, j], **kw))


def test_bad_resets_are_refused_as_the_one_question_solve_refuses_them(graph_and_resets):
    ppr, resets = graph_and_resets
    with pytest.raises(ValueError, match="2-D"):
        personalized_pagerank_block(ppr, resets[:, 0])
    zero = resets[:, :2].copy()
    zero[:, 1] = 0.0
    with pytest.raises(ValueError, match="sums to 0"):
        personalized_pagerank_block(ppr, zero)
    with pytest.raises(ValueError, match="entries"):
        personalized_pagerank_block(ppr, resets[:-1, :2])
