"""`SeccompProfile → seccomp filter` with pyseccomp (libseccomp), exported as BPF for
bwrap's `--seccomp FD`, or as PFC text for people to read.

The filter allows by default and fails the profile's calls with EPERM (or ENOSYS where
libc then falls back, e.g. clone3 → clone). Calls unknown to this kernel's libseccomp
are skipped: they cannot be made here either. Other architectures' syscall ABIs (i386
from an x86_64 process) are killed by libseccomp's default bad-arch action.
"""

from __future__ import annotations

import errno
import functools
import os
import socket
import termios
from typing import TYPE_CHECKING, Any

from swifty_sandbox.policy.profile import SeccompProfile

if TYPE_CHECKING:
    import pyseccomp

# clone() flags that create namespaces (CLONE_NEWTIME overlaps CSIGNAL, so it is left
# to unshare(), which is denied whole).
_CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
_AF_MAX = 64  # above every family the kernel knows (46 in Linux 6.x)
_SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
_IOCTLS = {"TIOCSTI": termios.TIOCSTI, "TIOCLINUX": 0x541C}


class SeccompUnavailable(RuntimeError):
    """libseccomp could not be loaded or could not build the filter."""


def _family(name: str) -> int:
    value = getattr(socket, name, None)
    if not isinstance(value, int):
        raise ValueError(f"unknown socket family {name}")
    return value


_SONAMES = {"seccomp": "libseccomp.so.2", "c": "libc.so.6"}


def _import_pyseccomp() -> Any:
    """pyseccomp finds its libraries with `ctypes.util.find_library`, which starts
    `ldconfig`: some 25 ms, and when no process can be started (a process limit) it
    says "Unable to find libseccomp" of a library that is there. The usual sonames are
    tried first, without starting anything."""
    import ctypes
    import ctypes.util

    original = ctypes.util.find_library

    def find_library(name: str) -> str | None:
        soname = _SONAMES.get(name)
        if soname is not None:
            try:
                ctypes.CDLL(soname)
                return soname
            except OSError:
                pass
        return original(name)

    ctypes.util.find_library = find_library
    try:
        import pyseccomp
    finally:
        ctypes.util.find_library = original
    return pyseccomp


def build_filter(profile: SeccompProfile) -> pyseccomp.SyscallFilter:
    try:
        sc = _import_pyseccomp()
    except (ImportError, OSError, RuntimeError) as e:  # the library loads libseccomp
        raise SeccompUnavailable(str(e)) from e

    f = sc.SyscallFilter(sc.ALLOW)

    def deny(call: str, err: int, *args: pyseccomp.Arg) -> None:
        if sc.resolve_syscall(sc.Arch.NATIVE, call) < 0:
            return  # no such call on this architecture (e.g. a multiplexed one)
        f.add_rule(sc.ERRNO(err), call, *args)

    for call in profile.deny:
        deny(call, errno.EPERM)
    for call in profile.enosys:
        deny(call, errno.ENOSYS)
    if profile.deny_namespaces:
        for flag in _CLONE_NEW.values():
            deny("clone", errno.EPERM, sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for name in profile.ioctls:
        request = _IOCTLS[name]
        deny("ioctl", errno.EPERM, sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    allowed = {_family(name) for name in profile.sockets}
    for family in range(_AF_MAX):
        if family not in allowed:
            deny("socket", errno.EPERM, sc.Arg(0, sc.EQ, family))
    deny("socket", errno.EPERM, sc.Arg(0, sc.GE, _AF_MAX))
    # socketpair() makes AF_UNIX sockets without socket(): only the listed types (a
    # datagram pair can sendto() host sockets by path), and no other family.
    deny("socketpair", errno.EPERM, sc.Arg(0, sc.NE, socket.AF_UNIX))
    kinds = {getattr(socket, name) for name in profile.socketpairs}
    for kind in range(_SOCK_TYPE_MASK + 1):
        if kind not in kinds:
            deny("socketpair", errno.EPERM, sc.Arg(1, sc.MASKED_EQ, _SOCK_TYPE_MASK, kind))
    return f


@functools.lru_cache(maxsize=8)
def export(profile: SeccompProfile, *, pfc: bool = False) -> bytes:
    """The filter as BPF bytes (or PFC text), through a memfd; cached per profile, so a
    long-lived executor builds it once."""
    f = build_filter(profile)
    fd = os.memfd_create("swifty-seccomp", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as memfile:
        (f.export_pfc if pfc else f.export_bpf)(memfile)
        memfile.seek(0)
        return memfile.read()
