"""The chat transport: the server's error message and code out of an error response, whatever
shape the body has (OpenAI's error object, a bare string, plain text)."""

from __future__ import annotations

import json

import httpx

from hopbench.llm.transport import ChatTransport, error_detail


def _resp(status: int, body) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.Response(status, content=content, request=httpx.Request("POST", "http://x/v1/chat/completions"))


def test_openai_error_object_gives_message_and_code():
    r = _resp(400, {"error": {"message": "maximum context length is 8192", "code": "context_length_exceeded"}})
    assert error_detail(r) == ("maximum context length is 8192", "context_length_exceeded")


def test_bare_string_error_and_plain_text_bodies():
    assert error_detail(_resp(404, {"error": "model 'x' not found"})) == ("model 'x' not found", None)
    assert error_detail(_resp(502, b"<html>Bad Gateway</html>")) == ("<html>Bad Gateway</html>", None)
    assert error_detail(_resp(500, b"x" * 1000))[0] == "x" * 300


def test_url_and_one_pool_per_thread_closed_together():
    import threading

    t = ChatTransport("http://127.0.0.1:1/v1/", "k", 5.0)
    assert t.url == "http://127.0.0.1:1/v1/chat/completions"
    pools = []
    threads = [threading.Thread(target=lambda: pools.append(t.client)) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len({id(p) for p in pools}) == 3 and t.client is t.client
    t.close()
    assert all(p.is_closed for p in pools)
