"""One syscall policy, two renderings: libseccomp's BPF and the OCI `linux.seccomp`
object are made from the same rows, and give the same filter."""

from __future__ import annotations

import errno
import os
import socket
import sys
import termios
from pathlib import Path
from typing import Any

import pytest

from swifty_sandbox.policy.profile import SeccompProfile, builtin_profiles, load_profile
from swifty_sandbox.sandbox.linux.seccomp import _import_pyseccomp, export
from swifty_sandbox.sandbox.oci.seccomp import oci_seccomp
from swifty_sandbox.sandbox.spec.syscalls import (
    ENOSYS,
    EPERM,
    FAMILIES,
    IOCTLS,
    SOCK_TYPES,
    Arg,
    SyscallRule,
    syscall_rules,
)

PROFILES = builtin_profiles()


def profile(name: str) -> SeccompProfile:
    return load_profile(name, Path("/")).seccomp


def rows_of(seccomp: dict[str, Any]) -> list[SyscallRule]:
    """The rows an OCI seccomp object holds, read the way runc reads it: one rule per
    name, the conditions of an entry together."""
    rows = []
    for entry in seccomp["syscalls"]:
        args = tuple(
            Arg(a["index"], "MASKED_EQ", a["valueTwo"], a["value"])
            if a["op"] == "SCMP_CMP_MASKED_EQ"
            else Arg(a["index"], a["op"].removeprefix("SCMP_CMP_"), a["value"])
            for a in entry.get("args", ()))
        assert entry["action"] == "SCMP_ACT_ERRNO"
        rows += [SyscallRule(name, "errno", entry["errnoRet"], args) for name in entry["names"]]
    return rows


@pytest.mark.parametrize("name", PROFILES)
def test_the_oci_profile_holds_exactly_the_rows(name: str) -> None:
    seccomp = oci_seccomp(profile(name))
    assert seccomp["defaultAction"] == "SCMP_ACT_ALLOW"
    assert rows_of(seccomp) == list(syscall_rules(profile(name)))


def _bpf_as_runc_builds_it(seccomp: dict[str, Any]) -> bytes:
    """libseccomp fed the OCI object the way runc 1.1 does (names resolved on this
    machine, unknown ones skipped; one rule per entry name with its conditions)."""
    sc = _import_pyseccomp()
    f = sc.SyscallFilter(sc.ALLOW)
    for entry in seccomp["syscalls"]:
        action = sc.ERRNO(entry["errnoRet"])
        args = [sc.Arg(a["index"], getattr(sc, a["op"].removeprefix("SCMP_CMP_")),
                       a["value"], a.get("valueTwo", 0)) for a in entry.get("args", ())]
        for name in entry["names"]:
            if sc.resolve_syscall(sc.Arch.NATIVE, name) >= 0:
                f.add_rule(action, name, *args)
    fd = os.memfd_create("oci-bpf")
    with os.fdopen(fd, "w+b") as memfile:
        f.export_bpf(memfile)
        memfile.seek(0)
        return memfile.read()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libseccomp is Linux's")
@pytest.mark.parametrize("name", PROFILES)
def test_libseccomp_makes_the_same_filter_from_both(name: str) -> None:
    """Byte for byte: what bwrap loads and what runc would build from the OCI JSON on
    this machine (the one architecture token aside, which the OCI profile adds)."""
    ours = export(profile(name))
    assert _bpf_as_runc_builds_it(oci_seccomp(profile(name))) == ours


def test_rows_of_the_default_profile() -> None:
    rows = syscall_rules(profile("default"))
    plain = {r.syscall: r.errno for r in rows if not r.args}
    assert plain["ptrace"] == plain["mount"] == plain["unshare"] == EPERM
    assert plain["clone3"] == ENOSYS
    socket_rows = {r.args[0].value for r in rows if r.syscall == "socket" and
                   r.args[0].op == "EQ"}
    assert FAMILIES["AF_UNIX"] in socket_rows and FAMILIES["AF_PACKET"] in socket_rows
    assert not socket_rows & {FAMILIES["AF_INET"], FAMILIES["AF_INET6"], FAMILIES["AF_NETLINK"]}
    assert SyscallRule("socket", "errno", EPERM, (Arg(0, "GE", 64),)) in rows
    assert SyscallRule("ioctl", "errno", EPERM,
                       (Arg(1, "MASKED_EQ", 0x5412, 0xFFFFFFFF),)) in rows
    assert SyscallRule("socketpair", "errno", EPERM,
                       (Arg(1, "MASKED_EQ", SOCK_TYPES["SOCK_DGRAM"], 0xF),)) in rows
    assert len([r for r in rows if r.syscall == "clone"]) == 7


def test_unknown_names_in_a_profile_are_refused() -> None:
    with pytest.raises(ValueError, match="AF_NOPE"):
        syscall_rules(SeccompProfile((), (), False, ("AF_NOPE",), ()))
    with pytest.raises(ValueError, match="TIOCNOPE"):
        syscall_rules(SeccompProfile((), (), False, (), ("TIOCNOPE",)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's constants")
def test_the_tables_are_linux_values() -> None:
    """The rows carry Linux's numbers whatever OS compiles them: here they must agree
    with this Linux's own."""
    for name in dir(socket):
        if name.startswith("AF_") and name in FAMILIES:
            assert FAMILIES[name] == getattr(socket, name), name
    assert {n for n in dir(socket) if n.startswith("AF_")} <= set(FAMILIES)
    for name, value in SOCK_TYPES.items():
        assert getattr(socket, name) == value
    assert IOCTLS["TIOCSTI"] == termios.TIOCSTI
    assert (EPERM, ENOSYS) == (errno.EPERM, errno.ENOSYS)


def test_foreign_abis_are_left_out_of_the_oci_profile() -> None:
    """Our filter kills i386 (`int 0x80`) and x32 calls from an x86_64 process: the OCI
    profile lists only the 64-bit ABIs, so libseccomp's bad-architecture action does the
    same under runc (and x32 numbers are killed when X32 is not listed)."""
    arches = oci_seccomp(profile("default"))["architectures"]
    assert arches == ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"]
    assert not {"SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_ARM"} & set(arches)
