"""One verified connection to a Neo4j 5.x server, with errors a user can act on.

Why a wrapper around the driver: a run should either stop at once with one line naming the
server it could not reach, or go on past a single slow question. The driver raises a dozen
exception types with long tracebacks; here they become `GraphDBConnectionError` (stop the run)
and `QueryTimeout` (count it for this question, continue).

The same code talks to the launcher from `make neo4j-up` and to a user's own server: only
`graphdb.uri/user/password` change. The launcher runs with auth on and a random password it
keeps beside its store (`launcher_password_file`); a password not set in the config comes from
HOPBENCH_NEO4J_PASSWORD, else, for a loopback URI, from that file. Cypher text is always a literal
in hopbench's source; everything that comes from users or data (question text, names,
vectors) enters only as query parameters.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import neo4j
from neo4j import GraphDatabase, Query
from neo4j import exceptions as nx

from hopbench.core.errors import HopbenchError

if TYPE_CHECKING:  # typing.LiteralString and Self are 3.11+; only the type checker needs them
    from typing import LiteralString, Self

log = logging.getLogger("hopbench.graphdb")

# The driver would also accept http:// (its preview Query API, needing aiohttp); hopbench speaks Bolt.
_BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

# Server status codes for "the transaction ran past its time limit" (client-set or server-wide).
_TIMEOUT_CODES = (
    "Neo.ClientError.Transaction.TransactionTimedOut",
    "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
)


class GraphDBConnectionError(HopbenchError):
    """The server cannot be used at all (not running, wrong credentials, no such database)."""

    def __init__(self, uri: str, problem: str, hint: str = ""):
        self.uri = uri
        self.problem = problem
        super().__init__(f"Neo4j at {uri}: {problem}" + (f". {hint}" if hint else ""))


class QueryTimeout(HopbenchError):
    """One query exceeded its time limit; the server aborted it. Count it and carry on."""

    def __init__(self, uri: str, timeout_s: float | None, what: str):
        self.uri = uri
        self.timeout_s = timeout_s
        self.what = what
        limit = f"{timeout_s:g} s" if timeout_s is not None else "the server's limit"
        super().__init__(f"Neo4j at {uri}: {what} timed out after {limit}")


class GraphDBQueryError(HopbenchError):
    """The server rejected a query (syntax, missing procedure, constraint); names the status code."""

    def __init__(self, uri: str, what: str, code: str, message: str):
        self.uri = uri
        self.code = code
        super().__init__(f"Neo4j at {uri}: {what} failed: {code}: {message}")


_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def launcher_state_dir(port: int | str) -> Path:
    """The local launcher's folder for `port` (store, log, password), as scripts/neo4j-env.sh
    names it: $HOPBENCH_NEO4J_STATE_DIR/<port>, else <cache folder>/neo4j/<port>."""
    base = os.environ.get("HOPBENCH_NEO4J_STATE_DIR") or os.path.join(
        os.environ.get("HOPBENCH_CACHE_DIR")
        or os.path.join(os.environ.get("HOME") or ".", ".cache", "hopbench"),
        "neo4j",
    )
    return Path(base) / str(port)


def launcher_password_file(port: int | str) -> Path:
    """Where scripts/neo4j-up.sh keeps the password of the launcher on `port` (mode 0600)."""
    return launcher_state_dir(port) / "password"


def _loopback_port(uri: str) -> int | None:
    """The port of a bolt://127.0.0.1:PORT (or localhost, ::1) URI; None for any other host."""
    rest = uri.split("://", 1)[1] if "://" in uri else ""
    hostport = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host:
        host, port = hostport, "7687"
    return int(port) if host.lower() in _LOOPBACK_HOSTS and port.isdigit() else None


def default_password(uri: str) -> str | None:
    """The password when the config sets none: HOPBENCH_NEO4J_PASSWORD, else the local
    launcher's password file for the URI's port (loopback URIs only), else None."""
    env = os.environ.get("HOPBENCH_NEO4J_PASSWORD")
    if env:
        return env
    port = _loopback_port(uri)
    if port is None:
        return None
    try:
        text = launcher_password_file(port).read_text(encoding="utf-8").strip()
    except OSError:  # no launcher started by this user on that port
        return None
    return text or None


@dataclass(frozen=True)
class GraphDBSettings:
    """The `graphdb` config group: where the server is and how long to wait for it."""

    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: str | None = None  # None: no authentication
    database: str | None = None  # None: the server's default database
    connect_timeout: float = 10.0  # seconds to open a connection
    query_timeout: float | None = 30.0  # seconds per query, enforced by the server; None: no limit

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> GraphDBSettings:
        """Build from the Hydra `graphdb` node (or any mapping); unknown keys such as `name` are
        ignored. No password given: `default_password` (environment, then the local launcher's file)."""
        values = {k: cfg[k] for k in cls.__dataclass_fields__ if k in cfg}
        if values.get("password") is not None:
            values["password"] = str(values["password"])  # an all-digit password arrives as int
        else:
            values["password"] = default_password(str(values.get("uri", cls.uri)))
        return cls(**values)

    def __repr__(self) -> str:  # never print the password
        return (
            f"GraphDBSettings(uri={self.uri!r}, user={self.user!r}, "
            f"password={'***' if self.password is not None else None}, "
            f"database={self.database!r}, connect_timeout={self.connect_timeout}, "
            f"query_timeout={self.query_timeout})"
        )


_UNSET: Any = object()


