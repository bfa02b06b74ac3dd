"""Reads of hidden files and listings of hidden directories, seen by the kernel: each
hidden file no git would stage (`spec.placeholders`, `spec/gitstage.py`) is bound
read-only from a placeholder of its own instead of /dev/null — an empty regular file,
0400, ours, in a directory of this run's in the host's /dev/shm — and each hidden
directory (`spec.unreadable_dirs`) from an empty directory of its own there, 0400 (its
listing opens and is empty; no name inside can be looked up: EACCES, as the 0000 tmpfs
it replaces gave), each with a one-shot inotify watch for `IN_OPEN` on it.
The host's /dev/shm is out of every bwrap sandbox's reach (bwrap.py mounts a fresh
tmpfs there), so no command opens a placeholder by another name; a tmpfs, so making
them writes no journal (on the home's ext4 under load, 1.7 ms a file). The run's
directory is 0300: ours to make names in and to look them up by (bwrap resolves each
descriptor's path), listable by no one but root, so a walk of /dev/shm by any other
process of the user (a test listing /dev/shm beside another's run, a `find`, an indexer) never
reaches a placeholder to open it, which would be reported as a read the command made.
When the launch ends, the events say which placeholders were opened: `{kind: hidden,
op: read, path}` for each, the path the spec hides (the mount point, which
`/proc/self/mountinfo` shows inside anyway), never a name the command did not reach
it by.

Why this costs nothing per call: inotify is the kernel's, queued at the open, and only
these inodes are watched (the seccomp observer cannot tell reads apart by path, and
notifying every open cost 50 % on a C build; with every hidden directory watched here it
is not told of directory opens either, which Python's imports and pytest make by the
hundred: `observe.attach`'s `listings`). One-shot: at most two events per
placeholder, so the queue cannot overflow and lose one. A placeholder is its own inode,
so a read of one never reports another; printing a path opens nothing. An empty file
read returns 0 bytes and no `IN_ACCESS`, so `IN_OPEN` is the event. Writes fail on the
read-only mount (EROFS, where /dev/null swallowed them), and the observer reports them
as before. Where inotify cannot be had (the user's instances or watches used up), the
placeholders are still bound (the argv is the one `compile` shows) and a note says
that this run's reads go unreported (the observer is then told of directory opens
again). No writable /dev/shm: every hidden file on /dev/null and every hidden directory
behind an empty 0000 tmpfs, in `compile` alike.

Launch owns it all: the directory and its files are removed, and the inotify descriptor
closed, when the launch ends (a failed compile, a timeout, an interrupt); a directory
left by a swifty process that was killed is removed by the next run.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
from functools import partial
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from ..fsafe import open_dir
from ..landlock.held import alive
from ..spec.compiler import PLACEHOLDERS_MOST, SetupError
from ..spec.expand import PLACEHOLDERS_AT

if TYPE_CHECKING:
    from ..backend import Launch
    from ..spec.compiler import SandboxSpec

_IN_OPEN = 0x20
_IN_ONESHOT = 0x80000000
_EVENT = struct.Struct("=iIII")  # wd, mask, cookie, len (then the name, unused here)
_SHM = "/dev/shm"
_PREFIX = f"{os.path.basename(PLACEHOLDERS_AT)}{os.getuid()}-"
_MODE = 0o300  # write and search, no listing: the module's docstring


def bind_fds(launch: Launch, spec: SandboxSpec) -> tuple[dict[str, int], bool]:
    """Hidden path → the descriptor of its placeholder (`--ro-bind-fd`), for each of
    `spec.placeholders` and of the hidden directories (at most `PLACEHOLDERS_MOST`);
    the reads reported into `launch.violations` when it ends. And whether every hidden
    directory is bound from a watched placeholder (then the observer need not be told
    of directory opens)."""
    dirs = spec.unreadable_dirs[:PLACEHOLDERS_MOST]
    if not (spec.placeholders or dirs) or not os.access(_SHM, os.W_OK | os.X_OK):
        return {}, not spec.unreadable_dirs
    watched = len(dirs) == len(spec.unreadable_dirs)
    if launch.dry:
        return {path: launch.inherit(_never) for path in (*spec.placeholders, *dirs)}, \
            watched
    try:
        made = _Placeholders(_SHM)
    except OSError as e:
        raise SetupError(t("setup.placeholders", path=_SHM, error=e)) from e
    launch.on_close(partial(_report, made, launch))
    fds = {path: launch.inherit(partial(made.add, i, path))
           for i, path in enumerate(spec.placeholders)}
    fds.update((path, launch.inherit(partial(made.add, i, path, directory=True)))
               for i, path in enumerate(dirs, len(spec.placeholders)))
    return fds, watched and not made.unwatched


def _never() -> int:
    raise AssertionError("a dry launch makes no descriptor")


def _report(made: _Placeholders, launch: Launch) -> str:
    opened, note = made.close()
    launch.violations.extend(
        {"kind": "hidden", "op": "read", "path": p, "place": p} for p in opened)
    return note


class _Placeholders:
    """This run's directory of placeholders and the inotify instance watching them."""

    def __init__(self, parent: str) -> None:
        self.paths: dict[int, str] = {}  # watch descriptor → the hidden path
        self.names: list[str] = []
        self.unwatched = ""
        self.parent = open_dir(parent)
        try:
            _sweep(self.parent)
            self.name = f"{_PREFIX}{os.getpid()}-{os.urandom(8).hex()}"
            os.mkdir(self.name, _MODE, dir_fd=self.parent)
            try:
                self.dir = os.open(self.name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW
                                   | os.O_CLOEXEC, dir_fd=self.parent)
            except OSError:
                os.rmdir(self.name, dir_fd=self.parent)
                raise
        except BaseException:
            os.close(self.parent)
            raise
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.inotify = self.libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.inotify < 0:
            self.unwatched = os.strerror(ctypes.get_errno())

    def add(self, index: int, path: str, *, directory: bool = False) -> int:
        """The placeholder for `path` (an empty file, or an empty directory), watched,
        as an O_PATH descriptor."""
        name = str(index)
        if directory:
            os.mkdir(name, 0o400, dir_fd=self.dir)
            self.names.append(name)
            fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=self.dir)
        else:
            fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o400, dir_fd=self.dir)
            self.names.append(name)
        try:
            if not self.unwatched:
                wd = self.libc.inotify_add_watch(self.inotify, f"/proc/self/fd/{fd}".encode(),
                                                 _IN_OPEN | _IN_ONESHOT)
                if wd < 0:
                    self.unwatched = os.strerror(ctypes.get_errno())
                else:
                    self.paths[wd] = path
        except BaseException:
            os.close(fd)
            raise
        if directory:
            return fd
        os.close(fd)
        return os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.dir)

    def close(self) -> tuple[list[str], str]:
        """The hidden paths whose placeholder was opened, and a note when some could
        not be watched; everything removed."""
        opened: dict[str, None] = {}
        try:
            if self.inotify >= 0:
                opened = dict.fromkeys(self.paths[wd] for wd in _opened(self.inotify)
                                       if wd in self.paths)
        finally:
            if self.inotify >= 0:
                _close_later(self.inotify)
            for name in self.names:
                _remove(name, self.dir)
            os.close(self.dir)
            with contextlib.suppress(OSError):
                os.rmdir(self.name, dir_fd=self.parent)
            os.close(self.parent)
        note = t("run.hidden_unwatched", error=self.unwatched) + "\n" \
            if self.unwatched else ""
        return list(opened), note


