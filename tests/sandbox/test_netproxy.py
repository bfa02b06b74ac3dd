"""The egress proxy with real sockets (no sandbox): each attack against a fake upstream
on loopback, judged by what that server received, with the allowed control."""

from __future__ import annotations

import array
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from swifty_sandbox.policy.network import IPAddress, build
from swifty_sandbox.sandbox.net import netproxy
from swifty_sandbox.sandbox.net.netproxy import Proxy, proxy_env

from ..listener import PIPELINED, Front, wait_for


class Upstream:
    """A fake server on 127.0.0.1 that records every byte of every connection."""

    def __init__(self, reply: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.received: list[bytes] = []
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
            with conn:
                conn.settimeout(1)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    conn.sendall(self.reply)
                    time.sleep(0.05)
                    conn.settimeout(0.2)
                    data += conn.recv(65536)
                except OSError:
                    pass
                self.received.append(data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@dataclass
class Harness:
    """A proxy on a socketpair; `connect()` hands it a loopback TCP connection the way
    the forwarder does and returns the client's end."""

    proxy: Proxy
    channel: socket.socket
    resolved: list[str] = field(default_factory=list)
    clients: list[socket.socket] = field(default_factory=list)

    def send_fd(self, fd: int) -> None:
        self.channel.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                       array.array("i", [fd]))])

    def connect(self) -> socket.socket:
        server = socket.create_server(("127.0.0.1", 0))
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        server.close()
        self.send_fd(accepted.fileno())
        accepted.close()
        client.settimeout(5)
        self.clients.append(client)
        return client

    def ask(self, raw: bytes) -> bytes:
        client = self.connect()
        client.sendall(raw)
        return _read_all(client)


def _read_all(client: socket.socket) -> bytes:
    data = b""
    try:
        while True:
            chunk = client.recv(65536)
            if not chunk:
                return data
            data += chunk
    except OSError:
        return data


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def harness() -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(allow: list[str], deny: list[str] | None = None,
             names: dict[str, list[str]] | None = None, **kwargs: object) -> Harness:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        calls: list[str] = []

        def resolve(host: str, port: int) -> list[IPAddress]:
            calls.append(host)
            if names is None or host not in names:
                raise socket.gaierror("unknown")
            return [ipaddress.ip_address(a) for a in names[host]]

        proxy = Proxy(build(allow, deny or []), ours, resolve=resolve,
                      **kwargs).start()  # type: ignore[arg-type]
        made.append(Harness(proxy, theirs, calls))
        return made[-1]

    yield make
    for h in made:
        h.proxy.close()
        h.channel.close()
        for c in h.clients:
            c.close()


def test_allowed_by_ip_and_port(harness: Callable[..., Harness], upstream: Upstream) -> None:
    h = harness([f"127.0.0.1:{upstream.port}"])
    out = h.ask(f"GET http://127.0.0.1:{upstream.port}/simple/ HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{upstream.port}\r\n\r\n".encode())
    assert out.endswith(b"ok")
    assert upstream.received[0].startswith(b"GET /simple/ HTTP/1.1\r\n")
    assert b"Connection: close" in upstream.received[0]
    tunnel = h.connect()
    tunnel.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    assert tunnel.recv(100).startswith(b"HTTP/1.1 200")
    tunnel.sendall(b"GET / HTTP/1.1\r\n\r\n")
    assert _read_all(tunnel).endswith(b"ok")
    assert [e.as_json() for e in h.proxy.events] == [
        {"host": "127.0.0.1", "port": upstream.port, "allowed": True}]


