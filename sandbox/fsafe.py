"""File system primitives that follow no symbolic link: the one place for them.

A confined command can plant a link anywhere it may write, and bwrap follows links in
mount sources and destinations; so every path swifty-sandbox mounts, creates or moves
is looked at (`first_link`, `links_on_the_way`) or opened (`open_dir`, `open_dir_at`,
`open_nofollow`: `openat2` with `RESOLVE_NO_SYMLINKS` where the kernel has it) component
by component with `O_NOFOLLOW`; after that, the descriptor is used, never the path
again. The file tools' I/O (`agents/fileio.py`) opens through the same functions.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import sys
from collections.abc import Callable, Iterable

from swifty_sandbox.policy.paths import is_within

_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # macOS has no O_PATH: a search-only open
DIR_FLAGS = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (added after 5.1)
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS = 0x02, 0x04


def first_link(path: str, roots: tuple[str, ...] = ()) -> str | None:
    """The first component of the absolute `path` that is a symbolic link; None when
    there is none, or when a component is missing (nothing below it can be a link yet).
    With `roots`, only what lies below the innermost root holding `path` is looked at
    (the roots are checked themselves)."""
    root = max((r for r in roots if is_within(path, r)), key=len, default="")
    current = root.rstrip("/")
    for part in path[len(root):].strip("/").split("/"):
        if not part:
            continue
        current += "/" + part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except OSError:
            return None
    return None


def open_dir_at(fd: int, name: str) -> int:
    """The directory `name` in the directory `fd`, not followed if it is a link."""
    return os.open(name, DIR_FLAGS, dir_fd=fd)


def links_on_the_way(path: str, roots: Iterable[str]) -> list[tuple[str, str]]:
    """Each symbolic link on the way to the absolute `path` below the innermost of
    `roots` that holds it, with its text, followed as the kernel would."""
    inner = max((r for r in roots if is_within(path, r)), key=len, default=None)
    if inner is None:
        return []
    out: list[tuple[str, str]] = []
    current, rest = inner.rstrip("/"), path[len(inner):].strip("/").split("/")
    for hop in range(40):  # the kernel's own limit on links in one lookup
        if not rest:
            break
        part = rest.pop(0)
        if not part:
            continue
        candidate = current + "/" + part
        try:
            text = os.readlink(candidate)
        except OSError:
            current = candidate  # a real entry, or missing: nothing below is a link yet
            continue
        out.append((candidate, text))
        target = os.path.realpath(candidate)
        if not any(is_within(target, r) for r in roots) or hop == 39:
            break  # it leads out of the roots: what lies there no command made
        current = target
    return out


@functools.cache
def _openat2_call() -> Callable[[str, int, int], int] | None:
    """openat2 through libc's syscall(2), made once; None off Linux or without it.
    ctypes loads here, not at import: only the file tools call it (start-up time)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                    ("resolve", ctypes.c_uint64)]

    def call(path: str, flags: int, mode: int) -> int:
        how = OpenHow(flags, mode, _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        root = os.open("/", DIR_FLAGS)
        try:
            fd = int(syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(root),
                             ctypes.c_char_p(os.fsencode(path.lstrip("/") or ".")),
                             ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how))))
        finally:
            os.close(root)
        return fd if fd >= 0 else -ctypes.get_errno()

    return call


_OPENAT2 = [True]  # cleared once the kernel says it has none


def openat2(path: str, flags: int, mode: int = 0) -> int | None:
    """`path` (absolute) opened from `/` following no link at all; None when this
    kernel cannot (the caller walks instead). Raises OSError as `open` does."""
    call = _openat2_call() if _OPENAT2[0] else None
    if call is None:
        return None
    fd = call(path, flags, mode)
    if fd >= 0:
        return fd
    code = -fd
    if code in (errno.ENOSYS, errno.EPERM, errno.E2BIG):  # none here, or filtered away
        _OPENAT2[0] = False
        return None
    raise OSError(code, os.strerror(code), path)


def open_dir(path: str, *, create: bool = False) -> int:
    """The directory `path` (absolute, link-free) opened component by component from
    `/`, following no link; missing components made (mode 0777 less the umask) when
    `create`. Raises OSError (ENOTDIR or ELOOP where a component is a link)."""
    fd = os.open("/", DIR_FLAGS)
    try:
        for part in path.strip("/").split("/"):
            if not part:
                continue
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened below
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
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
