"""What git executes or trusts, found in a project: to be kept read-only inside.

git runs code from its configuration (`core.fsmonitor`, `core.hooksPath`, aliases,
filters, pagers …) and from hooks, *outside* the sandbox, the next time the user types a
git command. Beyond `.git/config` and `.git/hooks` it follows: gitfiles (`.git` as a
file, in worktrees and submodules: `gitdir: <path>`), `commondir`, `config.worktree`,
per-worktree directories, the `core.hooksPath` directory (husky's `.husky/`) and
`include.path` / `includeIf.*.path` files. Each of those inside a writable root is
returned here: existing ones to mount read-only, a missing `config` or hooks directory
to guard (an empty read-only stand-in during the run), and the files git would honour
that cannot be guarded without breaking git (`commondir`) to watch (the launcher moves
aside any that a command creates, and says so).

Every file is read as a regular file of bounded size (a FIFO named `.git` must not hang
the run); a file with several hard links is not trusted (another name could change it).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.yamlnodes import NotRegular, TooLarge, read_regular

from .reach import beyond_reach

# Files of a git directory that git trusts; each one read-only wherever it exists.
_TRUSTED_FILES = ("config", "config.worktree", "commondir", "hooks")
# Files of a git directory that would be trusted if created (watched when missing).
_WATCHED_FILES = ("config.worktree", "commondir")
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
_MAX_FILE = 1 << 20  # a git file larger than this is not read (nor trusted)


@dataclass(frozen=True, slots=True)
class GitPaths:
    read_only: tuple[str, ...]  # existing paths to mount read-only
    guard: tuple[str, ...]  # missing directories to guard (empty and read-only)
    guard_files: tuple[str, ...]  # missing files to guard (empty and read-only)
    watch: tuple[str, ...]  # missing files a command must not create


class _Unreadable(Exception):
    """Not a regular file of bounded size (a FIFO, a device, a huge file)."""


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(is_within(path, r) for r in roots)


def read_small(path: str) -> str | None:
    """A git file's text; None when missing. Read by the policy files' own reader:
    anything but a regular file under 1 MiB raises `_Unreadable`."""
    try:
        data = read_regular(path, _MAX_FILE)
    except (NotRegular, TooLarge, OSError, ValueError) as e:
        raise _Unreadable(path) from e
    return None if data is None else data.decode("utf-8", errors="surrogateescape")


def _git_path(text: str) -> str:
    """A path as git reads it from a gitfile or `commondir`: up to a NUL, trailing line
    ends dropped, nothing else (a trailing space is part of the name)."""
    return text.split("\0", 1)[0].rstrip("\r\n")


def odd_path(path: str) -> bool:
    """Whitespace or control characters at an end, or a line break or control
    character anywhere: no tool writes such a gitfile; an attacker might."""
    return path != path.strip() or any(ord(c) < 32 or c == "\x7f" for c in path)


def gitdir_of(dot_git: str) -> str | None:
    """The git directory a `.git` entry names: itself, or a gitfile's `gitdir: `
    (read exactly as git reads it)."""
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return dot_git
    try:
        text = read_small(dot_git)
    except _Unreadable:
        return None
    if text is None or not text.startswith("gitdir: "):
        return None
    target = _git_path(text[len("gitdir: "):])
    return os.path.normpath(os.path.join(os.path.dirname(dot_git), target))


def common_dir(directory: str) -> str | None:
    """Where a git directory's `commondir` points (one trailing newline dropped, as
    git does), or None without one."""
    try:
        text = read_small(os.path.join(directory, "commondir"))
    except _Unreadable:
        return None
    if text is None:
        return None
    text = text.split("\0", 1)[0]
    return os.path.join(directory, text[:-1] if text.endswith("\n") else text)


def is_git_dir(directory: str) -> bool:
    """Whether git would take `directory` for a repository (git's own test: a `HEAD`,
    and `objects` and `refs` it can enter, here or in the common dir)."""
    if not os.path.lexists(os.path.join(directory, "HEAD")):
        return False
    common = common_dir(directory) or directory
    return all(os.access(os.path.join(common, d), os.X_OK) for d in ("objects", "refs"))


def _value(raw: str) -> str:
    """A config value as git reads it: quotes joined, `#`/`;` comments cut outside
    quotes, the usual escapes."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(raw):
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i], raw[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def _entries(text: str) -> list[tuple[str, str | None]]:
    """`(section[.subsection].key, value)` of a config text, section and key lower case;
    a line the reader cannot follow gives the key `?` (never trusted)."""
    entries: list[tuple[str, str | None]] = []
    section = ""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        while line.endswith("\\") and i < len(lines):  # a continued value
            line = line[:-1] + lines[i]
            i += 1
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        head = _SECTION.match(line)
        if head:
            section = head.group(1).lower() + (f".{head.group(2)}" if head.group(2) else "")
            line = line[head.end():]
            if not line.strip() or line.lstrip().startswith(("#", ";")):
                continue
        entry = _ENTRY.match(line)
        if entry is None:
            entries.append((f"{section}.?", None))
            continue
        raw = entry.group(2)
        entries.append((f"{section}.{entry.group(1).lower()}",
                        None if raw is None else _value(raw)))
    return entries


def _config_values(path: str, wanted: tuple[str, ...]) -> list[str]:
    """Values of `section.key` names (lower case; `includeIf "…".path` counts as
    `includeif.path`) in one config file."""
    try:
        text = read_small(path)
    except _Unreadable:
        return []
    values = []
    for key, value in _entries(text or ""):
        section, _, name = key.partition(".")
        short = f"{section}.{name.rpartition('.')[2]}"
        if value is not None and (key in wanted or short in wanted):
            values.append(value)
    return values


def _expand(value: str, base: str, home: str) -> str:
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return os.path.normpath(os.path.join(base, value))


def protected(project: str, roots: tuple[str, ...], dot_gits: Iterable[str] = (),
              home: str | None = None, heads: Iterable[str] = ()) -> GitPaths:
    """The paths of `project`'s repository (and of every `.git` entry found in the
    writable trees, `dot_gits`, and every bare repository, found by its `HEAD` in
    `heads`) that must stay read-only."""
    home = home or os.path.expanduser("~")
    read_only: dict[str, None] = {}
    guard: dict[str, None] = {}
    guard_files: dict[str, None] = {}
    watch: dict[str, None] = {}
    configs: list[tuple[str, str]] = []  # (config file, work tree)
    seen: set[str] = set()

    def git_dir(directory: str, worktree: str) -> None:
        directory = os.path.normpath(directory)
        if directory in seen or not os.path.isdir(directory) or beyond_reach(directory):
            return  # (behind another user's folder: no command can write it)
        seen.add(directory)
        for name in _TRUSTED_FILES:
            path = os.path.join(directory, name)
            if os.path.lexists(path):
                read_only[path] = None
                if name.startswith("config"):
                    configs.append((path, worktree))
            elif name == "hooks":
                guard[path] = None  # a repository made without hooks gets none later
            elif name == "config":
                guard_files[path] = None
            else:
                watch[path] = None
        common = common_dir(directory)
        if common:
            git_dir(common, worktree)
        worktrees = os.path.join(directory, "worktrees")
        try:
            names = sorted(os.listdir(worktrees))
        except OSError:
            names = []
        for name in names:
            for file in ("config.worktree", "commondir", "gitdir"):
                path = os.path.join(worktrees, name, file)
                if os.path.lexists(path):
                    read_only[path] = None
                elif file == "config.worktree":
                    watch[path] = None

    for dot_git in (os.path.join(project, ".git"), *dot_gits):
        if not os.path.lexists(dot_git):
            continue
        worktree = os.path.dirname(dot_git)
        if not os.path.isdir(dot_git) or os.path.islink(dot_git):
            read_only[dot_git] = None  # a gitfile: rewritten, it points git elsewhere
        directory = gitdir_of(dot_git)
        if directory is not None:
            git_dir(directory, worktree)

    for head in heads:  # bare repositories (a test fixture `remote.git`): git finds
        directory = os.path.dirname(head)  # one from any directory inside it
        # and submodules' git dirs, also with no work tree naming them (a submodule
        # not checked out): `git submodule update` runs their hooks.
        inside = "/.git/" in directory + "/"
        if (not inside or "/.git/modules/" in directory + "/") and is_git_dir(directory):
            git_dir(directory, directory)

    # The user's own git config applies to every repository: a relative hooksPath there
    # names a directory in each work tree.
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for config in (os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")):
        if os.path.isfile(config):
            configs.append((config, project))
    _named_by_config(configs, home, read_only, guard, watch)

    def keep(paths: dict[str, None]) -> tuple[str, ...]:
        return tuple(p for p in paths if _inside(p, roots))

    return GitPaths(keep(read_only), keep(guard), keep(guard_files), keep(watch))


def trusted_by_git(path: str, home: str) -> bool:
    """Whether git would run code from `path` (absolute, resolved) or trust it, were it
    written from outside the sandbox (the agent's file tools): inside a git directory
    (one on the way up: `.git`, a bare repository, where a gitfile leads), or what
    `protected` keeps read-only, guards or watches for a work tree holding `path`
    (its gitfile, `commondir`'s target, the hooks directory, included config files)."""
    trees: list[str] = []
    directory = os.path.dirname(path)
    while True:
        if is_git_dir(directory) or _completes_git_dir(directory, path):
            return True
        if os.path.lexists(os.path.join(directory, ".git")):
            trees.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for tree in trees:
        git = protected(tree, ("/",), home=home)
        if any(path == p or is_within(path, p)
               for p in (*git.read_only, *git.guard, *git.guard_files, *git.watch)):
            return True
    return False


def _completes_git_dir(directory: str, path: str) -> bool:
    """Whether writing `path` (a file below `directory`) makes `directory` a git
    directory: its `HEAD`, or the first file in its `objects` or `refs`, beside the rest
    (planted one write at a time, the config with code first, while it was none); a
    `commondir` beside a `HEAD` (it can name any repository's). Names case folded, as
    a case-insensitive file system finds them."""
    folded = path.lower()

    def written(name: str, base: str = directory) -> bool:
        part = os.path.join(base, name).lower()
        return folded == part or folded.startswith(part + "/")

    if not (written("HEAD") or os.path.lexists(os.path.join(directory, "HEAD"))):
        return False
    if written("commondir"):
        return True
    common = os.path.realpath(common_dir(directory) or directory)
    return all(written(d, common) or os.access(os.path.join(common, d), os.X_OK)
               for d in ("objects", "refs"))


def _named_by_config(configs: list[tuple[str, str]], home: str, read_only: dict[str, None],
                     guard: dict[str, None], watch: dict[str, None]) -> None:
    """Paths the configuration (config file, work tree) names: the hooks directory and
    included files (followed), added to what is read-only, guarded or watched."""
    pending = list(configs)
    done: set[str] = set()
    while pending:
        config, worktree = pending.pop()
        if config in done:
            continue
        done.add(config)
        for value in _config_values(config, ("core.hookspath",)):
            hooks = _expand(value, worktree, home)
            if os.path.lexists(hooks):
                read_only[hooks] = None
            elif os.path.isdir(os.path.dirname(hooks)):
                guard[hooks] = None
            else:
                watch[hooks] = None  # no place for a guard: moved aside if created
        for value in _config_values(config, ("include.path", "includeif.path")):
            included = _expand(value, os.path.dirname(config), home)
            if os.path.lexists(included):
                read_only[included] = None
                pending.append((included, worktree))
            else:
                watch[included] = None


# What `git init`, `git clone`, `cargo new`, `npm init` and friends write into a new
# repository's config: nothing here makes git run a program. Any other key (fsmonitor,
# hooksPath, pager, editor, sshCommand, aliases, filters, includes …) does or may.
# `core.worktree` is checked apart: it must stay inside the project.
@functools.cache
def _safe_keys() -> re.Pattern[str]:
    return re.compile(
        r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|"
        r"precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|sparsecheckout|"
        r"sparsecheckoutcone)"
        r"|extensions\.(objectformat|worktreeconfig)|init\.defaultbranch|user\.(name|email)"
        r"|index\.sparse|lfs\.repositoryformatversion|gc\.auto|fetch\.prune"
        r"|pull\.(rebase|ff)|push\.(default|autosetupremote)"
        r"|remote\.[^.]+\.(url|fetch|pushurl|tagopt|prune)"
        r"|branch\.[^.]+\.(remote|merge|rebase)|submodule\.[^.]+\.(url|active))$")


def new_unsafe_key(before: str, after: str) -> str | None:
    """The first entry of config text `after` that `before` did not hold and that is
    off the safe list: a change someone made outside the sandbox during a command
    (`git config user.email …`) adds none and is kept as it is."""
    old = set(_entries(before))
    for key, value in _entries(after):
        if (key, value) not in old and not _safe_keys().match(key):
            return key
    return None


def untrusted(dot_git: str, main: str | None = None, project: str | None = None
              ) -> str | None:
    """Why a repository a command just created would run code outside the sandbox (a
    config key or hook git executes), or None when it is an ordinary new repository.
    A gitfile is ordinary only when it names a directory inside `main`, the project's
    own (protected) git directory: `git worktree add`, `git submodule add`."""
    directory = gitdir_of(dot_git)
    if directory is None:
        return "a gitfile"
    if directory != os.path.normpath(dot_git):
        real = os.path.realpath(directory)
        if main is None or odd_path(directory) or not is_within(
                real, os.path.realpath(main)) or real == os.path.realpath(main):
            return "a gitfile"  # `.git` as a file points git at a directory of its choosing
        common = common_dir(directory)
        if common is not None and (odd_path(common) or os.path.realpath(common)
                                   != os.path.realpath(main)):
            return "commondir"
        return unsafe_config(directory, project)
    for name in _WATCHED_FILES:
        if os.path.lexists(os.path.join(directory, name)):
            return name
    return unsafe_config(directory, project)


def unsafe_config(directory: str, project: str | None = None) -> str | None:
    """The first thing in a git directory that would make git run code: a config key
    off the safe list, a live hook, a file git reads that has other hard links (a name
    elsewhere could change it later) or that is not a plain file."""
    for name in ("config", "config.worktree"):
        path = os.path.join(directory, name)
        try:
            text = read_small(path)
        except _Unreadable:
            return name
        if text is None:
            continue
        if os.stat(path).st_nlink > 1:
            return f"{name} (hard-linked)"
        for key, value in _entries(text):
            if key == "core.worktree" and value is not None and project is not None \
                    and is_within(os.path.realpath(os.path.join(directory, value)),
                                  os.path.realpath(project)):
                continue  # a submodule's or worktree's own work tree
            if not _safe_keys().match(key):
                return key
    hooks = os.path.join(directory, "hooks")
    try:
        names = os.listdir(hooks)
    except FileNotFoundError:
        names = []
    except OSError:
        return "hooks"
    live = [n for n in names if not n.endswith(".sample")]
    return f"hooks/{live[0]}" if live else None
