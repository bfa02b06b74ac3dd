"""Which hidden files no git would stage as the empty regular file a placeholder is.

A hidden file a run observes stands on a placeholder of its own (`linux/placeholders.py`),
an empty regular file: to git a file like any other, so `git commit -a` would record a
tracked one as emptied and `git add -A` an untracked one as new (and the real content
would then show as a change outside, one `commit -a` from the history). /dev/null, a
character device, is refused by both. So only a file no git would pick up gets one:
outside every work tree, or in its own (the nearest `.git` above it) untracked and
ignored by a `.gitignore` on the way or `info/exclude` (a directory above it ignored
ignores it too: git never looks inside). Anything unsure — a `.git` that is not a
repository, an index out of its budget, an ignore file that is a link or too big, a
pattern pathspec refuses — is not chosen: it stays on /dev/null. The user's global
excludes are not read (they only ever make fewer files chosen). What is left out: a
command that forces it (`git add -f`), or makes a repository of its own around one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import gitindex
from .gitfiles import gitdir_of

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

_IGNORE_LIMIT = 1 << 20


def unstaged(files: Sequence[str]) -> list[str]:
    """The `files` (absolute, resolved) no git would stage, in their order."""
    tops: dict[str, str | None] = {}
    chosen: set[str] = set()
    inside: dict[str, list[str]] = {}
    for path in files:
        top = _top(os.path.dirname(path), tops)
        if top is None:
            chosen.add(path)
        else:
            inside.setdefault(top, []).append(path)
    for top, paths in inside.items():
        directory = gitdir_of(os.path.join(top, ".git"))
        if directory is None:
            continue
        ignores = _Ignores(top, directory)
        chosen.update(p for p in gitindex.untracked(top, paths) if ignores.ignored(p))
    return [p for p in files if p in chosen]


def _top(directory: str, tops: dict[str, str | None]) -> str | None:
    """The nearest directory at or above `directory` holding a `.git`, cached."""
    on_the_way = []
    here = directory
    while here not in tops:
        on_the_way.append(here)
        if os.path.lexists(os.path.join(here, ".git")):
            tops[here] = here
            break
        parent = os.path.dirname(here)
        if parent == here:
            tops[here] = None
            break
        here = parent
    found = tops[here]
    for one in on_the_way:
        tops[one] = found
    return found


class _Unsure(Exception):
    """An ignore file git reads that we cannot read as git does."""


class _Ignores:
    """One repository's ignore files, each read once: `info/exclude` (lowest), then
    each `.gitignore` from the top down (a deeper one wins)."""

    def __init__(self, top: str, gitdir: str) -> None:
        self.top, self.exclude = top, os.path.join(gitdir, "info", "exclude")
        self.files: dict[str, GitIgnoreSpec | _Unsure | None] = {}

    def _spec(self, path: str) -> GitIgnoreSpec | None:
        if path not in self.files:
            try:
                self.files[path] = _spec(path)
            except _Unsure as e:
                self.files[path] = e
        found = self.files[path]
        if isinstance(found, _Unsure):
            raise found
        return found

    def ignored(self, path: str) -> bool:
        parts = os.path.relpath(path, self.top).split(os.sep)
        try:
            return any(self._decides(parts[:i], True) for i in range(1, len(parts))) \
                or self._decides(parts, False)
        except _Unsure:
            return False

    def _decides(self, parts: list[str], is_dir: bool) -> bool:
        """Whether the last line matching `parts` in any source ignores it."""
        result: bool | None = None
        sources = [(self.top, self.exclude)] + [
            (base, os.path.join(base, ".gitignore"))
            for base in (os.path.join(self.top, *parts[:i]) for i in range(len(parts)))]
        for base, file in sources:
            spec = self._spec(file)
            if spec is None:
                continue
            rel = os.path.relpath(os.path.join(self.top, *parts), base)
            found = spec.check_file(rel + ("/" if is_dir else "")).include
            if found is not None:
                result = found
        return result is True


def _spec(path: str) -> GitIgnoreSpec | None:
    """The ignore file at `path` (None: there is none); `_Unsure` when it cannot be
    read as git would (a link, not a regular file, too big, a line pathspec refuses)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise _Unsure(path) from e
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _IGNORE_LIMIT:
            raise _Unsure(path)
        data = os.read(fd, _IGNORE_LIMIT + 1)
    except OSError as e:
        raise _Unsure(path) from e
    finally:
        os.close(fd)
    from pathspec import GitIgnoreSpec  # only where a hidden file lies in a work tree

    try:
        return GitIgnoreSpec.from_lines(data.decode(errors="surrogateescape").splitlines())
    except Exception as e:  # any line pathspec refuses: unsure
        raise _Unsure(path) from e


__all__ = ["unstaged"]
