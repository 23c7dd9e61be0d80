"""The Neo4j connection layer against a real server: parameters, APOC, timeouts, failures."""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.connection import (
    GraphDBConnectionError,
    GraphDBQueryError,
    GraphDBSettings,
    QueryTimeout,
    check_apoc,
    connect,
    launcher_password_file,
)

LOCAL_YAML = Path(__file__).resolve().parents[2] / "configs" / "graphdb" / "local.yaml"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- without a server ----------------------------------------------------------------------------


def test_unreachable_server_is_one_clear_error_naming_the_uri():
    uri = f"bolt://127.0.0.1:{closed_port()}"
    start = time.perf_counter()
    with pytest.raises(GraphDBConnectionError) as info:
        connect({"uri": uri, "connect_timeout": 5})
    assert time.perf_counter() - start < 5
    err = info.value
    assert isinstance(err, HopbenchError)
    msg = str(err)
    assert msg.startswith(f"Neo4j at {uri}: server not reachable")
    assert "Connection refused" in msg and "make neo4j-up" in msg and "\n" not in msg
    assert err.__cause__ is None and err.__suppress_context__  # no driver traceback behind it


def test_non_bolt_uri_is_rejected_before_connecting():
    with pytest.raises(GraphDBConnectionError, match=r"http://127\.0\.0\.1:7474: not a Bolt URI"):
        connect({"uri": "http://127.0.0.1:7474"})


def test_settings_from_config_keep_nulls_and_hide_the_password():
    s = GraphDBSettings.from_config(
        {
            "name": "local",
            "uri": "bolt://h:1",
            "user": "u",
            "password": 12345678,
            "database": None,
            "connect_timeout": 3,
            "query_timeout": None,
        }
    )
    assert (s.uri, s.user, s.password, s.database, s.connect_timeout, s.query_timeout) == (
        "bolt://h:1",
        "u",
        "12345678",
        None,
        3,
        None,
    )
    assert "12345678" not in repr(s)


def test_local_config_takes_port_and_password_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("HOPBENCH_NEO4J_PASSWORD", raising=False)
    monkeypatch.delenv("HOPBENCH_NEO4J_PORT", raising=False)
    monkeypatch.setenv("HOPBENCH_NEO4J_STATE_DIR", str(tmp_path))
    s = GraphDBSettings.from_config(
        OmegaConf.to_container(OmegaConf.load(LOCAL_YAML), resolve=True)
    )
    assert (s.uri, s.user, s.password) == ("bolt://127.0.0.1:7687", "neo4j", None)
    monkeypatch.setenv("HOPBENCH_NEO4J_PORT", "17000")
    monkeypatch.setenv("HOPBENCH_NEO4J_PASSWORD", "s3cret-pw")
    s = GraphDBSettings.from_config(
        OmegaConf.to_container(OmegaConf.load(LOCAL_YAML), resolve=True)
    )
    assert (s.uri, s.password) == ("bolt://127.0.0.1:17000", "s3cret-pw")


def test_local_launcher_password_is_read_from_its_state_folder(monkeypatch, tmp_path):
    """No password configured: the launcher's file for the URI's port, loopback URIs only."""
    monkeypatch.delenv("HOPBENCH_NEO4J_PASSWORD", raising=False)
    monkeypatch.setenv("HOPBENCH_NEO4J_STATE_DIR", str(tmp_path))
    (tmp_path / "17001").mkdir()
    (tmp_path / "17001" / "password").write_text("from-the-file-123\n")
    for uri, want in [
        ("bolt://127.0.0.1:17001", "from-the-file-123"),
        ("neo4j://localhost:17001", "from-the-file-123"),
        ("bolt://127.0.0.1:17002", None),
        ("bolt://db.example.org:17001", None),
    ]:
        assert GraphDBSettings.from_config({"uri": uri, "password": None}).password == want, uri
    monkeypatch.setenv("HOPBENCH_NEO4J_PASSWORD", "env-wins-1")
    assert GraphDBSettings.from_config({"uri": "bolt://127.0.0.1:17001"}).password == "env-wins-1"
    assert (
        GraphDBSettings.from_config({"uri": "bolt://127.0.0.1:17001", "password": "given"}).password
        == "given"
    )
    monkeypatch.delenv("HOPBENCH_NEO4J_PASSWORD")
    monkeypatch.delenv("HOPBENCH_NEO4J_STATE_DIR")
    monkeypatch.setenv("HOPBENCH_CACHE_DIR", str(tmp_path / "cache"))
    assert launcher_password_file(7687) == tmp_path / "cache" / "neo4j" / "7687" / "password"


# --- against the running server (scripts/neo4j-up.sh) ----------------------------------------------


@pytest.fixture()
def tag(graphdb):
    """A tag for this test's :HopbenchTest nodes, deleted afterwards (the database is shared)."""
    t = f"test-{uuid.uuid4().hex}"
    yield t
    graphdb.query("MATCH (n:HopbenchTest {tag: $tag}) DETACH DELETE n", {"tag": t})


