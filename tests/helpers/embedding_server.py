"""A real OpenAI-compatible embeddings server on 127.0.0.1 for the tests.

It answers POST /v1/embeddings with real all-MiniLM-L6-v2 vectors computed by the installed
local encoder (so the client's vectors can be compared with the local encoder's), after any
scripted steps (an HTTP error, a body that is not JSON); `reshape` changes the vectors of a
reply (wrong dimension, wrong count, the `DEGENERATE` vectors of a broken server). Items are
sent in reverse order with their `index`, as the API allows, so the client must order them.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import numpy as np


def _nan_in_first(v: np.ndarray) -> np.ndarray:
    v = v.copy()
    v[0, 0] = np.nan
    return v


# `reshape` functions of a broken server that still answers HTTP 200 with vectors that parse
# (issue #54): all zeros, every input the same vector, a NaN, vectors of no dimension
DEGENERATE = {
    "zero vectors": lambda n, v: np.zeros_like(v),
    "one vector for all": lambda n, v: np.repeat(v[:1], len(v), axis=0),
    "NaN": lambda n, v: _nan_in_first(v),
    "no dimension": lambda n, v: np.zeros((len(v), 0)),
}


def error(status: int, message: str) -> tuple[int, bytes]:
    return status, json.dumps(
        {"error": {"message": message, "type": "test", "code": None}}
    ).encode()


class EmbeddingServer:
    def __init__(
        self,
        encoder,
        *,
        steps: list | None = None,
        api_key: str | None = None,
        reshape: Callable[[int, np.ndarray], np.ndarray] | None = None,
        delay: float = 0.0,
    ):
        self.encoder = encoder  # hopbench.embed.Encoder (no cache: really computed)
        self.steps = list(steps or [])  # (status, body bytes) answered first, one per request
        self.api_key = api_key  # when set, a request without "Bearer <key>" gets 401
        self.reshape = reshape  # (request number, vectors) -> vectors sent
        self.delay = delay  # seconds per request, so requests overlap
        self.requests: list[dict] = []  # every request body, in arrival order
        self.headers: list[dict] = []
        self.running = self.peak = 0  # requests being answered now / at most at once
        self._lock = threading.Lock()
        self._closed = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                    outer.running += 1
                    outer.peak = max(outer.peak, outer.running)
                try:
                    status, data = outer.answer(
                        n, self.path, body, self.headers.get("Authorization")
                    )
                finally:
                    with outer._lock:
                        outer.running -= 1
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def inputs(self) -> list[list[str]]:
        """The texts of every request, in arrival order."""
        return [r["input"] if isinstance(r["input"], list) else [r["input"]] for r in self.requests]

    def answer(self, n: int, path: str, body: dict, auth: str | None) -> tuple[int, bytes]:
        time.sleep(self.delay)
        if self._closed:  # a late request (its client timed out): no model call while pytest exits
            return error(503, "closed")
        if path != "/v1/embeddings":
            return error(404, f"no route {path}")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return error(401, "Incorrect API key provided")
        with self._lock:
            step = self.steps.pop(0) if self.steps else None
        if step is not None:
            return step
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vecs = self.encoder.encode(texts)
        if self.reshape is not None:
            vecs = self.reshape(n, vecs)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
            for i, v in enumerate(vecs)
        ]
        return 200, json.dumps(
            {
                "object": "list",
                "data": data[::-1],
                "model": body["model"],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        ).encode()

    def close(self) -> None:
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
