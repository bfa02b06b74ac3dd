"""What git executes or trusts, found in a project: to be kept read-only inside.

git runs code from its configuration (`core.fsmonitor`, `core.hooksPath`, aliases,
filters, pagers …) and from hooks, *outside* the sandbox, the next time the user types a
git command. Beyond `.git/config` and `.git/hooks` it follows: gitfiles (`.git` as a
file, in worktrees and submodules: `gitdir: <path>`), `commondir`, `config.worktree`,
per-worktree directories, the `core.hooksPath` directory (husky's `.husky/`) and
`include.path` / `includeIf.*.path` files. Each of those inside a writable root is
returned here; files git would honour that do not exist yet are returned as `watch`
(the launcher moves aside any that a command creates, and says so).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from swifty_sandbox.policy.loader import is_within

# Files of a git directory that git trusts; each one read-only wherever it exists.
_TRUSTED_FILES = ("config", "config.worktree", "commondir", "hooks")
# Files of a git directory that would be trusted if created (watched when missing).
_WATCHED_FILES = ("config.worktree", "commondir")
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
_MAX_CONFIG = 1 << 20  # a git config larger than this is not read (it is still read-only)


@dataclass(frozen=True, slots=True)
class GitPaths:
    read_only: tuple[str, ...]  # existing paths to mount read-only
    guard: tuple[str, ...]  # missing directories to guard (empty and read-only)
    watch: tuple[str, ...]  # missing files a command must not create


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(is_within(path, r) for r in roots)


def gitdir_of(dot_git: str) -> str | None:
    """The git directory a `.git` entry names: itself, or a gitfile's `gitdir:`."""
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="surrogateescape") as f:
            first = f.read(4096).splitlines()[:1]
    except OSError:
        return None
    if not first or not first[0].startswith("gitdir:"):
        return None
    target = first[0][len("gitdir:"):].strip()
    return os.path.normpath(os.path.join(os.path.dirname(dot_git), target))


def _config_values(path: str, wanted: tuple[str, ...]) -> list[str]:
    """Values of `section.key` names (lower case; `includeif.*.path` as
    `includeif.path`) in one git config file: a small reader, enough for paths."""
    try:
        if os.path.getsize(path) > _MAX_CONFIG:
            return []
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    values = []
    section = ""
    for line in lines:
        head = _SECTION.match(line)
        if head:
            section = head.group(1).lower()
            rest = line[head.end():]
            if not rest.strip():
                continue
            line = rest
        entry = _ENTRY.match(line)
        if entry is None or entry.group(2) is None:
            continue
        name = f"{section}.{entry.group(1).lower()}"
        if name in wanted:
            value = entry.group(2).split(" #")[0].split(" ;")[0].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            values.append(value)
    return values


def _expand(value: str, base: str, home: str) -> str:
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return os.path.normpath(os.path.join(base, value))


def protected(project: str, roots: tuple[str, ...], dot_gits: Iterable[str] = (),
              home: str | None = None) -> GitPaths:
    """The paths of `project`'s repository (and of every `.git` entry found in the
    writable trees, `dot_gits`) that must stay read-only."""
    home = home or os.path.expanduser("~")
    read_only: dict[str, None] = {}
    guard: dict[str, None] = {}
    watch: dict[str, None] = {}
    configs: list[tuple[str, str]] = []  # (config file, work tree)
    seen: set[str] = set()

    def git_dir(directory: str, worktree: str) -> None:
        directory = os.path.normpath(directory)
        if directory in seen:
            return
        seen.add(directory)
        for name in _TRUSTED_FILES:
            path = os.path.join(directory, name)
            if os.path.lexists(path):
                read_only[path] = None
                if name.startswith("config"):
                    configs.append((path, worktree))
            elif name in _WATCHED_FILES and os.path.isdir(directory):
                watch[path] = None
        common = os.path.join(directory, "commondir")
        if os.path.isfile(common):
            try:
                with open(common, encoding="utf-8", errors="surrogateescape") as f:
                    target = f.read(4096).strip()
            except OSError:
                target = ""
            if target:
                git_dir(os.path.join(directory, target), worktree)
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

    # Paths the configuration names: the hooks directory and included files.
    pending = list(configs)
    done: set[str] = set()
    while pending:
        config, worktree = pending.pop()
        if config in done:
            continue
        done.add(config)
        for value in _config_values(config, ("core.hookspath",)):
            hooks = _expand(value, worktree, home)
            (read_only if os.path.lexists(hooks) else guard)[hooks] = None
        for value in _config_values(config, ("include.path", "includeif.path")):
            included = _expand(value, os.path.dirname(config), home)
            if os.path.lexists(included):
                read_only[included] = None
                pending.append((included, worktree))
            else:
                watch[included] = None

    def keep(paths: dict[str, None]) -> tuple[str, ...]:
        return tuple(p for p in paths if _inside(p, roots))

    return GitPaths(keep(read_only), keep(guard), keep(watch))


