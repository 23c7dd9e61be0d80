"""`hopbench graphdb-check` against the running server and against a closed port."""

from __future__ import annotations

import re
import socket

import pytest

from hopbench.cli import main


@pytest.mark.neo4j
def test_check_reports_server_database_and_apoc(graphdb, graphdb_settings, capsys):
    assert main(["graphdb-check", f"graphdb.uri={graphdb_settings.uri}"]) == 0
    first, second, *graphs = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(
        rf"Neo4j at {re.escape(graphdb_settings.uri)}: ok, Neo4j 5\.\d+\.\d+ "
        r"\((community|enterprise)\), database '\w+', APOC 5\.[\d.]+",
        first,
    ), first
    # then the hopbench graphs it holds (tests/graphdb/test_namespaces.py checks the lines)
    m = re.fullmatch(r"hopbench graphs in the default database: (\d+)", second)
    assert m, second
    assert len([g for g in graphs if not g.lstrip().startswith("legacy")]) == int(m.group(1))
    assert all(re.match(r"  ([0-9a-f]{16}|legacy) ", g) for g in graphs), graphs


def test_check_on_a_closed_port_exits_2_with_one_line(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["graphdb-check", f"graphdb.uri=bolt://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"hopbench: error: Neo4j at bolt://127.0.0.1:{port}: server not reachable"
    )
    assert "\n" not in err
