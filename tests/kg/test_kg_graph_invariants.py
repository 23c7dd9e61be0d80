"""Invariants of graphs built from real corpora: nodes, title entities, symmetry, networkx parity."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from hopbench.kg import normalize_name
from hopbench.kg.graph import entity_node_id


def check_graph(kg, dataset) -> None:
    corpus = dataset.corpus
    # every passage is a node, in corpus order, linked to its title entity
    assert kg.passage_ids == [p.id for p in corpus]
    for j, p in enumerate(corpus):
        e = kg.title_entity(j)
        assert e is not None, p.title
        assert kg.entity_names[e] == normalize_name(p.title)
        assert kg.context[j, e] == 1.0
        assert j in kg.passages_of_entity(e)
    # shapes
    E, P, F = kg.n_entities, kg.n_passages, kg.n_facts
    assert kg.relation.shape == (E, E) and kg.synonym.shape == (E, E) and kg.context.shape == (P, E)
    for emb, n in (
        (kg.entity_embeddings, E),
        (kg.description_embeddings, E),
        (kg.passage_embeddings, P),
        (kg.fact_embeddings, F),
    ):
        assert emb.shape[0] == n and emb.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    # names unique and normalised
    assert len(set(kg.entity_names)) == E
    assert all(normalize_name(n) == n for n in kg.entity_names)
    # symmetric entity-entity matrices, no self loops
    for m in (kg.relation, kg.synonym):
        assert abs(m - m.T).max() == 0 if m.nnz else True
        assert m.diagonal().sum() == 0
    # synonym weights are cosines >= threshold between eligible names
    syn = kg.synonym.tocoo()
    assert (syn.data >= 0.8 - 1e-6).all()
    cos = np.einsum("ij,ij->i", kg.entity_embeddings[syn.row], kg.entity_embeddings[syn.col])
    np.testing.assert_allclose(syn.data, cos, atol=1e-5)
    assert all(sum(c.isalnum() for c in kg.entity_names[i]) > 2 for i in syn.row)
    # relation weights = number of facts joining the pair, recounted from the fact table
    ref = sp.coo_matrix(
        (
            np.ones(2 * F),
            (np.r_[kg.fact_subject, kg.fact_object], np.r_[kg.fact_object, kg.fact_subject]),
        ),
        shape=(E, E),
    ).tocsr()
    assert abs(ref - kg.relation).max() == 0 if F else kg.relation.nnz == 0
    # every fact's subject and object are context entities of its source passage
    for f in range(F):
        p = kg.fact_passage[f]
        assert kg.context[p, kg.fact_subject[f]] == 1 and kg.context[p, kg.fact_object[f]] == 1
        assert f in kg.facts_between(kg.fact_subject[f], kg.fact_object[f])
    # the combined sparse adjacency equals the networkx export, per type and combined
    g = kg.to_networkx()
    assert g.number_of_nodes() == kg.n_nodes
    ids = kg.node_ids
    a = kg.adjacency(relation=2.0, synonym=3.0, context=0.5)
    for key, mult in (
        ("weight", None),
        ("relation", (1, 0, 0)),
        ("synonym", (0, 1, 0)),
        ("context", (0, 0, 1)),
    ):
        ref_nx = nx.to_scipy_sparse_array(g, nodelist=ids, weight=key, format="csr")
        ours = kg.adjacency() if mult is None else kg.adjacency(*mult)
        if key != "weight":
            # edges without this attribute get weight 1 in networkx; keep only edges carrying it
            sub = nx.Graph()
            sub.add_nodes_from(ids)
            sub.add_edges_from((u, v, d) for u, v, d in g.edges(data=True) if key in d)
            ref_nx = nx.to_scipy_sparse_array(sub, nodelist=ids, weight=key, format="csr")
        assert abs(ref_nx - ours).max() < 1e-6, key
    assert (
        abs(
            a
            - (2 * kg.adjacency(1, 0, 0) + 3 * kg.adjacency(0, 1, 0) + 0.5 * kg.adjacency(0, 0, 1))
        ).max()
        < 1e-5
    )
    assert g.nodes[entity_node_id(kg.entity_names[0])]["kind"] == "entity"


def test_musique_sub_graph(musique_kg, musique_sub):
    check_graph(musique_kg, musique_sub)
    assert musique_kg.n_facts > 50 and musique_kg.synonym.nnz > 0
    # a fact the parse must find in the real 'Tennessee' passage ("Tennessee is bordered by Kentucky")
    triples = {musique_kg.fact_triple(f) for f in range(musique_kg.n_facts)}
    assert ("tennessee", "bordered by", "kentucky") in triples


@pytest.mark.slow
def test_hotpotqa_graph(hotpotqa_kg, hotpotqa):
    check_graph(hotpotqa_kg, hotpotqa)
    assert hotpotqa_kg.n_facts > 2000
    assert hotpotqa_kg.failed_passages == []
