"""The HTTP under every chat request: a JSON POST to `<base_url>/chat/completions`, over the
standard library's `http.client` (and under every embedding request, to `<base_url>/embeddings`).

Why not the `openai` SDK or httpx: with many questions in flight the client's own CPU per
request, not the server, capped the harness (it gets one core's worth of Python under the GIL),
and their layers (typed requests and responses, httpcore's state machines) cost two to three
times what `http.client` does for the same POST (`benchmarks/speed/results/concurrency_fake.md`).
What those added is kept: keep-alive connections (a connection the server closed while idle is
reopened once), HTTPS, proxies from the environment (HTTP(S)_PROXY, NO_PROXY), the bearer key.
Redirects are not followed: an
OpenAI-compatible endpoint answers where it is. Status codes are left to the caller
(`hopbench.llm.client`), which maps them to its errors.

Why in the foundation: the LLM client (`hopbench.llm.client`) and the embedding server's client
(`hopbench.embed.server`) both send their requests through it, and neither may import the other.

One connection per thread, so concurrent requests never wait on each other's connection; all
share one TLS context (loading the CA store costs milliseconds).

Bounded: `timeout` is a deadline for the whole exchange (connect, send, headers, body), not
for each socket read, so a server that trickles a byte a second cannot hold a request (and a
`concurrency` slot) past it: one watchdog thread shuts the socket of a request still running
at its deadline. A body longer than `max_reply_bytes` is not read further (`ReplyTooLarge`):
no chat completion is that long, and reading it would only fill memory and logs.
"""

from __future__ import annotations

import heapq
import http.client
import itertools
import json
import socket
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from hopbench import __version__
from hopbench.core.errors import HopbenchError

# raised on a kept-alive connection the server has closed meanwhile: reconnect and send again
_STALE = (
    http.client.RemoteDisconnected,
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
)


# far beyond any chat completion (max_tokens of text in a JSON envelope), far below harm
MAX_REPLY_BYTES = 1 << 20


class HTTPStatusError(Exception):
    """An HTTP error status, kept as the cause of the error the client raises for it."""


class ReplyTooLarge(Exception):
    """The server's body is longer than the transport accepts (the client counts it as a bad reply)."""


