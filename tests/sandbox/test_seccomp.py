"""The seccomp filter, read back as libseccomp's PFC text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from swifty_sandbox.policy import PolicyFileError
from swifty_sandbox.policy.profile import SeccompProfile, load_profile
from swifty_sandbox.sandbox.linux.seccomp import export


@pytest.fixture(scope="module")
def pfc() -> str:
    return export(load_profile("default", Path("/")).seccomp, pfc=True).decode()


def actions(pfc: str) -> dict[str, set[str]]:
    """syscall name → the actions its rules end in."""
    found: dict[str, set[str]] = {}
    current = None
    for line in pfc.splitlines():
        m = re.search(r'filter for syscall "(\w+)"', line)
        if m:
            current = m.group(1)
        elif line.strip() == "# default action":
            current = None
        elif current and "action" in line:
            found.setdefault(current, set()).add(line.split("action")[1].strip(" ;"))
    return found


@pytest.mark.parametrize("call", ["ptrace", "mount", "unshare", "setns", "bpf",
                                  "perf_event_open", "keyctl", "kexec_load", "init_module",
                                  "io_uring_setup", "userfaultfd", "process_vm_readv"])
def test_default_profile_fails_the_kernel_surface_with_eperm(pfc: str, call: str) -> None:
    assert actions(pfc)[call] == {"ERRNO(1)"}


@pytest.mark.parametrize("call", ["clone3", "open_tree", "fsopen"])
def test_enosys_where_libc_falls_back(pfc: str, call: str) -> None:
    assert actions(pfc)[call] == {"ERRNO(38)"}


def test_argument_filters(pfc: str) -> None:
    found = actions(pfc)
    assert found["clone"] == {"ERRNO(1)"}  # only with CLONE_NEW* flags; else default
    assert found["ioctl"] == {"ERRNO(1)"}
    assert found["socket"] == {"ERRNO(1)"}
    assert found["socketpair"] == {"ERRNO(1)"}
    pair_rules = pfc[pfc.index('"socketpair"'):]
    pair_rules = pair_rules[:pair_rules.index("# filter for syscall", 1)]
    for allowed in (1, 5):  # SOCK_STREAM, SOCK_SEQPACKET: flags masked off
        assert f"$a1.lo32 & 0x0000000f == {allowed})\n" not in pair_rules
    for denied in (0, 2, 3, 4, 15):  # SOCK_DGRAM, and SOCK_RAW (a datagram in AF_UNIX)
        assert f"$a1.lo32 & 0x0000000f == {denied})\n" in pair_rules
    assert "$a0.lo32 == 1" in pair_rules  # AF_UNIX only
    socket_rules = pfc[pfc.index('"socket"'):pfc.index("# default action")]
    for allowed in (2, 10, 16):  # AF_INET, AF_INET6, AF_NETLINK
        assert f"$a0.lo32 == {allowed})\n" not in socket_rules
    for denied in (1, 17, 31, 40):  # AF_UNIX, AF_PACKET, AF_BLUETOOTH, AF_VSOCK
        assert f"$a0.lo32 == {denied})\n" in socket_rules
    assert "$a1.lo32 & 0xffffffff == 21522" in pfc  # ioctl TIOCSTI (0x5412)
    assert "# default action\n  action ALLOW;" in pfc


def test_default_action_is_allow_and_other_arches_are_killed(pfc: str) -> None:
    assert "action KILL" in pfc  # the bad-architecture branch


def test_unknown_syscall_names_are_skipped() -> None:
    profile = SeccompProfile(("ptrace", "no_such_call_anywhere"), (), False, (), ())
    text = export(profile, pfc=True).decode()
    assert '"ptrace"' in text and "no_such_call" not in text


def test_bpf_export_is_cached_and_binary() -> None:
    profile = load_profile("default", Path("/")).seccomp
    first = export(profile)
    assert export(profile) is first
    assert len(first) % 8 == 0  # struct sock_filter instructions


def test_socketpair_types_are_profile_data(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "extends: default\nseccomp:\n  socketpairs: [SOCK_STREAM, SOCK_DGRAM]\n")
    assert load_profile("p.yaml", tmp_path).seccomp.socketpairs == ("SOCK_STREAM",
                                                                     "SOCK_DGRAM")
    assert load_profile("permissive", tmp_path).seccomp.socketpairs == ("SOCK_STREAM",
                                                                        "SOCK_SEQPACKET")
    (tmp_path / "bad.yaml").write_text("seccomp:\n  socketpairs: [SOCK_DATAGRAM]\n")
    with pytest.raises(PolicyFileError, match="SOCK_DATAGRAM"):
        load_profile("bad.yaml", tmp_path)

