"""Which hidden paths git tracks: read from the project's index, without running git.

A file hidden inside the sandbox (behind /dev/null) is, to git, a character device in
place of a tracked file: `git status` shows it modified, `git diff` and `git add`/
`commit -a` stop with "unsupported file type" (git records nothing, so nothing is
lost, but every diff fails). A hidden directory's tracked files cannot be read (git
warns, diffs skip them). Both are said once per run, and by `audit`.

The index holds each tracked path after its 16-bit flags (low 12 bits: the path's
length, capped at 0xFFF) and ends it with a NUL (versions 2 and 3). A path is looked
for with one `find` per hidden path in the mapped file — no parse of a 100,000-entry
index on the hot path (≈ 15 ms for its 10 MB on a busy 2-CPU machine, < 1 ms for a
few thousand files, and only when a hidden path lies in the project); version 4
(prefix-compressed paths) is parsed entry by entry. The work is bounded by a deadline
(`_Budget`): the index is a file a command may have written.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
import time
from collections.abc import Iterable, Iterator, Sequence

from swifty_sandbox.policy.paths import is_within

from .gitfiles import gitdir_of

_INDEX_LIMIT = 256 << 20
_HEADER = struct.Struct(">4sII")
_FIXED = 62  # ctime, mtime, dev, ino, mode, uid, gid, size (40) + SHA-1 (20) + flags (2)


def _index(project: str) -> mmap.mmap | None:
    """The index, mapped (not copied: 10 MB for 100,000 files); None when missing."""
    directory = gitdir_of(os.path.join(project, ".git"))
    if directory is None:
        return None
    try:
        fd = os.open(os.path.join(directory, "index"),
                     os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _HEADER.size <= info.st_size <= _INDEX_LIMIT:
            return None
        data = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if data[:4] != b"DIRC":
        data.close()
        return None
    return data


# The reader's work is bounded, not only its input: a command can write `.git/index`
# (it is writable inside), and every later run reads it. A planted 64 MiB index of
# `.env` repeated made each run spend 27 s in `find` (every byte a false start), a
# random one 3 s (one full scan per hidden path). The search goes in windows against a
# deadline; past it (or past the candidate budget) the paths not yet looked for are
# not reported: the note is information, never a decision.
_DEADLINE = 0.1  # seconds, over every hidden path
_WINDOW = 1 << 20
_CANDIDATE_BUDGET = 4096  # places a name was found at, over every hidden path


class _Budget:
    __slots__ = ("candidates", "until")

    def __init__(self) -> None:
        self.until = time.monotonic() + _DEADLINE
        self.candidates = _CANDIDATE_BUDGET

    def spent(self) -> bool:
        return time.monotonic() > self.until or self.candidates < 0


def _found(data: mmap.mmap, name: bytes, prefix: bool, budget: _Budget) -> bool | None:
    """Whether an entry's path is `name` (or, `prefix`, starts with `name`); None when
    the budget ran out first. Searched with its NUL end (`prefix`: its slash), which
    leaves only longer paths ending alike as false starts."""
    needle = name if prefix else name + b"\0"
    start = _HEADER.size
    while start < len(data):
        if budget.spent():
            return None
        stop = min(len(data), start + _WINDOW + len(needle))
        hit = data.find(needle, start, stop)
        if hit < 0:
            start = stop - len(needle) + 1 if stop < len(data) else len(data)
            continue
        budget.candidates -= 1
        length = int.from_bytes(data[hit - 2:hit], "big") & 0xFFF
        end = hit + length
        if (length == len(name) or (prefix and length > len(name))) and \
                end < len(data) and data[end] == 0:
            return True
        start = hit + 1
    return False


# Bytes of expanded paths read from a version-4 index: each entry keeps a prefix of the
# one before, so a few MB written by a command (`.git/index` is writable inside) spelled
# gigabytes of paths on the host, outside every cap (2.6 MB: 0.8 GB and 4.6 s).
_EXPANDED_LIMIT = 16 << 20


def _v4_paths(data: mmap.mmap, budget: _Budget) -> Iterator[bytes]:
    _, _, count = _HEADER.unpack_from(data)
    offset, previous, total = _HEADER.size, b"", 0
    for i in range(count):
        if i % 256 == 0 and budget.spent():
            raise ValueError("index read beyond the deadline")
        flags = int.from_bytes(data[offset + 60:offset + 62], "big")
        offset += _FIXED + (2 if flags & 0x4000 else 0)
        byte = data[offset]  # git's offset varint: how much of the previous path goes
        offset += 1
        strip = byte & 0x7F
        while byte & 0x80:
            byte = data[offset]
            offset += 1
            strip = ((strip + 1) << 7) | (byte & 0x7F)
        end = data.find(b"\0", offset)
        if end < 0:
            raise ValueError("index entry without an end")
        previous = previous[:len(previous) - strip] + data[offset:end]
        total += len(previous)
        if total > _EXPANDED_LIMIT:
            raise ValueError("index paths beyond the limit")
        yield previous
        offset = end + 1


def tracked(project: str, files: Iterable[str], dirs: Iterable[str]) -> list[str]:
    """The hidden `files` git tracks, and each hidden directory holding tracked files;
    paths outside the project are not looked at."""
    inside = [(p, False) for p in files if is_within(p, project) and p != project] + \
        [(p, True) for p in dirs if is_within(p, project) and p != project]
    if not inside:
        return []
    data = _index(project)
    if data is None:
        return []
    try:
        return _tracked(project, data, inside)
    finally:
        data.close()


def _tracked(project: str, data: mmap.mmap, inside: list[tuple[str, bool]]) -> list[str]:
    out = []
    budget = _Budget()
    version = _HEADER.unpack_from(data)[1]
    paths = None
    if version == 4:
        try:
            paths = set(_v4_paths(data, budget))
        except (IndexError, ValueError, struct.error):
            return []  # a damaged index: git itself will say so
    for path, is_dir in inside:
        name = os.fsencode(os.path.relpath(path, project)) + (b"/" if is_dir else b"")
        if paths is not None:
            hit = any(p.startswith(name) for p in paths) if is_dir else name in paths
        else:
            found = _found(data, name, is_dir, budget)
            if found is None:
                break  # out of budget: the rest is not looked for
            hit = found
        if hit:
            out.append(path)
    return out


def untracked(top: str, files: Sequence[str]) -> list[str]:
    """The `files` (inside the work tree `top`) its index surely does not track: none
    when the index cannot be read, and not those the budget ran out before."""
    directory = gitdir_of(os.path.join(top, ".git"))
    if directory is None:
        return []
    if not os.path.lexists(os.path.join(directory, "index")):
        return list(files)  # a repository with nothing added yet
    data = _index(top)
    if data is None:
        return []
    try:
        budget = _Budget()
        if _HEADER.unpack_from(data)[1] == 4:
            try:
                paths = set(_v4_paths(data, budget))
            except (IndexError, ValueError, struct.error):
                return []
            return [p for p in files if os.fsencode(os.path.relpath(p, top)) not in paths]
        out = []
        for path in files:
            found = _found(data, os.fsencode(os.path.relpath(path, top)), False, budget)
            if found is None:
                break  # out of budget: the rest is not known
            if not found:
                out.append(path)
        return out
    finally:
        data.close()


__all__ = ["tracked", "untracked"]
