"""The host-side egress proxy of one run: HTTP CONNECT and plain HTTP (absolute URIs).

The sandbox keeps its own empty network namespace. Inside it the forwarder
(`netforward.py`) listens on 127.0.0.1:PROXY_PORT and hands each accepted socket to
us over one AF_UNIX socketpair (SCM_RIGHTS); we read the request from that socket
directly. Everything that arrives on the pair is hostile (the command may find the
forwarder's end): only connected TCP stream sockets are served, at most
MAX_CONNECTIONS at once, headers bounded in size and time.

Per destination: the host as written is normalised (`network.normalize_host`: case,
trailing dot, IDNA, every numeric IPv4 spelling), then deny entries, then allow
entries (an unlisted host goes to the person when there is one to ask); names are
resolved here and only an address `NetworkPolicy.address_allowed` accepts is
connected to — the one that was checked, never a second lookup. One client
connection is one destination and, for plain HTTP, one request: it is sent with
`Connection: close`, the Host header rewritten from the request URI and exactly the
body its Content-Length gives (a chunked body is refused: 411); the response's head
says `Connection: close` too, and whatever the client sends after that request (a
pipelined or smuggled one) is read and dropped — a front that ignores `Connection:
close` never sees a second request, which could name another of its hosts. Refusals
are a 403 naming the host and how to allow it; the run's stderr gets the same as one
line.

An address under a NAT64 prefix stands for the IPv4 address it embeds: the
well-known 64:ff9b::/96 always, and the network-specific prefix a DNS64 resolver
reveals for `ipv4only.arpa` (RFC 7050), looked up once per run when a name resolved
to an IPv6 address.

Plain HTTP inside a CONNECT tunnel gets the same (`_tunnel`). Known limit: inside a
CONNECT tunnel TLS is carried unopened, so a client
may send another name in SNI/Host to the same allowed server (domain fronting); the
connection still only goes to an address of the allowed name.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import ipaddress
import os
import re
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from swifty_sandbox.messages import t
from swifty_sandbox.policy.network import (
    IPAddress,
    NetworkEntryError,
    NetworkPolicy,
    carried,
    nat64_ipv4,
    normalize_host,
    split_host_port,
)

PROXY_PORT = 3128  # inside the sandbox's own namespace: no other program has it
MAX_CONNECTIONS = 128  # at once; more are closed at once
# Destinations recorded per run (for --json and the blocked lines); the rest are only
# counted: a command asking for a million names must not grow our memory or the output.
MAX_EVENTS = 256
MAX_HEADER_BYTES = 32 * 1024
HEADER_SECONDS = 10.0  # for the whole request head: a slowloris gets cut off
CONNECT_SECONDS = 10.0
CLOSE_SECONDS = 2.0  # at the end of the run, for the threads to finish, all together
_CHUNK = 256 * 1024
# splice(2) through a pipe of this size (fs.pipe-max-size, 1 MiB by default, is what an
# unprivileged process may ask for). No SPLICE_F_MORE: it would hold back the last bytes
# of a reply (a TLS handshake message) waiting for more.
_PIPE_BYTES = 1 << 20
# At most this many at once (16 MiB): pipes count against the user's quota
# (fs.pipe-user-pages-soft, 64 MiB by default), and a user over it gets tiny pipes
# everywhere, in the command's own shell pipelines too; the rest keep the default size.
_BIG_PIPES = threading.BoundedSemaphore(16)
_HOP_BY_HOP = frozenset({b"host", b"connection", b"proxy-connection", b"keep-alive",
                         b"proxy-authorization", b"proxy-authenticate", b"te", b"trailer",
                         b"upgrade"})
# What a response head loses on its way to the client, which gets `Connection: close`.
_RESPONSE_HOP = frozenset({b"connection", b"proxy-connection", b"keep-alive"})
# RFC 7050: the names a DNS64 resolver synthesises `ipv4only.arpa` from.
_IPV4ONLY = (ipaddress.IPv4Address("192.0.0.170"), ipaddress.IPv4Address("192.0.0.171"))

# Control bytes in a request head, CR LF between lines excepted (tab is allowed in values).
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n")

HostAsk = Callable[[str, int], bool]
Resolver = Callable[[str, int], list[IPAddress]]


def system_resolve(host: str, port: int) -> list[IPAddress]:
    """Every address the host's resolver gives for `host` (TCP)."""
    found: dict[IPAddress, None] = {}
    for *_, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        found[ipaddress.ip_address(str(address[0]).split("%")[0])] = None
    return list(found)


