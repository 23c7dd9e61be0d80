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


def _smaller_other_graph(kg):
    """A different graph: the first 2/3 of the entities and passages, renamed, with negated
    embeddings and the relation counts doubled, so every property differs from `kg`'s."""
    e, p = 2 * kg.n_entities // 3, 2 * kg.n_passages // 3
    return dataclasses.replace(
        kg,
        entity_names=[f"other {n}" for n in kg.entity_names[:e]],
        entity_labels=kg.entity_labels[:e], entity_descriptions=kg.entity_descriptions[:e],
        description_embeddings=-kg.description_embeddings[:e],
        passage_ids=[f"other-{i}" for i in kg.passage_ids[:p]],
        passage_embeddings=-kg.passage_embeddings[:p],
        relation=(2 * kg.relation[:e, :e]).tocsr(), context=kg.context[:p, :e].tocsr(),
        manifest={**kg.manifest, "graph_key": "smaller-" + kg.manifest["graph_key"]})


def test_reexport_of_a_different_graph_leaves_exactly_the_new_graph(graphdb, musique_kg):
    ensure_exported(graphdb, musique_kg)
    other = _smaller_other_graph(musique_kg)
    report = ensure_exported(graphdb, other)
    assert report.exported and {"prepare", "clear", "entities", "vector_indexes"} <= set(report.stages)
    q = graphdb.query
    assert q("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] == other.n_entities
    assert q("MATCH (p:Passage) RETURN count(p) AS n")[0]["n"] == other.n_passages
    assert q("MATCH (m:HopbenchMeta) RETURN count(m) AS n")[0]["n"] == 1
    assert stored_export_key(graphdb) == export_key(other)
    rows = q("MATCH (e:Entity) RETURN e.idx AS i, e.name AS name, e.desc_emb AS emb ORDER BY i")
    assert [r["name"] for r in rows] == other.entity_names
    for r in rows[::7]:
        assert np.array_equal(np.asarray(r["emb"], dtype=np.float32), other.description_embeddings[r["i"]])
    rows = q("MATCH (a:Entity)-[r:RELATES_TO]->(b:Entity) RETURN a.idx AS u, b.idx AS v, r.count AS c")
    rel = sp.triu(other.relation, k=1).tocoo()
    assert sorted((r["u"], r["v"], r["c"]) for r in rows) == sorted(
        zip(rel.row.tolist(), rel.col.tolist(), rel.data.astype(float).tolist()))
    rows = q("MATCH (p:Passage)-[:MENTIONS]->(e:Entity) RETURN p.idx AS p, e.idx AS e")
    assert sorted((r["p"], r["e"]) for r in rows) == sorted(zip(*other.context.nonzero()))
    # the rebuilt vector indexes hold the new vectors (negated: the old ones would score 0)
    for index, vectors in ((ENTITY_INDEX, other.description_embeddings), (PASSAGE_INDEX, other.passage_embeddings)):
        hit = q(f"CALL db.index.vector.queryNodes('{index}', 1, $v) YIELD node, score "
                "RETURN node.idx AS i, score", {"v": vectors[2].tolist()})[0]
        assert np.array_equal(vectors[hit["i"]], vectors[2]) and hit["score"] == pytest.approx(1.0, abs=1e-6)
    # and back to the original
    assert ensure_exported(graphdb, musique_kg).exported
    assert q("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] == musique_kg.n_entities
    assert q("MATCH (e:Entity {idx: 0}) RETURN e.name AS n")[0]["n"] == musique_kg.entity_names[0]


def test_a_batch_prints_short_but_sends_every_row():
    """The driver formats repr(parameters) on every RUN; a batch must not spell out its vectors."""
    from hopbench.graphdb.export import _Rows

    rows = [{"idx": i, "emb": [0.5] * 384} for i in range(1000)]
    batch = _Rows(rows)
    assert repr(batch) == "<1000 rows>" and batch == rows and isinstance(batch, list)
