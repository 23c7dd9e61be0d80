"""Wrong credentials against a real auth-enabled server: one clear error naming the URI.

This starts its own launcher instance with `--password-env` on a free port, so that the
password is known here (about 25 s on this machine, hence `slow`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from hopbench.graphdb.connection import GraphDBConnectionError, connect

JAR = Path(__file__).resolve().parents[2] / "neo4j" / "target" / "hopbench-neo4j.jar"
PASSWORD = "correct-horse-42"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory):
    if not JAR.exists():
        pytest.fail(f"{JAR} is missing: build it with `make neo4j-build`", pytrace=False)
    if shutil.which("java") is None:
        pytest.fail("java is not installed (set HOPBENCH_SKIP_NEO4J=1 to skip)", pytrace=False)
    port = free_port()
    home = tmp_path_factory.mktemp("neo4j-auth")
    log = (home / "launcher.log").open("w+")
    proc = subprocess.Popen(
        [
            "java",
            "-Xms128m",
            "-Xmx512m",
            "-jar",
            str(JAR),
            "--data-dir",
            str(home / "db"),
            "--port",
            str(port),
            "--page-cache",
            "32m",
            "--password-env",
            "HOPBENCH_TEST_NEO4J_PW",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HOPBENCH_TEST_NEO4J_PW": PASSWORD},
    )
    try:
        deadline = time.monotonic() + 420  # a fresh store starts twice (password set with Bolt off)
        while True:
            text = (home / "launcher.log").read_text()
            if "hopbench-neo4j ready" in text:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"auth-enabled launcher did not start:\n{text}", pytrace=False)
            time.sleep(0.3)
        yield f"bolt://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.neo4j
@pytest.mark.slow
@pytest.mark.parametrize(
    "password, who", [("wrong-password", "user 'neo4j'"), (None, "no credentials")]
)
def test_wrong_or_missing_credentials_give_one_clear_error(auth_server, password, who):
    with pytest.raises(GraphDBConnectionError) as info:
        connect({"uri": auth_server, "user": "neo4j", "password": password})
    msg = str(info.value)
    assert msg.startswith(f"Neo4j at {auth_server}: authentication failed ({who})")
    assert "HOPBENCH_NEO4J_PASSWORD" in msg and "\n" not in msg
    assert password is None or password not in msg
    assert info.value.__cause__ is None and info.value.__suppress_context__


@pytest.mark.neo4j
@pytest.mark.slow
def test_right_credentials_connect(auth_server):
    with connect({"uri": auth_server, "user": "neo4j", "password": PASSWORD}) as db:
        assert db.query("RETURN $x AS x", {"x": "ok"}) == [{"x": "ok"}]
