"""Files kept between runs to start faster, that no run may trust more than the work
they save: the one store for every such cache (the built-in program table,
`programs.py`; the seccomp BPF, `sandbox/linux/bpfcache.py`).

Where: `~/.cache/swifty-sandbox/<kind>/` (a mandatory protected path, so no confined
command can write it; the directory must be ours and writable by no one else, and is
reached without following a link). What: one file per key, `MAGIC`, a keyed BLAKE2b
MAC of the key and the data, then the data. The key names everything the data depends
on (the caller's business: a changed input is another key, another file); the MAC's
secret is `key` in the same directory (0600, random, made once). An entry whose MAC does
not check (damaged, truncated, forged by something that does not know the secret), that
is not a regular file of ours, or that the caller's own check refuses, is not used: the
caller builds the data again and the entry is replaced (atomic rename). Every doubt falls
towards doing the work.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

MAGIC = b"swifty-cache 1\n"
# Every kind kept here (`programs.py`, `sandbox/linux/bpfcache.py`): the spec compiler
# hides each folder from confined commands, whose reading the MAC secret would let
# them forge an entry wherever they found a way to write one.
KINDS = ("bpf", "programs")
_MAC_SIZE = 32
_SECRET_SIZE = 32


def cached(kind: str, key: bytes, build: Callable[[], bytes], *, max_size: int,
           valid: Callable[[bytes], bool] = bool) -> bytes:
    """The data for `key`: from the cache when its entry checks (and `valid` accepts
    it), else `build()`, stored for the next run where the cache can be written."""
    if kind not in KINDS:
        raise ValueError(kind)
    folder = _folder(kind)
    if folder is None:
        return build()
    try:
        secret = _secret(folder)
        if secret is None:
            return build()
        name = digest(key, None).hex()
        found = _read(folder, name, key, secret, max_size)
        if found is not None and valid(found):
            return found
        data = build()
        _store(folder, name, key, secret, data)
        return data
    finally:
        os.close(folder)


def folder_path(kind: str, home: str | None = None) -> str | None:
    home = os.environ.get("HOME") if home is None else home
    if not home or not home.startswith("/"):
        return None
    return os.path.join(home, ".cache", "swifty-sandbox", kind)


def _folder(kind: str) -> int | None:
    """The cache directory, made if missing, opened without following a link: only a
    directory of ours that no one else can write."""
    path = folder_path(kind)
    if path is None:
        return None
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
    """The MAC secret, made on first use (O_EXCL: racing processes make it once)."""
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


def digest(data: bytes, secret: bytes | None) -> bytes:
    """BLAKE2b (keyed: a MAC), from the C module the standard library's own comes from:
    `hashlib` would load OpenSSL, a few milliseconds of a cold start."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=_MAC_SIZE, key=secret or b"").digest()


def _read(folder: int, name: str, key: bytes, secret: bytes, max_size: int) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=folder)
    except OSError:
        return None
    try:
        if not _own_file(fd):
            return None
        raw = os.read(fd, len(MAGIC) + _MAC_SIZE + max_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    start = len(MAGIC) + _MAC_SIZE
    head, mac, data = raw[:len(MAGIC)], raw[len(MAGIC):start], raw[start:]
    if head != MAGIC or len(data) > max_size:
        return None
    # A plain comparison: the MAC guards against a forged or damaged file, not a
    # timing oracle (a process that could time this could read the secret).
    return data if mac == digest(key + data, secret) else None


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
            out.write(MAGIC + digest(key + data, secret) + data)
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)

