"""Glob patterns → the existing paths they name, for mounting.

- Literal patterns (`~/.ssh`, `/abs/x`, `./.swifty`) are one `lstat` each.
- Anchored globs (`src/**/*.key`, `**/.git/hooks`) are looked for under their fixed
  leading directories only (`<project>/src`, `<project>`), never under all of `/`.
- Basename globs (no `/`, the usual `*.env*`) are looked for under the given roots,
  testing each entry's name only, which keeps the walk cheap on big trees.
One walk per directory tree serves every pattern. A directory that a group's pattern
matches is recorded and, for that group, not descended (a pattern naming a directory
covers all of it); the other groups go on below it. Symlinked directories are followed
only for the groups named in `follow` (hidden paths: `cat link/.env` must be as
unreadable as `check --tool ReadFile link/.env` says), each real directory once, within
a budget of entries (beyond it, `ExpansionTooLarge`: refused, never half scanned).
Inside the `strict` trees (the writable roots, where a command could have changed
permissions) a directory or path that cannot be searched raises `Unsearchable`: what
cannot be seen cannot be protected. Entries named in `markers` (`.git`, `.swifty`,
`HEAD`) are recorded wherever they are, without stopping the walk. A tree outside the
writable roots whose globs all lack `**` is walked only as deep as they reach
(`/tmp/krb5cc_*` reads /tmp, not everything below it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.rules import PathPattern, fixed_prefix

from .walkcache import Cache, Record

FOLLOW_BUDGET = 200_000  # entries visited below followed symlinks
_MISSING = (errno.ENOENT, errno.ENOTDIR)


class ExpansionTooLarge(Exception):
    def __init__(self, path: str, limit: int) -> None:
        super().__init__(path)
        self.path, self.limit = path, limit


class Unsearchable(Exception):
    """A directory in a writable tree that cannot be searched (its permissions)."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(path)
        self.path, self.error = path, error


class Unenforceable(Exception):
    """A glob from `/` that must hide paths: they cannot all be found."""


@dataclass(frozen=True, slots=True)
class Expansion:
    literal: tuple[str, ...]  # existing paths named exactly
    found: tuple[str, ...]  # existing paths matched by a glob

    @property
    def paths(self) -> tuple[str, ...]:
        return (*self.literal, *self.found)


def _exists(path: str, strict: tuple[str, ...]) -> bool:
    """`lexists`, except that in a strict tree "cannot tell" is an error, not "no"."""
    try:
        os.lstat(path)
    except OSError as e:
        if e.errno in _MISSING or not any(is_within(path, r) for r in strict):
            return False
        raise Unsearchable(path, e) from e
    return True


def expand(groups: Mapping[str, Sequence[PathPattern]], roots: Iterable[str], *,
           follow: Sequence[str] = (), markers: Iterable[str] = (),
           marked: list[str] | None = None, strict: Sequence[str] = (),
           cache: Cache | None = None) -> dict[str, Expansion]:
    """Existing paths each group of patterns names, in one walk of the trees involved;
    basename globs are looked for in `roots`. Paths of entries named in `markers` are
    appended to `marked`. With a `cache`, a directory unchanged since the last walk with
    the same arguments is not listed again (sandbox/spec/walkcache.py)."""
    roots = tuple(roots)
    strict = tuple(strict)
    literal: dict[str, dict[str, None]] = {g: {} for g in groups}
    names: dict[str, re.Pattern[str]] = {}
    anchored: dict[str, list[tuple[str, PathPattern]]] = {}
    for group, patterns in groups.items():
        basenames = []
        for pattern in patterns:
            if pattern.literal is not None:
                if _exists(pattern.literal, strict):
                    literal[group][pattern.literal] = None
                continue
            if "/" not in pattern.anchored.rstrip("/"):
                basenames.append(pattern.regex)
                continue
            prefix, whole = fixed_prefix(pattern.anchored)
            # `dir/**` names everything below dir, files not yet created included:
            # the directory itself is what must be mounted.
            parts = pattern.anchored.strip("/").split("/")
            if whole or (parts[-1] == "**" and prefix.count("/") == len(parts) - 1):
                if _exists(prefix, strict):
                    literal[group][prefix] = None
            elif prefix != "/":
                anchored.setdefault(prefix, []).append((group, pattern))
            elif group in follow:  # hidden: every match on the whole system, not feasible
                raise Unenforceable(pattern.text)
            else:  # a glob from the file-system root: its matches in the given roots
                for root in roots:
                    anchored.setdefault(root, []).append((group, pattern))
        combined = _combine(basenames)
        if combined is not None:
            names[group] = combined
    found: dict[str, dict[str, None]] = {g: {} for g in groups}
    trees: dict[str, list[tuple[str, PathPattern]]] = {r: [] for r in roots if names}
    for prefix, members in anchored.items():
        trees.setdefault(prefix, []).extend(members)
    walk = _Walk(frozenset(follow), frozenset(markers),
                 marked if marked is not None else [], strict, cache=cache)
    if cache is not None:
        cache.markers = walk.markers
        # Everything a record depends on: the trees, each group's patterns, what is
        # followed and marked (and who walks: another user sees other directories).
        cache.load(repr((sorted((g, [p.anchored for p in ps]) for g, ps in groups.items()),
                         roots, sorted(follow), sorted(walk.markers), os.geteuid())))
    for root in _outermost(trees):
        inner = [m for r, members in trees.items() if is_within(r, root) for m in members]
        named = names if any(is_within(root, r) or is_within(r, root) for r in roots) else {}
        depths = [_depth(p.anchored, root) for _, p in inner]
        bounded = not named and None not in depths and not any(
            is_within(root, r) or is_within(r, root) for r in walk.strict)
        walk.run(root, named, inner, found,
                 max(d for d in depths if d is not None) if bounded and depths else None)
    if cache is not None:
        cache.finish()
    return {g: Expansion(tuple(literal[g]), tuple(p for p in found[g] if p not in literal[g]))
            for g in groups}


