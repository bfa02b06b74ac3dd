"""The seccomp filter, read back as libseccomp's PFC text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from swifty_sandbox.policy.loader import SeccompProfile, load_profile
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
    assert "socketpair" not in found
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
