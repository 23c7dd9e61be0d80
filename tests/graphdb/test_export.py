"""Export of a real KnowledgeGraph into the launched Neo4j: contents, idempotence, staleness, all
inside the graph's own namespace."""

from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.export import ensure_exported, export_key, namespace_of
from hopbench.graphdb.export_registry import stored_export_key
from hopbench.graphdb.inventory import drop_graph
from hopbench.graphdb.namespace import Namespace
from hopbench.retrieve.qasa.activation_rules import relation_matrix

# the `pairs` rule spreading activation gives the export (graphdb knows no method's rule)
PAIRS = partial(relation_matrix, edges="pairs")

pytestmark = pytest.mark.neo4j


def count(db, cypher: str, params=None) -> int:
    return db.query(cypher, params)[0]["n"]


@pytest.fixture
def dropped(graphdb):
    """Graphs a test creates besides musique_kg: dropped at the end (by namespace)."""
    made: list = []
    yield made.append
    for kg in made:
        drop_graph(graphdb, namespace_of(kg))


def test_namespace_names_are_checked_hex_and_derived_from_the_graph_key(musique_kg):
    ns = namespace_of(musique_kg)
    assert ns == Namespace.for_graph_key(musique_kg.manifest["graph_key"]) and len(ns.id) == 16
    assert (
        ns.entity == f"Hopbench_{ns.id}_Entity"
        and ns.passage_index == f"hopbench_{ns.id}_passage_embedding"
    )
    assert (
        ns.cypher("MATCH (e:{{ENTITY}})<--(p:{{PASSAGE}}) CALL x('{{ENTITY_INDEX}}')")
        == f"MATCH (e:{ns.entity})<--(p:{ns.passage}) CALL x('{ns.entity_index}')"
    )
    for bad in (
        "",
        "abc",
        "0123456789ab`) DETACH DELETE n //",
        "0123456789AB",
        "g" * 16,
        "0" * 65,
        12,
    ):
        with pytest.raises(HopbenchError, match="not a hopbench graph namespace"):
            Namespace(bad)
    with pytest.raises(HopbenchError, match="unfilled placeholder"):
        ns.cypher("MATCH (n:{{OTHER}})")


