"""The seccomp BPF of each set of rows, built once by libseccomp and kept on disk, so a
cold `run` neither imports pyseccomp nor builds the filter (together ~10 ms, more than
bwrap takes to start).

Where: `~/.cache/swifty-sandbox/bpf/` (0700, ours; `~/.cache/swifty-sandbox` is a
mandatory protected path, so no confined command can write it). One file per key:

- the key is a digest of everything the bytes depend on: the rows themselves (the
  policy, `spec/syscalls.py`), which libseccomp the loader finds (its syscall table
  decides which rows it can express: the identity of each copy in the library
  directories and of the loader's cache; none cached under LD_LIBRARY_PATH), the
  kernel release and machine (libseccomp adapts to the kernel's seccomp API level),
  the interpreter, and the identity (device, inode, size, mtime) of pyseccomp's and of
  our own translating code. Anything else changed is another key.
- each file is `MAGIC`, a keyed BLAKE2b MAC of the key and the bytes, then the bytes.
  The MAC's secret is `key` beside them (0600, random, made once). A file whose MAC
  does not check (corrupted, truncated, written by something that does not know the
  secret), of the wrong size, not a regular file of ours, or in a directory anyone else
  could write, is not used: the filter is built again, as without a cache, and the
  entry replaced (atomic rename). Every doubt falls towards building.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable

MAGIC = b"swifty-bpf 1\n"
_MAC_SIZE = 32
_SECRET_SIZE = 32
_MAX_BPF = 4096 * 8  # BPF_MAXINSNS instructions of 8 bytes


def cached(rows_repr: str, build: Callable[[], bytes]) -> bytes:
    """The BPF for the rows `rows_repr` names: from the cache when an entry checks, else
    `build()` (stored for the next run when the cache can be written)."""
    folder = _folder()
    if folder is None:
        return build()
    try:
        secret = _secret(folder)
        key = _key(rows_repr) if secret is not None else None
        if secret is None or key is None:
            return build()
        name = _digest(key, None).hex() + ".bpf"
        found = _read(folder, name, key, secret)
        if found is not None:
            return found
        data = build()
        _store(folder, name, key, secret, data)
        return data
    finally:
        os.close(folder)


def _folder() -> int | None:
    """The cache directory, made if missing, opened without following a link: only a
    directory of ours that no one else can write."""
    home = os.environ.get("HOME")
    if not home or not home.startswith("/"):
        return None
    path = os.path.join(home, ".cache", "swifty-sandbox", "bpf")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if info.st_uid == os.getuid() and not info.st_mode & 0o022:
        return fd
    os.close(fd)
    return None


def _own_file(fd: int, size: int | None = None) -> bool:
    info = os.fstat(fd)
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & 0o077 and (size is None or info.st_size == size))


def _secret(folder: int) -> bytes | None:
    """The MAC secret, made on first use (O_EXCL: a racing process makes it once)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open("key", flags, dir_fd=folder)
    except FileNotFoundError:
        try:
            fd = os.open("key", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600, dir_fd=folder)
            try:
                os.write(fd, os.urandom(_SECRET_SIZE))
            finally:
                os.close(fd)
            fd = os.open("key", flags, dir_fd=folder)
        except OSError:
            return None
    except OSError:
        return None
    try:
        if not _own_file(fd, _SECRET_SIZE):
            return None
        secret = os.read(fd, _SECRET_SIZE + 1)
    finally:
        os.close(fd)
    return secret if len(secret) == _SECRET_SIZE else None


def _identity(path: str | None) -> str | None:
    """Which file the code is (a new version is another file or another mtime)."""
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return f"{path}:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"


# Where the dynamic loader finds libseccomp (ld.so.conf's usual directories, and its
# cache): the identity of every copy there is part of the key, so a new or another
# libseccomp, or an `ldconfig` run, is another key. With LD_LIBRARY_PATH or LD_PRELOAD
# the loader may pick another file: nothing is cached then.
_LIBRARY_DIRS = ("/usr/local/lib", "/lib", "/usr/lib", "/lib64", "/usr/lib64")
_LIBRARY = "libseccomp.so.2"


def _libseccomp() -> list[str] | None:
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
    parts = [MAGIC.decode(), *library, uname.release, uname.machine, sys.version, *code,
             rows_repr]
    return "\0".join(parts).encode("utf-8", "surrogateescape")


def _digest(data: bytes, secret: bytes | None) -> bytes:
    """BLAKE2b (keyed: a MAC), from the C module the standard library's own comes from:
    `hashlib` would load OpenSSL, a few milliseconds."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(data, digest_size=_MAC_SIZE, key=secret or b"").digest()


def _read(folder: int, name: str, key: bytes, secret: bytes) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=folder)
    except OSError:
        return None
    try:
        if not _own_file(fd):
            return None
        raw = os.read(fd, len(MAGIC) + _MAC_SIZE + _MAX_BPF + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    head, mac, data = raw[:len(MAGIC)], raw[len(MAGIC):len(MAGIC) + _MAC_SIZE], \
        raw[len(MAGIC) + _MAC_SIZE:]
    if head != MAGIC or not data or len(data) % 8 or len(data) > _MAX_BPF:
        return None
    # A plain comparison: the MAC guards against a forged or damaged file, not a
    # timing oracle (a process that could time us could read the secret).
    if mac != _digest(key + data, secret):
        return None
    return data


def _store(folder: int, name: str, key: bytes, secret: bytes, data: bytes) -> None:
    """Best effort (a read-only cache, a full disk: the next run builds again)."""
    temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600, dir_fd=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + _digest(key + data, secret) + data)
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