@pytest.mark.neo4j
def test_connects_to_the_configured_server(graphdb, graphdb_settings):
    assert graphdb.uri == graphdb_settings.uri
    assert graphdb.query("RETURN 1 + $x AS y", {"x": 41}) == [{"y": 42}]


@pytest.mark.neo4j
def test_user_text_round_trips_as_parameters_only(graphdb, tag):
    hostile = "x'}) MATCH (m) DETACH DELETE m //\n\"; RETURN 1"
    names = [hostile, "Zoë's café", "", "日本"]
    graphdb.query(
        "UNWIND $rows AS row CREATE (:HopbenchTest {tag: $tag, i: row.i, name: row.name})",
        {"tag": tag, "rows": [{"i": i, "name": n} for i, n in enumerate(names)]},
    )
    rows = graphdb.query(
        "MATCH (n:HopbenchTest {tag: $tag}) RETURN n.i AS i, n.name AS name ORDER BY i",
        {"tag": tag},
    )
    assert [r["name"] for r in rows] == names
    found = graphdb.query(
        "MATCH (n:HopbenchTest {tag: $tag, name: $name}) RETURN n.i AS i",
        {"tag": tag, "name": hostile},
    )
    assert found == [{"i": 0}]


@pytest.mark.neo4j
def test_apoc_is_present_and_map_from_pairs_works(graphdb):
    with graphdb.session() as session:
        version = check_apoc(session)
    assert version is not None and version.startswith("5."), version
    pairs = [["alpha", 0.25], ["beta", 1.5], ["alpha", 0.75]]  # later keys win, as in a dict
    rows = graphdb.query("RETURN apoc.map.fromPairs($pairs) AS m", {"pairs": pairs})
    assert rows == [{"m": dict(pairs)}]


@pytest.mark.neo4j
@pytest.mark.parametrize(
    "cypher",
    [
        "CALL apoc.util.sleep(20000)",
        # portable: no APOC, just a long scan the server must abort
        "UNWIND range(1, 1000000000) AS x WITH x WHERE x % 7 = 13 RETURN count(x) AS c",
    ],
    ids=["apoc-sleep", "long-unwind"],
)
def test_server_side_timeout_is_reported_and_the_connection_goes_on(graphdb, cypher):
    start = time.perf_counter()
    with pytest.raises(QueryTimeout) as info:
        graphdb.query(cypher, timeout=0.5, what="question q7")
    elapsed = time.perf_counter() - start
    assert elapsed < 5, f"the server took {elapsed:.1f} s to abort a 0.5 s query"
    err = info.value
    assert err.timeout_s == 0.5 and err.uri == graphdb.uri
    assert str(err) == f"Neo4j at {graphdb.uri}: question q7 timed out after 0.5 s"
    assert graphdb.query("RETURN 2 AS two") == [{"two": 2}]


@pytest.mark.neo4j
def test_a_run_counts_timeouts_per_question_and_continues(graphdb):
    """The pattern a Neo4j retriever follows: one slow question is counted, the others answer."""
    sleeps_ms = [0, 20000, 0, 0]
    answered, timed_out = [], []
    for qid, ms in enumerate(sleeps_ms):
        try:
            rows = graphdb.query(
                "CALL apoc.util.sleep($ms) RETURN $qid AS qid",
                {"ms": ms, "qid": qid},
                timeout=0.5,
                what=f"question {qid}",
            )
            answered.append(rows[0]["qid"])
        except QueryTimeout:
            timed_out.append(qid)
    assert answered == [0, 2, 3] and timed_out == [1]


@pytest.mark.neo4j
def test_a_rejected_query_names_the_server_status_code(graphdb):
    with pytest.raises(GraphDBQueryError, match=r"Neo\.ClientError\.Statement\.SyntaxError"):
        graphdb.query("RETURN no_such_function(1)")


@pytest.mark.neo4j
def test_unknown_database_is_a_connection_error(graphdb, graphdb_settings):
    with pytest.raises(GraphDBConnectionError, match=r"database 'no-such-db' is not available"):
        connect({**graphdb_settings.__dict__, "database": "no-such-db"})


@pytest.mark.neo4j
def test_launcher_bounds_its_transaction_logs(graphdb):
    """The launcher prunes transaction logs (each 2Wiki export writes ~650 MB of them)."""
    rows = graphdb.query(
        "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
        {
            "names": [
                "db.transaction.monitor.check.interval",
                "db.tx_log.rotation.retention_policy",
                "db.tx_log.rotation.size",
                "db.checkpoint.interval.time",
            ]
        },
    )
    settings = {r["name"]: r["value"] for r in rows}
    if settings.get("db.transaction.monitor.check.interval") != "200ms":
        pytest.skip("not the hopbench launcher (a server of your own keeps its own log policy)")
    assert settings["db.tx_log.rotation.retention_policy"] == "2 files"
    assert settings["db.tx_log.rotation.size"] == "64.00MiB"
    assert settings["db.checkpoint.interval.time"] == "5m"