# What `git init`, `git clone`, `cargo new`, `npm init` and friends write into a new
# repository's config: nothing here makes git run a program. Any other key (fsmonitor,
# hooksPath, pager, editor, sshCommand, aliases, filters, includes …) does or may.
_SAFE_KEYS = re.compile(
    r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|"
    r"precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|worktree|sparsecheckout|"
    r"sparsecheckoutcone)"
    r"|extensions\.(objectformat|worktreeconfig)|init\.defaultbranch|user\.(name|email)"
    r"|index\.sparse|lfs\.repositoryformatversion|gc\.auto|fetch\.prune"
    r"|pull\.(rebase|ff)|push\.(default|autosetupremote)"
    r"|remote\.[^.]+\.(url|fetch|pushurl|tagopt|prune)"
    r"|branch\.[^.]+\.(remote|merge|rebase)|submodule\.[^.]+\.(url|active))$")


def untrusted(dot_git: str, main: str | None = None) -> str | None:
    """Why a repository a command just created would run code outside the sandbox (a
    config key or hook git executes), or None when it is an ordinary new repository.
    A gitfile is ordinary only when it names a directory inside `main`, the project's
    own (protected) git directory: `git worktree add`, `git submodule add`."""
    directory = gitdir_of(dot_git)
    if directory is None:
        return "a gitfile"
    if directory != os.path.normpath(dot_git):
        real = os.path.realpath(directory)
        if main is None or not is_within(real, os.path.realpath(main)) or real == \
                os.path.realpath(main):
            return "a gitfile"  # `.git` as a file points git at a directory of its choosing
        common = os.path.join(directory, "commondir")
        if os.path.lexists(common):
            try:
                with open(common, encoding="utf-8", errors="surrogateescape") as f:
                    target = os.path.realpath(os.path.join(directory, f.read(4096).strip()))
            except OSError:
                return "commondir"
            if target != os.path.realpath(main):
                return "commondir"
        return _unsafe_config(directory)
    for name in _WATCHED_FILES:
        if os.path.lexists(os.path.join(directory, name)):
            return name
    return _unsafe_config(directory)


def _unsafe_config(directory: str) -> str | None:
    for name in ("config", "config.worktree"):
        keys = _config_keys(os.path.join(directory, name))
        if keys is None:
            return name
        bad = [k for k in keys if not _SAFE_KEYS.match(k)]
        if bad:
            return bad[0]
    hooks = os.path.join(directory, "hooks")
    try:
        names = os.listdir(hooks)
    except FileNotFoundError:
        names = []
    except OSError:
        return "hooks"
    live = [n for n in names if not n.endswith(".sample")]
    return f"hooks/{live[0]}" if live else None


def _config_keys(path: str) -> list[str] | None:
    """Every `section[.subsection].key` of a config file, lower case (the subsection as
    written); None when it cannot be read."""
    try:
        if os.path.getsize(path) > _MAX_CONFIG:
            return None
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    except OSError:
        return None
    keys = []
    section = ""
    for line in lines:
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        head = _SECTION.match(line)
        if head:
            section = head.group(1).lower() + (f".{head.group(2)}" if head.group(2) else "")
            line = line[head.end():]
            if not line.strip():
                continue
        entry = _ENTRY.match(line)
        keys.append(f"{section}.{entry.group(1).lower()}" if entry else f"{section}.?")
    return keys
