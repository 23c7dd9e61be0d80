"""benchmarks.common.fake_llm: the chat server the LLM-bound benchmarks (speed/concurrency, the
kill -9 suite) run against instead of a model.

Why: those benchmarks measure hopbench's plumbing on this server's replies; a reply the client
would parse differently (no usage, a closed connection) would change what they measure.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import ThreadingHTTPServer

from benchmarks.common.fake_llm import QuietHandler


class Echo(QuietHandler):
    def do_POST(self):
        body = self.request_body()
        self.send_reply(body["messages"][-1]["content"].upper(), 7, 2)


def test_the_reply_is_a_chat_completion_on_a_kept_connection():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", httpd.server_address[1], timeout=10)
        replies = []
        for text in ("first", "second"):  # two requests on one connection: keep-alive
            payload = json.dumps({"messages": [{"role": "user", "content": text}]})
            conn.request(
                "POST", "/v1/chat/completions", payload, {"Content-Type": "application/json"}
            )
            resp = conn.getresponse()
            assert resp.status == 200 and resp.getheader("Content-Type") == "application/json"
            replies.append(json.loads(resp.read()))
        conn.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert [r["choices"][0]["message"]["content"] for r in replies] == ["FIRST", "SECOND"]
    assert replies[0]["choices"][0]["finish_reason"] == "stop"
    assert replies[0]["usage"] == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