class GraphDB:
    """An open connection whose server has answered once. Use as a context manager or close()."""

    def __init__(self, settings: GraphDBSettings, driver: neo4j.Driver):
        self.settings = settings
        self.driver = driver

    @property
    def uri(self) -> str:
        return self.settings.uri

    def session(self, **kwargs) -> neo4j.Session:
        """A driver session on the configured database (errors inside it are not translated;
        wrap work in `translate_errors()` to get the hopbench exceptions)."""
        kwargs.setdefault("database", self.settings.database)
        return self.driver.session(**kwargs)

    def query(
        self,
        cypher: LiteralString,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _UNSET,
        what: str = "query",
    ) -> list[dict[str, Any]]:
        """Run one auto-commit query and return its rows as dicts.

        `timeout` (seconds) defaults to `settings.query_timeout`; the server aborts the query when
        it is exceeded and this raises QueryTimeout. `what` names the query in messages.
        """
        limit = self.settings.query_timeout if timeout is _UNSET else timeout
        with self.translate_errors(what, limit), self.session() as session:
            result = session.run(Query(cypher, timeout=limit), dict(params or {}))
            return result.data()

    @contextlib.contextmanager
    def translate_errors(
        self, what: str = "query", timeout_s: float | None = None
    ) -> Iterator[None]:
        """Turn driver errors raised inside the block into GraphDBConnectionError / QueryTimeout."""
        try:
            yield
        except nx.Neo4jError as exc:
            raise _translated(self.settings, exc, what, timeout_s) from None
        except (nx.DriverError, OSError) as exc:
            raise _translated(self.settings, exc, what, timeout_s) from None

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(settings: GraphDBSettings | Mapping[str, Any]) -> GraphDB:
    """Open a driver and check that the server answers and accepts the credentials.

    Raises GraphDBConnectionError (one line, naming the URI) instead of the driver's errors.
    """
    if not isinstance(settings, GraphDBSettings):
        settings = GraphDBSettings.from_config(settings)
    scheme = settings.uri.split("://", 1)[0].lower() if "://" in settings.uri else ""
    if scheme not in _BOLT_SCHEMES:
        raise GraphDBConnectionError(
            settings.uri, "not a Bolt URI", "Use bolt://host:port or neo4j://host:port"
        )
    auth = (settings.user, settings.password) if settings.password is not None else None
    try:
        driver = GraphDatabase.driver(
            settings.uri,
            auth=auth,
            connection_timeout=settings.connect_timeout,
            connection_acquisition_timeout=settings.connect_timeout,
        )
    except (nx.ConfigurationError, ValueError) as exc:
        raise GraphDBConnectionError(
            settings.uri,
            f"invalid URI or driver setting ({exc})",
            "Use bolt://host:port or neo4j://host:port",
        ) from None
    db = GraphDB(settings, driver)
    try:
        with db.translate_errors("connectivity check"):
            driver.verify_connectivity()
            with db.session() as session:  # also checks that the configured database exists
                session.run("RETURN 1").consume()
    except HopbenchError:
        driver.close()
        raise
    log.debug("connected to %s", settings.uri)
    return db


def check_apoc(session: neo4j.Session) -> str | None:
    """APOC's version if APOC core is installed and callable here (apoc.map.fromPairs, which the
    paper's spreading-activation query needs), else None."""
    names = session.run(
        "SHOW FUNCTIONS YIELD name WHERE name IN ['apoc.version', 'apoc.map.fromPairs'] "
        "RETURN collect(name) AS names"
    ).single()["names"]
    if "apoc.map.fromPairs" not in names:
        return None
    if "apoc.version" not in names:
        return "unknown"
    return str(session.run("RETURN apoc.version() AS v").single()["v"])


def _translated(
    settings: GraphDBSettings, exc: Exception, what: str, timeout_s: float | None
) -> HopbenchError:
    uri = settings.uri
    code = getattr(exc, "code", None) or ""
    if code in _TIMEOUT_CODES:
        return QueryTimeout(uri, timeout_s, what)
    if isinstance(exc, nx.AuthError) or code.startswith("Neo.ClientError.Security.Unauthorized"):
        who = f"user '{settings.user}'" if settings.password is not None else "no credentials"
        port = _loopback_port(uri)
        local = (
            (
                f" (the local launcher's is in {launcher_password_file(port)}, readable by the "
                "user who started it)"
            )
            if port is not None
            else ""
        )
        return GraphDBConnectionError(
            uri,
            f"authentication failed ({who})",
            f"Set graphdb.user and the password in HOPBENCH_NEO4J_PASSWORD{local}",
        )
    if code == "Neo.ClientError.Database.DatabaseNotFound" or isinstance(
        exc, nx.DatabaseUnavailable
    ):
        return GraphDBConnectionError(
            uri,
            f"database '{settings.database}' is not available",
            "Check graphdb.database (null uses the server's default)",
        )
    if isinstance(
        exc,
        (nx.ServiceUnavailable, nx.SessionExpired, nx.ConnectionAcquisitionTimeoutError, OSError),
    ):
        return GraphDBConnectionError(
            uri,
            f"server not reachable during {what} ({_reason(exc)})",
            "Start the local one with `make neo4j-up` (port from HOPBENCH_NEO4J_PORT) "
            "or point graphdb.uri at your Neo4j 5.x server",
        )
    if isinstance(exc, nx.Neo4jError):
        return GraphDBQueryError(uri, what, code, _first_line(exc))
    return GraphDBConnectionError(uri, f"{what} failed ({type(exc).__name__}: {_first_line(exc)})")


def _reason(exc: Exception) -> str:
    """The useful part of a connection error ("[Errno 111] Connection refused"), without the
    driver's address objects."""
    text = " ".join(str(exc).split())
    m = re.search(r"reason (.+?)\)?$", text)
    if m:
        return m.group(1)
    return _first_line(exc)


def _first_line(exc: Exception) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(text).strip().splitlines()[0][:300]
