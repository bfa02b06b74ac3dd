"""Files kept between runs to start faster, that no run may trust more than the work
they save: the one store for every such cache (the built-in program table,
`programs.py`; the seccomp BPF, `sandbox/linux/bpfcache.py`; the walk cache,
`sandbox/spec/walkcache.py`). Its checks are the only ones: no cache has its own.

Where: `~/.cache/swifty-sandbox/<kind>/` (a mandatory protected path, so no confined
command can write it; the directory must be ours and 0700, and is reached without
following a link). What: one file per key, `MAGIC`, a keyed BLAKE2b MAC of the key and
the data, then the data. The key names everything the data depends on (the caller's
business: a changed input is another key, another file); the MAC's secret is `key` in
the same directory (0600, random, made once). An entry whose MAC does not check
(damaged, truncated, forged by something that does not know the secret), that is not a
single-linked regular file of ours and 0600, that is larger than the caller's bound, or
that the caller's own check refuses, is not used: the caller builds the data again and
the entry is replaced (atomic rename). Every doubt falls towards doing the work.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

MAGIC = b"swifty-cache 1\n"
# Every kind kept here through `cached` (`programs.py`, `sandbox/linux/bpfcache.py`): the
# spec compiler hides each folder from confined commands, whose reading the MAC secret
# would let them forge an entry wherever they found a way to write one. (The walk
# cache's folder, `walk`, is hidden by the compiler with its own records.)
KINDS = ("bpf", "programs")
_MAC_SIZE = 32
_SECRET_SIZE = 32
_SECRET = "key"

FileId = tuple[int, int, int, int, int]  # an entry's dev, inode, size, mtime, ctime


def cached(kind: str, key: bytes, build: Callable[[], bytes], *, max_size: int,
           valid: Callable[[bytes], bool] = bool) -> bytes:
    """The data for `key`: from the cache when its entry checks (and `valid` accepts
    it), else `build()`, stored for the next run where the cache can be written."""
    if kind not in KINDS:
        raise ValueError(kind)
    path = folder_path(kind)
    if path is None:
        return build()
    found = load(path, key, max_size=max_size)
    if found is not None and found[0] is not None and valid(found[0]):
        return found[0]
    data = build()
    store(path, key, data, max_size=max_size)
    return data


def folder_path(kind: str, home: str | None = None) -> str | None:
    home = os.environ.get("HOME") if home is None else home
    if not home or not home.startswith("/"):
        return None
    return os.path.join(home, ".cache", "swifty-sandbox", kind)


def entry_name(key: bytes) -> str:
    return digest(key, None).hex()


def load(path: str, key: bytes, *, max_size: int, unchanged: FileId | None = None
         ) -> tuple[bytes | None, FileId] | None:
    """The entry for `key` in the cache directory `path` and its identity, when it
    checks; None when there is none to trust. Writes nothing. With `unchanged` (an
    identity this process read or wrote): None for the data while the entry is still
    that file (the caller keeps what it has in memory)."""
    folder = _folder(path, create=False)
    if folder is None:
        return None
    try:
        secret = _secret(folder, create=False)
        if secret is None:
            return None
        return _read(folder, entry_name(key), key, secret, max_size, unchanged)
    finally:
        os.close(folder)


def store(path: str, key: bytes, data: bytes, *, max_size: int, keep: int | None = None
          ) -> FileId | None:
    """Best effort (a read-only cache, a full disk: the next run builds again): `data`
    as the entry for `key`, and its identity. Data over `max_size` is not kept (an older
    entry goes). With `keep`: at most that many entries, the least recently written go."""
    folder = _folder(path, create=True)
    if folder is None:
        return None
    try:
        name = entry_name(key)
        if len(data) > max_size:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folder)
            return None
        secret = _secret(folder, create=True)
        if secret is None or not _write(folder, name, MAGIC + digest(key + data, secret)
                                        + data):
            return None
        if keep is not None:
            _prune(folder, keep)
        try:
            return _identity(os.lstat(name, dir_fd=folder))
        except OSError:
            return None
    finally:
        os.close(folder)


def _folder(path: str, *, create: bool) -> int | None:
    """The cache directory (made if missing when `create`), opened without following a
    link: only a directory of ours that no one else can read or write."""
    try:
        if create:
            os.makedirs(path, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if info.st_uid == os.geteuid() and not info.st_mode & 0o077:
        return fd
    os.close(fd)
    return None


def _own_file(info: os.stat_result) -> bool:
    """A regular file of ours alone: 0600 at most, one name (a hard link elsewhere could
    be a file another process holds open for writing)."""
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
            and not info.st_mode & 0o077 and info.st_nlink == 1)


def _identity(info: os.stat_result) -> FileId:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _read_own(folder: int, name: str, size: int, unchanged: FileId | None = None
              ) -> tuple[bytes | None, FileId] | None:
    """A file of ours alone of at most `size` bytes, whole, and its identity (None for
    the data when it is `unchanged`)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=folder)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not _own_file(info) or info.st_size > size:
                return None
            identity = _identity(info)
            if identity == unchanged:
                return None, identity
            # Its size, not the bound: read(n) allocates n bytes before it reads.
            return f.read(info.st_size), identity
    except OSError:
        return None