def test_export_writes_every_node_edge_and_embedding(graphdb, musique_kg):
    kg, ns = musique_kg, namespace_of(musique_kg)
    plain = count(graphdb, "MATCH (n) WHERE n:Entity OR n:Passage RETURN count(n) AS n")
    report = ensure_exported(
        graphdb, kg, pair_counts=PAIRS, force=True, batch_size=50
    )  # several batches
    assert report.exported and report.entities == kg.n_entities and report.passages == kg.n_passages
    assert report.namespace == ns
    assert stored_export_key(graphdb, ns) == export_key(kg)

    q = graphdb.query
    assert count(graphdb, f"MATCH (e:{ns.entity}) RETURN count(e) AS n") == kg.n_entities
    assert count(graphdb, f"MATCH (p:{ns.passage}) RETURN count(p) AS n") == kg.n_passages
    # the nodes carry only their namespace's label; no plain :Entity / :Passage node was made
    assert count(graphdb, "MATCH (n) WHERE n:Entity OR n:Passage RETURN count(n) AS n") == plain
    assert q(
        f"MATCH (n) WHERE n:{ns.entity} OR n:{ns.passage} RETURN DISTINCT labels(n) AS l ORDER BY l"
    ) == [{"l": [ns.entity]}, {"l": [ns.passage]}]
    # one relationship per unordered pair, carrying the fact count of kg.relation
    rel = sp.triu(kg.relation, k=1).tocsr()
    rows = q(
        f"MATCH (a:{ns.entity})-[r:RELATES_TO]->(b:{ns.entity}) RETURN a.idx AS u, b.idx AS v, r.count AS c"
    )
    assert len(rows) == rel.nnz
    got = sp.csr_matrix(
        ([r["c"] for r in rows], ([r["u"] for r in rows], [r["v"] for r in rows])), shape=rel.shape
    )
    assert abs(got - rel).max() == 0
    # and the number of ordered pairs with a fact (the authors' RELATES_TO multiplicity)
    rows = q(
        f"MATCH (a:{ns.entity})-[r:RELATES_TO]->(b:{ns.entity}) RETURN a.idx AS u, b.idx AS v, r.pairs AS n"
    )
    directed = {(int(s), int(o)) for s, o in zip(kg.fact_subject, kg.fact_object) if s != o}
    assert all(
        r["n"] == ((r["u"], r["v"]) in directed) + ((r["v"], r["u"]) in directed) for r in rows
    )
    assert any(r["n"] == 2 for r in rows) or not any((o, s) in directed for s, o in directed)
    rows = q(f"MATCH (p:{ns.passage})-[:MENTIONS]->(e:{ns.entity}) RETURN p.idx AS p, e.idx AS e")
    assert sorted((r["p"], r["e"]) for r in rows) == sorted(zip(*kg.context.nonzero()))
    # and no relationship leaves the namespace
    assert (
        count(
            graphdb,
            f"MATCH (a)-[r]-(b) WHERE (a:{ns.entity} OR a:{ns.passage}) "
            f"AND NOT (b:{ns.entity} OR b:{ns.passage}) RETURN count(r) AS n",
        )
        == 0
    )
    # names, ids and vectors round-trip exactly (float32 values stored as doubles)
    rows = q(
        f"MATCH (e:{ns.entity}) RETURN e.idx AS i, e.name AS name, e.desc_emb AS emb ORDER BY i"
    )
    assert [r["name"] for r in rows] == kg.entity_names
    for r in rows[:20]:
        assert np.array_equal(
            np.asarray(r["emb"], dtype=np.float32), kg.description_embeddings[r["i"]]
        )
    rows = q(f"MATCH (p:{ns.passage}) RETURN p.idx AS i, p.id AS id, p.emb AS emb ORDER BY i")
    assert [r["id"] for r in rows] == kg.passage_ids
    assert np.array_equal(
        np.asarray([r["emb"] for r in rows], dtype=np.float32), kg.passage_embeddings
    )
    # both vector indexes online, cosine, the graph's dimension, over the namespace's labels
    idx = {
        r["name"]: r
        for r in q("SHOW VECTOR INDEXES YIELD name, state, options, labelsOrTypes RETURN *")
    }
    for name, label in ((ns.entity_index, ns.entity), (ns.passage_index, ns.passage)):
        assert idx[name]["state"] == "ONLINE" and idx[name]["labelsOrTypes"] == [label]
        cfg = idx[name]["options"]["indexConfig"]
        assert cfg["vector.dimensions"] == kg.description_embeddings.shape[1]
        assert cfg["vector.similarity_function"].lower() == "cosine"
    # the uniqueness constraints are the namespace's
    cons = {
        r["name"]: r for r in q("SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties RETURN *")
    }
    for name, (label, prop) in ns.constraints.items():
        assert cons[name]["labelsOrTypes"] == [label] and cons[name]["properties"] == [prop]
    reg = q("MATCH (g:HopbenchGraph {namespace: $ns}) RETURN g {.*} AS g", {"ns": ns.id})
    assert (
        len(reg) == 1
        and reg[0]["g"]["complete"] is True
        and reg[0]["g"]["dataset"] == "musique_sub"
    )
    assert "owner" not in reg[0]["g"] and "heartbeat" not in reg[0]["g"]


