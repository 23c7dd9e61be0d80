"""The one-query Neo4j spreading activation against the in-memory method, on every question of
the 100-question MuSiQue subset (spaCy graph of its 1,890 passages): same activated entities with
activations within 1e-6 relative, same top-10 passages; both query forms, gate on and off,
T = 1..4. The graph is exported once (the export key makes later `prepare` calls no-ops)."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.graphdb.export import ensure_exported
from hopbench.retrieve.kernels import spreading_activation
from hopbench.retrieve.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever

from .conftest import make_services

pytestmark = pytest.mark.neo4j

RTOL = 1e-6
K = 10


@pytest.fixture(scope="module")
def musique_services(musique_dataset, encoder, graphdb_settings):
    return make_services(musique_dataset, encoder, graphdb_settings)


@pytest.fixture(scope="module")
def exported(graphdb, musique_graph):
    ensure_exported(graphdb, musique_graph)
    return musique_graph


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
@pytest.mark.parametrize("gate", [True, False], ids=["gate", "nogate"])
@pytest.mark.parametrize("form", ["apoc", "portable"])
def test_neo4j_query_equals_in_memory_method(form, gate, depth, graphdb, exported, musique_dataset,
                                             musique_services):
    kg = exported
    neo = SpreadingActivationNeo4jRetriever(form=form, gate=gate, depth=depth)
    neo.prepare(kg, musique_services, db=graphdb)
    assert not neo.export.exported
    mem = SpreadingActivationRetriever(gate=gate, depth=depth, top_paths=0)
    mem.prepare(kg, musique_services)

    n_seeded = n_spread = 0
    for q in musique_dataset.questions:
        out = neo.run_query(neo.parameters(q, K))
        mentions, idx, act, _ = mem.seeds(q)
        res = spreading_activation(mem.adjacency, idx, act,
                                   mem.gate_vector(musique_services.query_embedding(q)),
                                   decay=mem.decay, steps=depth, threshold=mem.threshold)
        expected = {kg.entity_names[i]: float(res.activation[i]) for i in np.flatnonzero(res.activated)}
        seeds = {kg.entity_names[i]: float(a) for i, a in zip(idx, act)}

        assert set(out["seeds"]) == set(seeds), q.id
        np.testing.assert_allclose([out["seeds"][n] for n in seeds], list(seeds.values()), rtol=RTOL)
        assert set(out["activation"]) == set(expected), (q.id, set(out["activation"]) ^ set(expected))
        names = sorted(expected)
        np.testing.assert_allclose([out["activation"][n] for n in names],
                                   [expected[n] for n in names], rtol=RTOL, err_msg=q.id)
        assert [r["id"] for r in out["ranked"][:K]] == mem.retrieve(q, K).passage_ids, q.id
        n_seeded += bool(seeds)
        n_spread += len(expected) > len(seeds)
    # the comparison is not vacuous: most questions have seeds and spread beyond them
    assert n_seeded >= 90
    assert n_spread >= 50
