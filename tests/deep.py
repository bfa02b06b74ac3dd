"""Paths near the kernel's PATH_MAX (4096): a folder that can still be listed, below
which nothing can be named by its absolute path (ENAMETOOLONG), while a command reaches
it by a relative one. The PATH_MAX tests of the compiler and the escape suites."""

from __future__ import annotations

from pathlib import Path


def near_path_max(base: Path, length: int) -> str:
    """A folder's path relative to `base` whose absolute path is `length` bytes, in
    parts of at most 201 bytes (NAME_MAX is 255)."""
    room = length - len(str(base)) - 1
    parts = []
    while room > 201:
        parts.append("d" * 200)
        room -= 201
    parts.append("d" * room)
    return "/".join(parts)
