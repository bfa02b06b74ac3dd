"""Which directories of a watched tree changed, from the kernel (inotify), for the
long-lived processes: the warm server (asked by its forked workers over a socket pair
made before each fork), `serve` and MCP (in the process). The walk cache
(`walkcache.py`) asks `changes(roots, since)` at the start of each walk and takes every
directory the answer does not name as it recorded it, without an `lstat`.

What it trusts: kernel events only (nothing a confined command can write). What it
vouches for: a directory is unchanged since generation `since` when it has been
watched since then, no event named it or one of its entries after `since`, and no
event was lost. Everything else is in the answer, or the answer is "cannot say":
- a lost event (`IN_Q_OVERFLOW`), an unmount, a mount added or removed anywhere (the
  mount table is compared on every question: a mount over a directory sends no
  event), a root replaced or moved: all forgotten, the next question starts again;
- a directory that could not be watched (the user's watches used up, `MAX_WATCHES` of
  ours reached: a repository of 200k directories must not take every watch) or that
  lies on a file system whose changes this kernel may not see (NFS, FUSE: not in
  `TRUSTED_FS`): named as `unwatched`, a subtree the walk checks the
  stat-based way; more than `MAX_UNWATCHED` of them: the whole root is not watched;
- a new directory (made, or moved in from anywhere): watched, then named dirty with
  everything below it (files made before its watch landed are found by listing it);
- a directory moved away: its watches dropped, named dirty (its records are stale).
Generations: every question drains the queue first (an event is queued by the system
call that made the change, so every change made before the question is counted), then
the answer's `now` is a generation that no later event has: a walk that lists after
the answer and keeps `now` as its state's generation misses nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import marshal
import os
import socket
import stat
import struct
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

IN_ATTRIB, IN_CLOSE_WRITE = 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x1000000, 0x2000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
# A written file dirties its directory too: the after-run check must look again where a
# command rewrote a file it judges by content (a submodule's config beside its HEAD).
MASK = (IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
MAX_WATCHES = 131_072  # ours, of the user's `max_user_watches` (192k here)
MAX_UNWATCHED = 512  # unwatched subtrees a root may have before it is not watched at all
MAX_DIRTY = 200_000  # remembered changed directories; beyond, older questions "cannot say"
MAX_MESSAGE = 64 << 20
_HEADER = struct.Struct("iIII")


# File systems whose timestamps this kernel sets (the walk cache trusts a directory's
# times there; the watcher's events are this kernel's too).
TRUSTED_FS = frozenset(("ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs",
                        "overlay", "jfs", "reiserfs", "bcachefs"))


def trusted_devices() -> frozenset[int]:
    """The devices of this machine's mounts whose file system keeps its own times."""
    devices = set()
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                try:
                    fstype = fields[fields.index("-") + 1]
                    major, minor = fields[2].split(":")
                except (ValueError, IndexError):
                    continue
                if fstype in TRUSTED_FS:
                    devices.add(os.makedev(int(major), int(minor)))
    except OSError:
        return frozenset()
    return frozenset(devices)


@dataclass(frozen=True, slots=True)
class Answer:
    token: str  # the watcher asked (a state made with another one cannot be vouched for)
    now: int  # the generation a walk that lists from now on may keep
    dirty: frozenset[str] | None  # changed since `since`; None: cannot say (check all)
    unwatched: frozenset[str]  # subtrees not watched: checked the stat-based way


@dataclass(slots=True)
class _Root:
    ident: tuple[int, int]
    unwatched: set[str] = field(default_factory=set)
    broken: bool = False


