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
import errno
import os
import stat
from collections.abc import Callable

from swifty_sandbox.messages import t

from ..fsafe import open_dir, open_nofollow

Identity = tuple[int, int]
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class FileToolError(Exception):
    """What a file tool could not do, in a sentence for the model."""


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
              hidden_links: Callable[[], frozenset[Identity] | None],
              held: Callable[[], frozenset[Identity]] = frozenset) -> bytes:
    """At most `limit` + 1 bytes of the regular file at `path` (the decided target);
    never a hidden file a running command moved here since the decision (`held`)."""
    try:
        fd = open_nofollow(path, _READ)
    except OSError as e:
        raise _failed(path, e) from e
    try:
        info = _regular(fd, path, hidden_links, writing=False)
        if (info.st_dev, info.st_ino) in held():
            raise FileToolError(t("decision.hidden_moved", path=path))
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
    temporary = f".{os.fsdecode(os.fsencode(name)[:64])}.swifty-{os.urandom(6).hex()}"
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


__all__ = ["FileToolError", "read_file", "write_file"]
