"""A raw TCP server on 127.0.0.1 that answers every HTTP request with a script of its own: a body
trickled one byte at a time, a body far larger than any chat completion. It speaks HTTP by hand
so it can misbehave in ways http.server would not."""

from __future__ import annotations

import socket
import threading
import time


class MisbehavingServer:
    """`answer(conn)` is called with each accepted connection once the request has been read."""

    def __init__(self, answer):
        self.answer = answer
        self.requests = 0
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self._closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, body = data.split(b"\r\n\r\n", 1)
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            while len(body) < length:
                body += conn.recv(65536)
            self.requests += 1
            try:
                self.answer(conn)
            except OSError:
                pass

    def close(self) -> None:
        self._closed = True
        self._sock.close()


def trickle(body: bytes, every_s: float = 1.0):
    """An answer that sends a complete, valid header, then the body one byte every `every_s`."""

    def answer(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        for i in range(len(body)):
            conn.sendall(body[i : i + 1])
            time.sleep(every_s)

    return answer


def huge(n_bytes: int, chunked: bool = False):
    """An answer whose body is `n_bytes` of JSON-ish filler (with Content-Length, or chunked)."""
    block = b"x" * 65536

    def answer(conn: socket.socket) -> None:
        if chunked:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
        else:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % n_bytes
            )
        sent = 0
        while sent < n_bytes:
            part = block[: min(len(block), n_bytes - sent)]
            conn.sendall((b"%x\r\n" % len(part)) + part + b"\r\n" if chunked else part)
            sent += len(part)
        if chunked:
            conn.sendall(b"0\r\n\r\n")

    return answer
