"""Network by allowlist: host entries, presets, and the decision for one destination.

Pure: the proxy (`sandbox/net/netproxy.py`) resolves names and connects; this module says
whether a host (as the command wrote it) may be reached, and then whether each address
a name resolved to may be connected to.

Entries: `example.com` (that name), `*.example.com` (its subdomains, not itself), `*`
(any name), `HOST:PORT`, an IP (`203.0.113.7`, `[2001:db8::1]:443`), a CIDR
(`10.0.0.0/8`), and presets (`@pypi`, …; `profiles/network.yaml`). Deny entries win.

Addresses that are not public (loopback, RFC 1918, CGNAT, link-local and the cloud
metadata addresses, unique-local, unspecified, multicast, reserved, the local-use NAT64
prefix 64:ff9b:1::/48 whose embedding only its operator knows; also written as
IPv4-mapped/compatible/NAT64/6to4/Teredo IPv6, NAT64 under the well-known prefix or
one the caller discovered) are refused even when an allowed name resolves to them, unless an IP
or CIDR entry names them: otherwise an allowed name whose DNS an attacker controls
(`evil.example.com A 127.0.0.1`, or its AAAA under a DNS64 resolver) reaches the host's
own services.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from swifty_sandbox import profiles
from swifty_sandbox.messages import t

from .yamlnodes import Source, compose, mapping, string_list

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
_6TO4 = ipaddress.IPv6Network("2002::/16")
_COMPAT = ipaddress.IPv6Network("::/96")


class NetworkEntryError(ValueError):
    """An entry that is not a host, pattern, address, CIDR or known preset."""


@dataclass(frozen=True, slots=True)
class HostEntry:
    """One parsed entry. `name`: a lowercase ASCII host name, `*.suffix` or `*`;
    `network`: an address (as a /32 or /128) or a CIDR; `port`: None for any."""

    text: str
    name: str | None = None
    network: IPNetwork | None = None
    port: int | None = None

    @property
    def is_any(self) -> bool:
        return self.name == "*"

    def matches_name(self, host: str, port: int) -> bool:
        if self.name is None or (self.port is not None and self.port != port):
            return False
        if self.name == "*":
            return True
        if self.name.startswith("*."):
            return host.endswith(self.name[1:])
        return host == self.name

    def matches_address(self, address: IPAddress, port: int,
                        nat64: Sequence[ipaddress.IPv6Network] = ()) -> bool:
        if self.network is None or (self.port is not None and self.port != port):
            return False
        return any(a in self.network for a in carried(address, nat64))


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    """The effective allow and deny entries of one run (presets expanded)."""

    allow: tuple[HostEntry, ...] = ()
    deny: tuple[HostEntry, ...] = ()

    @property
    def enabled(self) -> bool:
        """Whether a proxy runs at all: with no entry the sandbox has no network."""
        return bool(self.allow or self.deny)

    def decide(self, host: str, port: int) -> bool | None:
        """For a normalised host (`normalize_host`): False denied, True allowed, None
        not listed (a person may be asked). Deny entries first."""
        address = _address_of(host)
        for entry in self.deny:
            if address is None:
                if entry.matches_name(host, port):
                    return False
            elif entry.matches_address(address, port) or (
                    entry.is_any and entry.port in (None, port)):
                return False
        for entry in self.allow:
            if address is None:
                if entry.matches_name(host, port):
                    return True
            elif entry.matches_address(address, port):
                return True
            elif entry.is_any and entry.port in (None, port) and is_public(address):
                return True  # `*`: any host, but a special address only by its IP
        return None

    def address_allowed(self, address: IPAddress, port: int,
                        nat64: Sequence[ipaddress.IPv6Network] = ()) -> bool:
        """Whether a connection may go to `address` (what the host's name resolved to):
        no deny entry names it, and it is public or an allow entry names it. `nat64`:
        the network-specific NAT64 prefixes in use here (RFC 7050), whose addresses
        stand for the IPv4 address they embed."""
        if any(e.matches_address(address, port, nat64) for e in self.deny):
            return False
        return is_public(address, nat64) or any(e.matches_address(address, port, nat64)
                                                for e in self.allow)


def embedded_ipv4(address: IPAddress,
                  nat64: Sequence[ipaddress.IPv6Network] = ()) -> IPAddress:
    """The IPv4 address an IPv6 one stands for (mapped, compatible, NAT64 under the
    well-known prefix or one of `nat64`, 6to4), else `address` itself: a NAT64 gateway
    or 6to4 relay delivers it there, to the host's own services too."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        packed = address.packed
        if address in _NAT64 or (address in _COMPAT and int(address) > 1):
            return ipaddress.IPv4Address(packed[12:])
        if address in _6TO4:
            return ipaddress.IPv4Address(packed[2:6])
        for prefix in nat64:
            if address in prefix:
                return nat64_ipv4(address, prefix)
    return address


def carried(address: IPAddress,
            nat64: Sequence[ipaddress.IPv6Network] = ()) -> tuple[IPAddress, ...]:
    """`address` and every IPv4 address a translator or relay would take it to:
    `embedded_ipv4`'s, and a Teredo address's server and (obfuscated) client."""
    found = dict.fromkeys((address, embedded_ipv4(address, nat64)))
    if isinstance(address, ipaddress.IPv6Address) and address.teredo is not None:
        found.update(dict.fromkeys(address.teredo))
    return tuple(found)


def nat64_ipv4(address: ipaddress.IPv6Address, prefix: ipaddress.IPv6Network
               ) -> ipaddress.IPv4Address:
    """The IPv4 address embedded after `prefix` (RFC 6052 §2.2: /32 to /96, bits 64 to 71
    left out)."""
    start = prefix.prefixlen // 8
    octets = [address.packed[i] for i in range(start, 16) if i != 8][:4]
    return ipaddress.IPv4Address(bytes(octets))


# Not public: what a connection must never reach through a name. Listed, not
# `is_global`: documentation and benchmarking ranges are left alone (some resolvers
# and egress gateways answer with them).
_SPECIAL = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
    "100.64.0.0/10", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4",
    "::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    # RFC 8215's local-use NAT64 prefix: where the IPv4 address sits inside depends on
    # a prefix length only its operator knows, so it may hide any of the above.
    "64:ff9b:1::/48"))