def _close_later(inotify: int) -> None:
    """Closed on a thread of its own: the kernel frees the watches after an RCU grace
    period, and the close waits for it (16-20 ms on a loaded 2-core machine, whatever
    the count), time the run's result need not wait for."""
    import threading  # loaded already (the executor's threads)

    try:
        threading.Thread(target=os.close, args=(inotify,), daemon=True,
                         name="swifty-inotify-close").start()
    except RuntimeError:  # no thread to be had (the user's process cap): wait here
        os.close(inotify)


def _opened(inotify: int) -> list[int]:
    """The watch descriptors an `IN_OPEN` was queued for (read without waiting: every
    event was queued at its open, before the command ended)."""
    out: list[int] = []
    while True:
        try:
            data = os.read(inotify, 1 << 16)
        except BlockingIOError:
            return out
        offset = 0
        while offset + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            offset += _EVENT.size + length
            if mask & _IN_OPEN:
                out.append(wd)


def _sweep(parent: int) -> None:
    """Remove this user's directories of runs whose swifty process is gone (killed);
    not another user's (their names say whose, and the sticky /dev/shm refuses)."""
    listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent)
    try:
        names = os.listdir(listing)
    finally:
        os.close(listing)
    for name in names:
        pid = name[len(_PREFIX):].split("-", 1)[0]
        if not name.startswith(_PREFIX) or not pid.isdigit() or alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=parent)
            try:
                if os.fstat(fd).st_uid != os.getuid():
                    continue
                os.chmod(f"/proc/self/fd/{fd}", 0o700)  # listable again, to be emptied
                for entry in os.listdir(f"/proc/self/fd/{fd}"):
                    _remove(entry, fd)
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=parent)


def _remove(name: str, parent: int) -> None:
    """A placeholder file, or directory (empty: nothing can be made in it), gone."""
    try:
        os.unlink(name, dir_fd=parent)
    except IsADirectoryError:
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=parent)
    except OSError:
        pass


__all__ = ["bind_fds"]
