"""A cgroup of its own for one command: pids.max and a memory cap over its whole tree.

Made directly in the cgroup file system, where this process may: as root, or in a
cgroup v2 subtree delegated to the user. That is a mkdir and a few writes — no D-Bus
round trip to systemd per command. Where none can be made, `available()` says so and
the caller falls back to rlimits.

- cgroup v1: a child of this process's own cgroup in the `pids` and `memory`
  hierarchies (v1 has no rule against processes in inner nodes).
- cgroup v2: a child of this process's cgroup when that one may have children with
  the controllers (the root cgroup), else a sibling in the parent (v2 forbids
  controllers below a cgroup that holds processes), which must then be writable by us.
The command's first process joins it before it execs bwrap (caps.py), so nothing it
starts escapes the count. `close` removes the cgroup once the tree is gone.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass

_CONTROLLERS = ("pids", "memory")
_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class Place:
    """Where a child cgroup for one controller can be made."""

    version: int  # 1 or 2
    base: str  # the directory the child is made in


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (`\\040`)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _inside(path: str, root: str, mountpoint: str) -> str | None:
    """Where cgroup `path` is under a mount of the hierarchy's `root` at `mountpoint`."""
    if root == "/":
        return os.path.normpath(mountpoint + path)
    if path == root or path.startswith(root.rstrip("/") + "/"):
        return os.path.normpath(mountpoint + path[len(root):])
    return None  # our cgroup is not below this mount's root


def own_cgroups(proc_cgroup: str, mountinfo: str) -> dict[str, tuple[int, str]]:
    """controller → (cgroup version, directory of this process's cgroup), for `pids`
    and `memory`, from /proc/self/cgroup and /proc/self/mountinfo (pure)."""
    paths_v1: dict[str, str] = {}
    path_v2 = None
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            path_v2 = parts[2]
        for controller in parts[1].split(","):
            if controller in _CONTROLLERS:
                paths_v1[controller] = parts[2]
    found: dict[str, tuple[int, str]] = {}
    unified: dict[str, tuple[int, str]] = {}  # a controller bound to v1 is not in v2
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        root, mountpoint = _unescape(fields[3]), _unescape(fields[4])
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup":
            for controller in _CONTROLLERS:
                if controller in options and controller in paths_v1:
                    where = _inside(paths_v1[controller], root, mountpoint)
                    if where is not None:
                        found.setdefault(controller, (1, where))
        elif fstype == "cgroup2" and path_v2 is not None:
            where = _inside(path_v2, root, mountpoint)
            if where is not None:
                for controller in _CONTROLLERS:
                    unified.setdefault(controller, (2, where))
    return {**unified, **found}


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _place(controller: str, version: int, own: str) -> Place | None:
    if version == 1:
        return Place(1, own) if os.access(own, os.W_OK) else None
    for base in (own, os.path.dirname(own)):
        enabled = _read(os.path.join(base, "cgroup.subtree_control")).split()
        if controller not in enabled or not os.access(base, os.W_OK):
            continue
        if base == own and os.path.exists(os.path.join(own, "cgroup.type")):
            continue  # not the root, and we are in it: no controlled children below
        if base != own and not os.access(os.path.join(base, "cgroup.procs"), os.W_OK):
            continue  # moving a process needs write access to the common ancestor
        return Place(2, base)
    return None


@functools.cache
def places() -> dict[str, Place]:
    """controller → where this process can make a child cgroup with it (cached: a
    long-lived executor looks once)."""
    own = own_cgroups(_read("/proc/self/cgroup"), _read("/proc/self/mountinfo"))
    found = {}
    for controller, (version, directory) in own.items():
        place = _place(controller, version, directory)
        if place is not None:
            found[controller] = place
    return found