def is_public(address: IPAddress, nat64: Sequence[ipaddress.IPv6Network] = ()) -> bool:
    """Not loopback, private (RFC 1918), CGNAT 100.64/10, link-local (the metadata
    169.254.169.254), unique-local fc00::/7 (fd00:ec2::254), unspecified, multicast,
    reserved or local-use NAT64 — also when an IPv6 form carries such an IPv4 address."""
    return not any(candidate in network for candidate in carried(address, nat64)
                   for network in _SPECIAL)


def _address_of(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def normalize_host(text: str) -> str:
    """A destination host as the proxy compares it: lowercase, no trailing dot, IDNA
    (ASCII), brackets off IPv6, and every numeric spelling of an IPv4 address the C
    library would accept (`2130706433`, `0x7f.1`, `017700000001`, `127.1`) as its
    dotted form — so no spelling slips past an IP entry or the address checks.
    Raises NetworkEntryError for anything that is not a host name or address."""
    host = text.strip()
    if "%" in host:  # an IPv6 zone (`fe80::1%eth0`) or a percent-encoded name
        raise NetworkEntryError(t("net.bad_host", host=text))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            return str(ipaddress.IPv6Address(host))  # a zone (`%eth0`) is refused here
        except ValueError:
            raise NetworkEntryError(t("net.bad_host", host=text)) from None
    if ":" in host:
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError:
            raise NetworkEntryError(t("net.bad_host", host=text)) from None
    if host.endswith(".") and not host.endswith(".."):
        host = host[:-1]
    if not host or len(host) > 253:
        raise NetworkEntryError(t("net.bad_host", host=text))
    if re.fullmatch(r"[0-9a-fA-FxX.]+", host) and not re.search(r"[g-wyzG-WYZ]", host):
        import socket  # here: most hosts are names, and `check` never gets this far

        try:  # the C library's reading of a numeric host (what a resolver would do)
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            pass
    ascii_host = host.lower() if host.isascii() else _idna(host, text)
    labels = ascii_host.split(".")
    if not all(_LABEL.match(label) for label in labels):
        raise NetworkEntryError(t("net.bad_host", host=text))
    if all(label.isdigit() for label in labels):
        raise NetworkEntryError(t("net.bad_host", host=text))  # 999.1.1.1: no address
    return ascii_host


def _idna(host: str, text: str) -> str:
    """A non-ASCII name as clients send it: UTS 46 non-transitional (IDNA 2008, what
    browsers, curl and the resolvers' libidn2 do). Python's own `idna` codec is IDNA
    2003, which maps `faß.test` to `fass.test`: another domain, and not the one
    clients ask for."""
    import idna  # here: only a name that is not ASCII needs it

    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii").lower()
    except (UnicodeError, idna.IDNAError):
        raise NetworkEntryError(t("net.bad_host", host=text)) from None


def split_host_port(text: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address/CIDR."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise NetworkEntryError(t("net.bad_host", host=text))
        rest = text[close + 1:]
        if rest and not rest.startswith(":"):
            raise NetworkEntryError(t("net.bad_host", host=text))
        return text[:close + 1], _port(rest[1:], text) if rest else None
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, _port(port, text)
    return text, None


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise NetworkEntryError(t("net.bad_port", entry=entry))
    return int(text)


def parse_entry(text: str) -> HostEntry:
    """One entry (not a preset). Raises NetworkEntryError with the reason."""
    raw = text.strip()
    if not raw or any(c.isspace() for c in raw) or "@" in raw:
        raise NetworkEntryError(t("net.bad_host", host=text))
    if "://" in raw:
        raise NetworkEntryError(t("net.bad_url", entry=text))
    if "/" in raw:  # a CIDR, optionally in brackets with a port: [fd00::/8]:443
        host, port = split_host_port(raw) if raw.startswith("[") else (raw, None)
        host = host.strip("[]")
        try:
            return HostEntry(text, network=ipaddress.ip_network(host, strict=False),
                             port=port)
        except ValueError:
            raise NetworkEntryError(t("net.bad_cidr", entry=text)) from None
    host, port = split_host_port(raw)
    if host == "*":
        return HostEntry(text, name="*", port=port)
    if host.startswith("*."):
        suffix = normalize_host(host[2:])
        if _address_of(suffix) is not None:
            raise NetworkEntryError(t("net.bad_wildcard", entry=text))
        return HostEntry(text, name="*." + suffix, port=port)
    if "*" in host:
        raise NetworkEntryError(t("net.bad_wildcard", entry=text))
    name = normalize_host(host)
    address = _address_of(name)
    if address is not None:
        return HostEntry(text, network=ipaddress.ip_network(address), port=port)
    return HostEntry(text, name=name, port=port)


# -- presets ---------------------------------------------------------------------------

@functools.cache
def presets() -> dict[str, tuple[str, ...]]:
    """`profiles/network.yaml`: preset name (without `@`) → its host entries."""
    text = profiles.read("network.yaml")
    source = Source("<profiles/network.yaml>", text)
    root = compose(source)
    assert root is not None
    names = tuple(k.value for k, _ in root.value)
    return {name: tuple(string_list(source, name, node))
            for name, (_, node) in mapping(source, root, names).items()}


def expand(texts: Iterable[str]) -> tuple[HostEntry, ...]:
    """Entries with presets expanded, duplicates dropped; raises NetworkEntryError."""
    out: dict[str, HostEntry] = {}
    for text in texts:
        if text.startswith("@"):
            known = presets()
            if text[1:] not in known:
                raise NetworkEntryError(t("net.unknown_preset", name=text,
                                          known=", ".join("@" + k for k in known)))
            for item in known[text[1:]]:
                out.setdefault(item, parse_entry(item))
        else:
            word = text.strip().lower()
            if word in presets():  # `pypi` meant `@pypi`: as a host it names nothing
                raise NetworkEntryError(t("net.preset_without_at", entry=text,
                                          preset="@" + word))
            out.setdefault(text, parse_entry(text))
    return tuple(out.values())


def build(allow: Sequence[str], deny: Sequence[str]) -> NetworkPolicy:
    return NetworkPolicy(expand(allow), expand(deny))


def covers(wide: HostEntry, narrow: HostEntry) -> bool:
    """Whether every destination `narrow` allows, `wide` allows too."""
    if wide.port is not None and wide.port != narrow.port:
        return False
    if narrow.network is not None:
        return wide.network is not None and narrow.network.version == wide.network.version \
            and narrow.network.subnet_of(wide.network)  # type: ignore[arg-type]
    if wide.name is None or narrow.name is None:
        return False
    if wide.name == "*":
        return True
    if narrow.name == "*":
        return False
    if wide.name.startswith("*."):
        return narrow.name.endswith(wide.name[1:])
    return narrow.name == wide.name


def project_allow(user: Sequence[str], project: Sequence[str]) -> list[str]:
    """The entries of a committed file's `network.allow` that the user's own config
    does not already allow (each ignored with a warning: a repository must not open
    the network; those it does allow add nothing)."""
    mine = expand(user)
    refused = []
    for text in project:
        try:
            entries = expand([text])
        except NetworkEntryError:
            refused.append(text)
            continue
        if not all(any(covers(w, n) for w in mine) for n in entries):
            refused.append(text)
    return refused


def wide_entry(entry: HostEntry) -> str | None:
    """Why an allow entry opens more than a few hosts (for `audit`), or None."""
    if entry.name == "*":
        return t("net.wide_any")
    if entry.name is not None and entry.name.startswith("*.") and "." not in entry.name[2:]:
        return t("net.wide_tld")
    if entry.network is not None:
        if entry.network.num_addresses > 1:
            return t("net.wide_range")
        if not is_public(entry.network.network_address):
            return t("net.wide_private")
    return None