def test_same_graph_is_not_exported_twice_and_a_changed_one_gets_its_own_namespace(
    graphdb, musique_kg, dropped
):
    ensure_exported(graphdb, musique_kg, pair_counts=PAIRS)
    again = ensure_exported(graphdb, musique_kg, pair_counts=PAIRS)
    assert not again.exported and again.namespace == namespace_of(musique_kg)

    # another graph (here: one relation edge dropped, so another hash) goes into another namespace
    rel = musique_kg.relation.tolil()
    r, c = sp.triu(musique_kg.relation, k=1).nonzero()
    rel[r[0], c[0]] = 0
    rel[c[0], r[0]] = 0
    other = dataclasses.replace(
        musique_kg,
        relation=rel.tocsr(),
        manifest={**musique_kg.manifest, "graph_key": "test-" + musique_kg.manifest["graph_key"]},
    )
    dropped(other)
    ns, ons = namespace_of(musique_kg), namespace_of(other)
    assert export_key(other) != export_key(musique_kg) and ons != ns
    assert ensure_exported(graphdb, other, pair_counts=PAIRS).exported
    n_rel = "MATCH (:{})-[r:RELATES_TO]->() RETURN count(r) AS n"
    assert count(graphdb, n_rel.format(ons.entity)) == sp.triu(musique_kg.relation, k=1).nnz - 1
    # the original is still there, complete, untouched: no re-export needed to use it again
    assert count(graphdb, n_rel.format(ns.entity)) == sp.triu(musique_kg.relation, k=1).nnz
    assert stored_export_key(graphdb, ns) == export_key(musique_kg)
    assert not ensure_exported(graphdb, musique_kg, pair_counts=PAIRS).exported
    assert not ensure_exported(graphdb, other, pair_counts=PAIRS).exported


def test_an_interrupted_export_is_redone_in_its_namespace_only(
    graphdb, musique_kg, wiki_kg, dropped
):
    dropped(wiki_kg)
    ensure_exported(graphdb, musique_kg, pair_counts=PAIRS)
    ensure_exported(graphdb, wiki_kg, pair_counts=PAIRS)
    ns = namespace_of(musique_kg)
    graphdb.query("MATCH (g:HopbenchGraph {namespace: $ns}) SET g.complete = false", {"ns": ns.id})
    assert stored_export_key(graphdb, ns) is None
    assert ensure_exported(graphdb, musique_kg, pair_counts=PAIRS).exported
    assert not ensure_exported(
        graphdb, wiki_kg, pair_counts=PAIRS
    ).exported  # the other namespace was complete all along


def _smaller_other_graph(kg):
    """A different graph with the SAME graph key (so the same namespace; the export key differs by
    its counts): the first 2/3 of the entities and passages, renamed, with negated embeddings and
    the relation counts doubled, so every property differs from `kg`'s."""
    e, p = 2 * kg.n_entities // 3, 2 * kg.n_passages // 3
    return dataclasses.replace(
        kg,
        entity_names=[f"other {n}" for n in kg.entity_names[:e]],
        entity_labels=kg.entity_labels[:e],
        entity_descriptions=kg.entity_descriptions[:e],
        description_embeddings=-kg.description_embeddings[:e],
        passage_ids=[f"other-{i}" for i in kg.passage_ids[:p]],
        passage_embeddings=-kg.passage_embeddings[:p],
        relation=(2 * kg.relation[:e, :e]).tocsr(),
        context=kg.context[:p, :e].tocsr(),
        manifest=dict(kg.manifest),
    )


