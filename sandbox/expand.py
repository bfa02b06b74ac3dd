"""Glob patterns → the existing paths they name, for mounting.

- Literal patterns (`~/.ssh`, `/abs/x`, `./.swifty`) are one `lstat` each.
- Anchored globs (`src/**/*.key`, `**/.git/hooks`) are looked for under their fixed
  leading directories only (`<project>/src`, `<project>`), never under all of `/`.
- Basename globs (no `/`, the usual `*.env*`) are looked for under the given roots,
  testing each entry's name only, which keeps the walk cheap on big trees.
One walk per directory tree serves every pattern; a matching directory is recorded and
not descended (a pattern naming a directory covers all of it); symlinked directories
are not followed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from swifty_sandbox.policy.rules import PathPattern

_GLOB = re.compile(r"(?<!\\)[*?\[]")
_UNESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True, slots=True)
class Expansion:
    literal: tuple[str, ...]  # existing paths named exactly
    found: tuple[str, ...]  # existing paths matched by a glob


def _fixed_prefix(anchored: str) -> tuple[str, bool]:
    """The leading directories without glob characters, and whether that is all."""
    parts = anchored.strip("/").split("/")
    fixed: list[str] = []
    for part in parts:
        if _GLOB.search(part):
            break
        fixed.append(_UNESCAPE.sub(r"\1", part))
    return "/" + "/".join(fixed), len(fixed) == len(parts)


def literal_path(pattern: PathPattern) -> str | None:
    """The one absolute path an anchored pattern without glob characters names."""
    if "/" not in pattern.anchored.rstrip("/"):
        return None
    prefix, whole = _fixed_prefix(pattern.anchored)
    return prefix if whole else None


def expand(patterns: Iterable[PathPattern], roots: Iterable[str]) -> Expansion:
    """Existing paths that `patterns` name; basename globs are looked for in `roots`."""
    literal: dict[str, None] = {}
    names: list[re.Pattern[str]] = []
    anchored: dict[str, list[PathPattern]] = {}
    for pattern in patterns:
        if "/" not in pattern.anchored.rstrip("/"):
            names.append(pattern.regex)
            continue
        prefix, whole = _fixed_prefix(pattern.anchored)
        # `dir/**` names everything below dir, files not yet created included: the
        # directory itself is what must be mounted.
        parts = pattern.anchored.strip("/").split("/")
        whole = whole or (parts[-1] == "**" and prefix.count("/") == len(parts) - 1)
        if whole:
            if os.path.lexists(prefix):
                literal[prefix] = None
        elif prefix != "/":  # a glob from the file-system root is not expanded
            anchored.setdefault(prefix, []).append(pattern)
    found: dict[str, None] = {}
    name_regex = _combine(names)
    trees = {root: list[PathPattern]() for root in (roots if name_regex else ())}
    for prefix, group in anchored.items():
        trees.setdefault(prefix, []).extend(group)
    for root in _outermost(trees):
        inner = [p for r, group in trees.items() if _within(r, root) for p in group]
        named = name_regex if any(_within(root, r) or _within(r, root)
                                  for r in roots) else None
        _walk(root, named, inner, found)
    return Expansion(tuple(literal), tuple(p for p in found if p not in literal))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _combine(regexes: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    if not regexes:
        return None
    # pathspec's named group appears in each; drop the names to join them in one regex.
    bodies = [re.sub(r"\(\?P<[^>]+>", "(?:", r.pattern) for r in regexes]
    return re.compile("|".join(f"(?:{b})" for b in bodies))


def _outermost(roots: Iterable[str]) -> list[str]:
    """Roots without those inside another root, so nothing is walked twice."""
    kept: list[str] = []
    for root in sorted(dict.fromkeys(roots)):
        if not any(_within(root, k) for k in kept):
            kept.append(root)
    return kept


def _walk(root: str, names: re.Pattern[str] | None, paths: list[PathPattern],
          found: dict[str, None]) -> None:
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue  # unreadable or vanished: nothing of it can be mounted either
        with entries:
            for entry in entries:
                if (names is not None and names.match(entry.name)) or (
                        paths and any(p.matches(entry.path) for p in paths)):
                    found[entry.path] = None
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                except OSError:
                    continue
