"""Several hopbench graphs, a user's data and old-style hopbench data in ONE Neo4j database
(issue #14 item 6): each graph lives in its own namespace, answers exactly as when it is alone,
also while another process exports another graph (or the same one) at the same time; graphs are
listed and dropped one by one; a user's nodes and pre-namespace hopbench data are never touched
by an export."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from hopbench.cli import main
from hopbench.core.errors import HopbenchError
from hopbench.graphdb.export import ensure_exported, export_graph, export_key, namespace_of
from hopbench.graphdb.export_registry import LEASE_S
from hopbench.graphdb.inventory import drop_graph, list_graphs
from hopbench.graphdb.legacy import LEGACY_CONSTRAINTS, LEGACY_INDEXES, drop_legacy_graph
from hopbench.retrieve.qasa.activation_rules import relation_matrix
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
from hopbench.retrieve.qasa.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever

from .conftest import make_services, probe_questions, sa_results

# the `pairs` rule spreading activation gives the export (graphdb knows no method's rule)
PAIRS = partial(relation_matrix, edges="pairs")

pytestmark = pytest.mark.neo4j

CHILD = Path(__file__).with_name("concurrent_export.py")
K = 10


@pytest.fixture(scope="module")
def graphs(musique_sub, musique_kg, wiki_sub, wiki_kg, encoder, graphdb_settings):
    """name -> (dataset, kg, services, probe questions) for the two small real graphs."""
    out = {}
    for name, ds, kg in (("musique", musique_sub, musique_kg), ("wiki", wiki_sub, wiki_kg)):
        services = make_services(ds, encoder, graphdb_settings)
        qs = probe_questions(ds)
        services.encode_questions(qs)
        out[name] = (ds, kg, services, qs)
    assert namespace_of(musique_kg) != namespace_of(wiki_kg)
    return out


def drop_all(db, graphs) -> None:
    for _, kg, _, _ in graphs.values():
        drop_graph(db, namespace_of(kg))


def prepared(db, kg, services, form="apoc"):
    neo = SpreadingActivationNeo4jRetriever(form=form)
    neo.prepare(kg, services, db=db)
    return neo


@pytest.fixture(scope="module")
def alone(graphdb, graphs):
    """Each graph's results (both query forms) with only that graph in hopbench's part of the
    database, plus the query parameters (for the child processes)."""
    out = {}
    for name, (_, kg, services, qs) in graphs.items():
        drop_all(graphdb, graphs)
        for form in ("apoc", "portable"):
            neo = prepared(graphdb, kg, services, form)
            assert neo.export.exported == (form == "apoc")
            out[name, form] = sa_results(neo, qs)
            out[name, "params"] = {q.id: neo.parameters(q, K) for q in qs}
    drop_all(graphdb, graphs)
    return out


def test_the_probe_questions_seed_and_spread_in_both_graphs(alone, graphs):
    """The comparisons below are not vacuous: most probes seed entities and spread beyond them."""
    for name, (_, _, _, qs) in graphs.items():
        res = alone[name, "apoc"]
        assert sum(bool(r["seeds"]) for r in res.values()) >= len(qs) - 1, name
        assert sum(len(r["activation"]) > len(r["seeds"]) for r in res.values()) >= len(qs) // 2, (
            name
        )
        assert all(len(r["ranked"]) >= K for r in res.values())


def test_two_graphs_in_one_database_answer_as_each_alone(graphdb, graphs, alone, user_data):
    """The reported failure: run A exports and prepares, run B exports another graph into the same
    server, run A goes on querying (used to fail: B had deleted A's nodes and vector indexes,
    NullPointerException in db.index.vector.queryNodes)."""
    before = user_data()
    (_, mkg, msvc, mqs), (_, wkg, wsvc, wqs) = graphs["musique"], graphs["wiki"]
    for form in ("apoc", "portable"):
        a = prepared(graphdb, mkg, msvc, form)
        b = prepared(graphdb, wkg, wsvc, form)  # exports the second graph (the first time round)
        assert sa_results(a, mqs) == alone["musique", form]
        assert sa_results(b, wqs) == alone["wiki", form]
        # a forced re-export of B (a replace) while A is in use: A is not disturbed
        export_graph(graphdb, wkg, pair_counts=PAIRS)
        assert sa_results(a, mqs) == alone["musique", form]
        assert sa_results(b, wqs) == alone["wiki", form]
    # and both agree with the in-memory method on their own graph
    for kg, services, qs in ((mkg, msvc, mqs), (wkg, wsvc, wqs)):
        neo, mem = prepared(graphdb, kg, services), SpreadingActivationRetriever(top_paths=0)
        mem.prepare(kg, services)
        assert not neo.export.exported
        for q in qs:
            assert neo.retrieve(q, K).passage_ids == mem.retrieve(q, K).passage_ids, q.id
    assert user_data() == before
    listed = {g["namespace"]: g for g in list_graphs(graphdb)["graphs"]}
    for kg in (mkg, wkg):
        g = listed[namespace_of(kg).id]
        assert (g["state"], g["export_key"], g["entities"], g["passages"]) == (
            "complete",
            export_key(kg),
            kg.n_entities,
            kg.n_passages,
        )


def _run_children(tmp_path, graphdb_settings, env: dict[str, str], jobs: list[dict]) -> list[dict]:
    """Start one process per job, release them together, return their outputs."""
    go = tmp_path / "go"
    procs, outs, readies = [], [], []
    for i, job in enumerate(jobs):
        path, out, ready = (
            tmp_path / f"job{i}.pkl",
            tmp_path / f"out{i}.json",
            tmp_path / f"ready{i}",
        )
        path.write_bytes(pickle.dumps({"uri": graphdb_settings.uri, "rounds": 3, **job}))
        procs.append(
            subprocess.Popen(
                [sys.executable, str(CHILD), str(path), str(out), str(ready), str(go)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
        outs.append(out)
        readies.append(ready)
    deadline = time.time() + 120
    while not all(r.exists() for r in readies):
        assert time.time() < deadline and all(p.poll() is None for p in procs), [
            p.communicate()[0][-2000:] for p in procs if p.poll() is not None
        ]
        time.sleep(0.05)
    go.touch()
    for p in procs:
        log = p.communicate(timeout=300)[0]
        assert p.returncode == 0, log[-3000:]
    return [json.loads(o.read_text()) for o in outs]


def as_json(results: dict) -> dict:
    """Results as a child process reports them (through JSON: its path tuples are lists)."""
    return json.loads(json.dumps(results))


def test_two_processes_exporting_different_graphs_at_once(
    graphdb, graphdb_settings, graphs, alone, tmp_path, child_env
):
    drop_all(graphdb, graphs)
    names = ("musique", "wiki")
    jobs = [
        {"kg": graphs[n][1], "depth": 3, "gate": True, "params": alone[n, "params"]} for n in names
    ]
    res = _run_children(tmp_path, graphdb_settings, child_env, jobs)
    # both exported, at the same time (the intervals overlap), each into its own namespace
    assert [r["exported"] for r in res] == [True, True]
    assert max(r["export_start"] for r in res) < min(r["export_end"] for r in res)
    assert [r["namespace"] for r in res] == [namespace_of(graphs[n][1]).id for n in names]
    # every query of every round (the first ones while the other process was still exporting) as alone
    for name, r in zip(names, res):
        for got in r["rounds"]:
            assert got == as_json(alone[name, "apoc"]), name


def test_two_processes_wanting_the_same_graph_export_it_once(
    graphdb, graphdb_settings, graphs, alone, tmp_path, child_env
):
    drop_all(graphdb, graphs)
    job = {
        "kg": graphs["musique"][1],
        "depth": 3,
        "gate": True,
        "params": alone["musique", "params"],
    }
    res = _run_children(tmp_path, graphdb_settings, child_env, [job, job])
    assert sorted(r["exported"] for r in res) == [False, True]
    waiter = next(r for r in res if not r["exported"])
    writer = next(r for r in res if r["exported"])
    assert waiter["waited"] > 0 and waiter["export_end"] >= writer["export_end"] - 0.5
    for r in res:
        for got in r["rounds"]:
            assert got == as_json(alone["musique", "apoc"])


def _claim(db, ns, owner: str, age_s: float) -> None:
    db.query(
        "MERGE (g:HopbenchGraph {namespace: $ns}) SET g.owner = $owner, g.owner_info = 'elsewhere pid 1', "
        "g.heartbeat = timestamp() - $age, g.complete = false",
        {"ns": ns.id, "owner": owner, "age": int(1000 * age_s)},
    )


def test_a_live_claim_is_waited_for_and_a_dead_one_taken_over(graphdb, graphs):
    _, kg, _, _ = graphs["wiki"]
    ns = namespace_of(kg)
    drop_graph(graphdb, ns)
    # a claim whose owner stopped beating long ago: taken over at once
    _claim(graphdb, ns, "dead", 2 * LEASE_S)
    report = ensure_exported(graphdb, kg, pair_counts=PAIRS)
    assert report.exported and report.waited < LEASE_S / 2
    # a live claim (fresh heartbeat): this process waits, writes nothing, and goes on once it is released
    _claim(graphdb, ns, "alive", 0)
    assert [g["state"] for g in list_graphs(graphdb)["graphs"] if g["namespace"] == ns.id] == [
        "exporting"
    ]
    with pytest.raises(HopbenchError, match="being exported by elsewhere pid 1"):
        drop_graph(graphdb, ns)
    out: dict = {}
    t = threading.Thread(
        target=lambda: out.update(r=ensure_exported(graphdb, kg, pair_counts=PAIRS))
    )
    t.start()
    time.sleep(2.0)
    assert t.is_alive()
    assert (
        graphdb.query(
            "MATCH (g:HopbenchGraph {namespace: $ns}) RETURN g.owner AS o", {"ns": ns.id}
        )[0]["o"]
        == "alive"
    )
    graphdb.query(
        "MATCH (g:HopbenchGraph {namespace: $ns}) REMOVE g.owner, g.heartbeat", {"ns": ns.id}
    )
    t.join(120)
    assert out["r"].exported and out["r"].waited >= 2.0
    assert not ensure_exported(graphdb, kg, pair_counts=PAIRS).exported


def test_graphs_are_listed_and_dropped_one_by_one(graphdb, graphdb_settings, graphs, capsys):
    (_, mkg, _, _), (_, wkg, _, _) = graphs["musique"], graphs["wiki"]
    ensure_exported(graphdb, mkg, pair_counts=PAIRS)
    ensure_exported(graphdb, wkg, pair_counts=PAIRS)
    mns, wns = namespace_of(mkg), namespace_of(wkg)
    uri = f"graphdb.uri={graphdb_settings.uri}"
    assert main(["graphdb-check", uri]) == 0
    out = capsys.readouterr().out
    for ns, kg, ds in ((mns, mkg, "musique_sub"), (wns, wkg, "2wikimultihopqa_sub")):
        assert (
            f"  {ns.id}  {ds}, graph {kg.manifest['graph_key']}: {kg.n_entities} entities, "
            f"{kg.n_passages} passages, complete" in out
        )

    assert main(["graphdb-drop", wns.id, uri]) == 0
    assert capsys.readouterr().out.strip() == f"dropped hopbench graph {wns.id}"
    for label in (wns.entity, wns.passage):
        assert graphdb.query(f"MATCH (n:{label}) RETURN count(n) AS n")[0]["n"] == 0
    names = {r["name"] for r in graphdb.query("SHOW INDEXES YIELD name RETURN name")}
    assert not {n for n in names if wns.id in n}  # vector indexes and constraints gone
    assert {mns.entity_index, mns.passage_index} | set(mns.constraints) <= names
    listed = [g["namespace"] for g in list_graphs(graphdb)["graphs"]]
    assert mns.id in listed and wns.id not in listed
    assert not ensure_exported(
        graphdb, mkg, pair_counts=PAIRS
    ).exported  # the other graph is untouched

    assert main(["graphdb-drop", wns.id, uri]) == 1  # nothing left to drop
    assert f"no graph {wns.id}" in capsys.readouterr().err
    assert main(["graphdb-drop", "0123) MATCH (n) DETACH DELETE n //", uri]) == 2
    assert "not a hopbench graph namespace" in capsys.readouterr().err
    assert main(["graphdb-drop", uri]) == 2


def test_unregistered_namespace_labels_are_listed_and_droppable(graphdb, graphs):
    """A namespace whose registry node is gone (deleted by hand) is still found by its labels."""
    _, kg, _, _ = graphs["wiki"]
    ns = namespace_of(kg)
    ensure_exported(graphdb, kg, pair_counts=PAIRS)
    graphdb.query("MATCH (g:HopbenchGraph {namespace: $ns}) DELETE g", {"ns": ns.id})
    g = [g for g in list_graphs(graphdb)["graphs"] if g["namespace"] == ns.id]
    assert g == [
        {
            "namespace": ns.id,
            "state": "unregistered",
            "entities": kg.n_entities,
            "passages": kg.n_passages,
        }
    ]
    assert drop_graph(graphdb, ns)
    assert graphdb.query(f"MATCH (n:{ns.entity}) RETURN count(n) AS n")[0]["n"] == 0
    # and a new export into it works (its constraints were dropped and are made again)
    assert ensure_exported(graphdb, kg, pair_counts=PAIRS).exported


def _legacy_export(db, kg, n_e: int = 12, n_p: int = 4) -> None:
    """What hopbench before namespaces left in a database (export schema v2), for a few nodes:
    unprefixed labels, its meta node, indexes and constraints."""
    d = kg.description_embeddings.shape[1]
    for text in (
        "CREATE CONSTRAINT hopbench_entity_idx IF NOT EXISTS FOR (e:Entity) REQUIRE e.idx IS UNIQUE",
        "CREATE CONSTRAINT hopbench_entity_name IF NOT EXISTS FOR (e:Entity) REQUIRE e.name IS UNIQUE",
        "CREATE CONSTRAINT hopbench_passage_idx IF NOT EXISTS FOR (p:Passage) REQUIRE p.idx IS UNIQUE",
        "CREATE CONSTRAINT hopbench_passage_id IF NOT EXISTS FOR (p:Passage) REQUIRE p.id IS UNIQUE",
        "CREATE CONSTRAINT hopbench_meta_key IF NOT EXISTS FOR (m:HopbenchMeta) REQUIRE m.key IS UNIQUE",
    ):
        db.query(text)
    db.query(
        "UNWIND $rows AS r CREATE (:Entity {idx: r.idx, name: r.name, label: r.name, description: 'd', "
        "desc_emb: r.emb, desc_norm: 1.0})",
        {
            "rows": [
                {"idx": i, "name": f"legacy {n}", "emb": kg.description_embeddings[i].tolist()}
                for i, n in enumerate(kg.entity_names[:n_e])
            ]
        },
    )
    db.query(
        "UNWIND $rows AS r CREATE (:Passage {idx: r.idx, id: r.id, emb: r.emb})",
        {
            "rows": [
                {"idx": j, "id": f"legacy-{p}", "emb": kg.passage_embeddings[j].tolist()}
                for j, p in enumerate(kg.passage_ids[:n_p])
            ]
        },
    )
    db.query("MATCH (p:Passage {idx: 0}), (e:Entity) WHERE e.idx < 3 CREATE (p)-[:MENTIONS]->(e)")
    for name, label, prop in (
        ("hopbench_entity_description", "Entity", "desc_emb"),
        ("hopbench_passage_embedding", "Passage", "emb"),
    ):
        db.query(
            f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) ON n.{prop} "
            "OPTIONS {indexConfig: {`vector.dimensions`: $d, `vector.similarity_function`: 'cosine'}}",
            {"d": d},
        )
    db.query(
        "CREATE (:HopbenchMeta {key: 'graph', complete: true, export_key: 'legacy:v2:12:4', "
        "entities: $e, passages: $p})",
        {"e": n_e, "p": n_p},
    )
    db.query("CALL db.awaitIndexes(60)")


def test_pre_namespace_hopbench_data_is_left_alone_listed_and_droppable(graphdb, graphs):
    (ds, kg, services, qs) = graphs["musique"]
    drop_legacy_graph(graphdb)  # a clean start, in case an earlier session left some
    # a user's look-alikes: no desc_norm; another label as well; a property hopbench never wrote
    graphdb.query(
        "CREATE (:Entity {name: 'my own'}), (:Entity:Thing {idx: 1000, name: 'labelled too', "
        "desc_norm: 1.0}), (:Passage {id: 'mine', idx: 1000, emb: [1.0], note: 'extra key'})"
    )
    mine = "(coalesce(n.name, '') IN ['my own', 'labelled too'] OR coalesce(n.id, '') = 'mine')"
    try:
        _legacy_export(graphdb, kg)
        legacy_nodes = (
            f"MATCH (n) WHERE (n:Entity OR n:Passage OR n:HopbenchMeta) AND NOT {mine} "
            "RETURN count(n) AS n"
        )
        assert graphdb.query(legacy_nodes)[0]["n"] == 12 + 4 + 1
        # a new export neither breaks on it nor touches it, and answers as in memory
        drop_graph(graphdb, namespace_of(kg))
        neo = prepared(graphdb, kg, services)
        assert neo.export.exported
        mem = SpreadingActivationRetriever(top_paths=0)
        mem.prepare(kg, services)
        for q in qs:
            assert neo.retrieve(q, K).passage_ids == mem.retrieve(q, K).passage_ids
        assert graphdb.query(legacy_nodes)[0]["n"] == 12 + 4 + 1
        listed = list_graphs(graphdb)
        assert listed["legacy"]["entities"] == 12 and listed["legacy"]["passages"] == 4
        assert set(listed["legacy"]["indexes"]) == set(LEGACY_INDEXES + LEGACY_CONSTRAINTS)

        counts = drop_legacy_graph(graphdb)
        assert counts == {"entities": 12, "passages": 4, "meta": 1}
        assert graphdb.query(legacy_nodes)[0]["n"] == 0
        assert list_graphs(graphdb)["legacy"] is None
        names = {r["name"] for r in graphdb.query("SHOW INDEXES YIELD name RETURN name")}
        assert not names & set(LEGACY_INDEXES + LEGACY_CONSTRAINTS)
        # the user's look-alikes are kept
        assert graphdb.query(f"MATCH (n) WHERE {mine} RETURN count(n) AS n")[0]["n"] == 3
        # and the namespaced graph still answers
        for q in qs[:2]:
            assert neo.retrieve(q, K).passage_ids == mem.retrieve(q, K).passage_ids
        assert np.isfinite(neo.retrieve(qs[0], K).scores).all()
    finally:
        graphdb.query(f"MATCH (n) WHERE {mine} DETACH DELETE n")
        drop_legacy_graph(graphdb)