@dataclass(frozen=True, slots=True)
class Event:
    """One destination the command asked for, and what we did."""

    host: str
    port: int
    allowed: bool
    why: str = ""  # the refusal, in the user's language
    entry: str = ""  # what to allow to let it through

    def as_json(self) -> dict[str, object]:
        return {"host": self.host, "port": self.port, "allowed": self.allowed}

    def line(self) -> str:
        return t("net.blocked", host=self.host, port=self.port, why=self.why,
                 entry=self.entry)


class _Refused(Exception):
    def __init__(self, status: int, body: str = "") -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def suggestion(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port in (80, 443) else f"{shown}:{port}"


class Proxy:
    """Serves the connections handed over `channel` until `close()`."""

    def __init__(self, policy: NetworkPolicy, channel: socket.socket, *,
                 ask: HostAsk | None = None, resolve: Resolver = system_resolve) -> None:
        self.policy = policy
        self.channel = channel
        self.ask = ask
        self.resolve = resolve
        self._lock = threading.Lock()
        self._ask_lock = threading.Lock()
        self._answers: dict[tuple[str, int], bool] = {}
        self._events: dict[tuple[str, int, bool], Event] = {}
        self._unrecorded = 0  # requests past MAX_EVENTS destinations
        self._sockets: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._active = 0
        self._closed = False
        self._nat64: tuple[ipaddress.IPv6Network, ...] | None = None
        self._receiver = threading.Thread(target=self._receive, name="swifty-netproxy",
                                          daemon=True)

    def start(self) -> Proxy:
        self._receiver.start()
        return self

    @property
    def events(self) -> tuple[Event, ...]:
        with self._lock:
            return tuple(self._events.values())

    def blocked_lines(self) -> list[str]:
        more = [t("net.more", count=self._unrecorded, limit=MAX_EVENTS)] \
            if self._unrecorded else []
        return [e.line() for e in self.events if not e.allowed] + more

    def close(self) -> tuple[Event, ...]:
        """Stop: no socket, descriptor or thread of ours is left when this returns
        (a thread stuck in the system resolver is a daemon and holds no socket)."""
        with self._lock:
            self._closed = True
            sockets = list(self._sockets)
        for sock in (self.channel, *sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + CLOSE_SECONDS
        if self._receiver.is_alive():
            self._receiver.join(CLOSE_SECONDS)
        self.channel.close()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:  # one still asking a person or the resolver: left behind
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()
        return self.events

    # -- receiving descriptors ------------------------------------------------------------

    def _receive(self) -> None:
        room = socket.CMSG_SPACE(16 * array.array("i").itemsize)
        while True:
            try:
                data, ancillary, _, _ = self.channel.recvmsg(64, room)
            except OSError:
                return
            fds: list[int] = []
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    items = array.array("i")
                    items.frombytes(payload[:len(payload) - len(payload) % items.itemsize])
                    fds += items
            for fd in fds:
                self._serve_fd(fd)
            if not data and not ancillary:
                return  # the forwarder is gone

    def _serve_fd(self, fd: int) -> None:
        client = _stream_socket(fd)
        if client is None:
            return
        with self._lock:
            if self._closed or self._active >= MAX_CONNECTIONS:
                client.close()
                return
            self._active += 1
            self._sockets.add(client)
            thread = threading.Thread(target=self._handle, args=(client,), daemon=True)
            self._threads.add(thread)
            thread.start()  # under the lock: close() never sees a thread not started

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._sockets.add(sock)
            return True

    def _forget(self, *socks: socket.socket) -> None:
        with self._lock:
            for sock in socks:
                self._sockets.discard(sock)
                sock.close()

    # -- one connection ---------------------------------------------------------------------

    def _handle(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            try:
                head, rest = _read_head(client)
                _method, host, port, outgoing, length = _parse(head)
                upstream = self._open(host, port)
            except _Refused as e:
                _reply(client, e.status, e.body)
                return
            if outgoing is None:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                self._relay(client, upstream, tunnel=(rest, host, port))
            else:  # the request's own body only: what follows is not forwarded
                upstream.sendall(outgoing + rest[:length])
                self._relay(client, upstream, length - len(rest[:length]))
        except OSError:
            pass
        finally:
            self._forget(client, *((upstream,) if upstream is not None else ()))
            with self._lock:
                self._active -= 1
                self._threads.discard(threading.current_thread())

    def _record(self, host: str, port: int, allowed: bool, why: str = "",
                entry: str = "") -> None:
        with self._lock:
            if (host, port, allowed) not in self._events \
                    and len(self._events) >= MAX_EVENTS:
                self._unrecorded += 1
                return
            self._events.setdefault((host, port, allowed),
                                    Event(host, port, allowed, why, entry or
                                          suggestion(host, port)))

    def _refuse(self, host: str, port: int, why: str, entry: str = "") -> _Refused:
        entry = entry or suggestion(host, port)
        self._record(host, port, False, why, entry)
        return _Refused(403, t("net.blocked_body", host=host, port=port, why=why,
                               entry=entry))

    def _decide(self, host: str, port: int) -> bool:
        """True when the policy allows, False when a person did (so an IP they were
        shown is as good as an entry naming it); refusals raise."""
        verdict = self.policy.decide(host, port)
        if verdict is False:
            raise self._refuse(host, port, t("net.why_denied"))
        if verdict is None:
            if self.ask is None:
                raise self._refuse(host, port, t("net.why_unlisted"))
            with self._ask_lock:  # one question at a time, each destination once
                key = (host, port)
                if key not in self._answers:
                    try:
                        self._answers[key] = bool(self.ask(host, port))
                    except Exception:  # an asker that failed said nothing: no
                        self._answers[key] = False
                if not self._answers[key]:
                    raise self._refuse(host, port, t("net.why_refused"))
            return False
        return True

    def _open(self, host: str, port: int) -> socket.socket:
        by_policy = self._decide(host, port)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        try:
            addresses = [literal] if literal is not None else self.resolve(host, port)
        except (OSError, UnicodeError):
            raise _Refused(502, f"swifty-sandbox: cannot resolve {host}\n") from None
        if literal is not None and not by_policy:
            usable = [literal]  # the person was asked about this very address
        else:
            nat64 = self._nat64_prefixes() if any(a.version == 6 for a in addresses) \
                else ()
            usable = [a for a in addresses if self.policy.address_allowed(a, port, nat64)
                      and (not is_own_address(a, nat64) or self._named(a, port))]
        if not usable:
            first = addresses[0] if addresses else None
            raise self._refuse(host, port, t("net.why_private"),
                               suggestion(str(first), port) if first else "")
        self._record(host, port, True)
        error: OSError | None = None
        for address in usable:  # connect only to an address that was checked
            family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            if not self._track(sock):
                sock.close()
                raise OSError("closed")
            try:
                sock.settimeout(CONNECT_SECONDS)
                sock.connect((str(address), port))
                sock.settimeout(None)
                return sock
            except OSError as e:
                error = e
                self._forget(sock)
        raise _Refused(502, f"swifty-sandbox: cannot connect to {host}:{port}: "
                            f"{getattr(error, 'strerror', None) or error}\n")

    def _named(self, address: IPAddress, port: int) -> bool:
        return any(e.matches_address(address, port) for e in self.policy.allow)

    def _nat64_prefixes(self) -> tuple[ipaddress.IPv6Network, ...]:
        """The NAT64 prefixes a DNS64 resolver here synthesises into (RFC 7050), asked
        once per run; none when `ipv4only.arpa` has no IPv6 address."""
        with self._lock:
            if self._nat64 is not None:
                return self._nat64
        try:
            found = nat64_prefixes(self.resolve("ipv4only.arpa", 80))
        except (OSError, UnicodeError):
            found = ()
        with self._lock:
            self._nat64 = found
        return found

    def _relay(self, client: socket.socket, upstream: socket.socket,
               body: int | None = None,
               tunnel: tuple[bytes, str, int] | None = None) -> None:
        """Both ways until each side's EOF. `body`: a plain HTTP request, of which
        that many bytes of body are still to come and nothing after them; `tunnel`: a
        CONNECT tunnel's first bytes (`_tunnel`) and destination."""
        client.settimeout(None)
        back = threading.Thread(target=_pump if body is None else _respond,
                                args=(upstream, client), daemon=True)
        with self._lock:
            if self._closed:
                return
            self._threads.add(back)
            back.start()
        try:
            if tunnel is not None:
                _tunnel(client, upstream, *tunnel)
            elif body is None:
                _pump(client, upstream)
            else:
                _send_body(client, upstream, body)
            back.join()
        finally:
            with self._lock:
                self._threads.discard(back)


def nat64_prefixes(addresses: list[IPAddress]) -> tuple[ipaddress.IPv6Network, ...]:
    """The prefixes `ipv4only.arpa`'s IPv6 addresses embed its IPv4 ones under, at each
    length RFC 6052 allows (RFC 7050 §3)."""
    found: dict[ipaddress.IPv6Network, None] = {}
    for address in addresses:
        if not isinstance(address, ipaddress.IPv6Address) or address.ipv4_mapped:
            continue
        for length in (96, 64, 56, 48, 40, 32):
            prefix = ipaddress.IPv6Network((address, length), strict=False)
            if nat64_ipv4(address, prefix) in _IPV4ONLY:
                found.setdefault(prefix)
                break
    return tuple(found)


def is_own_address(address: IPAddress,
                   nat64: tuple[ipaddress.IPv6Network, ...] = ()) -> bool:
    """Whether `address` (or an IPv4 address it stands for: mapped, compatible, NAT64,
    6to4, Teredo — `network.carried`) is one of this machine's own: a public-looking
    address on its interface (a VPS's IPv4, a global IPv6, here a TEST-NET one)
    reaches the host's services bound to 0.0.0.0/:: like loopback does, and so does
    `64:ff9b::` and that IPv4 address through a NAT64 gateway. The kernel binds only
    local addresses (unless net.ipv4.ip_nonlocal_bind is set: then every address looks
    own, and only IP entries get through)."""
    for candidate in carried(address, nat64):
        family = socket.AF_INET6 if candidate.version == 6 else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind((str(candidate), 0))
            except OSError:
                continue
            return True
    return False


def _stream_socket(fd: int) -> socket.socket | None:
    """The descriptor as a connected TCP socket, or None (closed): the sender may be
    the command, and may send a pipe, a file or a listening socket instead."""
    try:
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        sock = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return None
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6) \
                or sock.type != socket.SOCK_STREAM:
            raise OSError("not a TCP stream")
        sock.getpeername()  # connected
        return sock
    except OSError:
        sock.close()
        return None


def _read_head(client: socket.socket, start: bytes = b"") -> tuple[bytes, bytes]:
    """The request head (up to the blank line) and what came after it; bounded in
    size and in total time, however slowly it trickles in."""
    deadline = time.monotonic() + HEADER_SECONDS
    data = bytearray(start)
    while True:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            return bytes(data[:end]), bytes(data[end + 4:])
        if len(data) > MAX_HEADER_BYTES:
            raise _Refused(431)
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Refused(408)
        client.settimeout(left)
        try:
            chunk = client.recv(8192)
        except TimeoutError:
            raise _Refused(408) from None
        if not chunk:
            raise OSError("closed")
        data += chunk


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    if not text or any(c in text for c in "@\\/?#%") or not text.isprintable() \
            or " " in text:
        raise _Refused(400, "swifty-sandbox: bad host in the request\n")
    try:
        host, port = split_host_port(text)
        port = port if port is not None else default_port
        if port is None:
            raise _Refused(400, "swifty-sandbox: CONNECT needs host:port\n")
        return normalize_host(host), port
    except NetworkEntryError:
        raise _Refused(400, "swifty-sandbox: bad host in the request\n") from None


def _parse(head: bytes) -> tuple[str, str, int, bytes | None, int]:
    """(method, host, port, the request to send upstream or None for CONNECT, the
    length of its body)."""
    method, target_text, version, headers = _split(head)
    if method == b"CONNECT":
        host, port = _authority(target_text, None)
        return "CONNECT", host, port, None, 0
    length = _body_length(headers)
    if not target_text.lower().startswith("http://"):
        raise _Refused(400, "swifty-sandbox: only absolute http:// URIs and CONNECT are "
                            "proxied\n")
    rest = target_text[7:]
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0),
              default=len(rest))
    authority, path = rest[:cut], rest[cut:].split("#")[0]
    host, port = _authority(authority, 80)
    return method.decode(), host, port, _rebuild(method, path, version, host, port,
                                                 headers), length


