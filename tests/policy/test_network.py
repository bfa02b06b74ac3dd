"""Network entries, presets, the allow/deny decision, `network:` in config, audit."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import jsonschema
import pytest

from swifty_sandbox.policy import PolicyFileError, StoreError
from swifty_sandbox.policy.audit import audit
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.network import (
    NetworkEntryError,
    build,
    embedded_ipv4,
    expand,
    is_public,
    nat64_ipv4,
    normalize_host,
    parse_entry,
    presets,
)
from swifty_sandbox.policy.settings import load_settings
from swifty_sandbox.policy.store import add_allowed_host


@pytest.mark.parametrize(("spelling", "canonical"), [
    ("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("017700000001", "127.0.0.1"),
    ("127.1", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
    ("EXAMPLE.Com.", "example.com"), ("bücher.de", "xn--bcher-kva.de"),
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1"), ("::1", "::1"), ("[0:0::1]", "::1"),
    ("deadbeef.cafe", "deadbeef.cafe"),
])
def test_every_spelling_of_a_host_is_one_name(spelling: str, canonical: str) -> None:
    assert normalize_host(spelling) == canonical


@pytest.mark.parametrize("bad", ["", "a b", "exa mple.com", "ex..com", "-x.com", "x.com..",
                                 "999.1.1.1", "[::1%eth0]", "fe80::1%eth0", "a_b@c",
                                 "x" * 300, "ex/ample.com", "[::1"])
def test_what_is_no_host(bad: str) -> None:
    with pytest.raises(NetworkEntryError):
        parse_entry(bad)


@pytest.mark.parametrize("bad", ["https://pypi.org", "pypi.org:0", "pypi.org:65536",
                                 "pypi.org:x", "foo*.com", "*foo.com", "*.*.com",
                                 "10.0.0.0/33", "user@pypi.org", "*.127.0.0.1"])
def test_bad_entries_are_refused(bad: str) -> None:
    with pytest.raises(NetworkEntryError):
        parse_entry(bad)


def test_entry_kinds() -> None:
    assert parse_entry("PyPI.org").name == "pypi.org"
    assert parse_entry("example.com:8443").port == 8443
    assert parse_entry("*.example.com").name == "*.example.com"
    v6 = parse_entry("[2001:db8::1]:443")
    assert (v6.network, v6.port) == (ipaddress.ip_network("2001:db8::1/128"), 443)
    assert parse_entry("10.0.0.0/8").network == ipaddress.ip_network("10.0.0.0/8")
    assert parse_entry("127.1:80").network == ipaddress.ip_network("127.0.0.1/32")


def test_presets_are_real_hosts() -> None:
    known = presets()
    assert {"pypi", "npm", "crates", "go", "github", "rubygems", "maven"} <= set(known)
    assert "files.pythonhosted.org" in known["pypi"]
    for name in known:
        assert expand([f"@{name}"])  # every host in the file parses
    with pytest.raises(NetworkEntryError, match="@pypi"):
        expand(["@pip"])


def test_deny_first_then_allow() -> None:
    policy = build(["*.example.com", "api.test:8443", "@pypi", "*"], ["evil.example.com"])
    assert policy.decide("a.example.com", 443) is True
    assert policy.decide("evil.example.com", 443) is False  # deny wins over both allows
    assert policy.decide("pypi.org", 443) is True
    narrow = build(["*.example.com", "api.test:8443"], [])
    assert narrow.decide("example.com", 443) is None  # `*.` is the subdomains only
    assert narrow.decide("badexample.com", 443) is None
    assert narrow.decide("api.test", 8443) is True
    assert narrow.decide("api.test", 443) is None
    assert build([], []).enabled is False
    assert build(["x.test"], []).enabled and build([], ["x.test"]).enabled


def test_a_star_does_not_open_special_addresses() -> None:
    policy = build(["*"], [])
    assert policy.decide("8.8.8.8", 53) is True
    assert policy.decide("127.0.0.1", 80) is None
    assert policy.decide("::ffff:7f00:1", 80) is None
    assert policy.decide("169.254.169.254", 80) is None
    assert build(["*"], ["*"]).decide("8.8.8.8", 53) is False


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1",
    "169.254.169.254", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1",
    "fd00:ec2::254", "fc00::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
    "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::10.0.0.1", "2002:7f00:1::1",
    # RFC 8215 local-use NAT64: the IPv4 address inside sits where its operator's prefix
    # length puts it (here 127.0.0.1 under a /48, and 10.0.0.1 under a /64)
    "64:ff9b:1:7f00:1::", "64:ff9b:1:0:a:0:100::", "64:ff9b:1::8.8.8.8",
    # Teredo: a relay takes it to its server's IPv4 address, or its client's (inverted)
    "2001:0:7f00:1::", "2001:0:808:808:0:0:f5ff:fffe",
])
def test_special_addresses(address: str) -> None:
    ip = ipaddress.ip_address(address)
    assert not is_public(ip)
    policy = build(["*", "allowed.test"], [])
    assert not policy.address_allowed(ip, 80)  # an allowed name resolving there: refused


# RFC 6052 §2.4's table: 192.0.2.33 under a prefix of each length.
RFC6052 = [("2001:db8::/32", "2001:db8:c000:221::"),
           ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
           ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
           ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
           ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"),
           ("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33")]


@pytest.mark.parametrize(("prefix", "address"), RFC6052)
def test_nat64_embedding(prefix: str, address: str) -> None:
    network = ipaddress.IPv6Network(prefix)
    ip = ipaddress.IPv6Address(address)
    assert nat64_ipv4(ip, network) == ipaddress.IPv4Address("192.0.2.33")
    assert embedded_ipv4(ip, [network]) == ipaddress.IPv4Address("192.0.2.33")


def test_a_network_specific_nat64_prefix_hides_no_private_address() -> None:
    """On a DNS64 host with an operator prefix (RFC 7050 discovers it), an allowed name
    whose A record is 10.0.0.1 comes back as that prefix and 10.0.0.1: refused once the
    prefix is known; the control: the same address without it looks public."""
    prefix = ipaddress.IPv6Network("2001:db8:64::/96")
    hidden = ipaddress.IPv6Address("2001:db8:64::10.0.0.1")
    policy = build(["*", "allowed.test"], [])
    assert policy.address_allowed(hidden, 80)  # the control: nothing to decode it by
    assert not is_public(hidden, [prefix])
    assert not policy.address_allowed(hidden, 80, [prefix])
    assert build(["10.0.0.0/8"], []).address_allowed(hidden, 80, [prefix])  # named
    assert policy.address_allowed(ipaddress.IPv6Address("2001:db8:64::8.8.8.8"), 80,
                                  [prefix])


@pytest.mark.parametrize(("entry", "other"), [
    ("faß.test", "fass.test"), ("βόλος.test", "βόλοσ.test"),
])
def test_a_name_entry_is_the_name_clients_send(entry: str, other: str) -> None:
    """IDNA 2003 (Python's codec) maps the deviation characters away: `faß.test`
    became `fass.test`, another domain, and not what browsers, curl or libidn2 send
    (UTS 46 non-transitional). The control: the old codec does map them together."""
    assert entry.encode("idna") == other.encode("idna")  # the hazard
    policy = build([entry], [])
    assert policy.decide(normalize_host(other), 443) is None
    import idna

    sent = idna.encode(entry, uts46=True, transitional=False).decode()  # what curl sends
    assert sent.startswith("xn--")
    assert policy.decide(sent, 443) is True


@pytest.mark.parametrize("bad", ["a\u200db.test", "a\u200cb.test"])
def test_joiners_are_no_host(bad: str) -> None:
    """The other deviation characters (ZWJ, ZWNJ outside the scripts that need them):
    no name at all, rather than one that drops them (IDNA 2003 did)."""
    with pytest.raises(NetworkEntryError):
        parse_entry(bad)


@pytest.mark.parametrize("address", ["8.8.8.8", "151.101.0.223", "2606:4700::1",
                                     "203.0.113.80"])
def test_public_addresses(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))
    assert build(["x.test"], []).address_allowed(ipaddress.ip_address(address), 443)


def test_an_ip_entry_opens_that_address_only() -> None:
    policy = build(["127.0.0.1:8080", "10.0.0.0/8"], ["10.9.0.0/16"])
    loop = ipaddress.ip_address("127.0.0.1")
    assert policy.address_allowed(loop, 8080)
    assert not policy.address_allowed(loop, 8081)
    assert policy.address_allowed(ipaddress.ip_address("::ffff:127.0.0.1"), 8080)
    assert policy.address_allowed(ipaddress.ip_address("10.1.1.1"), 1)
    assert not policy.address_allowed(ipaddress.ip_address("10.9.1.1"), 1)  # denied
    assert policy.address_allowed(ipaddress.ip_address("8.8.8.8"), 1)  # public
    assert policy.decide("127.0.0.1", 8080) is True
    assert policy.decide("localhost", 8080) is None  # the name is not the address


# -- config -------------------------------------------------------------------------------

def _config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("word", ["pypi", "PyPI", "npm", " go "])
def test_a_preset_named_without_its_at_is_refused_with_the_spelling(word: str) -> None:
    """`pypi` was taken as the host `pypi`, which resolves nowhere: the run then failed
    on a network it was told it had."""
    with pytest.raises(NetworkEntryError, match=f"write `@{word.strip().lower()}`"):
        expand([word])
    # the control: a host of that name is still nameable, fully qualified
    assert expand([f"{word.strip()}."])[0].name == word.strip().lower()


def test_a_preset_without_its_at_is_a_usage_error_of_the_option(project: Path) -> None:
    from click.testing import CliRunner

    from swifty_sandbox.cli.main import main

    for command in ("run", "serve"):
        args = [command, "--project", str(project), "--allow-net", "pypi",
                *(["--", "true"] if command == "run" else [])]
        result = CliRunner().invoke(main, args, input="")
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--allow-net'" in result.stderr
        assert "write `@pypi`" in result.stderr and "Usage:" in result.stderr


def test_a_preset_without_its_at_in_config_is_an_error_at_its_line(
        project: Path, home: Path) -> None:
    _config(home / ".swifty/config.yaml", "network:\n  allow:\n    - pypi\n")
    with pytest.raises(PolicyFileError, match="@pypi") as e:
        load_settings(PolicyFiles(project, home))
    assert e.value.line == 3


def test_config_network(project: Path, home: Path) -> None:
    _config(home / ".swifty/config.yaml",
            "network:\n  allow: ['@pypi', '*.example.com']\n  deny: [bad.example.com]\n")
    settings = load_settings(PolicyFiles(project, home))
    assert settings.network_allow == ("@pypi", "*.example.com")
    assert settings.network_deny == ("bad.example.com",)


def test_a_bad_entry_is_an_error_at_its_line(project: Path, home: Path) -> None:
    _config(home / ".swifty/config.yaml", "network:\n  allow:\n    - pypi.org\n"
            "    - https://evil.com\n")
    with pytest.raises(PolicyFileError) as e:
        load_settings(PolicyFiles(project, home))
    assert (e.value.line, e.value.column) == (4, 7)
    _config(home / ".swifty/config.yaml", "network:\n  allow: ['@nope']\n")
    with pytest.raises(PolicyFileError, match="@nope"):
        load_settings(PolicyFiles(project, home))
    _config(home / ".swifty/config.yaml", "network:\n  open: [x]\n")
    with pytest.raises(PolicyFileError):
        load_settings(PolicyFiles(project, home))


def test_a_project_may_narrow_not_widen(project: Path, home: Path) -> None:
    _config(home / ".swifty/config.yaml", "network:\n  allow: ['*.example.com']\n")
    _config(project / ".swifty/config.yaml",
            "network:\n  allow: [evil.com, api.example.com, '*']\n  deny: [x.example.com]\n")
    settings = load_settings(PolicyFiles(project, home))
    # The committed list narrows the user's to what both allow; the rest is ignored.
    assert settings.network_allow == ("api.example.com",)
    assert settings.network_deny == ("x.example.com",)
    warned = " ".join(settings.warnings)
    assert "network.allow: evil.com`" in warned and "network.allow: *`" in warned
    assert "api.example.com" not in warned
    policy = build(settings.network_allow, settings.network_deny)
    assert policy.decide("x.example.com", 443) is False
    assert policy.decide("evil.com", 443) is None
    assert policy.decide("a.example.com", 443) is None
    # Deny entries add up with the user's.
    _config(home / ".swifty/config.yaml", "network:\n  deny: [y.test]\n")
    assert load_settings(PolicyFiles(project, home)).network_deny == ("y.test",
                                                                       "x.example.com")


def test_config_schema_knows_network() -> None:
    import json
    from importlib import resources

    schema = json.loads((resources.files("swifty_sandbox.profiles")
                         / "config.schema.json").read_text())
    jsonschema.validate({"network": {"allow": ["@pypi"], "deny": ["x.test"]}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"network": {"permit": ["x"]}}, schema)


def test_audit_flags_wide_entries(project: Path, home: Path) -> None:
    path = _config(home / ".swifty/config.yaml", "network:\n  allow:\n    - pypi.org\n"
                   "    - '*'\n    - '*.com'\n    - 10.0.0.0/8\n    - 127.0.0.1:5432\n"
                   "    - '*.example.com'\n")
    found = [f for f in audit([path], project, home) if f.id == "risky-network"]
    assert [(f.line, f.message.split("`")[1]) for f in found] == [
        (4, "*"), (5, "*.com"), (6, "10.0.0.0/8"), (7, "127.0.0.1:5432")]


# -- "always": the user's config gets the host ----------------------------------------------

@pytest.mark.parametrize(("before", "after"), [
    (None, "network:\n  allow:\n    - \"pypi.org\"\n"),
    ("# mine\nsandbox:\n  mode: auto\n",
     "# mine\nsandbox:\n  mode: auto\nnetwork:\n  allow:\n    - \"pypi.org\"\n"),
    ("network:\n  allow:\n    - a.test  # keep\n  deny: [b.test]\n",
     "network:\n  allow:\n    - a.test  # keep\n    - \"pypi.org\"\n  deny: [b.test]\n"),
    ("network:\n  allow: [a.test]\n", "network:\n  allow: [a.test, \"pypi.org\"]\n"),
    ("network:\n  allow: []\n", "network:\n  allow: [\"pypi.org\"]\n"),
    ("network:\n  deny: [b.test]\n",
     "network:\n  deny: [b.test]\n  allow:\n    - \"pypi.org\"\n"),
])
def test_always_adds_the_host_keeping_the_file(home: Path, before: str | None,
                                               after: str) -> None:
    path = home / ".swifty" / "config.yaml"
    if before is not None:
        _config(path, before)
    files = PolicyFiles(home, home)
    assert add_allowed_host(files, "pypi.org")
    assert path.read_text() == after
    assert not add_allowed_host(files, "pypi.org")  # once


def test_always_refuses_what_it_cannot_extend(home: Path, outside_temp: Path) -> None:
    path = _config(home / ".swifty/config.yaml", "{network: {allow: [a.test]}}\n")
    with pytest.raises(StoreError):
        add_allowed_host(PolicyFiles(home, home), "pypi.org")
    assert path.read_text() == "{network: {allow: [a.test]}}\n"
    path.unlink()
    target = _config(outside_temp / "elsewhere.yaml", "")
    path.symlink_to(target)
    with pytest.raises(StoreError):
        add_allowed_host(PolicyFiles(home, home), "pypi.org")
    assert target.read_text() == ""


def test_audit_of_a_committed_wide_entry_is_project_loosens(project: Path,
                                                            home: Path) -> None:
    path = _config(project / ".swifty/config.yaml", "network:\n  allow: ['*']\n")
    assert [f.id for f in audit([path], project, home)] == ["project-loosens"]
