"""File system primitives that follow no symbolic link: the one place for them.

A confined command can plant a link anywhere it may write, and bwrap follows links in
mount sources and destinations; so every path swifty-sandbox mounts, creates or moves
is looked at (`first_link`, `links_on_the_way`) or opened (`open_dir`, `open_dir_at`)
component by component with `O_NOFOLLOW`; after that, the descriptor is used, never the
path again.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from swifty_sandbox.policy.paths import is_within

DIR_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


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


def open_dir(path: str) -> int:
    """`path` opened component by component from `/`, following no symlink
    (`O_PATH|O_NOFOLLOW`); OSError when a component is a link or missing."""
    fd = os.open("/", DIR_FLAGS)
    try:
        for part in path.strip("/").split("/"):
            if part:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


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
