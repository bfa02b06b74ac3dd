"""The seccomp BPF of each set of rows, built once by libseccomp and kept on disk, so a
cold `run` neither imports pyseccomp nor builds the filter (together ~10 ms, about
what bwrap takes to start).

Kept in the protected cache store (`policy/cachefile.py`: `~/.cache/swifty-sandbox/bpf/`,
each entry under a keyed MAC; anything that does not check is built again). The key
is everything the bytes depend on: the rows themselves (the policy,
`spec/syscalls.py`), which libseccomp the loader finds (its syscall table decides which
rows it can express: the identity of each copy in the library directories and of the
loader's cache; nothing is cached under LD_LIBRARY_PATH or LD_PRELOAD), the kernel
release and machine (libseccomp adapts to the kernel's seccomp API level), the
interpreter, and the identity (device, inode, size, mtime) of pyseccomp's and of our
own translating code. Anything else changed is another key.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from swifty_sandbox.policy import cachefile

KIND = "bpf"
_MAX_BPF = 4096 * 8  # BPF_MAXINSNS instructions of 8 bytes
# ld.so.conf's usual directories (with the multiarch ones below them).
_LIBRARY_DIRS = ("/usr/local/lib", "/lib", "/usr/lib", "/lib64", "/usr/lib64")
_LIBRARY = "libseccomp.so.2"


def cached(rows_repr: str, build: Callable[[], bytes]) -> bytes:
    """The BPF for the rows `rows_repr` names: from the cache when an entry checks, else
    `build()` (stored for the next run when the cache can be written)."""
    key = _key(rows_repr)
    if key is None:
        return build()
    return cachefile.cached(KIND, key, build, max_size=_MAX_BPF,
                            valid=lambda data: bool(data) and not len(data) % 8)


def _identity(path: str | None) -> str | None:
    """Which file the code is (a new version is another file or another mtime)."""
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return f"{path}:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"


def _libseccomp() -> list[str] | None:
    """Every libseccomp the loader could pick, and its cache; None when another could
    be picked (LD_LIBRARY_PATH, LD_PRELOAD) or none is found."""
    if os.environ.get("LD_LIBRARY_PATH") or os.environ.get("LD_PRELOAD"):
        return None
    multiarch = getattr(sys.implementation, "_multiarch", "")
    dirs = [*_LIBRARY_DIRS, *(f"{d}/{multiarch}" for d in _LIBRARY_DIRS if multiarch)]
    found = [i for i in dict.fromkeys(_identity(os.path.realpath(f"{d}/{_LIBRARY}"))
                                      for d in dirs) if i is not None]
    cache = _identity("/etc/ld.so.cache")
    return [*found, cache or "-"] if found else None


def _key(rows_repr: str) -> bytes | None:
    """What the bytes depend on, as one string; None when a part cannot be known (then
    nothing is cached)."""
    from importlib.machinery import PathFinder  # loaded with the import system

    library = _libseccomp()
    spec = PathFinder.find_spec("pyseccomp")
    here = os.path.dirname(os.path.abspath(__file__))
    found = [_identity(spec.origin if spec is not None else None),
             *(_identity(os.path.join(here, name)) for name in ("seccomp.py", "bpfcache.py"))]
    code = [c for c in found if c is not None]
    if library is None or len(code) != len(found):
        return None
    uname = os.uname()
    parts = [KIND, *library, uname.release, uname.machine, sys.version, *code, rows_repr]
    return "\0".join(parts).encode("utf-8", "surrogateescape")