class _Watchdog:
    """One daemon thread that shuts down the socket of every exchange still running at its
    deadline, so a blocked read returns at once (one thread for all requests: a timer thread
    per request would cost more than the request on a fast server)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, list]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, conn: http.client.HTTPConnection) -> list:
        """A ticket: [the connection (None once disarmed), whether the deadline fired]."""
        ticket = [conn, False]
        with self._cond:
            heapq.heappush(self._heap, (deadline, next(self._seq), ticket))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="hopbench-llm-deadline", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return ticket

    def disarm(self, ticket: list) -> bool:
        """Stop watching; True when the deadline had already fired."""
        with self._cond:
            ticket[0] = None
            return ticket[1]

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2][0] is None:
                    heapq.heappop(self._heap)  # disarmed: done in time
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, _, ticket = self._heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._heap)
                ticket[1] = True
                sock = getattr(ticket[0], "sock", None)
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass


_WATCHDOG = _Watchdog()


@dataclass(frozen=True)
class Response:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class ChatTransport:
    """JSON POSTs to one endpoint under `base_url`: `/chat/completions` by default, `/embeddings`
    for the embedding server (`hopbench.embed.server`); `setting` names the config key in errors."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: float,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        path: str = "/chat/completions",
        setting: str = "llm.base_url",
    ):
        parts = urlsplit(base_url.rstrip("/") + path)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HopbenchError(
                f"{setting} must be an http(s) URL such as http://127.0.0.1:8000/v1, "
                f"got {base_url!r}"
            )
        self.url = parts.geturl()
        self.timeout = timeout
        self.max_reply_bytes = int(max_reply_bytes)
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port or (443 if self._https else 80)
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._proxy = _proxy_for(self.url, parts.scheme, parts.hostname)
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {api_key}",
            "User-Agent": f"hopbench/{__version__}",
            "Host": parts.netloc,
        }
        self._tls = ssl.create_default_context() if self._https else None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[http.client.HTTPConnection] = []

    def _connect(self) -> http.client.HTTPConnection:
        if self._proxy is not None:
            p = urlsplit(self._proxy)
            if self._https:
                conn = http.client.HTTPSConnection(
                    p.hostname, p.port or 80, timeout=self.timeout, context=self._tls
                )
                conn.set_tunnel(self._host, self._port)
            else:
                conn = http.client.HTTPConnection(p.hostname, p.port or 80, timeout=self.timeout)
        elif self._https:
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.timeout, context=self._tls
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        with self._lock:
            self._open.append(conn)
        return conn

    @property
    def connection(self) -> http.client.HTTPConnection:
        """This thread's connection (opened on its first request)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def post(self, body: dict) -> Response:
        """The server's response, whatever its status. TimeoutError when it did not answer within
        `timeout` seconds (all of it: a deadline, not a limit per read); ReplyTooLarge when its
        body is longer than `max_reply_bytes`; another OSError or http.client.HTTPException when
        it could not be reached or did not speak HTTP."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        target = self.url if (self._proxy is not None and not self._https) else self._path
        deadline = time.monotonic() + self.timeout
        reused = getattr(self._local, "conn", None) is not None
        try:
            return self._send(target, data, deadline)
        except _STALE:
            if not reused:
                raise
        # the server closed this kept-alive connection while it was idle: once more, on a new one
        return self._send(target, data, deadline)

    def _send(self, target: str, data: bytes, deadline: float) -> Response:
        """One exchange on this thread's connection, ended at `deadline`; any failure closes the
        connection, so the next request opens a new one instead of reading a half-finished
        response."""
        conn = self.connection
        ticket = _WATCHDOG.arm(deadline, conn)
        try:
            resp = self._exchange(conn, target, data)
        except BaseException as exc:
            fired = _WATCHDOG.disarm(ticket)
            self._drop()
            if fired or time.monotonic() >= deadline:
                raise TimeoutError(f"no complete answer within {self.timeout:g} s") from exc
            raise
        if _WATCHDOG.disarm(ticket):
            self._drop()  # answered, but the watchdog shut the socket as it did
        return resp

    def _exchange(self, conn: http.client.HTTPConnection, target: str, data: bytes) -> Response:
        conn.request("POST", target, body=data, headers=self._headers)
        resp = conn.getresponse()
        length = resp.getheader("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_reply_bytes:
            raise ReplyTooLarge(
                f"the server announced a {int(length)}-byte body; replies are capped "
                f"at {self.max_reply_bytes} bytes"
            )
        content = resp.read(self.max_reply_bytes + 1)
        if len(content) > self.max_reply_bytes:
            raise ReplyTooLarge(
                f"the body is longer than the {self.max_reply_bytes}-byte cap on replies"
            )
        if not resp.isclosed():
            content += resp.read()  # the end of a chunked body (at most the terminating chunk)
        if resp.will_close:
            self._drop()
        return Response(resp.status, content)

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()
            with self._lock:
                if conn in self._open:
                    self._open.remove(conn)

    def close(self) -> None:
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            conn.close()


def _proxy_for(url: str, scheme: str, host: str) -> str | None:
    """The proxy the environment names for this URL (None: connect directly)."""
    proxy = urllib.request.getproxies().get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def error_detail(resp: Response, limit: int = 300) -> tuple[str, str | None]:
    """(the server's error message, its error code) from an error response: OpenAI's
    `{"error": {"message", "code"}}` when the body has it, else the body's text."""
    try:
        err = json.loads(resp.content).get("error")
    except (ValueError, AttributeError):
        err = None
    if isinstance(err, dict):
        return str(err.get("message") or err)[:limit], (
            str(err["code"]) if err.get("code") else None
        )
    if isinstance(err, str):
        return err[:limit], None
    return resp.text[:limit], None
