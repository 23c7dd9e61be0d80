"""The HTTP under every chat request: a JSON POST to `<base_url>/chat/completions` over httpx.

Why not the `openai` SDK's client: it builds a typed request and a typed response around the
same POST, and with many questions in flight that bookkeeping, not the server, capped the
harness's throughput (`benchmarks/results/concurrency_fake.md`). What the SDK added besides is
kept: keep-alive connections, redirects followed, proxies from the environment, the bearer key.
Status codes are left to the caller (`hopbench.llm.client`), which maps them to its errors.

One connection pool per thread: a shared pool funnels every concurrent request through one
lock. The pools share one TLS context (loading the CA store costs milliseconds per pool).
"""

from __future__ import annotations

import json
import ssl
import threading

import httpcore  # noqa: F401 - httpx imports it on the first request; here, not in 64 threads at once
import httpx

from hopbench import __version__


class ChatTransport:
    def __init__(self, base_url: str, api_key: str, timeout: float):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.timeout = timeout
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "Authorization": f"Bearer {api_key}", "User-Agent": f"hopbench/{__version__}"}
        self._tls = ssl.create_default_context()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._clients: list[httpx.Client] = []

    @property
    def client(self) -> httpx.Client:
        """This thread's connection pool (made on its first request)."""
        client = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(timeout=self.timeout, verify=self._tls, follow_redirects=True,
                                  limits=httpx.Limits(max_connections=8, max_keepalive_connections=8))
            self._local.client = client
            with self._lock:
                self._clients.append(client)
        return client

    def post(self, body: dict) -> httpx.Response:
        """The server's response, whatever its status; httpx.TimeoutException when it did not
        answer in time, another httpx.TransportError when it could not be reached."""
        return self.client.post(self.url, content=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                headers=self._headers)

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()


def error_detail(resp: httpx.Response, limit: int = 300) -> tuple[str, str | None]:
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