def _split(head: bytes) -> tuple[bytes, str, bytes, list[bytes]]:
    """A request head's method, target, version and header lines, each checked."""
    if _CONTROL.search(head):  # a bare CR or LF would split a line for the server only
        raise _Refused(400, "swifty-sandbox: control character in the request\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0") \
            or not parts[0].isalpha() or not parts[0].isupper():
        raise _Refused(400, "swifty-sandbox: not an HTTP proxy request\n")
    method, target, version = parts
    headers: list[bytes] = []
    for line in lines[1:]:
        name, colon, _ = line.partition(b":")
        if not colon or not name or name != name.strip() or b"\r" in line or \
                b"\n" in line or line[:1] in (b" ", b"\t"):
            raise _Refused(400, "swifty-sandbox: malformed header\n")
        headers.append(line)
    try:
        target_text = target.decode("ascii")
    except UnicodeDecodeError:
        raise _Refused(400, "swifty-sandbox: bad request target\n") from None
    return method, target_text, version, headers


def _rebuild(method: bytes, path: str, version: bytes, host: str, port: int,
             headers: list[bytes]) -> bytes:
    """The request as sent upstream: origin-form, the Host its destination's, no
    hop-by-hop header, `Connection: close`."""
    if not path.startswith("/"):
        path = "/" + path
    shown = f"[{host}]" if ":" in host else host
    host_header = shown if port == 80 else f"{shown}:{port}"
    kept = [h for h in headers if h.partition(b":")[0].strip().lower() not in _HOP_BY_HOP]
    return b"\r\n".join([
        method + b" " + path.encode() + b" " + version,
        b"Host: " + host_header.encode(), *kept, b"Connection: close"]) + b"\r\n\r\n"


