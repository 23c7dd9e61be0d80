"""The export registry: one `(:HopbenchGraph {namespace})` node per exported graph, and the
claim that lets exactly one process write a namespace.

Concurrent runs. Different graphs never touch each other's labels or indexes. Two processes
that want the same graph agree through the registry node: in one transaction that holds the
node's write lock, a process either finds the export complete (cache hit), or claims it
(``owner`` = a random token, ``heartbeat`` = server time, refreshed every `HEARTBEAT_S` by a
thread), or sees a live claim and waits for it to finish. A claim whose heartbeat is older
than `LEASE_S` (its process died) is taken over. Only the owner of a namespace writes to it,
so a run is never disturbed by exports of other graphs; what can still pull a graph from under
a run using it is a re-export of that same graph: `force=True` (`export_graph`, the
benchmarks), another hopbench version's export schema, or `drop_graph`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.connection import GraphDB, GraphDBQueryError
from hopbench.graphdb.namespace import Namespace
from hopbench.graphdb.schema import run_schema

log = logging.getLogger("hopbench.graphdb.export")

REGISTRY_LABEL = "HopbenchGraph"
_REGISTRY_CONSTRAINT = (
    "CREATE CONSTRAINT hopbench_graph_namespace IF NOT EXISTS "
    "FOR (g:HopbenchGraph) REQUIRE g.namespace IS UNIQUE"
)

LEASE_S = 60.0  # a claim whose heartbeat is older than this belongs to a dead process
HEARTBEAT_S = 5.0  # how often the exporting process refreshes its claim
POLL_S = 0.5  # how often a process waiting for another's export looks again


def stored_export_key(db: GraphDB, namespace: Namespace) -> str | None:
    """The export key of a complete export in `namespace`, or None."""
    # a database without hopbench graphs has no such label yet: silence the server's notifications
    with db.translate_errors("export check"), db.session(notifications_min_severity="OFF") as s:
        rec = s.run(
            "MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.complete RETURN g.export_key AS k",
            ns=namespace.id,
        ).single()
    return rec["k"] if rec else None


def ensure_registry(db: GraphDB) -> None:
    """The uniqueness constraint that makes MERGE of a registry node safe under concurrency."""
    try:
        run_schema(db, [_REGISTRY_CONSTRAINT], "export: registry constraint")
    except GraphDBQueryError as exc:
        # two processes creating it at the same moment: the loser's IF NOT EXISTS can still fail
        if "AlreadyExists" not in exc.code:
            raise


class ExportClaim:
    """The right to write one namespace, held through the registry node's `owner` token."""

    def __init__(self, db: GraphDB, ns: Namespace, export_key: str):
        self.db, self.ns, self.export_key = db, ns, export_key
        self.token = uuid.uuid4().hex
        self.owner_info = f"{socket.gethostname()} pid {os.getpid()}"
        self.waited = 0.0
        self.lost = False

    def acquire(self, *, force: bool) -> bool:
        """True once this process holds the claim; False if, while it waited for another
        process's claim, that process completed exactly this export (and not `force`)."""
        t0 = time.perf_counter()
        announced = False
        while True:
            # (notifications off: a new registry node has none of the properties read yet)
            with (
                self.db.translate_errors("export: claim"),
                self.db.session(notifications_min_severity="OFF") as s,
            ):
                state, info = s.execute_write(self._try_claim, force)
            if state != "busy":
                self.waited = time.perf_counter() - t0
                return state == "claimed"
            if not announced:
                log.info(
                    "graph namespace %s is being exported by %s; waiting for it", self.ns.id, info
                )
                announced = True
            time.sleep(POLL_S)

    def _try_claim(self, tx, force: bool) -> tuple[str, str]:
        # writing a property first takes the node's write lock, so the read below cannot be stale
        tx.run(
            "MERGE (g:HopbenchGraph {namespace: $ns}) ON CREATE SET g.complete = false "
            "SET g._lock = true",
            ns=self.ns.id,
        ).consume()
        g = tx.run(
            "MATCH (g:HopbenchGraph {namespace: $ns}) RETURN g.complete AS complete, "
            "g.export_key AS key, g.owner AS owner, g.owner_info AS info, "
            "timestamp() - g.heartbeat AS age",
            ns=self.ns.id,
        ).single()
        if (
            g["owner"] is not None
            and g["owner"] != self.token
            and g["age"] is not None
            and g["age"] < 1000 * LEASE_S
        ):
            state = "busy"
        elif g["complete"] and g["key"] == self.export_key and g["owner"] is None and not force:
            state = "done"
        else:
            if g["owner"] is not None and g["owner"] != self.token:
                log.warning(
                    "graph namespace %s: taking over the export of %s (no heartbeat for %.0f s)",
                    self.ns.id,
                    g["info"],
                    g["age"] / 1000,
                )
            tx.run(
                "MATCH (g:HopbenchGraph {namespace: $ns}) SET g.owner = $token, g.owner_info = $info, "
                "g.heartbeat = timestamp(), g.complete = false, g.export_key = $key",
                ns=self.ns.id,
                token=self.token,
                info=self.owner_info,
                key=self.export_key,
            ).consume()
            state = "claimed"
        tx.run("MATCH (g:HopbenchGraph {namespace: $ns}) REMOVE g._lock", ns=self.ns.id).consume()
        return state, g["info"] or ""

    @contextlib.contextmanager
    def heartbeat(self) -> Iterator[None]:
        """Refresh the claim every HEARTBEAT_S from a thread while the block runs."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                try:
                    rows = self.db.query(
                        "MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.owner = $token "
                        "SET g.heartbeat = timestamp() RETURN count(g) AS n",
                        {"ns": self.ns.id, "token": self.token},
                        what="export: heartbeat",
                    )
                except HopbenchError as exc:  # a slow server: try again at the next beat
                    log.warning("graph namespace %s: heartbeat failed: %s", self.ns.id, exc)
                    continue
                if rows[0]["n"] == 0:
                    self.lost = True
                    return

        thread = threading.Thread(target=beat, name="hopbench-export-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def check(self) -> None:
        if self.lost:
            raise HopbenchError(
                f"Neo4j at {self.db.uri}: another process took over the export of graph "
                f"namespace {self.ns.id} (this one missed its heartbeats for {LEASE_S:g} s)"
            )

    def complete(self, props: dict) -> None:
        rows = self.db.query(
            "MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.owner = $token "
            "SET g += $props, g.complete = true REMOVE g.owner, g.owner_info, g.heartbeat "
            "RETURN count(g) AS n",
            {"ns": self.ns.id, "token": self.token, "props": props},
            what="export: registry",
        )
        if rows[0]["n"] == 0:
            self.lost = True
            self.check()

    def release(self) -> None:
        """Give up the claim after a failed export (best effort: the lease expires anyway)."""
        with contextlib.suppress(HopbenchError):
            self.db.query(
                "MATCH (g:HopbenchGraph {namespace: $ns}) WHERE g.owner = $token "
                "REMOVE g.owner, g.owner_info, g.heartbeat",
                {"ns": self.ns.id, "token": self.token},
                what="export: release",
            )
