"""The file tools' I/O (the MCP server's `read_file`, `write_file`, `edit_file`): it runs
outside the sandbox, so it opens exactly the path the policy decided and nothing a
command could swap in afterwards.

The path is `Decision.target`: absolute, no `..`, no symlink (the policy resolved them as
the kernel does). It is opened from `/` with `openat2(RESOLVE_NO_SYMLINKS |
RESOLVE_NO_MAGICLINKS)` (Linux 5.6), else component by component with `O_NOFOLLOW` from
a directory descriptor (older kernels, a seccomp filter that refuses `openat2`, macOS):
a link made anywhere on the path after the decision — a directory turned into a link
to `~`, a dangling link planted where a new file was to be created — fails the open
instead of being followed. Only regular files are read or written: opened `O_NONBLOCK`
and checked on the descriptor, so a FIFO swapped in cannot hang the server and a device
is refused. A write goes to a new file beside the target, renamed over it (a crash
leaves the old content, never half of the new one; the mode is kept), and never to a
file with other hard links: those names were not decided.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import sys
from collections.abc import Callable

from swifty_sandbox.messages import t

Identity = tuple[int, int]
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # macOS has no O_PATH: a search-only open
_DIR = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (added after 5.1)
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS = 0x02, 0x04


class FileToolError(Exception):
    """What a file tool could not do, in a sentence for the model."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


def _libc_syscall() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None


_SYSCALL = _libc_syscall()
_OPENAT2 = [_SYSCALL is not None]  # cleared once the kernel says it has none


def openat2(path: str, flags: int, mode: int = 0) -> int | None:
    """`path` (absolute) opened from `/` following no link at all; None when this
    kernel cannot (the caller walks instead). Raises OSError as `open` does."""
    if not _OPENAT2[0] or _SYSCALL is None:
        return None
    how = _OpenHow(flags, mode, _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    root = os.open("/", _DIR)
    try:
        fd = _SYSCALL(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(root),
                      ctypes.c_char_p(os.fsencode(path.lstrip("/") or ".")),
                      ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    finally:
        os.close(root)
    if fd >= 0:
        return int(fd)
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM, errno.E2BIG):  # none here, or filtered away
        _OPENAT2[0] = False
        return None
    raise OSError(code, os.strerror(code), path)


def open_dir(path: str, *, create: bool = False) -> int:
    """The directory `path` (absolute, link-free) opened component by component from
    `/`, following no link; missing components made (mode 0777 less the umask) when
    `create`. Raises OSError (ENOTDIR or ELOOP where a component is a link)."""
    fd = os.open("/", _DIR)
    try:
        for part in path.strip("/").split("/"):
            if not part:
                continue
            try:
                child = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened below
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_nofollow(path: str, flags: int) -> int:
    """`path` (absolute, link-free) opened with `flags`, following no link on the way
    nor at the end: `openat2` where the kernel has it, else a walk."""
    fd = openat2(path, flags)
    if fd is not None:
        return fd
    parent, name = os.path.split(path)
    dir_fd = open_dir(parent)
    try:
        return os.open(name or ".", flags | os.O_NOFOLLOW, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _regular(fd: int, path: str, hidden_links: Callable[[], frozenset[Identity] | None],
             *, writing: bool) -> os.stat_result:
    """The open file's facts, if it may be used: a regular file; with other hard links
    never written, and read only when it is no hidden file's other name."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise FileToolError(t("decision.path_special", path=path, kind=_kind(info.st_mode)))
    if info.st_nlink > 1:
        if writing:
            raise FileToolError(t("decision.hard_link_write", path=path, count=info.st_nlink))
        linked = hidden_links()
        if linked is None or (info.st_dev, info.st_ino) in linked:
            raise FileToolError(t("decision.hard_link_hidden", path=path))
    return info


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def _failed(path: str, error: OSError) -> FileToolError:
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV):
        return FileToolError(t("fileio.link", path=path))
    return FileToolError(f"{path}: {error.strerror or error}")


def read_file(path: str, limit: int,
              hidden_links: Callable[[], frozenset[Identity] | None]) -> bytes:
    """At most `limit` + 1 bytes of the regular file at `path` (the decided target)."""
    try:
        fd = open_nofollow(path, _READ)
    except OSError as e:
        raise _failed(path, e) from e
    try:
        _regular(fd, path, hidden_links, writing=False)
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise _failed(path, e) from e
    finally:
        os.close(fd)


def write_file(path: str, data: bytes,
               hidden_links: Callable[[], frozenset[Identity] | None]) -> None:
    """`data` as the content of the regular file at `path` (the decided target),
    its missing directories made: written to a new file in the same directory, then
    renamed over the name (whatever is there now; a link swapped in is replaced, never
    followed). An existing file keeps its mode."""
    parent, name = os.path.split(path)
    if not name:
        raise FileToolError(t("decision.path_special", path=path, kind="directory"))
    try:
        dir_fd = open_dir(parent, create=True)
    except OSError as e:
        raise _failed(path, e) from e
    temporary = f".{name[:64]}.swifty-{secrets.token_hex(6)}"
    try:
        mode = None
        try:
            old = os.open(name, _READ, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        else:
            try:
                mode = stat.S_IMODE(_regular(old, path, hidden_links, writing=True).st_mode)
            finally:
                os.close(old)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise _failed(path, e) from e
    finally:
        os.close(dir_fd)


__all__ = ["FileToolError", "open_dir", "open_nofollow", "openat2", "read_file",
           "write_file"]
