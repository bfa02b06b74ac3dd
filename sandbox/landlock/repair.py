"""Protected and hidden paths inside a writable root, held by repair: Landlock cannot
keep protected ones read-only there (`ruleset.py` says why), so each is recorded whole
before the command (every file's bytes and mode, every link's target, every directory)
and, when the command changed anything in it, what it left is moved aside
(`.swifty-blocked-…`, nothing is deleted) and the recorded tree is put back in its
place.

A tree too large to record (more than `_ENTRIES` entries or `_BYTES` bytes in all)
refuses the run: a protected path that could be neither kept nor repaired is not
confined.

A hidden path there (a `.env` a ReadFile deny rule hides) stays unreadable, but the
root's rights to remove and make entries reach it too: renamed to `notes.txt`, or linked
there and its name removed, it was the next run's and the file tools' to read, which go
by names. Each is held by a descriptor opened before the command (`hold`) and put back
under its name after it (`hold_back`): renamed back from where /proc says it is, or its
name linked again (the other name then refuses later runs, `setup.hard_links`).

Every change goes through directories opened without following links
(`aftercare.open_dir`), so a command cannot aim the restore at the user's files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from swifty_sandbox.messages import t

from ..fsafe import open_dir, open_nofollow
from ..run.aftercare import move_aside
from ..spec.compiler import SetupError
from .held import register, unregister

_ENTRIES = 5000
_BYTES = 32 << 20

Entry = tuple[str, int, bytes]  # kind ("d", "f", "l"), mode, content or link target


@dataclass(frozen=True, slots=True)
class Tree:
    path: str
    entries: dict[str, Entry] | None  # by path relative to `path` ("" itself); None: missing


class _Budget:
    def __init__(self) -> None:
        self.entries, self.bytes = _ENTRIES, _BYTES

    def take(self, path: str, size: int) -> None:
        self.entries -= 1
        self.bytes -= size
        if self.entries < 0 or self.bytes < 0:
            raise SetupError(t("setup.landlock_repair_too_large", path=path,
                               entries=_ENTRIES, megabytes=_BYTES >> 20))


def _record(path: str, budget: _Budget | None) -> dict[str, Entry] | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    out: dict[str, Entry] = {}

    def one(rel: str, full: str, info: os.stat_result) -> None:
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode):
            out[rel] = ("d", mode, b"")
            if budget is not None:
                budget.take(full, 0)
            with os.scandir(full) as it:
                children = sorted(e.name for e in it)
            for name in children:
                child = os.path.join(full, name)
                one(os.path.join(rel, name) if rel else name, child, os.lstat(child))
        elif stat.S_ISLNK(info.st_mode):
            out[rel] = ("l", 0, os.fsencode(os.readlink(full)))
        elif stat.S_ISREG(info.st_mode):
            if budget is not None:
                budget.take(full, info.st_size)
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                out[rel] = ("f", mode, f.read())
        else:  # a FIFO, a socket: kept by name and mode
            out[rel] = ("o", mode, b"")

    one("", path, info)
    return out


def snapshot(paths: list[str]) -> list[Tree]:
    """Each protected path as it is now; SetupError when they are too large to keep."""
    budget = _Budget()
    trees = []
    for path in paths:
        try:
            trees.append(Tree(path, _record(path, budget)))
        except OSError as e:
            raise SetupError(t("setup.unsearchable", path=path, error=e.strerror)) from e
    return trees


def _put_back(path: str, entries: dict[str, Entry]) -> None:
    """Recreate the recorded tree at `path` (which is free), following no link."""
    for rel in sorted(entries, key=lambda r: (r.count("/"), r)):
        kind, mode, content = entries[rel]
        full = os.path.join(path, rel) if rel else path
        parent, name = os.path.split(full)
        with _opened(parent) as fd:
            if kind == "d":
                os.mkdir(name, mode | 0o700, dir_fd=fd)
            elif kind == "l":
                os.symlink(os.fsdecode(content), name, dir_fd=fd)
            elif kind == "f":
                out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_CLOEXEC, mode, dir_fd=fd)
                with os.fdopen(out, "wb") as f:
                    f.write(content)
    for rel, (kind, mode, _) in entries.items():  # directories' own modes last
        if kind == "d":
            full = os.path.join(path, rel) if rel else path
            with contextlib.suppress(OSError):
                fd = open_dir(full)
                try:
                    os.chmod(f"/proc/self/fd/{fd}", mode)
                finally:
                    os.close(fd)


@contextlib.contextmanager
def _opened(directory: str) -> Iterator[int]:
    fd = open_dir(directory)
    try:
        yield fd
    finally:
        os.close(fd)


def _make_parents(path: str) -> None:
    """The directories above `path` that the command removed or moved, made again."""
    missing = []
    parent = os.path.dirname(path)
    while not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(missing):
        with _opened(os.path.dirname(directory)) as fd:
            os.mkdir(os.path.basename(directory), 0o755, dir_fd=fd)


def repair(trees: list[Tree], unresolved: Callable[[str], None]) -> str:
    """Put back every tree that changed; the notes for stderr. `unresolved` records a
    path that could not be put back: later runs refuse until it is."""
    notes = []
    for tree in trees:
        try:
            now = _record(tree.path, None)
        except OSError:
            now = {}  # unreadable now: it changed
        if now == tree.entries:
            continue
        try:
            moved = move_aside(tree.path) or "" if now is not None else ""
            if tree.entries is not None:
                _make_parents(tree.path)
                _put_back(tree.path, tree.entries)
            notes.append(t("run.repaired", path=tree.path, moved=moved or "-"))
        except OSError as e:
            unresolved(tree.path)
            notes.append(t("run.not_repaired", path=tree.path, error=e.strerror or e))
    return "".join(f"swifty-sandbox: {n}\n" for n in notes)


Held = tuple[str, int]  # a hidden path and an O_PATH descriptor of what lies there


@dataclass(frozen=True, slots=True)
class Holding:
    held: list[Held]
    registry: str | None  # where the file tools find their identities (`held.py`)


def hold(paths: list[str], home: str) -> Holding:
    """A descriptor of each hidden path that exists (opened following no link, closed
    on exec: the command never has it), their identities listed for the file tools
    while the command runs."""
    held: list[Held] = []
    for path in paths:
        with contextlib.suppress(OSError):
            held.append((path, open_nofollow(path, os.O_PATH | os.O_CLOEXEC)))
    identities = []
    for _path, fd in held:
        info = os.fstat(fd)
        identities.append((info.st_dev, info.st_ino))
    return Holding(held, register(home, identities) if held else None)


def _back(path: str, fd: int) -> str | None:
    """Put the held `fd` back at `path` if the command moved it; the note, or None."""
    info = os.fstat(fd)
    with contextlib.suppress(FileNotFoundError):
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino):
            return None  # where it was (another name of it refuses the next run)
    if info.st_nlink == 0:
        return None  # removed: nothing of it is left to read
    try:
        where: str | None = os.readlink(f"/proc/self/fd/{fd}")
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            raise
        where = None  # moved below folders too deep to be named: found from itself
    moved = move_aside(path) or "-"  # what took its name, if anything
    _make_parents(path)
    parent, name = os.path.split(path)
    with _opened(parent) as target:
        if where is None and stat.S_ISDIR(info.st_mode):
            return _back_from_parent(fd, info, path, name, target, moved)
        if where is None or where.endswith(" (deleted)"):
            # Its name removed, another kept (or one too deep to be named): linked again,
            # the other name refuses later runs (`setup.hard_links`).
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=target, follow_symlinks=True)
            return t("run.hidden_linked", path=path)
        source_dir, source = os.path.split(where)
        with _opened(source_dir) as origin:
            found = os.lstat(source, dir_fd=origin)
            if (found.st_dev, found.st_ino) != (info.st_dev, info.st_ino):
                raise OSError(0, "moved again meanwhile", where)
            os.rename(source, name, src_dir_fd=origin, dst_dir_fd=target)
    return t("run.hidden_back", path=path, where=where, moved=moved)


def _back_from_parent(fd: int, info: os.stat_result, path: str, name: str, target: int,
                      moved: str) -> str:
    """A held directory whose path the kernel cannot give (longer than PATH_MAX):
    renamed back from its parent, which its own `..` opens, under the name it has
    there, which a listing of that parent finds by identity. No path is followed."""
    origin = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=fd)
    try:
        with os.scandir(origin) as entries:
            names = [entry.name for entry in entries]
        for entry_name in names:
            found = os.lstat(entry_name, dir_fd=origin)
            if (found.st_dev, found.st_ino) == (info.st_dev, info.st_ino):
                os.rename(entry_name, name, src_dir_fd=origin, dst_dir_fd=target)
                return t("run.hidden_back", path=path, where=f".../{entry_name}",
                         moved=moved)
    finally:
        os.close(origin)
    raise OSError(0, "moved again meanwhile", path)


def _where(fd: int) -> str | None:
    with contextlib.suppress(OSError):
        where = os.readlink(f"/proc/self/fd/{fd}")
        return None if where.endswith(" (deleted)") else where
    return None


def hold_back(holding: Holding, unresolved: Callable[[str], None]) -> str:
    """Each held hidden path put back where it was hidden, before the protected trees
    are compared (a hidden path inside one moved away is no change of the tree once
    it is back); the notes for stderr. `unresolved` records one that could not be,
    and where it is: later runs refuse while either is there."""
    notes = []
    for path, fd in holding.held:
        try:
            note = _back(path, fd)
        except OSError as e:
            for name in (path, _where(fd)):
                if name is not None:
                    unresolved(name)
            note = t("run.not_repaired", path=path, error=e.strerror or e)
        if note is not None:
            notes.append(note)
    return "".join(f"swifty-sandbox: {n}\n" for n in notes)


def release(holding: Holding) -> str:
    """The descriptors closed and the identities no longer listed: after the protected
    trees are repaired (the list lies in `~/.swifty`, one of them where the home is
    writable)."""
    for _path, fd in holding.held:
        os.close(fd)
    unregister(holding.registry)
    return ""
