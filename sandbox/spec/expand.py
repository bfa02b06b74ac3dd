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
cannot be seen cannot be protected. Except behind another user's directory that this
one cannot search (`reach.out_of_reach`: another user's 0700 folder in a shared /tmp): the
command, with the same credentials, can neither enter it nor change its mode, so
nothing in it is the command's to read or plant. As root, whom the kernel lets search
everything, such a directory is judged by its mode as the command sees it (both backends
drop every capability), and not listed at all: bwrap could not mount what is below it.
Entries named in `markers` (`.git`, `.swifty`,
`HEAD`) are recorded wherever they are, without stopping the walk. A tree outside the
writable roots whose globs all lack `**` is walked only as deep as they reach
(`/tmp/krb5cc_*` reads /tmp, not everything below it).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.rules import PathPattern, fixed_prefix

from . import treewatch
from .reach import DENIED, MISSING, ROOT, behind_out_of_reach, out_of_reach
from .walkcache import Cache, Record, Tree

FOLLOW_BUDGET = 200_000  # entries visited below followed symlinks
# Where the runs' placeholders for hidden paths lie (linux/placeholders.py): each
# run's folder is `<this><uid>-<pid>-<random>`.
PLACEHOLDERS_AT = "/dev/shm/swifty-hidden-"
_PLACEHOLDER_NAME = os.path.basename(PLACEHOLDERS_AT)
_O_PATH: int | None = getattr(os, "O_PATH", None)  # Linux: a link resolved by the kernel


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
    """`lexists`, except that in a strict tree "cannot tell" is an error, not "no"; and
    as root, "no" behind a directory out of the command's reach (see the module's
    docstring)."""
    try:
        os.lstat(path)
        if ROOT and behind_out_of_reach(path):
            return False
    except OSError as e:
        if e.errno in MISSING or not any(is_within(path, r) for r in strict):
            return False
        if e.errno in DENIED and behind_out_of_reach(path):
            return False
        raise Unsearchable(path, e) from e
    return True


def _placeholders(directory: str) -> bool:
    """A run's folder of empty stand-ins for hidden paths, by any spelling (a link to
    `/` or `/dev` leads a followed walk there): nothing to find in it, and opening one
    would report a read that run's command never made (linux/placeholders.py watches
    their opens)."""
    return os.path.basename(directory.rstrip("/")).startswith(_PLACEHOLDER_NAME) and \
        os.path.realpath(directory).startswith(PLACEHOLDERS_AT)


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
    # Every root is walked, basename globs or none: the markers (`.git`, `.swifty`,
    # `HEAD`) in a configured writable root are what keep its repositories' hooks
    # read-only, and with no basename glob such a root was not walked at all.
    trees: dict[str, list[tuple[str, PathPattern]]] = {r: [] for r in roots}
    for prefix, members in anchored.items():
        trees.setdefault(prefix, []).extend(members)
    walk = _Walk(frozenset(follow), frozenset(markers),
                 marked if marked is not None else [], strict, cache=cache)
    plan = _plan(trees, roots, names, walk.strict)
    if cache is not None:
        cache.markers = walk.markers
        # Everything a record depends on: the trees, each group's patterns, what is
        # followed and marked (and who walks: another user sees other directories).
        cache.load(repr((sorted((g, [p.anchored for p in ps]) for g, ps in groups.items()),
                         roots, sorted(follow), sorted(walk.markers), os.geteuid())),
                   tuple(root for root, _, _, limit in plan if limit is None))
    for root, named, inner, limit in plan:
        walk.run(root, named, inner, found, limit)
    if cache is not None:
        cache.finish()
    # In path order (a parent before what is below it), whichever way the walk went:
    # a watched walk and a full one give the same spec.
    walk.marked[:] = sorted(dict.fromkeys(walk.marked))
    return {g: Expansion(tuple(literal[g]),
                         tuple(sorted(p for p in found[g] if p not in literal[g])))
            for g in groups}


def _combine(regexes: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    if not regexes:
        return None
    # pathspec's named group appears in each; drop the names to join them in one regex.
    bodies = [re.sub(r"\(\?P<[^>]+>", "(?:", r.pattern) for r in regexes]
    # DOTALL: a name may contain a newline (`a\nb/.git` is a repository too).
    return re.compile("|".join(f"(?:{b})" for b in bodies), re.DOTALL)


Plan = list[tuple[str, Mapping[str, re.Pattern[str]], list[tuple[str, PathPattern]],
                  int | None]]


def _plan(trees: dict[str, list[tuple[str, PathPattern]]], roots: tuple[str, ...],
          names: Mapping[str, re.Pattern[str]], strict: tuple[str, ...]) -> Plan:
    """The walks: (tree, the basename globs looked for in it, its anchored patterns,
    how deep it goes or None for all the way), nothing inside another walk but for a
    tree whose own patterns reach a fixed depth above a root: `/tmp/krb5cc_*` with the
    project in `/tmp` is `/tmp` one level down and the project on its own, not all of
    `/tmp` searched for the project's globs (every other repository's `.git` there
    would have been marked and mounted, at a walk of the whole `/tmp` per run)."""
    plan: Plan = []
    for root in _outermost(trees):
        own = trees[root]
        depths = [_depth(p.anchored, root) for _, p in own]
        above = [r for r in (*roots, *strict) if is_within(r, root) and r != root]
        if above and own and None not in depths and not any(
                is_within(root, r) for r in (*roots, *strict)):
            plan.append((root, {}, own, max(d for d in depths if d is not None)))
            plan += _plan({r: m for r, m in trees.items() if r != root and
                           is_within(r, root)}, roots, names, strict)
            continue
        inner = [m for r, members in trees.items() if is_within(r, root) for m in members]
        named = names if any(is_within(root, r) or is_within(r, root) for r in roots) else {}
        depths = [_depth(p.anchored, root) for _, p in inner]
        bounded = not named and None not in depths and not any(
            is_within(root, r) or is_within(r, root) for r in strict)
        plan.append((root, named, inner,
                     max(d for d in depths if d is not None) if bounded and depths else None))
    return plan


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
    listed: set[str] = field(default_factory=set)  # listed (not taken from the cache)

    def run(self, root: str, names: Mapping[str, re.Pattern[str]],
            paths: list[tuple[str, PathPattern]], found: dict[str, dict[str, None]],
            limit: int | None = None) -> None:
        groups = frozenset((*names, *(g for g, _ in paths)))
        # (directory, the groups still looked for below it, below a followed link, the
        # depth of its entries below `root`: past `limit` no glob can match)
        stack: list[tuple[str, frozenset[str], bool, int]] = [(root, groups, False, 1)]
        # A bounded walk (outside the writable roots, a few levels) is cheap: not kept.
        cache = self.cache if limit is None else None
        if cache is None or cache.gen is None:
            self._traverse(stack, root, names, paths, found, limit, cache, None, set())
            return
        # Watched (treewatch.py): what the recorded directories contributed is kept
        # per tree; a vouched state is brought up to date where the watcher saw a
        # change, a new one made by walking it all. Links are followed every time.
        tree = cache.trees.get(root)
        if cache.incremental and tree is not None and root in cache.records:
            self._update(root, tree, names, paths)
        else:
            tree = cache.trees[root] = Tree()
            self._traverse(stack, root, names, paths, found, None, cache, tree, set())
        for path, matched in tree.found.items():
            for group in matched:
                found[group][path] = None
        self.marked.extend(tree.marked)
        if self.follow:
            stack = [(path, frozenset(below), False, 0)
                     for path, (below, _text) in sorted(tree.links.items()) if below]
            self._traverse(stack, root, names, paths, found, None, None, None, set(),
                           links_only=True)

    def _traverse(self, stack: list[tuple[str, frozenset[str], bool, int]], root: str,
                  names: Mapping[str, re.Pattern[str]],
                  paths: list[tuple[str, PathPattern]], found: dict[str, dict[str, None]],
                  limit: int | None, cache: Cache | None, tree: Tree | None,
                  seen: set[str], links_only: bool = False) -> None:
        """The walk from what is on `stack`. With a `tree`, what the (unlinked)
        directories contribute goes there and links are only noted in it; with
        `links_only`, the stack's entries are links to follow (or not) first."""
        # The tree's own links are followed after it, in path order (each real directory
        # once: which link reaches it must not depend on the order of the walk).
        deferred: list[tuple[str, frozenset[str], bool, int]] = []
        if links_only:
            deferred, stack = stack, []
        while stack or deferred:
            if not stack:
                for path, wanted, _linked, depth in sorted(deferred):
                    self._follow(path, wanted, root, seen, stack, depth)
                deferred = []
                continue
            directory, active, linked, depth = stack.pop()
            listing = self._listing(directory, active, linked, names, paths,
                                    None if linked else cache)
            if listing is None:
                if tree is not None and cache is not None and not linked:
                    # Kept as seen empty: the watcher names it when it changes again.
                    cache.put(directory, None, self._key(active), [], [], [])
                continue
            markers, matches, children = listing
            prefix = directory if directory.endswith("/") else directory + "/"
            if tree is not None and not linked:
                self._contribute(prefix, tree, listing)
                if limit is None:
                    for name, is_link, below, _text in children:
                        if below and not is_link:
                            stack.append((prefix + name, frozenset(below), False, depth + 1))
                continue
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
                elif linked:
                    self._follow(path, frozenset(below), root, seen, stack, depth)
                else:
                    deferred.append((path, frozenset(below), False, depth))

    def _follow(self, path: str, below: frozenset[str], root: str, seen: set[str],
                stack: list[tuple[str, frozenset[str], bool, int]], depth: int) -> None:
        try:
            if self.follow and os.path.isdir(path):
                # A target inside this tree is walked as itself anyway (the
                # hidden mount is at the real path): pnpm's links cost nothing.
                real = os.path.realpath(path)
                if real not in seen and not is_within(real, root):
                    seen.add(real)
                    stack.append((path, below & self.follow, True, depth + 1))
        except OSError:
            return

    @staticmethod
    def _contribute(prefix: str, tree: Tree, listing: Listing, sign: bool = True) -> None:
        """Add (or, `sign` False, take back) what one directory's listing gives."""
        markers, matches, children = listing
        if sign:
            for name in markers:
                tree.marked[prefix + name] = None
            for name, matched in matches:
                tree.found[prefix + name] = matched
            for name, is_link, below, text in children:
                if is_link:
                    tree.links[prefix + name] = (below, text)
            return
        for name in markers:
            tree.marked.pop(prefix + name, None)
        for name, _matched in matches:
            tree.found.pop(prefix + name, None)
        for name, is_link, _below, _text in children:
            if is_link:
                tree.links.pop(prefix + name, None)

    def _drop(self, top: str, tree: Tree) -> dict[str, Record]:
        """Forget the records of `top` and everything below it, and what they gave."""
        assert self.cache is not None
        records = self.cache.records
        dropped: dict[str, Record] = {}
        stack = [top]
        while stack:
            directory = stack.pop()
            record = records.pop(directory, None)
            if record is None:
                continue
            dropped[directory] = record
            prefix = directory if directory.endswith("/") else directory + "/"
            self._contribute(prefix, tree, (record[5], record[6], record[7]), sign=False)
            stack.extend(prefix + name for name, is_link, below, _ in record[7]
                         if below and not is_link)
        return dropped

    def _update(self, root: str, tree: Tree, names: Mapping[str, re.Pattern[str]],
                paths: list[tuple[str, PathPattern]]) -> None:
        """A vouched state brought up to date: each directory the watcher names is
        listed again (parents first) and what changed among its subdirectories walked
        or forgotten; each unwatched subtree walked the stat-based way."""
        cache = self.cache
        assert cache is not None and cache.answer is not None
        answer = cache.answer
        assert answer.dirty is not None
        records = cache.records
        order = lambda p: (p.count("/"), p)  # noqa: E731
        for top in sorted((u for u in answer.unwatched if is_within(u, root)), key=order):
            record = records.get(top)
            if record is None:
                continue
            cache.stash.update(self._drop(top, tree))
            self._traverse([(top, frozenset(record[4]), False, 1)], root, names, paths,
                           {}, None, cache, tree, set())
        done = self.listed = set()
        for directory in sorted((d for d in answer.dirty if d in records
                                 and is_within(d, root)), key=order):
            old = records.get(directory)
            if old is None or directory in done:
                continue  # forgotten with a parent, or walked just now below one
            key = old[4]
            listing = self._listing(directory, frozenset(key), False, names, paths, cache)
            prefix = directory if directory.endswith("/") else directory + "/"
            self._contribute(prefix, tree, (old[5], old[6], old[7]), sign=False)
            if listing is None:
                self._drop(directory, tree)
                cache.put(directory, None, key, [], [], [])
                continue
            done.add(directory)
            self._contribute(prefix, tree, listing)
            before = {n: (link, below) for n, link, below, _ in old[7] if not link and below}
            after = {n: (link, below) for n, link, below, _ in listing[2]
                     if not link and below}
            for name, kind in before.items():
                if after.get(name) != kind:
                    self._drop(prefix + name, tree)
            for name, (_link, below) in after.items():
                if before.get(name) != (False, below):
                    stack = [(prefix + name, frozenset(below), False, 1)]
                    self._traverse(stack, root, names, paths, {}, None, cache, tree, set())

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
        if _placeholders(directory) or (ROOT and out_of_reach(directory)):
            return None
        key = self._key(active)
        if cache is not None:
            record = cache.get(directory, key)
            if record is not None:
                return record[5], record[6], record[7]
        before = cache.before_listing(directory) if cache is not None else None
        self.listed.add(directory)
        try:
            entries = os.scandir(directory)
        except OSError as e:
            if e.errno not in MISSING and not linked and any(
                    is_within(directory, r) for r in self.strict) and not (
                    e.errno in DENIED and out_of_reach(directory)):
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
    `links_into`, by where it resolves (`_ours`). A directory whose record in `cache` (the
    walk before, marking the same names) still holds is not listed again."""
    roots = tuple(roots)
    if cache is not None and cache.markers != names:
        cache = None
    if cache is not None and cache.gen is not None and cache.trees:
        answer = treewatch.ask(roots, cache.gen, cache.token)
        if answer is not None and answer.dirty is not None:
            return _find_changed(roots, names, skip, links_into, cache, answer)
    if cache is not None:
        cache.incremental = False
        cache.validate()  # again: this is after the command
        cache.valid -= cache.racy  # seen within a timestamp tick of a change
    return _find_all(list(roots), names, skip, links_into, cache)


def _find_all(stack: list[str], names: frozenset[str], skip: frozenset[str],
              links_into: str | None, cache: Cache | None) -> Found:
    out = Found()
    while stack:
        directory = stack.pop()
        record = cache.get(directory, None) if cache is not None else None
        if record is not None:
            _replay(directory, record, skip, links_into, out, stack)
            continue
        for entry in _listing(directory, names, out):
            try:
                if entry.is_dir(follow_symlinks=False):
                    # git never looks for a repository inside a `.git` directory,
                    # but for submodules' git dirs in its `modules/`, whose hooks
                    # `git submodule update` runs.
                    if entry.path not in skip:
                        stack.append(entry.path if entry.name != ".git"
                                     else os.path.join(entry.path, "modules"))
                elif links_into is not None and entry.is_symlink() and _ours(
                        entry.path, links_into):
                    out.links.append(entry.path)
            except OSError:
                continue
    return out


def _listing(directory: str, names: frozenset[str], out: Found) -> list[os.DirEntry[str]]:
    """`directory`'s entries, each named one in `out.named`; none where it cannot be
    listed (in `out.unsearchable` unless it is gone or out of the command's reach)."""
    if ROOT and out_of_reach(directory):
        return []
    try:
        with os.scandir(directory) as entries:
            listed = list(entries)
    except OSError as e:
        if e.errno not in MISSING and not (e.errno in DENIED and out_of_reach(directory)):
            out.unsearchable.append(directory)
        return []
    out.named.extend(entry.path for entry in listed if entry.name in names)
    return listed


def _ours(path: str, links_into: str) -> bool:
    """A link that leads into `links_into`, judged by where it resolves now, never by
    its text: a chain (`tools -> .git/hop/x`, `.git/hop -> …/tmp/…`) or a spelling
    upwards names that directory nowhere the check lists. The kernel resolves it (one
    open, one readlink); a dangling link as far as it exists (what is missing a later
    command can make)."""
    real = None
    if _O_PATH is not None:
        with contextlib.suppress(OSError):
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            try:
                real = os.readlink(f"/proc/self/fd/{fd}")
            finally:
                os.close(fd)
    try:
        return is_within(real or os.path.realpath(path), links_into)
    except (OSError, ValueError):
        return True  # what cannot be resolved is no link to trust


def _replay(directory: str, record: Record, skip: frozenset[str], links_into: str | None,
            out: Found, stack: list[str]) -> None:
    """`find_named` on one directory from its record (as the listing would do)."""
    prefix = directory if directory.endswith("/") else directory + "/"
    out.named.extend(prefix + name for name in record[5])
    for name, is_link, _below, _text in record[7]:
        path = prefix + name
        if not is_link:
            if path not in skip:
                stack.append(path if name != ".git" else path + "/modules")
        elif links_into is not None and _ours(path, links_into):
            out.links.append(path)


def _visited(path: str, roots: tuple[str, ...], skip: frozenset[str]) -> bool:
    """Whether `find_named` lists `path`: below a root, nothing on the way in `skip`,
    and inside a `.git` only its `modules`."""
    for root in roots:
        if not is_within(path, root):
            continue
        rest = path[len(root):].strip("/")
        parts = rest.split("/") if rest else []
        current = root
        for i, part in enumerate(parts):
            current = os.path.join(current, part)
            if current in skip:
                return False
            if part == ".git" and (i + 1 == len(parts) or parts[i + 1] != "modules"):
                return False
        return True
    return False


def _find_changed(roots: tuple[str, ...], names: frozenset[str], skip: frozenset[str],
                  links_into: str | None, cache: Cache, answer: treewatch.Answer) -> Found:
    """`find_named` where a watcher saw every change since the walk before: only
    the directories it names are listed (each one alone: a new directory is named
    itself), unwatched subtrees walked whole; every link the walk before recorded is
    resolved again, as the full check does. Entries found only
    here are what the command can have made (the rest is the walk's markers)."""
    assert answer.dirty is not None
    out = Found()
    for top in answer.unwatched:
        # An unwatched `.git` is searched as the full check searches one: its
        # `modules/` (submodules' git dirs, whose hooks `git submodule update` runs).
        top = os.path.join(top, "modules") if os.path.basename(top) == ".git" else top
        if _visited(top, roots, skip):
            found = _find_all([top], names, skip, links_into, None)
            out.named += found.named
            out.links += found.links
            out.unsearchable += found.unsearchable
    for directory in sorted(d for d in answer.dirty if _visited(d, roots, skip)):
        for entry in _listing(directory, names, out):
            with contextlib.suppress(OSError):
                if links_into is not None and entry.is_symlink() and _ours(
                        entry.path, links_into):
                    out.links.append(entry.path)
    if links_into is not None:
        # Every link of the walk before, again: what one resolves to changes with any
        # link or directory on its way, not only with its own directory.
        for tree in cache.trees.values():
            for path in tree.links:
                if path not in out.links and _visited(os.path.dirname(path), roots,
                                                      skip) and _ours(path, links_into):
                    out.links.append(path)
    out.links = list(dict.fromkeys(out.links))
    return out
