"""Export of a real KnowledgeGraph into the launched Neo4j: contents, idempotence, staleness."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.graphdb.export import (
    ENTITY_INDEX,
    PASSAGE_INDEX,
    ensure_exported,
    export_key,
    stored_export_key,
)

pytestmark = pytest.mark.neo4j


def test_export_writes_every_node_edge_and_embedding(graphdb, musique_kg):
    kg = musique_kg
    report = ensure_exported(graphdb, kg, force=True, batch_size=50)  # several batches
    assert report.exported and report.entities == kg.n_entities and report.passages == kg.n_passages
    assert stored_export_key(graphdb) == export_key(kg)

    q = graphdb.query
    assert q("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] == kg.n_entities
    assert q("MATCH (p:Passage) RETURN count(p) AS n")[0]["n"] == kg.n_passages
    # one relationship per unordered pair, carrying the fact count of kg.relation
    rel = sp.triu(kg.relation, k=1).tocsr()
    rows = q("MATCH (a:Entity)-[r:RELATES_TO]->(b:Entity) RETURN a.idx AS u, b.idx AS v, r.count AS c")
    assert len(rows) == rel.nnz
    got = sp.csr_matrix(([r["c"] for r in rows], ([r["u"] for r in rows], [r["v"] for r in rows])),
                        shape=rel.shape)
    assert abs(got - rel).max() == 0
    rows = q("MATCH (p:Passage)-[:MENTIONS]->(e:Entity) RETURN p.idx AS p, e.idx AS e")
    assert sorted((r["p"], r["e"]) for r in rows) == sorted(zip(*kg.context.nonzero()))
    # names, ids and vectors round-trip exactly (float32 values stored as doubles)
    rows = q("MATCH (e:Entity) RETURN e.idx AS i, e.name AS name, e.desc_emb AS emb ORDER BY i")
    assert [r["name"] for r in rows] == kg.entity_names
    for r in rows[:20]:
        assert np.array_equal(np.asarray(r["emb"], dtype=np.float32), kg.description_embeddings[r["i"]])
    rows = q("MATCH (p:Passage) RETURN p.idx AS i, p.id AS id, p.emb AS emb ORDER BY i")
    assert [r["id"] for r in rows] == kg.passage_ids
    assert np.array_equal(np.asarray([r["emb"] for r in rows], dtype=np.float32), kg.passage_embeddings)
    # both vector indexes online, cosine, the graph's dimension
    idx = {r["name"]: r for r in q("SHOW VECTOR INDEXES YIELD name, state, options RETURN *")}
    for name in (ENTITY_INDEX, PASSAGE_INDEX):
        assert idx[name]["state"] == "ONLINE"
        cfg = idx[name]["options"]["indexConfig"]
        assert cfg["vector.dimensions"] == kg.description_embeddings.shape[1]
        assert cfg["vector.similarity_function"].lower() == "cosine"


def test_same_graph_is_not_exported_twice_and_a_changed_one_replaces_it(graphdb, musique_kg):
    ensure_exported(graphdb, musique_kg)
    again = ensure_exported(graphdb, musique_kg)
    assert not again.exported

    # another graph (here: one relation edge dropped, so another hash) is detected and replaces it
    rel = musique_kg.relation.tolil()
    r, c = sp.triu(musique_kg.relation, k=1).nonzero()
    rel[r[0], c[0]] = 0
    rel[c[0], r[0]] = 0
    other = dataclasses.replace(musique_kg, relation=rel.tocsr(),
                                manifest={**musique_kg.manifest, "graph_key": "test-" + musique_kg.manifest["graph_key"]})
    assert export_key(other) != export_key(musique_kg)
    assert ensure_exported(graphdb, other).exported
    n = graphdb.query("MATCH ()-[r:RELATES_TO]->() RETURN count(r) AS n")[0]["n"]
    assert n == sp.triu(musique_kg.relation, k=1).nnz - 1
    assert graphdb.query("MATCH (m:HopbenchMeta) RETURN count(m) AS n")[0]["n"] == 1
    # and back: the original is re-exported (a stale database never answers for another graph)
    assert ensure_exported(graphdb, musique_kg).exported
    assert stored_export_key(graphdb) == export_key(musique_kg)


def test_an_interrupted_export_is_redone(graphdb, musique_kg):
    ensure_exported(graphdb, musique_kg)
    graphdb.query("MATCH (m:HopbenchMeta {key: 'graph'}) SET m.complete = false")
    assert stored_export_key(graphdb) is None
    assert ensure_exported(graphdb, musique_kg).exported
