"""What a run keeps between runs to start faster (the BPF cache, `linux/bpfcache.py`)
never makes a later run less confined: a forged entry is not loaded, and no confined
command can plant one, even with the home writable."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy import cachefile
from swifty_sandbox.sandbox.linux import observe, seccomp

from .conftest import Runner
from .test_processes import SYSCALL_PROBE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the BPF cache is the Linux backends'")


def _forget() -> None:
    """Nothing kept in this process: the next run reads the disk cache."""
    seccomp.export.cache_clear()
    seccomp.export_rows.cache_clear()
    observe._bpf.cache_clear()  # the violation observer's filter is an entry too


def _entries(home: Path) -> list[Path]:
    folder = home / ".cache" / "swifty-sandbox" / "bpf"
    return sorted(p for p in folder.glob("*") if p.name != "key")


def _allow_all() -> bytes:
    return seccomp._bytes(seccomp.filter_of(()), pfc=False)


def test_a_forged_filter_in_the_cache_never_reaches_the_sandbox(
        confined: Runner, unconfined: Runner, home: Path) -> None:
    """Every entry replaced by an allow-all filter under a MAC made without the secret:
    the run builds its filter again, and the kernel surface still fails with EPERM."""
    command = [sys.executable, str(SYSCALL_PROBE), "keyctl"]
    assert unconfined(command).stdout.strip() != "EPERM", "control: keyctl refused anyway"
    _forget()
    assert confined(command).stdout.strip() == "EPERM"
    entries = _entries(home)
    assert entries, "the run stored no filter"
    for entry in entries:
        entry.write_bytes(cachefile.MAGIC + bytes(32) + _allow_all())
    _forget()
    try:
        assert confined(command).stdout.strip() == "EPERM"
    finally:
        _forget()
    assert all(e.read_bytes()[-len(_allow_all()):] != _allow_all() for e in entries)


@pytest.mark.parametrize("writable_home", [False, True])
def test_a_confined_command_cannot_plant_a_filter(
        attack: Callable[..., object], confined: Runner, home: Path,
        writable_home: bool) -> None:
    """The attack a previous command would prepare for the next: overwrite the cached
    filters (and the MAC secret) with its own. `~/.cache/swifty-sandbox` is protected."""
    if writable_home:
        (home / ".swifty").mkdir(exist_ok=True)
        (home / ".swifty" / "config.yaml").write_text('sandbox: {writable: ["~"]}\n')
    _forget()
    # As after any earlier run (a run that has to make it under a writable home moves it
    # aside afterwards, as planted: reported, not this test's subject).
    (home / ".cache" / "swifty-sandbox").mkdir(parents=True, mode=0o700)
    confined("true")
    entries = _entries(home)
    assert entries
    folder = entries[0].parent
    before = {p: p.read_bytes() for p in (*entries, folder / "key")}
    planted = "\n".join(f"printf forged > '{p}'" for p in before)

    new = folder / ("0" * 64)

    def worked() -> bool:
        return new.exists() or any(p.read_bytes() != data for p, data in before.items())

    def reset() -> None:
        new.unlink(missing_ok=True)
        for p, data in before.items():
            p.write_bytes(data)

    attack(planted + f"\nprintf new > '{new}'", worked, reset)


@pytest.mark.parametrize("kind", cachefile.KINDS)
def test_a_confined_command_cannot_read_the_mac_secret(
        confined: Runner, unconfined: Runner, home: Path, kind: str) -> None:
    """The MAC stops a forged entry only while the secret stays ours: a command that read
    it could forge entries wherever it later found a way to write one (a writable root
    over the cache under Landlock, the agent's own file tools). Each cache folder is
    hidden like the walk cache's."""
    assert cachefile.cached(kind, b"probe", lambda: b"data", max_size=16) == b"data"
    key = home / ".cache" / "swifty-sandbox" / kind / "key"
    command = f"od -An -tx1 '{key}'"
    secret = key.read_bytes()
    assert len(secret) == 32
    control = unconfined(command).stdout.split()
    assert bytes(int(b, 16) for b in control) == secret, "control: the secret unread"
    result = confined(command)
    assert result.exit_code != 0 and not result.stdout.strip(), result
    assert key.read_bytes() == secret


# The attack written so that no decision stops it (the policy refuses a plain
# `printf > ~/.cache/...`): only confinement can.
_OVERWRITE = """\
import os, sys
path = os.path.join(os.environ["HOME"], ".cache", "swifty-sandbox", sys.argv[1], "key")
try:
    with open(path, "wb") as f:
        f.write(b"x" * 32)
    print("wrote")
except OSError as e:
    print("refused", e.errno)
"""


@pytest.mark.parametrize("kind", cachefile.KINDS)
def test_a_writable_home_still_keeps_the_cache_secret(
        unconfined: Runner, home: Path, project: Path, backend: str, kind: str) -> None:
    """With the home writable a command can reach the cache folders' parent: bwrap
    keeps them hidden all the same, so the MAC secret cannot be swapped. Landlock
    cannot (it repairs protected trees only after the run): a README known limit."""
    if backend == "landlock":
        pytest.skip("Landlock: the caches are writable during the run (README known limits)")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text('sandbox: {writable: ["~"]}\n')
    assert cachefile.cached(kind, b"probe", lambda: b"data", max_size=16) == b"data"
    key = home / ".cache" / "swifty-sandbox" / kind / "key"
    secret = key.read_bytes()
    command = [sys.executable, "-c", _OVERWRITE, kind]
    assert unconfined(command).stdout.strip() == "wrote", "control: the key unwritable"
    assert key.read_bytes() != secret
    key.write_bytes(secret)
    _forget()
    result = Sandbox(project, home=home).run(command)
    assert result.exit_code != 125 and "wrote" not in result.stdout, result
    assert key.read_bytes() == secret