def test_reexport_of_a_changed_graph_replaces_exactly_its_namespace(
    graphdb, musique_kg, wiki_kg, dropped
):
    dropped(wiki_kg)
    ensure_exported(graphdb, musique_kg, pair_counts=PAIRS)
    ensure_exported(graphdb, wiki_kg, pair_counts=PAIRS)
    wns = namespace_of(wiki_kg)
    wiki_before = graphdb.query(
        f"MATCH (n:{wns.entity}) RETURN elementId(n) AS id, properties(n) AS p ORDER BY id"
    )

    other = _smaller_other_graph(musique_kg)
    ns = namespace_of(other)
    assert ns == namespace_of(musique_kg) and export_key(other) != export_key(musique_kg)
    report = ensure_exported(graphdb, other, pair_counts=PAIRS)
    assert report.exported and {"prepare", "clear", "entities", "vector_indexes"} <= set(
        report.stages
    )
    q = graphdb.query
    assert count(graphdb, f"MATCH (e:{ns.entity}) RETURN count(e) AS n") == other.n_entities
    assert count(graphdb, f"MATCH (p:{ns.passage}) RETURN count(p) AS n") == other.n_passages
    assert (
        count(
            graphdb, "MATCH (g:HopbenchGraph {namespace: $ns}) RETURN count(g) AS n", {"ns": ns.id}
        )
        == 1
    )
    assert stored_export_key(graphdb, ns) == export_key(other)
    rows = q(
        f"MATCH (e:{ns.entity}) RETURN e.idx AS i, e.name AS name, e.desc_emb AS emb ORDER BY i"
    )
    assert [r["name"] for r in rows] == other.entity_names
    for r in rows[::7]:
        assert np.array_equal(
            np.asarray(r["emb"], dtype=np.float32), other.description_embeddings[r["i"]]
        )
    rows = q(
        f"MATCH (a:{ns.entity})-[r:RELATES_TO]->(b:{ns.entity}) RETURN a.idx AS u, b.idx AS v, r.count AS c"
    )
    rel = sp.triu(other.relation, k=1).tocoo()
    assert sorted((r["u"], r["v"], r["c"]) for r in rows) == sorted(
        zip(rel.row.tolist(), rel.col.tolist(), rel.data.astype(float).tolist())
    )
    rows = q(f"MATCH (p:{ns.passage})-[:MENTIONS]->(e:{ns.entity}) RETURN p.idx AS p, e.idx AS e")
    assert sorted((r["p"], r["e"]) for r in rows) == sorted(zip(*other.context.nonzero()))
    # the rebuilt vector indexes hold the new vectors (negated: the old ones would score 0)
    for index, vectors in (
        (ns.entity_index, other.description_embeddings),
        (ns.passage_index, other.passage_embeddings),
    ):
        hit = q(
            "CALL db.index.vector.queryNodes($index, 1, $v) YIELD node, score "
            "RETURN node.idx AS i, score",
            {"index": index, "v": vectors[2].tolist()},
        )[0]
        assert np.array_equal(vectors[hit["i"]], vectors[2]) and hit["score"] == pytest.approx(
            1.0, abs=1e-6
        )
    # the other graph's namespace: the very same nodes (element ids) with the same properties
    assert (
        q(f"MATCH (n:{wns.entity}) RETURN elementId(n) AS id, properties(n) AS p ORDER BY id")
        == wiki_before
    )
    assert not ensure_exported(graphdb, wiki_kg, pair_counts=PAIRS).exported
    # and back to the original
    assert ensure_exported(graphdb, musique_kg, pair_counts=PAIRS).exported
    assert count(graphdb, f"MATCH (e:{ns.entity}) RETURN count(e) AS n") == musique_kg.n_entities
    assert (
        q(f"MATCH (e:{ns.entity} {{idx: 0}}) RETURN e.name AS n")[0]["n"]
        == musique_kg.entity_names[0]
    )


def test_a_users_own_nodes_survive_export_reexport_and_drop(
    graphdb, musique_kg, wiki_kg, user_data
):
    before = user_data()
    ensure_exported(graphdb, musique_kg, pair_counts=PAIRS, force=True)
    ensure_exported(graphdb, wiki_kg, pair_counts=PAIRS)
    ensure_exported(
        graphdb, _smaller_other_graph(musique_kg), pair_counts=PAIRS
    )  # a replace: clears the namespace
    assert drop_graph(graphdb, namespace_of(wiki_kg))
    ensure_exported(graphdb, musique_kg, pair_counts=PAIRS)
    assert user_data() == before  # same element ids, labels, properties and relationships


def test_a_batch_prints_short_but_sends_every_row():
    """The driver formats repr(parameters) on every RUN; a batch must not spell out its vectors."""
    from hopbench.graphdb.export import _Rows

    rows = [{"idx": i, "emb": [0.5] * 384} for i in range(1000)]
    batch = _Rows(rows)
    assert repr(batch) == "<1000 rows>" and batch == rows and isinstance(batch, list)
