"""The chat transport: the server's error message and code out of an error response whatever
shape the body has; one connection per thread; a kept-alive connection the server closed while
idle is reopened; proxies from the environment; a base_url that is not http(s) is refused."""

from __future__ import annotations

import json
import threading

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.core.http_transport import ChatTransport, Response, error_detail


def _resp(status: int, body) -> Response:
    return Response(status, body if isinstance(body, bytes) else json.dumps(body).encode())


def test_openai_error_object_gives_message_and_code():
    r = _resp(
        400,
        {"error": {"message": "maximum context length is 8192", "code": "context_length_exceeded"}},
    )
    assert error_detail(r) == ("maximum context length is 8192", "context_length_exceeded")


def test_bare_string_error_and_plain_text_bodies():
    assert error_detail(_resp(404, {"error": "model 'x' not found"})) == (
        "model 'x' not found",
        None,
    )
    assert error_detail(_resp(502, b"<html>Bad Gateway</html>")) == (
        "<html>Bad Gateway</html>",
        None,
    )
    assert error_detail(_resp(500, b"x" * 1000))[0] == "x" * 300


def test_one_connection_per_thread_closed_together():
    t = ChatTransport("http://127.0.0.1:1/v1/", "k", 5.0)
    assert t.url == "http://127.0.0.1:1/v1/chat/completions"
    conns = []
    threads = [threading.Thread(target=lambda: conns.append(t.connection)) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len({id(c) for c in conns}) == 3 and t.connection is t.connection
    t.close()


def test_an_idle_connection_the_server_closed_is_reopened():
    """A keep-alive server that silently closes each connection after one answer (as servers do
    with idle ones): the second request finds the old connection dead and is sent on a new one."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    connections = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            connections.append(self.client_address)
            data = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True  # closed without saying so ("Connection: close")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        t = ChatTransport(f"http://127.0.0.1:{httpd.server_address[1]}/v1", "k", 5.0)
        assert [t.post({"x": i}).status_code for i in range(3)] == [200, 200, 200]
        assert len(connections) == 3 and len(set(connections)) == 3
        t.close()
    finally:
        httpd.shutdown()


def test_proxy_from_the_environment_and_no_proxy(monkeypatch):
    monkeypatch.setenv("http_proxy", "http://proxy.invalid:3128")
    monkeypatch.setenv("no_proxy", "localhost")
    assert ChatTransport("http://api.example/v1", "k", 5)._proxy == "http://proxy.invalid:3128"
    assert ChatTransport("http://localhost:8000/v1", "k", 5)._proxy is None


def test_a_base_url_without_scheme_is_refused():
    with pytest.raises(HopbenchError, match="must be an http"):
        ChatTransport("127.0.0.1:8000/v1", "k", 5)


def test_https_with_the_certificate_verified(tmp_path, monkeypatch):
    """llm=openai's path: TLS to a server whose certificate the default context must trust
    (here through SSL_CERT_FILE); an untrusted certificate is refused."""
    import shutil
    import ssl
    import subprocess
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            data = json.dumps(
                {"echo": json.loads(body), "auth": self.headers["Authorization"]}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            ChatTransport(url, "k", 5.0).post({"q": 0})
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        t = ChatTransport(url, "secret", 5.0)
        got = [json.loads(t.post({"q": i}).content) for i in range(2)]
        assert got == [{"echo": {"q": i}, "auth": "Bearer secret"} for i in range(2)]
        t.close()
    finally:
        httpd.shutdown()