class Watcher:
    """One inotify instance and what its events said."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.token = os.urandom(8).hex()  # not `secrets`: it loads OpenSSL, at every start
        self.gen = 1
        self._fd = -1
        self._reset(0)

    # -- the instance -----------------------------------------------------------------

    def _reset(self, floor: int) -> None:
        """Forget everything: questions about any time before now cannot be answered."""
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        self.path_of: dict[int, str] = {}
        self.wd_of: dict[str, int] = {}
        self.roots: dict[str, _Root] = {}
        self.dirty: dict[str, int] = {}
        self.floor = floor
        self._mounts = _mount_table()
        self._devices = trusted_devices()

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # -- questions --------------------------------------------------------------------

    def changes(self, roots: Iterable[str], since: int | None, token: str | None) -> Answer:
        """What changed in the trees of `roots` since generation `since` (of this
        watcher: `token`). Roots not watched yet are watched now (that answer cannot
        say: nothing was watched before)."""
        self.drain()
        if _mount_table() != self._mounts:
            self._reset(self.gen)
        known = since is not None and token == self.token and since >= self.floor
        unwatched: set[str] = set()
        for root in roots:
            state = self.roots.get(root)
            if state is not None and _ident(root) != state.ident:
                self._forget_root(root)
                state = None
            if state is None:
                known = False
                state = self._watch_root(root)
            # A root not watched at all is one unwatched subtree: checked the stat way.
            unwatched |= {root} if state.broken else state.unwatched
        dirty = None
        if known:
            assert since is not None
            prefixes = tuple(r.rstrip("/") + "/" for r in roots)
            changed = []
            for path in reversed(self.dirty):  # the latest first (`_dirty` keeps them so)
                if self.dirty[path] <= since:
                    break
                if path in roots or path.startswith(prefixes):
                    changed.append(path)
            dirty = frozenset(changed)
        return Answer(self.token, self._next(), dirty, frozenset(unwatched))

    def _next(self) -> int:
        """This generation, closed: every event read from now on has a later one."""
        now = self.gen
        self.gen += 1
        return now

    # -- watching ---------------------------------------------------------------------

    def _watch_root(self, root: str) -> _Root:
        state = _Root(_ident(root))
        self.roots[root] = state
        if state.ident == (0, 0):
            state.broken = True
            return state
        self._watch_tree(root, state, new=False)
        return state

    def _root_of(self, path: str) -> _Root | None:
        for root, state in self.roots.items():
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return state
        return None

    def _dirty(self, path: str) -> None:
        """`path` changed now; the latest changes stay last (questions read them so)."""
        self.dirty.pop(path, None)
        self.dirty[path] = self.gen

    def _watch_tree(self, top: str, state: _Root, new: bool = True) -> None:
        """Watch `top` and every directory below it, each before it is listed (what
        appears after its watch landed is an event; what was there, the listing); a
        `new` one (made or moved in) is changed, all of it."""
        stack = [top]
        while stack:
            directory = stack.pop()
            if new:
                self._dirty(directory)
            if not self._add(directory, state):
                continue
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        with contextlib.suppress(OSError):
                            if entry.is_dir(follow_symlinks=False):
                                stack.append(entry.path)
            except OSError:
                pass  # gone, or cannot be listed: the walk finds that out itself

    def _add(self, directory: str, state: _Root) -> bool:
        try:
            info = os.lstat(directory)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            return False
        if info.st_dev not in self._devices or len(self.wd_of) >= MAX_WATCHES:
            self._unwatched(directory, state)
            return False
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory), MASK)
        if wd < 0:
            if ctypes.get_errno() not in (errno.ENOENT, errno.ENOTDIR):
                self._unwatched(directory, state)  # ENOSPC: the user's watches used up
            return False
        old = self.path_of.get(wd)
        if old is not None and old != directory:
            self.wd_of.pop(old, None)  # the same directory, reached by a new name
        self.path_of[wd] = directory
        self.wd_of[directory] = wd
        return True

    def _unwatched(self, directory: str, state: _Root) -> None:
        state.unwatched.add(directory)
        if len(state.unwatched) > MAX_UNWATCHED:
            state.broken = True

    def _forget_below(self, top: str) -> None:
        prefix = top.rstrip("/") + "/"
        for path in [p for p in self.wd_of if p == top or p.startswith(prefix)]:
            wd = self.wd_of.pop(path)
            self.path_of.pop(wd, None)
            self._dirty(path)
            self._libc.inotify_rm_watch(self._fd, wd)
        for state in self.roots.values():
            state.unwatched = {u for u in state.unwatched
                               if not (u == top or u.startswith(prefix))}

    def _forget_root(self, root: str) -> None:
        self._forget_below(root)
        del self.roots[root]

    # -- events -----------------------------------------------------------------------

    def drain(self) -> None:
        """Read every queued event."""
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                self._reset(self.gen)
                return
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                name = data[offset + _HEADER.size:offset + _HEADER.size + length]
                offset += _HEADER.size + length
                if mask & (IN_Q_OVERFLOW | IN_UNMOUNT):
                    self._reset(self.gen)  # events were lost: nothing can be vouched for
                    break
                self._event(wd, mask, os.fsdecode(name.rstrip(b"\0")))
            if len(self.dirty) > MAX_DIRTY:
                self.floor = self.gen
                self.dirty.clear()

    def _event(self, wd: int, mask: int, name: str) -> None:
        directory = self.path_of.get(wd)
        if directory is None:
            return  # a watch already dropped (moved away): its parent's event told
        if mask & IN_IGNORED:
            self.path_of.pop(wd, None)
            if self.wd_of.get(directory) == wd:
                del self.wd_of[directory]
            self._dirty(directory)
            if directory in self.roots:
                self._forget_root(directory)
            return
        self._dirty(directory)
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF) and directory in self.roots:
            self._forget_root(directory)  # the next question watches what is there now
            return
        if not name or not mask & IN_ISDIR:
            return
        path = os.path.join(directory, name)
        if mask & (IN_MOVED_FROM | IN_DELETE):
            self._forget_below(path)
        if mask & (IN_MOVED_TO | IN_CREATE):
            self._forget_below(path)  # what stood there before (a rename over it)
            state = self._root_of(path)
            if state is not None:
                self._watch_tree(path, state)


def _ident(path: str) -> tuple[int, int]:
    try:
        info = os.lstat(path)
    except OSError:
        return (0, 0)
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else (0, 0)


def _mount_table() -> bytes:
    """The mount table as this process sees it (a mount sends no inotify event)."""
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            return f.read()
    except OSError:
        return b""


# -- who asks whom ---------------------------------------------------------------------
# The warm server holds a `Hub` (the watcher and one socket per worker); a worker forked
# ahead of its call has old memory, so it asks the server at call time. `serve` and MCP
# ask their own watcher. Anything else (SWIFTY_DAEMON=off, the Python API) has none:
# `ask` says so and the walk cache checks every directory itself.

_asker: _Asker | None = None


class _Asker:
    def ask(self, roots: tuple[str, ...], since: int | None, token: str | None
            ) -> Answer | None:
        raise NotImplementedError

    def hand_back(self, name: str, state: bytes) -> None:
        """A walk's state, for the server's next workers (none here: it is ours)."""


class _Local(_Asker):
    def __init__(self) -> None:
        self.watcher = Watcher()
        self.lock = threading.Lock()  # `serve` runs calls on threads

    def ask(self, roots: tuple[str, ...], since: int | None, token: str | None
            ) -> Answer | None:
        with self.lock:
            return self.watcher.changes(roots, since, token)


class _Remote(_Asker):
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()

    def ask(self, roots: tuple[str, ...], since: int | None, token: str | None
            ) -> Answer | None:
        with self.lock:
            try:
                _send(self.sock, ("ask", roots, since, token))
                reply = _receive(self.sock)
            except OSError:
                return None
        if not (isinstance(reply, tuple) and len(reply) == 4):
            return None
        tok, now, dirty, unwatched = reply
        return Answer(tok, now, None if dirty is None else frozenset(dirty),
                      frozenset(unwatched))

    def hand_back(self, name: str, state: bytes) -> None:
        with self.lock, contextlib.suppress(OSError):
            _send(self.sock, ("state", name, state))


def watch_here() -> None:
    """This long-lived process (`serve`, MCP) asks a watcher of its own."""
    global _asker
    if _asker is None and _supported():
        _asker = _Local()


def ask(roots: tuple[str, ...], since: int | None, token: str | None) -> Answer | None:
    """The changes in `roots` since `since`, or None where no watcher runs."""
    if _asker is None:
        return None
    try:
        return _asker.ask(roots, since, token)
    except OSError:
        return None


def hand_back(name: str, state: bytes) -> None:
    if _asker is not None:
        _asker.hand_back(name, state)


def _supported() -> bool:
    """inotify (Linux); without it nothing is watched and every walk checks it all."""
    return sys.platform.startswith("linux") and os.path.exists("/proc/self/mountinfo")


class Hub:
    """The warm server's side: the watcher, asked by the workers it forks (one socket
    pair each, made before the fork), and the states they hand back, kept in this
    process's memory for the workers forked after."""

    def __init__(self, adopt: Callable[[str, bytes], None]) -> None:
        # The walk cache's `adopt` (passed in: it asks us, we may not import it).
        self.adopt = adopt
        self.watcher: Watcher | None = None
        self.peers: dict[int, socket.socket] = {}

    def fds(self) -> list[int]:
        """To wait on: the workers' sockets and the watcher (whose queue must not
        overflow between calls: that forgets everything)."""
        return [*self.peers, *((self.watcher.fileno(),) if self.watcher is not None else ())]

    def channel(self) -> socket.socket:
        """A socket pair for the worker about to be forked: ours kept, its returned."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM
                                         | socket.SOCK_CLOEXEC)
        self.peers[ours.fileno()] = ours
        return theirs

    def in_worker(self, sock: socket.socket) -> None:
        """In the forked worker: only its own socket stays."""
        global _asker
        for peer in self.peers.values():
            peer.close()
        self.peers.clear()
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        _asker = _Remote(sock)

    def ready(self, fd: int) -> None:
        """A worker asked, handed a state back, or left; or events are queued."""
        if self.watcher is not None and fd == self.watcher.fileno():
            self.watcher.drain()
            return
        peer = self.peers.get(fd)
        if peer is None:
            return
        try:
            message = _receive(peer)
        except OSError:
            message = None
        if not isinstance(message, tuple) or not message:
            peer.close()
            del self.peers[fd]
            return
        if message[0] == "ask" and len(message) == 4:
            if self.watcher is None and _supported():
                self.watcher = Watcher()
            reply: object = None
            if self.watcher is not None:
                answer = self.watcher.changes(tuple(message[1]), message[2], message[3])
                reply = (answer.token, answer.now,
                         None if answer.dirty is None else tuple(answer.dirty),
                         tuple(answer.unwatched))
            with contextlib.suppress(OSError):
                _send(peer, reply)
        elif (message[0] == "state" and len(message) == 3 and isinstance(message[1], str)
              and isinstance(message[2], bytes)):
            self.adopt(message[1], message[2])


def _send(sock: socket.socket, message: Any) -> None:
    data = marshal.dumps(message)
    sock.sendall(struct.pack("!I", len(data)) + data)


def _receive(sock: socket.socket) -> object:
    head = _exact(sock, 4)
    if len(head) < 4:
        return None
    size = struct.unpack("!I", head)[0]
    if size > MAX_MESSAGE:
        return None
    data = _exact(sock, size)
    if len(data) < size:
        return None
    try:
        return marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None


def _exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(size - len(data), 1 << 20))
        if not chunk:
            break
        data += chunk
    return bytes(data)


__all__ = ["MAX_UNWATCHED", "MAX_WATCHES", "TRUSTED_FS", "Answer", "Hub", "Watcher", "ask",
           "hand_back", "trusted_devices", "watch_here"]
