"""The HTTP under every chat request: a JSON POST to `<base_url>/chat/completions`, over the
standard library's `http.client`.

Why not the `openai` SDK or httpx: with many questions in flight the client's own CPU per
request, not the server, capped the harness (it gets one core's worth of Python under the GIL),
and their layers (typed requests and responses, httpcore's state machines) cost two to three
times what `http.client` does for the same POST (`benchmarks/results/concurrency_fake.md`).
What those added is kept: keep-alive connections (a connection the server closed while idle is
reopened once), HTTPS, proxies from the environment (HTTP(S)_PROXY, NO_PROXY), the bearer key. Redirects are not followed: an
OpenAI-compatible endpoint answers where it is. Status codes are left to the caller
(`hopbench.llm.client`), which maps them to its errors.

One connection per thread, so concurrent requests never wait on each other's connection; all
share one TLS context (loading the CA store costs milliseconds).
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from hopbench import __version__
from hopbench.errors import HopbenchError

# raised on a kept-alive connection the server has closed meanwhile: reconnect and send again
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class HTTPStatusError(Exception):
    """An HTTP error status, kept as the cause of the error the client raises for it."""


@dataclass(frozen=True)
class Response:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class ChatTransport:
    def __init__(self, base_url: str, api_key: str, timeout: float):
        parts = urlsplit(base_url.rstrip("/") + "/chat/completions")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HopbenchError(f"llm.base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, "
                                f"got {base_url!r}")
        self.url = parts.geturl()
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port or (443 if self._https else 80)
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._proxy = _proxy_for(self.url, parts.scheme, parts.hostname)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "Authorization": f"Bearer {api_key}", "User-Agent": f"hopbench/{__version__}",
                         "Host": parts.netloc}
        self._tls = ssl.create_default_context() if self._https else None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[http.client.HTTPConnection] = []

    def _connect(self) -> http.client.HTTPConnection:
        if self._proxy is not None:
            p = urlsplit(self._proxy)
            if self._https:
                conn = http.client.HTTPSConnection(p.hostname, p.port or 80, timeout=self.timeout,
                                                   context=self._tls)
                conn.set_tunnel(self._host, self._port)
            else:
                conn = http.client.HTTPConnection(p.hostname, p.port or 80, timeout=self.timeout)
        elif self._https:
            conn = http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._tls)
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
        `timeout` seconds; another OSError or http.client.HTTPException when it could not be
        reached or did not speak HTTP."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        target = self.url if (self._proxy is not None and not self._https) else self._path
        reused = getattr(self._local, "conn", None) is not None
        try:
            return self._send(target, data)
        except _STALE:
            if not reused:
                raise
        # the server closed this kept-alive connection while it was idle: once more, on a new one
        return self._send(target, data)

    def _send(self, target: str, data: bytes) -> Response:
        """One exchange on this thread's connection; any failure closes it, so the next request
        opens a new one instead of reading a half-finished response."""
        try:
            return self._exchange(self.connection, target, data)
        except BaseException:
            self._drop()
            raise

    def _exchange(self, conn: http.client.HTTPConnection, target: str, data: bytes) -> Response:
        conn.request("POST", target, body=data, headers=self._headers)
        resp = conn.getresponse()
        content = resp.read()
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
        return str(err.get("message") or err)[:limit], (str(err["code"]) if err.get("code") else None)
    if isinstance(err, str):
        return err[:limit], None
    return resp.text[:limit], None
