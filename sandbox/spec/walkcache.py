"""The walk cache: what the walk of a writable tree found in each directory, kept
between runs and trusted only where one `lstat` shows the directory unchanged.

A directory's entries change only by adding, removing or renaming one of them, and
each of those sets the directory's mtime and ctime; a chmod sets its ctime. So a
directory whose (dev, inode, mtime, ctime) are what they were when it was listed
still has the entries it had: its record (the markers, the glob matches and the
subdirectories and links of that listing) stands for a `scandir` and a regex per
entry. Everything else is listed again: a directory with no record, another inode or
device (a directory replaced, a subtree renamed in, a mount), other times, or one
whose lstat fails. Records are by path, so a renamed subtree is walked again where
it now is (what a glob matches depends on the path). What follows from that:

- ctime is the witness. A command can set a directory's mtime back (`touch -d`) but
  not its ctime, which every change, the `utimensat` included, sets to now.
- Racy listings are not kept: a directory whose mtime or ctime is within `RACY_NS` of
  the moment it was listed (or after it) could change again within the same
  timestamp tick, unseen; it is listed again next time, until it is older.
- Only local file systems whose timestamps are set by this kernel (`TRUSTED_FS`,
  from /proc/self/mountinfo, by device): a directory on NFS, FUSE or 9p is always
  listed.
- Links are never followed from a record: a symlink's text cannot change without
  its directory changing, but where it leads can, so the walk looks at it again.
- Where: `~/.cache/swifty-sandbox/walk/`, a protected path (read-only in every
  sandbox, and hidden there too: the records name files inside hidden directories),
  in the one cache store (`policy/cachefile.py`), whose checks are the only ones:
  nothing a command can write is read (directory and file ours alone, the file
  single-linked, regular, at most `MAX_BYTES`, under a keyed MAC over the walk's
  parameters and the whole content). Garbage, a truncated or forged file, another
  owner or mode: a cold cache, never an error and never a skipped directory. When the
  cache directory lies inside one of the run's writable roots it is neither read nor
  written.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import time
from dataclasses import dataclass, field
from typing import Any

from swifty_sandbox.policy import cachefile

from . import treewatch
from .treewatch import Answer, trusted_devices

WALK_HOME = ".cache/swifty-sandbox/walk"
FORMAT = 1
MAX_BYTES = 64 << 20  # ~100 bytes a directory: room for 600k of them
MAX_FILES = 32  # cache files kept (one per project and policy); the oldest go first
PARALLEL_FROM = 2048  # records from which the check runs on two threads
HAND_BACK_FROM = 512  # changed directories since a state from which a newer one is sent
RACY_NS = 2_000_000_000  # FAT's 2 s; ext4 and tmpfs tick in milliseconds at most

# A record: (dev, ino, mtime_ns, ctime_ns, active groups, markers, matches, children)
# - matches: ((name, groups matched), ...) in listing order
# - children: ((name, is_link, groups still looked for below, link text), ...): every
#   subdirectory and symlink, in listing order (the after-run walk goes below all).
Record = tuple[int, int, int, int, tuple[str, ...], tuple[str, ...],
               tuple[tuple[str, tuple[str, ...]], ...],
               tuple[tuple[str, bool, tuple[str, ...], str], ...]]
FileId = cachefile.FileId


class Cache:
    """One walk's records: those read (trusted per directory by `get`) and those made
    this time (`put`), written back by `save` when they differ."""

    def __init__(self, directory: str | None) -> None:
        self.directory = directory  # None: nothing read or written (a writable root)
        self.records: dict[str, Record] = {}
        self.fresh: dict[str, Record] = {}
        self.valid: set[str] = set()  # paths whose record `validate` found true
        self.devices = trusted_devices()
        self.name = ""
        self.file: FileId | None = None  # the cache file as read or written
        self.markers: frozenset[str] = frozenset()  # the names the walk marked
        self._key = b""  # the store's key: the walk's parameters
        self._params = ""
        self.changed = False
        # With a watcher (`treewatch.py`, long-lived processes only): its answer for
        # this walk, the generation and watcher the state is good for, what each tree's
        # recorded directories contributed, and whether the records came vouched for
        # (then only the directories the answer names are looked at).
        self.answer: Answer | None = None
        self.gen: int | None = None
        self.token: str | None = None
        self.trees: dict[str, Tree] = {}
        self.incremental = False
        self.stash: dict[str, Record] = {}  # an unwatched subtree's records, checked by lstat
        self.racy: set[str] = set()  # records kept in memory only (not for the file)
        self.handed = True

    # -- reading ----------------------------------------------------------------------

    def load(self, params: str, watched: tuple[str, ...] = ()) -> None:
        """The records of the walk with these parameters (a cold cache when there are
        none to trust). Where a watcher runs, it is asked about the trees `watched`
        first: records it vouches for are taken as they are."""
        self._params = params
        self._key = params.encode()
        self.name = cachefile.entry_name(self._key)
        self.records = {}
        recent = _RECENT.get(self.name)
        if recent is not None and recent._params != params:
            recent = None
        if watched:
            since = (recent.gen, recent.token) if recent is not None else (None, None)
            self.answer = treewatch.ask(watched, *since)
        if self.answer is not None:
            self.gen, self.token = self.answer.now, self.answer.token
            if self.answer.dirty is not None and recent is not None and recent.trees:
                # Copies: `serve` may run another walk of the same state at once.
                self.records = dict(recent.records)
                self.fresh = self.records
                self.trees = {r: Tree(dict(t.found), dict(t.marked), dict(t.links))
                              for r, t in recent.trees.items()}
                self.incremental = True
                return
        if self.directory is None:
            if recent is not None:  # nothing on disk: this process's own records only
                self.records = _trustworthy(recent)
        else:
            self._read(recent)
        self.validate()

    def _read(self, recent: Cache | None) -> None:
        """The file's records; this process's own last ones (`serve`, MCP: its memory
        is ours) while the file is still the one it wrote or read."""
        assert self.directory is not None
        found = cachefile.load(self.directory, self._key, max_size=MAX_BYTES,
                               unchanged=recent.file if recent is not None else None)
        if found is None:
            return
        data, self.file = found
        if data is None and recent is not None:
            self.records = _trustworthy(recent)
        elif data is not None:
            with contextlib.suppress(ValueError, EOFError, TypeError):
                self.records = self._records(data)

    def _records(self, data: bytes) -> dict[str, Record]:
        content: Any = marshal.loads(data)
        if not (isinstance(content, tuple) and len(content) == 3 and content[0] == FORMAT
                and content[1] == self._params and isinstance(content[2], dict)):
            return {}
        return content[2]

    def validate(self) -> None:
        """One `lstat` per record: the directories still as they were listed (the same
        device, inode, mtime and ctime). Done in one tight pass before each walk that
        uses the records (the after-run check's again, after the command); on two
        threads for a big tree where two CPUs are ours (`lstat` lets go of the GIL)."""
        items = list(self.records.items())
        if len(items) < PARALLEL_FROM or not hasattr(os, "sched_getaffinity") or len(
                os.sched_getaffinity(0)) < 2:
            self.valid = _valid(items, self.devices) or set()
            return
        import threading

        half = len(items) // 2
        other: list[set[str] | None] = [None]

        def check() -> None:
            other[0] = _valid(items[:half], self.devices)

        worker = threading.Thread(target=check, name="swifty-walk-validate", daemon=True)
        worker.start()
        mine = _valid(items[half:], self.devices)
        worker.join()
        self.valid = mine | other[0] if mine is not None and other[0] is not None else set()

    def get(self, path: str, active: tuple[str, ...] | None) -> Record | None:
        """The record of `path` when `validate` found the directory as it was listed
        (and it was listed looking for `active`, unless None); else None: list it."""
        if self.incremental:
            return self._vouched(path, active)
        if path not in self.valid:
            return None
        record = self.records[path]
        if active is not None and record[4] != active:
            return None
        self.fresh[path] = record  # kept: seen valid this time
        return record

    def _vouched(self, path: str, active: tuple[str, ...] | None) -> Record | None:
        """With the watcher's answer: a record stands unless the answer names its
        directory; in an unwatched subtree it is checked the stat-based way."""
        answer = self.answer
        assert answer is not None and answer.dirty is not None
        if path in answer.dirty:
            return None
        if answer.unwatched and self.unwatched(path):
            record = self.stash.pop(path, None)
            if record is None or not _valid([(path, record)], self.devices):
                return None
            self.records[path] = record
        else:
            record = self.records.get(path)
        if record is None or (active is not None and record[4] != active):
            return None
        return record

    def unwatched(self, path: str) -> bool:
        """Whether `path` lies in a subtree the watcher does not watch."""
        assert self.answer is not None
        unwatched = self.answer.unwatched
        while True:
            if path in unwatched:
                return True
            parent = os.path.dirname(path)
            if parent == path:
                return False
            path = parent

    # -- writing ----------------------------------------------------------------------

    def before_listing(self, path: str) -> tuple[os.stat_result, int] | None:
        """The directory's identity, taken before it is listed (a change after this
        changes its ctime, so the record cannot outlive it), and when."""
        now = time.time_ns()
        try:
            info = os.lstat(path)
        except OSError:
            return None
        return info, now

    def put(self, path: str, seen: tuple[os.stat_result, int] | None, active: tuple[str, ...],
            markers: list[str], matches: list[tuple[str, tuple[str, ...]]],
            children: list[tuple[str, bool, tuple[str, ...], str]]) -> None:
        """Keep the listing of `path` unless it cannot be trusted next time."""
        kept = seen is not None and stat.S_ISDIR(seen[0].st_mode) and (
            seen[0].st_dev in self.devices
            and max(seen[0].st_mtime_ns, seen[0].st_ctime_ns) <= seen[1] - RACY_NS)
        if self.gen is not None:
            # Watched: every directory the walk saw has a record (the state's
            # truth; the watcher vouches for it), those not kept here in memory only.
            info = seen[0] if seen is not None else None
            self.fresh[path] = (info.st_dev if info else 0, info.st_ino if info else 0,
                                info.st_mtime_ns if info else 0,
                                info.st_ctime_ns if info else 0, active, tuple(markers),
                                tuple(matches), tuple(children))
            if not kept:
                self.racy.add(path)
            else:
                self.racy.discard(path)
                self.changed = True
            return
        if not kept:
            # Not kept. An older record of it stays in the file until the next write
            # (it no longer matches the directory): a few racy directories, as bwrap's
            # mount points that each run makes and removes, do not rewrite the file.
            return
        assert seen is not None
        info = seen[0]
        self.fresh[path] = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns,
                            active, tuple(markers), tuple(matches), tuple(children))
        self.changed = True

    def finish(self) -> None:
        """The walk is over: its records are what the after-run check trusts (each
        checked again), written back (atomically) when they changed."""
        self.records, self.fresh = self.fresh, {}
        self.stash = {}
        if self.directory is not None and self.name and self.changed and not self.incremental:
            # A vouched walk writes nothing: the file is for runs without a watcher,
            # and rewriting it for a few changed directories would cost more than them.
            self._save({p: r for p, r in self.records.items() if p not in self.racy})
        # A state goes back to the warm server when it is new, or when the one it came
        # from is far behind: marshalling a big tree's records costs more than listing
        # the few directories (bwrap's mount points, mostly) that every run changes.
        self.handed = self.gen is None or (
            self.incremental and self.answer is not None and self.answer.dirty is not None
            and len(self.answer.dirty) < HAND_BACK_FROM)
        remember(self)

    def state(self) -> bytes:
        """What the next walk in another process needs (`adopt`)."""
        return marshal.dumps((FORMAT, self._params, self.name, self.gen, self.token,
                              self.records, self.markers, self.racy,
                              {r: (t.found, t.marked, t.links) for r, t in self.trees.items()}))

    def _save(self, records: dict[str, Record]) -> None:
        assert self.directory is not None
        body = marshal.dumps((FORMAT, self._params, records))
        self.file = cachefile.store(self.directory, self._key, body, max_size=MAX_BYTES,
                                    keep=MAX_FILES)


def _trustworthy(recent: Cache) -> dict[str, Record]:
    """A state's records that one `lstat` may vouch for: not those a watched walk kept
    in memory although listed within a timestamp tick of a change (`racy`)."""
    if not recent.racy:
        return recent.records
    return {p: r for p, r in recent.records.items() if p not in recent.racy}


def _valid(items: list[tuple[str, Record]], devices: frozenset[int]) -> set[str] | None:
    """The paths whose directory is as its record says; None when a record is not of
    our shape after all (then all of it is cold)."""
    valid: set[str] = set()
    lstat, is_dir = os.lstat, stat.S_ISDIR
    try:
        for path, record in items:
            try:
                info = lstat(path)
            except OSError:
                continue
            if (info.st_ctime_ns == record[3] and info.st_mtime_ns == record[2]
                    and info.st_ino == record[1] and info.st_dev == record[0]
                    and info.st_dev in devices and is_dir(info.st_mode)):
                valid.add(path)
    except (TypeError, IndexError, ValueError):
        return None
    return valid


# The caches of this process's walks, by file name: the after-run check of a command
# reuses the records the walk before it made (and checks each again).
_RECENT: dict[str, Cache] = {}


@dataclass(slots=True)
class Tree:
    """What a tree's recorded directories contributed to the walk (watched walks):
    each glob match with its groups, each marker, and each symlink with the groups
    still looked for below it and its text (followed again every walk)."""

    found: dict[str, tuple[str, ...]] = field(default_factory=dict)
    marked: dict[str, None] = field(default_factory=dict)
    links: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)


def hand_back() -> None:
    """A warm worker's call is over: the states its walks made go to the server, whose
    next workers start from them (a worker forked before this call has older ones)."""
    for cache in list(_RECENT.values()):
        if not cache.handed:
            cache.handed = True
            treewatch.hand_back(cache.name, cache.state())


def adopt(name: str, data: bytes) -> None:
    """In the warm server: a state a worker handed back (see `hand_back`)."""
    try:
        (fmt, params, named, gen, token, records, markers, racy,
         trees) = marshal.loads(data)
        cache = Cache(None)
        cache._params, cache.name, cache.gen, cache.token = params, named, gen, token
        cache.records, cache.markers, cache.racy = records, frozenset(markers), set(racy)
        cache.trees = {r: Tree(f, m, lk) for r, (f, m, lk) in trees.items()}
    except (ValueError, EOFError, TypeError):
        return
    if fmt != FORMAT or name != cache.name or not isinstance(gen, int):
        return
    remember(cache)
    import gc

    gc.freeze()  # the workers forked next share its pages instead of copying them


def remember(cache: Cache) -> None:
    """Keep `cache` for the after-run check (a few: `serve` runs commands at once)."""
    _RECENT[cache.name] = cache
    while len(_RECENT) > 8:
        del _RECENT[next(iter(_RECENT))]


def recall(name: str) -> Cache | None:
    """The cache of the walk named `name`, made by this process: records that each
    still need `get`'s check."""
    return _RECENT.get(name)


def cache_dir(home: str) -> str:
    return os.path.join(home, WALK_HOME)


__all__ = ["FORMAT", "MAX_BYTES", "RACY_NS", "WALK_HOME", "Cache", "Record", "Tree", "adopt",
           "cache_dir", "hand_back", "recall", "remember", "trusted_devices"]
