"""`SeccompProfile → seccomp filter` with pyseccomp (libseccomp), exported as BPF for
bwrap's `--seccomp FD`, or as PFC text for people to read. The rules are the rows of
`syscalls.syscall_rules`, which the OCI profile renders too.

The filter allows by default and fails the profile's calls with EPERM (or ENOSYS where
libc then falls back, e.g. clone3 → clone). Calls unknown to this kernel's libseccomp
are skipped: they cannot be made here either. Other syscall ABIs (i386's `int 0x80`, and
x32's numbers at 0x40000000 and up, from an x86_64 process) are killed by libseccomp's
default bad-arch action.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from swifty_sandbox.policy.profile import SeccompProfile

from ..spec.syscalls import OPS, SyscallRule, syscall_rules

if TYPE_CHECKING:
    import pyseccomp


class SeccompUnavailable(RuntimeError):
    """libseccomp could not be loaded or could not build the filter."""


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
    return filter_of(syscall_rules(profile))


def filter_of(rows: Sequence[SyscallRule], *, action: Any = None
              ) -> pyseccomp.SyscallFilter:
    """Rows → a libseccomp filter that allows what no row names. `action`: one action
    for every row instead of each row's own (the violation observer's NOTIFY for the
    rows it reports, under the very same conditions)."""
    try:
        sc = _import_pyseccomp()
    except (ImportError, OSError, RuntimeError) as e:  # the library loads libseccomp
        raise SeccompUnavailable(str(e)) from e

    f = sc.SyscallFilter(sc.ALLOW)
    ops = {name: getattr(sc, name) for name in OPS}
    for row in rows:
        if sc.resolve_syscall(sc.Arch.NATIVE, row.syscall) < 0:
            continue  # no such call on this architecture (e.g. a multiplexed one)
        f.add_rule(action if action is not None else sc.KILL_PROCESS
                   if row.action == "kill" else sc.ERRNO(row.errno), row.syscall, *(
            sc.Arg(a.index, ops[a.op], a.mask, a.value) if a.op == "MASKED_EQ"
            else sc.Arg(a.index, ops[a.op], a.value) for a in row.args))
    return f


@functools.lru_cache(maxsize=8)
def export(profile: SeccompProfile, *, pfc: bool = False) -> bytes:
    """The filter as BPF bytes (or PFC text), through a memfd; cached per profile, so a
    long-lived executor builds it once, and the BPF on disk (`bpfcache`), so a new
    process does not build it either."""
    if pfc:
        return _bytes(build_filter(profile), pfc=True)
    return export_rows(tuple(syscall_rules(profile)))


@functools.lru_cache(maxsize=8)
def export_rows(rows: tuple[SyscallRule, ...], *, pfc: bool = False) -> bytes:
    """Rows (a profile's, or a backend's own: `landlock/netfilter.py`) as BPF bytes (or
    PFC text)."""
    if pfc:
        return _bytes(filter_of(rows), pfc=True)
    from .bpfcache import cached  # the cache's own imports only where a filter is made

    return cached(repr(rows), lambda: _bytes(filter_of(rows), pfc=False))


def _bytes(f: pyseccomp.SyscallFilter, *, pfc: bool) -> bytes:
    fd = os.memfd_create("swifty-seccomp", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as memfile:
        (f.export_pfc if pfc else f.export_bpf)(memfile)
        memfile.seek(0)
        return memfile.read()