def test_unlisted_host_gets_403_and_the_line(harness: Callable[..., Harness],
                                             upstream: Upstream) -> None:
    h = harness(["pypi.org"], names={"evil.test": ["127.0.0.1"]})
    out = h.ask(b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"--allow-net evil.test" in out
    assert h.resolved == []  # not even looked up
    assert h.proxy.blocked_lines() == [
        "swifty-sandbox: blocked network access to evil.test:443 (not in the allowlist); "
        "allow it with --allow-net evil.test or network.allow in ~/.swifty/config.yaml"]
    assert upstream.received == []


def test_allowed_name_resolving_to_loopback_is_refused(harness: Callable[..., Harness],
                                                       upstream: Upstream) -> None:
    names = {"registry.test": ["127.0.0.1"], "localhost": ["127.0.0.1", "::1"]}
    h = harness(["registry.test", "localhost"], names=names)
    for host in ("registry.test", "localhost", "REGISTRY.test."):
        out = h.ask(f"GET http://{host}:{upstream.port}/ HTTP/1.1\r\n\r\n".encode())
        assert out.startswith(b"HTTP/1.1 403"), out
        assert f"--allow-net 127.0.0.1:{upstream.port}".encode() in out
    assert upstream.received == []
    # Control: the same name with its address named explicitly gets through.
    h2 = harness(["registry.test", f"127.0.0.1:{upstream.port}"], names=names)
    assert h2.ask(f"GET http://registry.test:{upstream.port}/ HTTP/1.1\r\n\r\n"
                  .encode()).endswith(b"ok")
    assert len(upstream.received) == 1


@pytest.mark.parametrize("spelling", ["2130706433", "0x7f.1", "017700000001", "127.1",
                                      "[::ffff:127.0.0.1]", "[::ffff:7f00:1]",
                                      "127.0.0.1.", "[::1]", "0.0.0.0", "[::]"])
def test_numeric_spellings_of_loopback(harness: Callable[..., Harness], upstream: Upstream,
                                       spelling: str) -> None:
    h = harness(["*", "registry.test"])
    for request in (f"CONNECT {spelling}:{upstream.port} HTTP/1.1\r\n\r\n",
                    f"GET http://{spelling}:{upstream.port}/ HTTP/1.1\r\n\r\n"):
        out = h.ask(request.encode())
        assert out.startswith(b"HTTP/1.1 403"), (spelling, out)
    assert upstream.received == []
    assert h.resolved == []  # numeric: never handed to the resolver


def test_numeric_spelling_matches_the_ip_entry(harness: Callable[..., Harness],
                                               upstream: Upstream) -> None:
    h = harness([f"127.0.0.1:{upstream.port}"])
    out = h.ask(f"GET http://0x7f.1:{upstream.port}/ HTTP/1.1\r\n\r\n".encode())
    assert out.endswith(b"ok")


def test_deny_wins_whatever_the_case_or_dot(harness: Callable[..., Harness]) -> None:
    h = harness(["*"], ["evil.test"], names={"evil.test": ["8.8.8.8"]})
    for host in ("EVIL.test", "evil.test.", "Evil.Test."):
        out = h.ask(f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
        assert out.startswith(b"HTTP/1.1 403"), host
    assert h.resolved == []


@pytest.mark.parametrize("target", [
    "http://registry.test@127.0.0.1:{port}/", "http://127.0.0.1:{port}@registry.test/",
    "http://registry.test\\@127.0.0.1:{port}/", "http://user:pw@registry.test/",
    "http://registry.test%2f@127.0.0.1/", "/relative", "https://registry.test/",
    "http:///x", "ftp://registry.test/"])
def test_userinfo_and_odd_targets_are_refused(harness: Callable[..., Harness],
                                              upstream: Upstream, target: str) -> None:
    h = harness(["registry.test", "*"], names={"registry.test": ["8.8.8.8"]})
    request = f"GET {target.format(port=upstream.port)} HTTP/1.1\r\n\r\n"
    out = h.ask(request.encode())
    assert out.startswith((b"HTTP/1.1 400", b"HTTP/1.1 403")), out
    assert upstream.received == []


def test_host_header_is_the_uri_s(harness: Callable[..., Harness], upstream: Upstream) -> None:
    """A Host header naming another site (virtual hosting on an allowed server) is
    replaced by the request URI's authority."""
    h = harness(["registry.test", f"127.0.0.1:{upstream.port}"],
                names={"registry.test": ["127.0.0.1"]})
    out = h.ask(f"GET http://registry.test:{upstream.port}/x HTTP/1.1\r\nHost: evil.test\r\n"
                f"Proxy-Authorization: secret\r\nHOST: evil2.test\r\n\r\n".encode())
    assert out.endswith(b"ok")
    head = upstream.received[0].split(b"\r\n\r\n")[0].lower()
    assert b"evil" not in head and b"secret" not in head
    assert f"host: registry.test:{upstream.port}".encode() in head


def test_one_connection_one_destination(harness: Callable[..., Harness],
                                        upstream: Upstream) -> None:
    """A second request pipelined (or smuggled in a body) after an allowed one never
    reaches the server (which might serve it to another of its hosts: see
    `test_a_front_that_keeps_alive_gets_one_request`); a CONNECT inside a tunnel is
    closed, never sent on (nor to another host)."""
    h = harness([f"127.0.0.1:{upstream.port}", "*"], names={"evil.test": ["8.8.8.8"]})
    smuggled = b"GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n"
    refused = h.ask(f"POST http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n"
                    f"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
                    + b"0\r\n\r\n" + smuggled)
    assert refused.startswith(b"HTTP/1.1 411"), refused  # two framings: the ambiguity
    assert upstream.received == []
    h.ask(f"POST http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\nContent-Length: 5\r\n"
          f"\r\nhello".encode() + smuggled)
    assert upstream.received[0].endswith(b"\r\n\r\nhello"), upstream.received
    assert b"evil" not in upstream.received[0]
    tunnel = h.connect()
    tunnel.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode()
                   + b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
    _read_all(tunnel)
    assert h.resolved == []  # evil.test was never looked up, let alone connected to
    assert wait_for(lambda: len(upstream.received) == 2)
    assert b"evil" not in upstream.received[1]  # a proxy there would not tunnel it on


def test_a_front_that_keeps_alive_gets_one_request(harness: Callable[..., Harness]) -> None:
    """A request pipelined after an allowed one was relayed unparsed; a front that
    ignores `Connection: close` served it to the Host it names. Now only the first
    request is sent, and the client is told the connection closes after its response.
    The control: the same bytes straight to the front reach `internal.test`."""
    front = Front()
    try:
        direct = socket.create_connection(("127.0.0.1", front.port), timeout=5)
        direct.sendall(PIPELINED.format(port=front.port).replace(
            f"http://127.0.0.1:{front.port}", "").encode())
        deadline = time.monotonic() + 5
        while len(front.hosts) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        direct.close()
        assert front.hosts[1] == b"internal.test", front.hosts  # the control
        front.hosts.clear()
        h = harness([f"127.0.0.1:{front.port}"])
        client = h.connect()
        client.sendall(PIPELINED.format(port=front.port).encode())
        head = b""
        while b"for " not in head:
            chunk = client.recv(65536)
            assert chunk, head
            head += chunk
        assert b"\r\nConnection: close\r\n" in head and b"keep-alive" not in head, head
        time.sleep(0.5)
        client.close()
        assert front.hosts == [f"127.0.0.1:{front.port}".encode()]
    finally:
        front.close()


def test_only_checked_addresses_are_connected(harness: Callable[..., Harness],
                                              upstream: Upstream) -> None:
    """A name with several addresses: the private ones are skipped, the connection goes
    to one that was checked (here the loopback one an entry names)."""
    names = {"multi.test": ["10.0.0.1", "169.254.169.254", "127.0.0.1"]}
    h = harness(["multi.test", f"127.0.0.1:{upstream.port}"], names=names)
    assert h.ask(f"GET http://multi.test:{upstream.port}/ HTTP/1.1\r\n\r\n".encode()
                 ).endswith(b"ok")
    h2 = harness(["multi.test"], names=names)
    assert h2.ask(f"GET http://multi.test:{upstream.port}/ HTTP/1.1\r\n\r\n".encode()
                  ).startswith(b"HTTP/1.1 403")
    assert len(upstream.received) == 1


def test_huge_headers_are_cut(harness: Callable[..., Harness], upstream: Upstream) -> None:
    h = harness([f"127.0.0.1:{upstream.port}"])
    client = h.connect()
    client.sendall(f"GET http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n".encode())
    try:
        for _ in range(100):
            client.sendall(b"X-Big: " + b"a" * 4000 + b"\r\n")
    except OSError:
        pass
    assert _read_all(client).startswith(b"HTTP/1.1 431")
    assert upstream.received == []


def test_slowloris_is_cut(harness: Callable[..., Harness], upstream: Upstream,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netproxy, "HEADER_SECONDS", 0.5)
    h = harness([f"127.0.0.1:{upstream.port}"])
    client = h.connect()
    start = time.monotonic()
    client.sendall(b"GET http://127.0.0.1")
    out = b""
    for _ in range(10):  # a byte every 0.2 s: the head is never finished in time
        time.sleep(0.2)
        try:
            client.sendall(b"1")
        except OSError:
            break
    out = _read_all(client)
    assert out.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - start < 4
    assert upstream.received == []


def test_connections_are_bounded(harness: Callable[..., Harness],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netproxy, "MAX_CONNECTIONS", 4)
    h = harness(["x.test"])
    idle = [h.connect() for _ in range(4)]  # each holds a slot, sending nothing
    time.sleep(0.2)
    extra = h.connect()
    assert _read_all(extra) == b""  # closed at once
    assert len(idle) == 4


def test_hostile_descriptors_are_closed(harness: Callable[..., Harness],
                                        upstream: Upstream, tmp_path: object) -> None:
    """What arrives over the channel may come from the command: a pipe, a file, a
    listening socket, a unix socket are closed unread; the proxy goes on."""
    h = harness([f"127.0.0.1:{upstream.port}"])
    read_end, write_end = os.pipe()
    listener = socket.create_server(("127.0.0.1", 0))
    a, b = socket.socketpair()
    with open(os.devnull, "rb") as null:
        for fd in (read_end, write_end, null.fileno(), listener.fileno(), a.fileno()):
            h.send_fd(fd)
    h.channel.sendmsg([b"garbage"])
    time.sleep(0.2)
    assert h.proxy.events == ()
    assert h.ask(f"GET http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n\r\n".encode()
                 ).endswith(b"ok")
    for fd in (read_end, write_end):
        os.close(fd)
    for s in (listener, a, b):
        s.close()


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_nothing_is_left_after_close(harness: Callable[..., Harness],
                                     upstream: Upstream) -> None:
    threads, fds = set(threading.enumerate()), _fds()
    h = harness([f"127.0.0.1:{upstream.port}"])
    tunnel = h.connect()
    tunnel.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    assert tunnel.recv(100).startswith(b"HTTP/1.1 200")
    idle = h.connect()  # a connection still in its head
    h.proxy.close()
    h.channel.close()
    for c in (tunnel, idle):
        c.close()
    h.clients.clear()
    time.sleep(0.1)
    assert set(threading.enumerate()) <= threads
    assert _fds() <= fds


def test_proxy_env() -> None:
    env = proxy_env({"JAVA_TOOL_OPTIONS": "-Xmx1g", "PATH": "/bin"})
    for name in ("HTTP_PROXY", "https_proxy", "ALL_PROXY", "PIP_PROXY", "npm_config_proxy",
                 "npm_config_https_proxy", "YARN_HTTPS_PROXY", "CARGO_HTTP_PROXY"):
        assert env[name] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    assert env["JAVA_TOOL_OPTIONS"].startswith("-Xmx1g -Dhttp.proxyHost=127.0.0.1 ")
    assert "-Dhttps.proxyPort=3128" in env["JAVA_TOOL_OPTIONS"]


def test_an_unlisted_host_is_asked_once(harness: Callable[..., Harness],
                                        upstream: Upstream) -> None:
    asked: list[tuple[str, int]] = []

    def ask(host: str, port: int) -> bool:
        asked.append((host, port))
        return host == "127.0.0.1"

    h = harness(["pypi.org"], names={"no.test": ["8.8.8.8"]}, ask=ask)
    target = f"127.0.0.1:{upstream.port}"
    for _ in range(2):  # a yes about this very address is as good as an entry naming it
        assert h.ask(f"GET http://{target}/ HTTP/1.1\r\n\r\n".encode()).endswith(b"ok")
    refused = h.ask(b"CONNECT no.test:443 HTTP/1.1\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 403") and b"the person said no" in refused
    assert asked == [("127.0.0.1", upstream.port), ("no.test", 443)]
    assert h.ask(b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 502")
    assert len(asked) == 2  # listed: not asked (and unresolvable here: 502)


@pytest.mark.parametrize("head", [
    "GET http://127.0.0.1:{port}/x\nHost:evil.test HTTP/1.1\r\n\r\n",
    "GET http://127.0.0.1:{port}/x\rHost:evil.test HTTP/1.1\r\n\r\n",
    "GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX: a\nHost: evil.test\r\n\r\n",
    "GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX: a\x00b\r\n\r\n",
    "GET http://127.0.0.1:{port}/ HTTP/1.1\r\n Host: evil.test\r\n\r\n",
])
def test_bare_line_breaks_and_control_bytes(harness: Callable[..., Harness],
                                            upstream: Upstream, head: str) -> None:
    """A bare CR or LF that a server would read as a line break (a second Host header
    for the allowed server's virtual hosts) is refused, never forwarded."""
    h = harness([f"127.0.0.1:{upstream.port}"])
    out = h.ask(head.format(port=upstream.port).encode())
    assert out.startswith(b"HTTP/1.1 400"), out
    assert upstream.received == []
    assert h.ask(f"GET http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\nX: a\tb\r\n\r\n"
                 .encode()).endswith(b"ok")  # control: a tab in a value is fine


def _own_ipv4() -> str | None:
    """This machine's public-looking IPv4 address (the default route's source), if any."""
    from swifty_sandbox.policy.network import is_public

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.123", 9))  # no packet is sent
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return address if is_public(ipaddress.ip_address(address)) else None


def test_nat64_forms_of_the_host_s_own_address(harness: Callable[..., Harness]) -> None:
    """On an IPv6-only host behind NAT64, `64:ff9b::` and the host's public IPv4 is the
    host itself (its services on 0.0.0.0): refused as a literal and as what an allowed
    name resolves to, whether under the well-known prefix or a network-specific one
    that `ipv4only.arpa` reveals (RFC 7050). The control: the same addresses are public
    to the policy, which alone would let `*` reach them; a prefix nobody revealed is
    tried (and, with no NAT64 here, not reached)."""
    from swifty_sandbox.policy.network import is_public

    own = _own_ipv4()
    if own is None:
        pytest.skip("this machine has no public-looking IPv4 address of its own")
    wkp = f"64:ff9b::{own}"
    nsp = f"2001:db8:64::{own}"
    for address in (wkp, nsp):
        assert is_public(ipaddress.ip_address(address))  # the control: `*` covers it
    names = {"attacker.test": [wkp], "other.test": [nsp],
             "ipv4only.arpa": ["2001:db8:64::192.0.0.170", "192.0.0.170"]}
    h = harness(["*"], names=names)
    for request in (f"CONNECT [{wkp}]:80 HTTP/1.1\r\n\r\n",
                    "GET http://attacker.test/ HTTP/1.1\r\n\r\n",
                    "CONNECT other.test:22 HTTP/1.1\r\n\r\n"):
        out = h.ask(request.encode())
        assert out.startswith(b"HTTP/1.1 403"), (request, out)
    blind = harness(["*"], names={"other.test": [nsp]})  # no DNS64 to reveal the prefix
    out = blind.ask(b"CONNECT other.test:22 HTTP/1.1\r\n\r\n")
    assert not out.startswith(b"HTTP/1.1 403"), out


def test_nat64_prefix_discovery() -> None:

    def ips(*texts: str) -> list[IPAddress]:
        return [ipaddress.ip_address(t) for t in texts]

    assert netproxy.nat64_prefixes(ips("192.0.0.170")) == ()
    assert netproxy.nat64_prefixes(ips("64:ff9b::c000:aa", "64:ff9b::c000:ab")) == (
        ipaddress.IPv6Network("64:ff9b::/96"),)
    assert netproxy.nat64_prefixes(ips("2001:db8:122:c000:0:aa00::")) == (
        ipaddress.IPv6Network("2001:db8:122::/48"),)
    assert netproxy.nat64_prefixes(ips("::ffff:192.0.0.170", "2001:db8::1")) == ()


def _tunnel_to(h: Harness, port: int) -> socket.socket:
    client = h.connect()
    client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    assert client.recv(100).startswith(b"HTTP/1.1 200")
    return client


def test_plain_http_inside_a_tunnel_is_one_request(harness: Callable[..., Harness]) -> None:
    """The next variant: CONNECT to an allowed host's plain-HTTP port, then the same
    pipelined requests inside the tunnel (split across segments too, so that no first
    chunk shows a whole request line). The front gets one request, for the tunnel's
    host. The control (the same bytes straight to the front) is in
    `test_a_front_that_keeps_alive_gets_one_request`."""
    front = Front()
    try:
        h = harness([f"127.0.0.1:{front.port}"])
        inner = PIPELINED.format(port=front.port).replace(
            f"http://127.0.0.1:{front.port}", "").replace(
            f"Host: 127.0.0.1:{front.port}", "Host: other.test").encode()
        for pieces in ([inner], [inner[:2], inner[2:9], inner[9:]]):
            client = _tunnel_to(h, front.port)
            for piece in pieces:
                client.sendall(piece)
                time.sleep(0.1)
            assert b"for " in _read_all(client)
            client.close()
        assert wait_for(lambda: len(front.hosts) >= 2)
        time.sleep(0.3)
        assert front.hosts == [f"127.0.0.1:{front.port}".encode()] * 2, front.hosts
    finally:
        front.close()


def test_a_tunnel_passes_what_is_not_http(harness: Callable[..., Harness],
                                          upstream: Upstream,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """TLS and other protocols (SSH's banner, a server that speaks first) pass as they
    are; a first line that stays a possible request line past the head's time limit is
    closed, not passed."""
    monkeypatch.setattr(netproxy, "HEADER_SECONDS", 0.5)
    h = harness([f"127.0.0.1:{upstream.port}"])
    for raw in (b"\x16\x03\x01\x00\x05hello\r\n\r\n", b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
                b"EHLO x\r\n\r\n"):
        client = _tunnel_to(h, upstream.port)
        client.sendall(raw)
        assert _read_all(client).endswith(b"ok")
        client.close()
    assert wait_for(lambda: len(upstream.received) == 3)
    assert [r[:len(raw)] for r, raw in zip(upstream.received, (
        b"\x16\x03\x01", b"SSH-2.0", b"EHLO x"), strict=True)] == [
        b"\x16\x03\x01", b"SSH-2.0", b"EHLO x"]
    stalled = _tunnel_to(h, upstream.port)
    stalled.sendall(b"GET /admi")
    start = time.monotonic()
    assert _read_all(stalled) == b""
    assert time.monotonic() - start < 3
    assert wait_for(lambda: len(upstream.received) == 4)
    assert upstream.received[3] == b"", upstream.received  # connected, nothing passed
