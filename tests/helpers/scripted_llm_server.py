"""A real HTTP server on 127.0.0.1 that answers /v1/chat/completions from a script.

The client under test talks to it over real HTTP (`hopbench.core.http_transport`), so the plumbing
tests exercise the same request path as a real server: status codes, timeouts, JSON bodies.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def completion(text: str, prompt_tokens: int = 11, completion_tokens: int = 7) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def reply(text: str, **usage) -> tuple[int, dict, float]:
    return 200, completion(text, **usage), 0.0


def error(status: int, message: str, code: str | None = None) -> tuple[int, dict, float]:
    return (
        status,
        {"error": {"message": message, "type": "invalid_request_error", "code": code}},
        0.0,
    )


def slow(seconds: float, text: str = '{"answer": "late"}') -> tuple[int, dict, float]:
    return 200, completion(text), seconds


@dataclass(frozen=True)
class Raw:
    """A body sent as is (not JSON-encoded), with its own Content-Type."""

    body: str
    content_type: str = "application/json"


def raw(
    body: str, status: int = 200, content_type: str = "application/json"
) -> tuple[int, Raw, float]:
    """A response whose body is `body` verbatim: e.g. an HTTP 200 that is not JSON."""
    return status, Raw(body, content_type), 0.0


class ScriptedServer:
    """Answers each request with the next scripted step, or with `respond(request_body)`."""

    def __init__(self, steps: list | None = None, respond: Callable[[dict], tuple] | None = None):
        self.steps = list(steps or [])
        self.respond = respond
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if outer.respond is not None:
                    status, payload, delay = outer.respond(body)
                elif outer.steps:
                    status, payload, delay = outer.steps.pop(0)
                else:
                    status, payload, delay = error(500, "script exhausted")
                time.sleep(delay)
                if isinstance(payload, Raw):
                    data, content_type = payload.body.encode(), payload.content_type
                else:
                    data, content_type = json.dumps(payload).encode(), "application/json"
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
