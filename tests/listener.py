"""The network tests' outside view: a host-side server that records whatever reaches
it (bwrap, runc, the egress proxy), and whether a real registry is reachable from here
(the end-to-end tests skip only when it is not)."""

from __future__ import annotations

import socket
import threading


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