@dataclass(slots=True)
class Cgroup:
    """One command's cgroup, in one directory per hierarchy."""

    dirs: tuple[str, ...]
    memory_dir: str | None

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of it for reaching the memory cap."""
        if self.memory_dir is None:
            return False
        events = _read(os.path.join(self.memory_dir, "memory.events")) \
            or _read(os.path.join(self.memory_dir, "memory.oom_control"))  # v2, v1
        for line in events.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value) > 0
        return False

    def pids_max_hit(self) -> bool | None:
        """Whether a fork or clone failed for reaching pids.max (`max N` in pids.events,
        v1 and v2 alike); None without a pids controller."""
        found: bool | None = None
        for directory in self.dirs:
            for line in _read(os.path.join(directory, "pids.events")).splitlines():
                key, _, value = line.partition(" ")
                if key == "max" and value.strip().isdigit():
                    found = found or int(value) > 0
        return found

    def close(self) -> None:
        """Kill what is left and remove the directories (the kernel refuses while a
        process is still exiting, so it is retried for a moment; in a process that
        removes them later, `remove_later`, the retries wait until it asks)."""
        for directory in self.dirs:
            kill = os.path.join(directory, "cgroup.kill")  # v2 (Linux 5.14+) only
            if os.path.exists(kill):
                with contextlib.suppress(OSError):
                    _write(kill, "1")
        if _LATER is not None:
            busy = tuple(d for d in self.dirs if not _settled(d))
            if busy:
                _LATER.append(Cgroup(busy, None))
            return
        _remove(self.dirs)


def _settled(directory: str) -> bool:
    """One attempt at removing: False while the kernel says busy (a process still
    exiting); True once gone, or on another error (retrying would not help)."""
    try:
        os.rmdir(directory)
    except FileNotFoundError:
        return True
    except OSError as e:
        return e.errno != errno.EBUSY
    return True


# The cgroups whose removal waits for the last of their processes to exit, in a process
# that removes them after answering (`remove_later`): None, removed at once.
_LATER: list[Cgroup] | None = None


def remove_later() -> None:
    """From now on a closed cgroup that is still busy (its processes exiting) is
    removed by `remove_pending`, not in `close`: a warm worker answers its caller first.
    Its processes are killed and its caps hold until then."""
    global _LATER
    if _LATER is None:
        _LATER = []


def remove_pending() -> None:
    """Remove the cgroups `close` left busy (retried for a moment, as `close` does)."""
    pending = _LATER or []
    while pending:
        _remove(pending.pop().dirs)


def _remove(dirs: tuple[str, ...]) -> None:
    deadline = time.monotonic() + 2.0
    for directory in dirs:
        pause = 0.0002  # the last exit is usually done within a millisecond: a
        while True:  # fixed 5 ms wait was most of what removing cost each run
            try:
                os.rmdir(directory)
                break
            except FileNotFoundError:
                break
            except OSError as e:
                if e.errno != errno.EBUSY or time.monotonic() > deadline:
                    break
                time.sleep(pause)
                pause = min(pause * 2, 0.005)


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _remove_stale(base: str) -> None:
    """Cgroups left by an executor that was killed before it could remove them."""
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            parts = entry.name.split("-")
            if len(parts) == 3 and parts[0] == "swifty" and parts[1].isdigit() \
                    and not os.path.exists(f"/proc/{parts[1]}"):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def _usable(processes: int | None, memory_bytes: int | None) -> list[str]:
    """The controllers that would hold the caps asked for."""
    found = places()
    return [c for c, cap in (("pids", processes), ("memory", memory_bytes))
            if cap and c in found]


# The name of a cgroup only described (`compile --target bwrap`): each command's own
# is `swifty-<pid>-<n>`, made when it runs.
PLACEHOLDER = "swifty-PID-N"


def plan(processes: int | None, memory_bytes: int | None) -> tuple[tuple[str, ...],
                                                                   frozenset[str]]:
    """What `create` would make — its directories (named `PLACEHOLDER`) and the
    controllers holding caps — making nothing (a creation that fails is not foreseen)."""
    found, usable = places(), _usable(processes, memory_bytes)
    bases = dict.fromkeys(found[c].base for c in usable)
    return tuple(os.path.join(b, PLACEHOLDER) for b in bases), frozenset(usable)


def create(processes: int | None, memory_bytes: int | None) -> tuple[Cgroup | None,
                                                                     frozenset[str]]:
    """A cgroup with the caps it can hold, and which controllers those are (a cap
    without one here is the caller's to enforce otherwise)."""
    found, usable = places(), _usable(processes, memory_bytes)
    if not usable:
        return None, frozenset()
    name = f"swifty-{os.getpid()}-{next(_counter)}"
    bases = dict.fromkeys(found[c].base for c in usable)
    made: list[str] = []
    try:
        for base in bases:
            _remove_stale(base)
            directory = os.path.join(base, name)
            os.mkdir(directory, 0o755)
            made.append(directory)
        memory_dir = None
        for controller in usable:
            directory = os.path.join(found[controller].base, name)
            if controller == "pids":
                _write(os.path.join(directory, "pids.max"), str(processes))
            elif found[controller].version == 2:
                memory_dir = directory
                _write(os.path.join(directory, "memory.max"), str(memory_bytes))
                swap = os.path.join(directory, "memory.swap.max")
                if os.path.exists(swap):  # the cap is on memory, not memory plus swap
                    _write(swap, "0")
            else:
                memory_dir = directory
                _write(os.path.join(directory, "memory.limit_in_bytes"), str(memory_bytes))
                swap = os.path.join(directory, "memory.memsw.limit_in_bytes")
                if os.path.exists(swap):
                    _write(swap, str(memory_bytes))
    except OSError:
        for directory in made:
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        places.cache_clear()
        return None, frozenset()
    return Cgroup(tuple(made), memory_dir), frozenset(usable)


def describe(controllers: Iterable[str]) -> str:
    """Where the caps live, for `doctor`."""
    found = places()
    return ", ".join(f"{c}: cgroup v{found[c].version} under {found[c].base}"
                     for c in controllers if c in found)
