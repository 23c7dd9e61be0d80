"""The local Neo4j launcher is locked down against other accounts on the same machine.

Every local account can reach a loopback port, so the launcher must not be an open door: auth
on with a random password only its owner can read, no file access from Cypher (LOAD CSV file
URLs, APOC's load/import/export/log procedures), and its folder outside the checkout. The probe
that matters runs as a second OS user (created with `useradd`, entered with `setpriv`), with
the Neo4j driver copied where that user can import it; it needs root, and is skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest

from hopbench.graphdb.connection import (
    GraphDBConnectionError,
    GraphDBQueryError,
    _loopback_port,
    connect,
    launcher_password_file,
)

REPO = Path(__file__).resolve().parents[2]
JAR = REPO / "neo4j" / "target" / "hopbench-neo4j.jar"
PROBE_USER = "hopbench-probe"

PROBE = textwrap.dedent("""
    import json, os, sys
    from neo4j import GraphDatabase
    uri, password_file = sys.argv[1], sys.argv[2]
    out = {"uid": os.getuid()}
    try:
        open(password_file).read()
        out["password_file"] = "read"
    except OSError as e:
        out["password_file"] = type(e).__name__
    try:
        os.listdir(os.path.dirname(password_file))
        out["state_dir"] = "listed"
    except OSError as e:
        out["state_dir"] = type(e).__name__
    for name, auth in (("no_auth", None), ("default_password", ("neo4j", "neo4j"))):
        try:
            with GraphDatabase.driver(uri, auth=auth) as d, d.session() as s:
                out[name] = s.run("LOAD CSV FROM 'file:///etc/passwd' AS r RETURN count(r) AS n").single()["n"]
        except Exception as e:
            out[name] = getattr(e, "code", None) or type(e).__name__
    print(json.dumps(out))
""")


def _local_launcher(settings) -> int:
    port = _loopback_port(settings.uri)
    if port is None:
        pytest.skip(f"graphdb.uri={settings.uri} is not the local launcher")
    return port


@pytest.fixture(scope="module")
def other_user() -> list[str]:
    """`setpriv` arguments that run a command as an unprivileged second user."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("useradd") is None:
        pytest.skip("needs root, setpriv and useradd to act as a second OS user")
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PROBE_USER],
        capture_output=True,
    )  # exit 9: it exists already
    ids = subprocess.run(["id", "-u", PROBE_USER], capture_output=True, text=True, check=True)
    uid = int(ids.stdout)
    assert uid != 0
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


@pytest.fixture(scope="module")
def probe_env(other_user):
    """A folder the second user can read holding the driver (neo4j, pytz) and the probe, and an
    interpreter that user may execute (this one may sit in root's 0700 home)."""
    import neo4j
    import pytz

    site = Path(tempfile.mkdtemp(prefix="hopbench-probe-"))
    try:
        for mod in (neo4j, pytz):
            shutil.copytree(Path(mod.__file__).parent, site / mod.__name__)
        (site / "probe.py").write_text(PROBE)
        for p in [site, *site.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        python = next(
            (
                p
                for p in (os.path.realpath(shutil.which("python3") or ""), "/usr/bin/python3")
                if p
                and subprocess.run([*other_user, p, "-c", "pass"], capture_output=True).returncode
                == 0
            ),
            None,
        )
        if python is None:
            pytest.skip("no Python interpreter the second user may run")
        yield python, site
    finally:
        shutil.rmtree(site, ignore_errors=True)


@pytest.mark.neo4j
def test_another_account_cannot_read_the_password_or_use_the_server(
    graphdb_settings, other_user, probe_env
):
    port = _local_launcher(graphdb_settings)
    python, site = probe_env
    pw_file = launcher_password_file(port)
    proc = subprocess.run(
        [*other_user, python, str(site / "probe.py"), graphdb_settings.uri, str(pw_file)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        cwd=site,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["uid"] != 0
    assert out["password_file"] == "PermissionError"
    assert out["state_dir"] == "PermissionError"
    assert out["no_auth"] == "Neo.ClientError.Security.Unauthorized"
    assert out["default_password"] == "Neo.ClientError.Security.Unauthorized"


@pytest.mark.neo4j
def test_password_file_is_owner_only_and_outside_the_checkout(graphdb_settings):
    port = _local_launcher(graphdb_settings)
    pw_file = launcher_password_file(port)
    assert pw_file.is_file(), f"the launcher on port {port} keeps no password in {pw_file}"
    assert stat.S_IMODE(pw_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(pw_file.parent.stat().st_mode) == 0o700
    assert len(pw_file.read_text().strip()) >= 24
    assert REPO not in pw_file.resolve().parents
    assert graphdb_settings.password == pw_file.read_text().strip() or os.environ.get(
        "HOPBENCH_NEO4J_PASSWORD"
    )


@pytest.mark.neo4j
def test_no_connection_without_the_password(graphdb_settings):
    _local_launcher(graphdb_settings)
    with pytest.raises(GraphDBConnectionError, match="authentication failed"):
        connect({"uri": graphdb_settings.uri, "user": "neo4j", "password": "not-the-password"})


@pytest.mark.neo4j
@pytest.mark.parametrize(
    "cypher",
    [
        "LOAD CSV FROM 'file:///etc/shadow' AS r RETURN r",
        "LOAD CSV FROM 'file:///etc/passwd' AS r RETURN r",
        "LOAD CSV FROM 'file:///../../../../etc/passwd' AS r RETURN r",
        "CALL apoc.load.json('file:///etc/passwd') YIELD value RETURN value",
        "CALL apoc.import.csv([{fileName: 'file:///etc/passwd', labels: ['X']}], [], {})",
        "CALL apoc.export.csv.all('/tmp/hopbench-export.csv', {})",
        "CALL apoc.log.stream('debug.log')",
    ],
)
def test_cypher_cannot_touch_files_even_with_the_password(graphdb, cypher):
    _local_launcher(graphdb.settings)
    with pytest.raises(GraphDBQueryError) as info:
        graphdb.query(cypher)
    assert info.value.code in (
        "Neo.ClientError.Statement.ExternalResourceFailed",
        "Neo.ClientError.Procedure.ProcedureNotFound",
    )
    assert not Path("/tmp/hopbench-export.csv").exists()


@pytest.mark.neo4j
def test_the_apoc_functions_hopbench_needs_are_loaded(graphdb):
    rows = graphdb.query("RETURN apoc.map.fromPairs([['a', 1]]) AS m, apoc.version() AS v")
    assert rows[0]["m"] == {"a": 1}


@pytest.mark.neo4j
@pytest.mark.parametrize(
    "mode, problem", [(0o644, "readable by other users"), (None, "a password is required")]
)
def test_launcher_refuses_a_readable_or_missing_password(tmp_path, mode, problem):
    if not JAR.exists():
        pytest.fail(f"{JAR} is missing: build it with `make neo4j-build`", pytrace=False)
    args = []
    if mode is not None:
        pw = tmp_path / "password"
        pw.write_text("a-long-enough-password\n")
        pw.chmod(mode)
        args = ["--password-file", str(pw)]
    proc = subprocess.run(
        [
            "java",
            "-Xmx64m",
            "-jar",
            str(JAR),
            "--data-dir",
            str(tmp_path / "home"),
            "--port",
            "1",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert problem in proc.stderr
    assert not (tmp_path / "home").exists()
