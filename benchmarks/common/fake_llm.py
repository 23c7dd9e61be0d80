"""The OpenAI-compatible chat server the LLM-bound benchmarks talk to instead of a model (the
speed suite's fixed-latency server, the kill -9 suite's counting one): the reply they send and
how they send it, written once so both answer as the client expects."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler


class QuietHandler(BaseHTTPRequestHandler):
    """Keep-alive (no new TCP connection per request) and no log line per request."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def request_body(self) -> dict:
        """The request's JSON body."""
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def send_reply(self, content: str, prompt_tokens: int, completion_tokens: int) -> None:
        """A 200 with a chat.completion whose one choice says `content`."""
        data = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "fixed",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
