"""The spreading-activation retriever gives what its plain reading gives (tests/retrieve/
sa_oracle.py): the same passage ranking, activations and trace paths, gated and ungated, on
the real MuSiQue sub-corpus graph."""

from __future__ import annotations

import pytest

from hopbench.kg.graph import ENTITY_PREFIX, entity_node_id
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.question import question_mentions
from tests.retrieve.qasa import sa_oracle


@pytest.mark.parametrize("gate", [True, False])
def test_retriever_equals_the_oracle(musique_kg, services, musique_sub, gate):
    kg = musique_kg
    r = SpreadingActivationRetriever(gate=gate)
    r.prepare(kg, services)
    for q in musique_sub.questions:
        mentions = question_mentions(q.text)
        want = sa_oracle.oracle_retrieve(
            kg,
            services.passage_embeddings,
            services.query_embedding(q),
            mentions,
            r.vectors,
            gate=gate,
        )
        got = r.retrieve(q, 10)
        assert got.passage_ids == [kg.passage_ids[i] for i in want.order[:10]], q.id
        assert got.trace["mentions"] == mentions
        assert [s["entity"] for s in got.trace["seeds"]] == [
            entity_node_id(kg.entity_names[e]) for e in want.seeds
        ]
        assert got.trace["n_activated"] == int(want.activated.sum())
        # the retriever's gate normalises the description rows once (LazyGate): the same
        # cosines up to the last bits, so activations agree to rounding, not bit for bit
        for node, a in got.trace["activations"]:
            assert a == pytest.approx(
                want.activation[kg.entity_index(node.removeprefix(ENTITY_PREFIX))], rel=1e-12
            ), (q.id, node)
        assert got.trace["paths_complete"] == want.paths_complete
        assert [p["nodes"] for p in got.trace["paths"]] == [
            [kg.entity_names[v] for v in p] for p, _ in want.paths
        ], q.id
        assert [p["weight"] for p in got.trace["paths"]] == pytest.approx(
            [w for _, w in want.paths], rel=1e-12
        )