def _combine(regexes: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    if not regexes:
        return None
    # pathspec's named group appears in each; drop the names to join them in one regex.
    bodies = [re.sub(r"\(\?P<[^>]+>", "(?:", r.pattern) for r in regexes]
    # DOTALL: a name may contain a newline (`a\nb/.git` is a repository too).
    return re.compile("|".join(f"(?:{b})" for b in bodies), re.DOTALL)


def _outermost(roots: Iterable[str]) -> list[str]:
    """Roots without those inside another root, so nothing is walked twice."""
    kept: list[str] = []
    for root in sorted(dict.fromkeys(roots)):
        if not any(is_within(root, k) for k in kept):
            kept.append(root)
    return kept


def _depth(anchored: str, root: str) -> int | None:
    """How many levels below `root` a glob reaches; None when `**` makes it unbounded."""
    parts = anchored.strip("/").split("/")
    if "**" in parts:
        return None
    return len(parts) - len(root.strip("/").split("/"))


Listing = tuple[Sequence[str], Sequence[tuple[str, tuple[str, ...]]],
                Sequence[tuple[str, bool, tuple[str, ...], str]]]


@dataclass(slots=True)
class _Walk:
    follow: frozenset[str]
    markers: frozenset[str]
    marked: list[str]
    strict: tuple[str, ...]
    budget: int = FOLLOW_BUDGET
    cache: Cache | None = None
    keys: dict[frozenset[str], tuple[str, ...]] = field(default_factory=dict)

    def run(self, root: str, names: Mapping[str, re.Pattern[str]],
            paths: list[tuple[str, PathPattern]], found: dict[str, dict[str, None]],
            limit: int | None = None) -> None:
        groups = frozenset((*names, *(g for g, _ in paths)))
        # (directory, the groups still looked for below it, below a followed link, the
        # depth of its entries below `root`: past `limit` no glob can match)
        stack: list[tuple[str, frozenset[str], bool, int]] = [(root, groups, False, 1)]
        seen: set[str] = set()  # real directories already walked through a link
        # A bounded walk (outside the writable roots, a few levels) is cheap: not kept.
        cache = self.cache if limit is None else None
        while stack:
            directory, active, linked, depth = stack.pop()
            listing = self._listing(directory, active, linked, names, paths,
                                    None if linked else cache)
            if listing is None:
                continue
            markers, matches, children = listing
            prefix = directory if directory.endswith("/") else directory + "/"
            for name in markers:
                self.marked.append(prefix + name)
            for name, matched in matches:
                path = prefix + name
                for group in matched:
                    found[group][path] = None
            if limit is not None and depth >= limit:
                continue
            for name, is_link, below, _text in children:
                if not below:
                    continue  # mounted whole (read-only or hidden): nothing to plant
                path = prefix + name
                if not is_link:
                    stack.append((path, frozenset(below), linked, depth + 1))
                    continue
                try:
                    if self.follow and os.path.isdir(path):
                        # A target inside this tree is walked as itself anyway (the
                        # hidden mount is at the real path): pnpm's links cost nothing.
                        real = os.path.realpath(path)
                        if real not in seen and not is_within(real, root):
                            seen.add(real)
                            stack.append((path, frozenset(below) & self.follow, True,
                                          depth + 1))
                except OSError:
                    continue

    def _key(self, groups: frozenset[str]) -> tuple[str, ...]:
        """One tuple per set of groups: the records share it (smaller, faster to load)."""
        key = self.keys.get(groups)
        if key is None:
            key = self.keys[groups] = tuple(sorted(groups))
        return key

    def _listing(self, directory: str, active: frozenset[str], linked: bool,
                 names: Mapping[str, re.Pattern[str]],
                 paths: list[tuple[str, PathPattern]], cache: Cache | None
                 ) -> Listing | None:
        """What the walk needs of one directory: its markers, its entries each group
        matches, its subdirectories and links with the groups still looked for below
        them. From the cache where a `lstat` shows the directory unchanged; else
        listed (and kept); None when it cannot be listed (vanished, or outside what a
        command can change)."""
        key = self._key(active)
        if cache is not None:
            record = cache.get(directory, key)
            if record is not None:
                return record[5], record[6], record[7]
        before = cache.before_listing(directory) if cache is not None else None
        try:
            entries = os.scandir(directory)
        except OSError as e:
            if e.errno not in _MISSING and not linked and any(
                    is_within(directory, r) for r in self.strict):
                raise Unsearchable(directory, e) from e
            return None
        # Below a match nothing is visited, so a glob can only match an entry whose path
        # ends with the glob's literal tail: one C-level endswith() rules most out.
        tails = tuple(p.tail for _, p in paths if p.tail is not None)
        untailed = [(g, p) for g, p in paths if p.tail is None]
        markers: list[str] = []
        matches: list[tuple[str, tuple[str, ...]]] = []
        children: list[tuple[str, bool, tuple[str, ...], str]] = []
        marker_names = self.markers
        with entries:
            for entry in entries:
                if linked:
                    self.budget -= 1
                    if self.budget < 0:
                        raise ExpansionTooLarge(directory, FOLLOW_BUDGET)
                name = entry.name
                if name in marker_names and not linked:
                    markers.append(name)
                matched: set[str] = set()
                for group, regex in names.items():
                    if group in active and regex.match(name):
                        matched.add(group)
                path = entry.path
                candidates = paths if tails and path.endswith(tails) else untailed
                for group, pattern in candidates:
                    if group in active and pattern.matches(path):
                        matched.add(group)
                if matched:
                    matches.append((name, tuple(sorted(matched))))
                try:
                    if entry.is_dir(follow_symlinks=False):
                        children.append((name, False,
                                         self._key(active - matched) if matched else key, ""))
                    elif entry.is_symlink():
                        # The text only for the record (the after-run check reads it).
                        children.append((name, True,
                                         self._key(active - matched) if matched else key,
                                         os.readlink(path) if cache is not None else ""))
                except OSError:
                    continue
        if cache is not None:
            cache.put(directory, before, key, markers, matches, children)
        return markers, matches, children


@dataclass(slots=True)
class Found:
    named: list[str] = field(default_factory=list)  # entries with one of the names
    links: list[str] = field(default_factory=list)  # symlinks leading into `links_into`
    unsearchable: list[str] = field(default_factory=list)  # directories not searched


def find_named(roots: Iterable[str], names: frozenset[str],
               skip: frozenset[str] = frozenset(), *, links_into: str | None = None,
               cache: Cache | None = None) -> Found:
    """Every entry named one of `names` in the trees (symlinks not followed), not
    looking below the directories in `skip`; and every symlink that leads into
    `links_into` (the link's text names `swifty-sandbox`, then its target is resolved:
    no other path reaches that directory). A directory whose record in `cache` (the
    walk before, marking the same names) still holds is not listed again."""
    out = Found()
    stack = list(roots)
    if cache is not None and cache.markers != names:
        cache = None
    if cache is not None:
        cache.validate()  # again: this is after the command
    while stack:
        directory = stack.pop()
        record = cache.get(directory, None) if cache is not None else None
        if record is not None:
            _replay(directory, record, skip, links_into, out, stack)
            continue
        try:
            entries = os.scandir(directory)
        except OSError as e:
            if e.errno not in _MISSING:
                out.unsearchable.append(directory)
            continue
        with entries:
            for entry in entries:
                if entry.name in names:
                    out.named.append(entry.path)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        # git never looks for a repository inside a `.git` directory,
                        # but for submodules' git dirs in its `modules/`, whose hooks
                        # `git submodule update` runs.
                        if entry.path not in skip:
                            stack.append(entry.path if entry.name != ".git"
                                         else os.path.join(entry.path, "modules"))
                    elif links_into is not None and entry.is_symlink() and \
                            "swifty-sandbox" in os.readlink(entry.path) and is_within(
                                os.path.realpath(entry.path), links_into):
                        out.links.append(entry.path)
                except OSError:
                    continue
    return out


def _replay(directory: str, record: Record, skip: frozenset[str], links_into: str | None,
            out: Found, stack: list[str]) -> None:
    """`find_named` on one directory from its record (as the listing would do)."""
    prefix = directory if directory.endswith("/") else directory + "/"
    out.named.extend(prefix + name for name in record[5])
    for name, is_link, _below, text in record[7]:
        path = prefix + name
        if not is_link:
            if path not in skip:
                stack.append(path if name != ".git" else path + "/modules")
        elif links_into is not None and "swifty-sandbox" in text:
            with contextlib.suppress(OSError):
                if is_within(os.path.realpath(path), links_into):
                    out.links.append(path)
