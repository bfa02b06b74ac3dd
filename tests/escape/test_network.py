"""No network: listeners on the host must receive nothing; host sockets unreachable."""

from __future__ import annotations

import socket
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

from ..listener import Listener

Attack = Callable[..., RunResult]
Address = str | tuple[str, int]


@pytest.fixture
def listen() -> Iterator[Callable[[socket.AddressFamily, socket.SocketKind, Address],
                                  Listener]]:
    made: list[Listener] = []

    def make(family: socket.AddressFamily, kind: socket.SocketKind,
             address: Address) -> Listener:
        sock = socket.socket(family, kind)
        sock.bind(address)
        if kind is socket.SOCK_STREAM:
            sock.listen()
        listener = Listener(sock, kind is socket.SOCK_STREAM)
        made.append(listener)
        return listener

    yield make
    for listener in made:
        listener.close()


def client(family: str, kind: str, address: str) -> list[str]:
    code = (f"import socket; s=socket.socket(socket.{family}, socket.{kind}); "
            f"s.settimeout(2); s.connect({address}); s.send(b'secret')")
    return [sys.executable, "-c", code]


@pytest.mark.parametrize(("family", "host"), [(socket.AF_INET, "127.0.0.1"),
                                              (socket.AF_INET6, "::1")])
def test_tcp_to_host_loopback(attack: Attack, listen: Callable[..., Listener],
                              family: socket.AddressFamily, host: str) -> None:
    server = listen(family, socket.SOCK_STREAM, (host, 0))
    port = server.sock.getsockname()[1]
    attack(client(family.name, "SOCK_STREAM", repr((host, port))),
           lambda: _settled(server), server.reset)


def test_udp_to_host_loopback(attack: Attack, listen: Callable[..., Listener]) -> None:
    server = listen(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
    port = server.sock.getsockname()[1]
    attack(client("AF_INET", "SOCK_DGRAM", repr(("127.0.0.1", port))),
           lambda: _settled(server), server.reset)


def test_host_unix_socket_by_path(attack: Attack, listen: Callable[..., Listener],
                                  home: Path) -> None:
    path = str(home / "agent.sock")  # like ssh-agent's or docker.sock
    server = listen(socket.AF_UNIX, socket.SOCK_STREAM, path)
    attack(client("AF_UNIX", "SOCK_STREAM", repr(path)), lambda: _settled(server),
           server.reset)


@pytest.mark.linux  # abstract sockets are Linux's
def test_host_abstract_unix_socket(attack: Attack, listen: Callable[..., Listener]) -> None:
    name = "\0swifty-test-" + uuid.uuid4().hex
    server = listen(socket.AF_UNIX, socket.SOCK_STREAM, name)
    attack(client("AF_UNIX", "SOCK_STREAM", repr(name)), lambda: _settled(server),
           server.reset)


@pytest.mark.linux  # Linux socket families (seccomp)
def test_exotic_socket_families_fail(confined: Callable[..., RunResult]) -> None:
    code = ("import socket,errno\nfor f in (17, 40, 31, 1):\n"
            "  try: socket.socket(f, socket.SOCK_RAW if f==17 else socket.SOCK_STREAM); "
            "print(f, 'ok')\n"
            "  except OSError as e: print(f, errno.errorcode[e.errno])")
    result = confined([sys.executable, "-c", code])
    lines = dict(line.split() for line in result.stdout.splitlines())
    # AF_PACKET, AF_VSOCK, AF_BLUETOOTH and AF_UNIX all fail with EPERM (seccomp).
    assert lines == {"17": "EPERM", "40": "EPERM", "31": "EPERM", "1": "EPERM"}, result


def _settled(listener: Listener) -> bool:
    """Give the listener thread a moment to record a late packet."""
    import time

    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline and not listener.got():
        time.sleep(0.02)
    return listener.got()


@pytest.mark.linux  # seccomp's socketpair rules
def test_socketpair_still_works(confined: Callable[..., RunResult]) -> None:
    code = "import socket; a,b=socket.socketpair(); a.send(b'hi'); print(b.recv(2).decode())"
    assert confined([sys.executable, "-c", code]).stdout.strip() == "hi"




# socketpair(AF_UNIX, SOCK_DGRAM) needs no socket(): a datagram socket of the pair can
# sendto() any host socket by path. SOCK_RAW is a datagram socket in AF_UNIX; the flags
# (NONBLOCK, CLOEXEC) must not slip a type past the filter.
DATAGRAM_PAIRS = ["socket.SOCK_DGRAM", "socket.SOCK_RAW",
                  "socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC"]


@pytest.mark.linux  # seccomp's socketpair rules
@pytest.mark.parametrize("kind", DATAGRAM_PAIRS)
def test_datagram_socketpair_to_host_socket(attack: Attack, listen: Callable[..., Listener],
                                            home: Path, kind: str) -> None:
    path = str(home / "notify.sock")  # like systemd's notify socket or journald's
    server = listen(socket.AF_UNIX, socket.SOCK_DGRAM, path)
    code = (f"import socket; a, b = socket.socketpair(socket.AF_UNIX, {kind}); "
            f"a.sendto(b'secret', {path!r})")
    result = attack([sys.executable, "-c", code], lambda: _settled(server), server.reset)
    assert "PermissionError" in result.stderr, result


@pytest.mark.linux  # seccomp's socketpair rules
@pytest.mark.parametrize("kind", DATAGRAM_PAIRS[:2])
def test_datagram_socketpair_cannot_be_bound(attack: Attack, project: Path,
                                             kind: str) -> None:
    """A bound datagram socket would receive from host processes: the socket file must
    not appear."""
    target = project / "inbox.sock"
    code = (f"import socket; a, b = socket.socketpair(socket.AF_UNIX, {kind}); "
            f"a.bind({str(target)!r})")
    attack([sys.executable, "-c", code], target.exists, target.unlink)


@pytest.mark.linux  # seccomp's socketpair rules
@pytest.mark.parametrize("kind", ["SOCK_STREAM", "SOCK_SEQPACKET"])
def test_stream_socketpairs_stay_usable(confined: Callable[..., RunResult],
                                        kind: str) -> None:
    code = (f"import socket; a, b = socket.socketpair(socket.AF_UNIX, "
            f"socket.{kind} | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC); a.send(b'hi'); "
            "b.setblocking(True); print(b.recv(2).decode())")
    assert confined([sys.executable, "-c", code]).stdout.strip() == "hi"
