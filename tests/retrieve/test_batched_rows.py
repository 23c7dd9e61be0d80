"""Every retriever that offers blocks to the run loop (`Retriever.exact_batches`) gives, for each
question of a block, the ranking and scores its `retrieve` gives, compared with `==`, on the
100 real MuSiQue questions over the 1,890-passage graph (hopbench.harness.question_blocks)."""

from __future__ import annotations

import pytest

from hopbench.retrieve.base import Retriever
from hopbench.retrieve.baselines.dense import DenseRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.registry import configurable_classes

BLOCK = 32  # the block size the run loop would hand them (question_batch=32); 100 = 3 x 32 + 4

CASES = {
    "dense": lambda: DenseRetriever(),
    "hipporag": lambda: HippoRAGRetriever(seeding={"filter": False}),
    "hipporag1": lambda: HippoRAGRetriever(seeding={"method": "hipporag1", "filter": False}),
    "spreading_activation": lambda: SpreadingActivationRetriever(),
    "spreading_activation_nogate": lambda: SpreadingActivationRetriever(gate=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_block_gives_each_question_its_one_question_row(
    name, musique_dataset, musique_graph, musique_services
):
    r = CASES[name]()
    r.prepare(musique_graph, musique_services)
    qs = musique_dataset.questions
    blocked = [x for s in range(0, len(qs), BLOCK) for x in r.retrieve_batch(qs[s : s + BLOCK], 10)]
    for q, b in zip(qs, blocked, strict=True):
        one = r.retrieve(q, 10)
        assert b.passage_ids == one.passage_ids, q.id
        assert b.scores == one.scores, q.id  # floats equal, not close
        assert b.trace == one.trace, q.id


def test_every_retriever_that_claims_exact_blocks_is_tested_here():
    claimed = {c.__name__ for c in configurable_classes() if vars(c).get("exact_batches", False)}
    tested = {type(make()).__name__ for make in CASES.values()}
    assert claimed <= tested, f"exact_batches without a test here: {sorted(claimed - tested)}"
    assert not Retriever.exact_batches