def _secret(folder: int, *, create: bool) -> bytes | None:
    """The MAC secret, made on first use when `create` (O_EXCL: racing processes make
    it once; one that is not ours or not its size is replaced)."""
    found = _read_own(folder, _SECRET, _SECRET_SIZE)
    if found is not None and found[0] is not None and len(found[0]) == _SECRET_SIZE:
        return found[0]
    if not create:
        return None
    try:
        fd = os.open(_SECRET, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600, dir_fd=folder)
    except FileExistsError:
        if not _write(folder, _SECRET, os.urandom(_SECRET_SIZE)):
            return None
    except OSError:
        return None
    else:
        try:
            os.write(fd, os.urandom(_SECRET_SIZE))
        finally:
            os.close(fd)
    found = _read_own(folder, _SECRET, _SECRET_SIZE)
    if found is not None and found[0] is not None and len(found[0]) == _SECRET_SIZE:
        return found[0]
    return None


def digest(data: bytes, secret: bytes | None) -> bytes:
    """BLAKE2b (keyed: a MAC), from the C module the standard library's own comes from:
    `hashlib` would load OpenSSL, a few milliseconds of a cold start."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=_MAC_SIZE, key=secret or b"").digest()


def _read(folder: int, name: str, key: bytes, secret: bytes, max_size: int,
          unchanged: FileId | None) -> tuple[bytes | None, FileId] | None:
    start = len(MAGIC) + _MAC_SIZE
    found = _read_own(folder, name, start + max_size, unchanged)
    if found is None or found[0] is None:
        return found
    raw, identity = found[0], found[1]
    head, mac, data = raw[:len(MAGIC)], raw[len(MAGIC):start], raw[start:]
    if head != MAGIC:
        return None
    # A plain comparison: the MAC guards against a forged or damaged file, not a
    # timing oracle (a process that could time this could read the secret).
    return (data, identity) if mac == digest(key + data, secret) else None


def _write(folder: int, name: str, data: bytes) -> bool:
    """`data` as `name`, 0600, renamed into place (a reader sees all or nothing)."""
    temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600, dir_fd=folder)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        return False
    return True


def _prune(folder: int, keep: int) -> None:
    """At most `keep` entries: the least recently written go."""
    names = [n for n in os.listdir(folder) if n != _SECRET]
    if len(names) <= keep:
        return
    aged = []
    for name in names:
        with contextlib.suppress(OSError):
            aged.append((os.lstat(name, dir_fd=folder).st_mtime_ns, name))
    for _mtime, name in sorted(aged)[:len(aged) - keep]:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=folder)
