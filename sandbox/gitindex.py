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
(prefix-compressed paths) is parsed entry by entry.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
from collections.abc import Iterable, Iterator

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


def _found(data: mmap.mmap, name: bytes, prefix: bool) -> bool:
    """Whether an entry's path is `name` (or, `prefix`, starts with `name`)."""
    start = data.find(name, _HEADER.size)
    while start >= 0:
        length = int.from_bytes(data[start - 2:start], "big") & 0xFFF
        end = start + length
        if (length == len(name) or (prefix and length > len(name))) and \
                end < len(data) and data[end] == 0:
            return True
        start = data.find(name, start + 1)
    return False


# Bytes of expanded paths read from a version-4 index: each entry keeps a prefix of the
# one before, so a few MB written by a command (`.git/index` is writable inside) spelled
# gigabytes of paths on the host, outside every cap (2.6 MB: 0.8 GB and 4.6 s).
_EXPANDED_LIMIT = 64 << 20


def _v4_paths(data: mmap.mmap) -> Iterator[bytes]:
    _, _, count = _HEADER.unpack_from(data)
    offset, previous, total = _HEADER.size, b"", 0
    for _ in range(count):
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
    version = _HEADER.unpack_from(data)[1]
    paths = None
    if version == 4:
        try:
            paths = set(_v4_paths(data))
        except (IndexError, ValueError, struct.error):
            return []  # a damaged index: git itself will say so
    for path, is_dir in inside:
        name = os.fsencode(os.path.relpath(path, project)) + (b"/" if is_dir else b"")
        if paths is not None:
            hit = any(p.startswith(name) for p in paths) if is_dir else name in paths
        else:
            hit = _found(data, name, is_dir)
        if hit:
            out.append(path)
    return out


__all__ = ["tracked"]
