"""The BPF cache (`sandbox/linux/bpfcache.py`, in the store of `policy/cachefile.py`): a
valid entry is used, anything else is built again — a damaged, forged, foreign or
misplaced entry never reaches bwrap."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox.policy import cachefile
from swifty_sandbox.policy.profile import load_profile
from swifty_sandbox.sandbox.linux import bpfcache, seccomp
from swifty_sandbox.sandbox.spec.syscalls import syscall_rules

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="libseccomp is Linux's")


@pytest.fixture(autouse=True)
def _fresh(home: Path) -> Iterator[None]:
    """No filter kept in this process: each call asks the disk cache."""
    seccomp.export.cache_clear()
    seccomp.export_rows.cache_clear()
    yield
    seccomp.export.cache_clear()
    seccomp.export_rows.cache_clear()


ROWS = syscall_rules(load_profile("default", Path("/")).seccomp)


def built() -> bytes:
    return seccomp._bytes(seccomp.filter_of(ROWS), pfc=False)


def allow_all() -> bytes:
    return seccomp._bytes(seccomp.filter_of(()), pfc=False)


def entries(home: Path) -> list[Path]:
    folder = home / ".cache" / "swifty-sandbox" / "bpf"
    return sorted(p for p in folder.glob("*") if p.name != "key")


def never() -> bytes:
    raise AssertionError("built although a valid entry is there")


def test_a_cold_build_is_stored_and_then_used(home: Path) -> None:
    assert bpfcache.cached(repr(ROWS), built) == built()
    [entry] = entries(home)
    assert entry.stat().st_mode & 0o777 == 0o600
    assert (entry.parent.stat().st_mode & 0o777) == 0o700
    assert bpfcache.cached(repr(ROWS), never) == built()  # read, not built
    assert seccomp.export(load_profile("default", Path("/")).seccomp) == built()


def test_other_rows_are_another_entry(home: Path) -> None:
    bpfcache.cached(repr(ROWS), built)
    assert bpfcache.cached(repr(ROWS[:-1]), allow_all) == allow_all()
    assert len(entries(home)) == 2
    assert bpfcache.cached(repr(ROWS), never) == built()


def forge(entry: Path, mac: bytes, data: bytes) -> None:
    entry.write_bytes(cachefile.MAGIC + mac + data)


@pytest.mark.parametrize("damage", ["wrong mac", "truncated", "flipped bit", "no magic",
                                    "empty", "odd size"])
def test_a_damaged_or_forged_entry_is_built_again(home: Path, damage: str) -> None:
    bpfcache.cached(repr(ROWS), built)
    [entry] = entries(home)
    raw = entry.read_bytes()
    head = len(cachefile.MAGIC)
    mac, data = raw[head:head + 32], raw[head + 32:]
    if damage == "wrong mac":  # an allow-all filter, MAC'd without the secret
        forge(entry, bytes(32), allow_all())
    elif damage == "truncated":
        entry.write_bytes(raw[:-8])
    elif damage == "flipped bit":
        entry.write_bytes(raw[:-1] + bytes([raw[-1] ^ 1]))
    elif damage == "no magic":
        entry.write_bytes(b"x" * head + mac + data)
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a MAC that checks over bytes that are no BPF: the caller's check refuses
        secret = (entry.parent / "key").read_bytes()
        key = bpfcache._key(repr(ROWS))
        assert key is not None
        forge(entry, cachefile.digest(key + data + b"\0", secret), data + b"\0")
    assert bpfcache.cached(repr(ROWS), built) == built()
    assert entry.read_bytes() == raw  # replaced by the real one


def test_the_right_mac_is_what_makes_an_entry_used(home: Path) -> None:
    """The control of the forgery above: the same allow-all bytes with the MAC made
    from the secret are used (so only the MAC told the forgery apart)."""
    bpfcache.cached(repr(ROWS), built)
    [entry] = entries(home)
    secret = (entry.parent / "key").read_bytes()
    key = bpfcache._key(repr(ROWS))
    assert key is not None
    forge(entry, cachefile.digest(key + allow_all(), secret), allow_all())
    assert bpfcache.cached(repr(ROWS), never) == allow_all()


def test_a_changed_secret_voids_every_entry(home: Path) -> None:
    bpfcache.cached(repr(ROWS), built)
    [entry] = entries(home)
    (entry.parent / "key").write_bytes(os.urandom(32))
    assert bpfcache.cached(repr(ROWS), lambda: b"\0" * 8) == b"\0" * 8


@pytest.mark.parametrize("where", ["entry group-writable", "folder group-writable",
                                   "entry is a link", "folder is a link", "short key"])
def test_nothing_is_read_from_a_place_others_could_write(home: Path, where: str) -> None:
    bpfcache.cached(repr(ROWS), built)
    [entry] = entries(home)
    folder = entry.parent
    if where == "entry group-writable":
        entry.chmod(0o620)
    elif where == "folder group-writable":
        folder.chmod(0o770)
    elif where == "entry is a link":
        moved = home / "elsewhere"
        entry.rename(moved)
        entry.symlink_to(moved)
    elif where == "folder is a link":
        folder.rename(home / "bpf-elsewhere")
        folder.symlink_to(home / "bpf-elsewhere")
    else:
        (folder / "key").write_bytes(b"short")
    calls: list[int] = []

    def build() -> bytes:
        calls.append(1)
        return built()

    assert bpfcache.cached(repr(ROWS), build) == built()
    assert calls == [1]


def test_no_cache_without_a_known_libseccomp(home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """LD_LIBRARY_PATH may make the loader pick another libseccomp: built every time."""
    monkeypatch.setenv("LD_LIBRARY_PATH", str(home))
    assert bpfcache.cached(repr(ROWS), built) == built()
    assert not entries(home)