# What the first line of a client's HTTP request looks like, and each beginning of one.
_REQUEST_LINE = re.compile(rb"[A-Z]+ [^ \r\n]+ HTTP/[0-9](?:\.[0-9])?\r?\n")
_REQUEST_START = re.compile(rb"[A-Z]+(?: (?:[^ \r\n]+(?: (?:H(?:T(?:T(?:P(?:/(?:[0-9]"
                            rb"(?:\.(?:[0-9]\r?)?)?)?)?)?)?)?)?)?)?)?")


def _tunnel(client: socket.socket, upstream: socket.socket, data: bytes, host: str,
            port: int) -> None:
    """A CONNECT tunnel's client side. Plain HTTP inside one (an allowed host's port 80,
    a front serving many names) would carry any number of requests, for any Host: it
    gets what a plain request gets (one request, its Host the tunnel's, nothing after
    it), and what cannot be told apart from the start of one in time is closed.
    Anything else (TLS, SSH, a protocol whose server speaks first) passes as it is."""
    deadline: float | None = None
    try:
        while True:
            if data:
                line = data.split(b"\n", 1)[0] + (b"\n" if b"\n" in data else b"")
                if _REQUEST_LINE.fullmatch(line):
                    break
                if data[:1] == b"\x16" or not _REQUEST_START.fullmatch(line):
                    upstream.sendall(data)  # not HTTP (TLS starts with 0x16)
                    client.settimeout(None)
                    _pump(client, upstream)
                    return
                if len(line) > MAX_HEADER_BYTES:
                    raise _Refused(431)
                if deadline is None:  # from its first byte: a server may speak first
                    deadline = time.monotonic() + HEADER_SECONDS
            client.settimeout(None if deadline is None
                              else max(0.001, deadline - time.monotonic()))
            try:
                chunk = client.recv(8192)
            except TimeoutError:
                raise _Refused(408) from None  # it may still become a request line
            if not chunk:
                raise _Refused(400)
            data += chunk
        head, rest = _read_head(client, data)
        method, target, version, headers = _split(head)
        if version not in (b"HTTP/1.1", b"HTTP/1.0") or method == b"CONNECT":
            raise _Refused(400)  # HTTP/2 with prior knowledge: streams for any host;
            # CONNECT: a proxy upstream would open another tunnel
        length = _body_length(headers)
        path = target
        if target.lower().startswith("http://"):  # absolute-form: its path only
            after = target[7:]
            cut = min((i for i in (after.find("/"), after.find("?")) if i >= 0),
                      default=len(after))
            path = after[cut:]
        client.settimeout(None)
        upstream.sendall(_rebuild(method, path.split("#")[0], version, host, port,
                                  headers) + rest[:length])
    except (_Refused, OSError):
        for sock in (client, upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return
    _send_body(client, upstream, length - len(rest[:length]))


def _body_length(headers: list[bytes]) -> int:
    """The request body's length (RFC 9112 §6.3: none without Content-Length). A
    chunked body is not framed here, and two lengths or both framings are the
    ambiguity smuggling lives on: refused."""
    lengths: set[bytes] = set()
    for line in headers:
        name, _, value = line.partition(b":")
        name = name.lower()
        if name == b"transfer-encoding":
            raise _Refused(411, "swifty-sandbox: a chunked request body is not proxied; "
                                "send its Content-Length\n")
        if name == b"content-length":
            lengths.update(v.strip() for v in value.split(b","))
    if not lengths:
        return 0
    if len(lengths) > 1 or not all(v.isdigit() and len(v) < 19 for v in lengths):
        raise _Refused(400, "swifty-sandbox: bad Content-Length\n")
    return int(lengths.pop())


_REASONS = {400: "Bad Request", 403: "Forbidden", 408: "Request Timeout",
            411: "Length Required", 431: "Request Header Fields Too Large",
            502: "Bad Gateway"}


def _reply(client: socket.socket, status: int, body: str) -> None:
    data = (body or f"{status} {_REASONS[status]}\n").encode()
    head = (f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n"
            "X-Swifty-Sandbox: blocked\r\n\r\n" if status == 403 else
            f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n")
    try:
        client.settimeout(2)
        client.sendall(head.encode() + data)
    except OSError:
        pass


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy until EOF, then pass the EOF on (a half-close, as TCP has it). Through a
    pipe with splice(2) where there is one: the bytes never enter Python (a copy loop
    here ran at half the speed of a direct download)."""
    try:
        if hasattr(os, "splice") and source.gettimeout() is None \
                and sink.gettimeout() is None:
            _splice(source.fileno(), sink.fileno())
        else:
            _copy(source, sink)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _send_body(client: socket.socket, upstream: socket.socket, left: int) -> None:
    """The rest of a plain HTTP request's body, then nothing more: bytes after it
    (another request, pipelined or smuggled) are read and dropped until the client's
    EOF, which is passed on."""
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    try:
        while True:
            n = client.recv_into(buffer)
            if not n:
                break
            if left:
                sent = min(n, left)
                upstream.sendall(view[:sent])
                left -= sent
    except OSError:
        pass
    with contextlib.suppress(OSError):
        upstream.shutdown(socket.SHUT_WR)


def _respond(upstream: socket.socket, client: socket.socket) -> None:
    """The response to a plain HTTP request: each head (interim 1xx ones, then the
    final one) with `Connection: close` in place of the server's connection headers,
    so the client sends nothing more on this connection; then the rest as it comes."""
    data = b""
    try:
        while True:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                if len(data) > MAX_HEADER_BYTES:
                    break  # not a head we can read: passed on as it is
                chunk = upstream.recv(8192)
                if not chunk:
                    break
                data += chunk
                continue
            lines = data[:end].split(b"\r\n")
            status = lines[0].split(b" ")
            if not lines[0].startswith(b"HTTP/1.") or len(status) < 2:
                break
            kept = [h for h in lines[1:]
                    if h.partition(b":")[0].strip().lower() not in _RESPONSE_HOP]
            client.sendall(b"\r\n".join([lines[0], *kept, b"Connection: close"])
                           + b"\r\n\r\n")
            data = data[end + 4:]
            if not (status[1].startswith(b"1") and status[1] != b"101"):
                break  # the final response's head: its body follows as it is
        if data:
            client.sendall(data)
    except OSError:
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)
        return
    _pump(upstream, client)


def _splice(source: int, sink: int) -> None:
    """Through a pipe as large as an unprivileged process may make it, while the budget
    lasts: a default pipe (64 KiB) moves a quarter of `_CHUNK` per pair of calls, and the
    proxy then spent about 1.7 times the processor time per byte (benchmarks/net_proxy.py)."""
    read_end, write_end = os.pipe()
    big = _BIG_PIPES.acquire(blocking=False)
    try:
        chunk = _grow_pipe(write_end) if big else _CHUNK
        while True:
            n = os.splice(source, write_end, chunk)
            if not n:
                return
            while n:
                n -= os.splice(read_end, sink, n)
    finally:
        os.close(read_end)
        os.close(write_end)
        if big:
            _BIG_PIPES.release()


def _grow_pipe(fd: int) -> int:
    """The pipe's capacity after asking for `_PIPE_BYTES` (a lower system limit, or a
    user over its pipe quota, keeps a smaller one: that works too, only slower)."""
    try:
        return fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except OSError:
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    while True:
        n = source.recv_into(buffer)
        if not n:
            return
        sink.sendall(view[:n])


# -- the sandbox's side ---------------------------------------------------------------------

@cache
def forwarder_source() -> str:
    from importlib import resources

    return (resources.files("swifty_sandbox.sandbox.net") / "netforward.py").read_text("utf-8")


def forwarder_argv(fd: int, command: list[str]) -> list[str]:
    """The command behind the forwarder (isolated interpreter, no site: nothing of
    the user's Python environment is imported inside). The interpreter itself, not a
    virtualenv's link to it: its start-up then skips the venv lookups (~9 ms)."""
    python = os.path.realpath(sys.executable)
    return [python, "-I", "-S", "-c", forwarder_source(), str(fd), str(PROXY_PORT), "--",
            *command]


def proxy_env(environ: dict[str, str], port: int = PROXY_PORT) -> dict[str, str]:
    """The variables that make the usual tools use the proxy; the command's own
    loopback (its test servers) stays direct."""
    url = f"http://127.0.0.1:{port}"
    local = "localhost,127.0.0.1,::1"
    env = dict(environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = local
    env.update({
        "PIP_PROXY": url, "npm_config_proxy": url, "npm_config_https_proxy": url,
        "npm_config_noproxy": local, "YARN_HTTP_PROXY": url, "YARN_HTTPS_PROXY": url,
        "CARGO_HTTP_PROXY": url,
    })
    java = (f"-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} "
            f"-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={port} "
            "-Dhttp.nonProxyHosts=localhost|127.0.0.1")
    env["JAVA_TOOL_OPTIONS"] = f"{env['JAVA_TOOL_OPTIONS']} {java}" \
        if env.get("JAVA_TOOL_OPTIONS") else java
    return env


def interpreter_roots() -> tuple[str, ...]:
    """What the forwarder's interpreter reads (for profiles that limit reads)."""
    paths = (os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(
        sys.executable), sys.base_prefix, sys.base_exec_prefix)
    return tuple(dict.fromkeys(p for p in paths if os.path.isdir(p)))


class Egress:
    """The proxy of one run and the sandbox's end of its channel."""

    def __init__(self, policy: NetworkPolicy, *, ask: HostAsk | None = None,
                 resolve: Resolver = system_resolve) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.fd = theirs.detach()  # handed to the sandbox; execute() closes our copy
        self.proxy = Proxy(policy, ours, ask=ask, resolve=resolve)

    def start(self) -> Egress:
        self.proxy.start()
        return self

    def close(self) -> tuple[Event, ...]:
        if self.fd >= 0:  # never handed over (set-up failed before the spawn)
            os.close(self.fd)
            self.fd = -1
        return self.proxy.close()
