"""The network tests' outside view: a host-side server that records whatever reaches
it (bwrap, runc, the egress proxy), and whether a real registry is reachable from here
(the end-to-end tests skip only when it is not)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable


class Listener:
    """Records the first bytes of each connection (stream) or each datagram; a stream
    connection is answered with `reply`, if any."""

    def __init__(self, sock: socket.socket, stream: bool, reply: bytes = b"") -> None:
        self.sock = sock
        self.received: list[bytes] = []
        self.stream = stream
        self.reply = reply
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        port: int = self.sock.getsockname()[1]
        return port

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                if self.stream:
                    conn, _ = self.sock.accept()
                    with conn:
                        conn.settimeout(1)
                        self.received.append(conn.recv(100) or b"<connected>")
                        if self.reply:
                            conn.sendall(self.reply)
                else:
                    self.received.append(self.sock.recv(100))
            except (TimeoutError, OSError):
                continue

    def got(self) -> bool:
        return bool(self.received)

    def reset(self) -> None:
        self.received.clear()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


class Front:
    """A server on 127.0.0.1 that keeps every connection alive whatever the request
    says (`Connection: close` ignored) and answers each request it reads, by its Host
    header (name-based virtual hosting): what a CDN or shared front may do."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.hosts: list[bytes] = []
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        data = b""
        with conn:
            conn.settimeout(2)
            try:
                while True:
                    end = data.find(b"\r\n\r\n")
                    if end < 0:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                        continue
                    head, data = data[:end], data[end + 4:]
                    host = [line[5:].strip() for line in head.split(b"\r\n")
                            if line.lower().startswith(b"host:")]
                    self.hosts.append(host[0] if host else b"")
                    body = b"for " + (host[0] if host else b"?")
                    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


# An allowed request with a second one pipelined behind it, naming another Host of the
# same front (format with `port`).
PIPELINED = ("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
             "GET /admin HTTP/1.1\r\nHost: internal.test\r\n\r\n")


def tcp_listener(address: str = "127.0.0.1", reply: bytes = b"") -> Listener:
    """A TCP listener on `address` (IPv4 or IPv6), on a free port."""
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET,
                         socket.SOCK_STREAM)
    sock.bind((address, 0))
    sock.listen()
    return Listener(sock, stream=True, reply=reply)


def reachable(host: str, port: int = 443) -> bool:
    """Whether this machine (outside any sandbox) can connect to `host:port`."""
    try:
        socket.create_connection((host, port), timeout=5).close()
        return True
    except OSError:
        return False
