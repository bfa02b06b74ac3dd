"""Configured writable roots (`sandbox.writable`) that do not exist: created, or said
why not — never silently left out.

A missing root is created when it lies in the user's home (not home itself), nothing
on its way is a symbolic link, and neither it nor a directory that would be made for it
is protected, hidden or write-denied: a root made there would hand a command what the
policy keeps from it (`~/.config/systemd/user/x` would make systemd's directory). It is
made before the sandbox is built (`launch`), one component at a time from descriptors
that follow no link, so a link swapped in meanwhile cannot aim the `mkdir` elsewhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from swifty_sandbox.messages import t
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.rules import PathPattern

from ..fsafe import first_link, open_dir, open_dir_at


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _new_dirs(root: str) -> tuple[str, list[str]]:
    """The deepest existing ancestor of `root`, and the directories to make below it."""
    made: list[str] = []
    path = root
    while _lstat(path) is None and path != "/":
        made.append(path)
        path = os.path.dirname(path)
    return path, made[::-1]


def plan(roots: Iterable[tuple[str, str]], home: str, denied: Iterable[PathPattern]
         ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The missing `roots`, each (resolved, as written): (to create, [(root, why it is
    not created)]). Written through a link, a root is not created: a command may have
    planted that link (in the project, another root) to choose where the root lands."""
    create: list[str] = []
    refused: list[tuple[str, str]] = []
    patterns = tuple(denied)
    for root, given in roots:
        info = _lstat(root)
        if info is not None:
            if not stat.S_ISDIR(info.st_mode):
                refused.append((root, t("roots.not_dir")))
            continue
        existing, made = _new_dirs(root)
        reason = None
        if not is_within(root, home) or root == home:
            reason = t("roots.outside_home", home=home)
        elif given != root or not stat.S_ISDIR(os.stat(existing).st_mode) or \
                os.path.realpath(existing) != existing:
            reason = t("roots.link", path=first_link(given) or existing)
        else:
            hit = next((p for path in made for p in patterns if p.matches(path)), None)
            if hit is not None:
                reason = t("roots.denied", pattern=hit.text)
        if reason is None:
            create.append(root)
        else:
            refused.append((root, reason))
    return tuple(create), tuple(refused)


def planted_link(roots: Iterable[tuple[str, str]], writable: tuple[str, ...]
                 ) -> tuple[str, str] | None:
    """A configured root (resolved, as written) written through a symbolic link that
    lies in a writable root: a command could have planted it to move the root onto
    any directory of the user's (`out -> ~/.vim`). (root as written, link) or None."""
    for root, given in roots:
        if given != root:
            link = first_link(given)
            if link is not None and any(is_within(link, w) for w in writable):
                return given, link
    return None


def create(roots: Iterable[str]) -> tuple[list[str], list[str]]:
    """Make the planned roots; returns (notes, roots that could not be made)."""
    notes: list[str] = []
    failed: list[str] = []
    for root in roots:
        existing, made = _new_dirs(root)
        try:
            fd = open_dir(existing)
            try:
                for path in made:
                    os.mkdir(os.path.basename(path), 0o755, dir_fd=fd)
                    child = open_dir_at(fd, os.path.basename(path))
                    os.close(fd)
                    fd = child
            finally:
                os.close(fd)
        except OSError as e:
            failed.append(root)
            notes.append(t("run.root_refused", path=root,
                           reason=e.strerror or str(e)))
            continue
        notes.append(t("run.root_created", path=root))
    return notes, failed


__all__ = ["create", "plan", "planted_link"]
