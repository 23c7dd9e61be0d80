"""The Cypher assembly, parameters-only inputs, and per-question timeouts against a real server."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Question
from hopbench.graphdb.connection import GraphDBSettings, connect
from hopbench.graphdb.namespace import Namespace
from hopbench.graphdb.sa_query import spreading_activation_query, template
from hopbench.retrieve.baselines.dense import DenseRetriever
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.qasa.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever

from .conftest import make_services

NS = Namespace("0123456789abcdef")


@pytest.mark.parametrize("form", ["apoc", "portable"])
def test_query_repeats_the_step_block_depth_times(form):
    step = template(f"sa_step_{form}").splitlines()[0]
    for depth in range(5):
        text = spreading_activation_query(form, depth, True, NS)
        assert text.count(step) == depth
        assert "{{" not in text
    assert ("apoc." in spreading_activation_query(form, 2, True, NS)) == (form == "apoc")
    gated, ungated = (
        spreading_activation_query(form, 2, True, NS),
        spreading_activation_query(form, 2, False, NS),
    )
    assert "vector.similarity.cosine" in gated and "vector.similarity.cosine" not in ungated
    assert "$qe_norm" in spreading_activation_query(form, 2, True, NS, gate_function="exact")


@pytest.mark.parametrize("form", ["apoc", "portable"])
def test_query_reads_only_its_namespace(form):
    """Every node pattern and vector index of the query is the namespace's; no plain :Entity."""
    text = spreading_activation_query(form, 2, True, NS)
    labels = set(re.findall(r"\(\w*:(\w+)", text))
    assert labels == {NS.entity, NS.passage}
    assert set(re.findall(r"queryNodes\('(\w+)'", text)) == {NS.entity_index, NS.passage_index}
    other = spreading_activation_query(form, 2, True, Namespace("f" * 16))
    assert NS.id not in other and other.replace("f" * 16, NS.id) == text


@pytest.mark.parametrize("form", ["apoc", "portable"])
def test_gate_function_and_path_block_choices(form):
    native = spreading_activation_query(form, 2, True, NS)
    exact = spreading_activation_query(form, 2, True, NS, gate_function="exact")
    assert native.count("vector.similarity.cosine(dst.desc_emb, $qe)") == 2 and "gds." not in native
    dot = "reduce(acc = 0.0, i IN range(0, size(de)"
    assert "vector.similarity.cosine" not in exact and exact.count(dot) == native.count(dot) + 2
    assert "RELATES_TO*1..4" in native and "toInteger(r.pairs)" in native
    assert "toInteger(r.pairs)" not in spreading_activation_query(form, 2, True, NS, edges="facts")
    bare = spreading_activation_query(form, 2, True, NS, paths=False)
    assert "RELATES_TO*1..4" not in bare and "[] AS paths" in bare
    with pytest.raises(HopbenchError, match="gate_function"):
        spreading_activation_query(form, 2, True, NS, gate_function="gds")


def test_bad_form_depth_or_namespace_is_refused():
    with pytest.raises(HopbenchError, match="retriever.form"):
        spreading_activation_query("gds", 2, True, NS)
    with pytest.raises(HopbenchError, match="retriever.depth"):
        SpreadingActivationNeo4jRetriever(depth=-1)
    with pytest.raises(HopbenchError, match="needs a Namespace"):
        spreading_activation_query("apoc", 2, True, "0123456789abcdef")


@pytest.mark.neo4j
@pytest.mark.parametrize("form", ["apoc", "portable"])
def test_question_text_travels_only_as_parameters(
    form, graphdb, musique_sub, musique_kg, encoder, graphdb_settings
):
    """A question full of Cypher syntax is just data: same query text, same answer as in memory."""
    services = make_services(musique_sub, encoder, graphdb_settings)
    neo = SpreadingActivationNeo4jRetriever(form=form)
    neo.prepare(musique_kg, services, db=graphdb)
    text = neo.cypher
    nasty = Question(
        id="nasty",
        text="Who founded O'Brien\"} ) MATCH (n) DETACH DELETE n // Records in "
        + musique_sub.questions[0].text,
        answers=["x"],
        gold_passage_ids=[],
    )
    got = neo.retrieve(nasty, 10)
    assert neo.cypher == text and nasty.text not in text
    mem = SpreadingActivationRetriever(top_paths=0)
    mem.prepare(musique_kg, services)
    assert got.passage_ids == mem.retrieve(nasty, 10).passage_ids
    ns = neo.export.namespace
    assert (
        graphdb.query(f"MATCH (n:{ns.entity}) RETURN count(n) AS n")[0]["n"]
        == musique_kg.n_entities
    )
    assert got.trace["form"] == form and got.trace["mentions"]


@pytest.mark.neo4j
def test_a_timed_out_question_gets_the_dense_ranking_and_is_flagged(
    graphdb, musique_sub, musique_kg, encoder, graphdb_settings
):
    services = make_services(musique_sub, encoder, graphdb_settings)
    fast = GraphDBSettings(
        uri=graphdb_settings.uri,
        user=graphdb_settings.user,
        password=graphdb_settings.password,
        query_timeout=0.5,
    )
    db = connect(fast)
    try:
        neo = SpreadingActivationNeo4jRetriever()
        neo.prepare(musique_kg, services, db=db)
        neo.cypher = (
            "UNWIND range(1, 1000000000) AS x WITH x WHERE x < 0 RETURN x"  # runs for minutes
        )
        q = musique_sub.questions[0]
        got = neo.retrieve(q, 5)
        assert (
            got.trace["query_timeout"] is True
            and got.trace["fallback"][0]["step"] == "dense_fallback"
        )
        assert neo.n_timeouts == 1
        dense = DenseRetriever()
        dense.prepare(musique_kg, services)
        want = dense.retrieve(q, 5)
        assert got.passage_ids == want.passage_ids
        np.testing.assert_allclose(got.scores, want.scores, rtol=1e-5)
    finally:
        db.close()


def test_missing_graphdb_settings_are_named(musique_sub, musique_kg, encoder):
    from hopbench.retrieve.base import Services

    with pytest.raises(HopbenchError, match="graphdb"):
        SpreadingActivationNeo4jRetriever().prepare(
            musique_kg, Services(dataset=musique_sub, encoder=encoder)
        )
