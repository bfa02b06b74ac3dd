"""The policy compiler: `Policy + mode → SandboxSpec`, platform neutral.

The spec lists concrete, existing paths (globs are expanded here, once), and keeps the
glob patterns they came from, so each backend (bwrap argv, SBPL, OCI) is a pure
translation of it: one that can express a glob (seatbelt's regex) also covers files
created during the run. Its fields say what must hold (read-only, hidden, not
creatable, not movable); how is the backend's business (`linux/`: bind mounts, tmpfs,
/dev/null, descriptors; `macos/`: SBPL rules).

Every path that becomes a mount is resolved here and checked: a mount made through a
symlink follows it, so a repository that plants `evil -> ~` could turn "keep
`evil/.bashrc` read-only" into "bind `~` read-write". The rules, in one place
(`_mount_path`): a path is mounted only where it really is; a symlink on the way inside a
writable root (which a command could swap) makes the run fail closed, naming the link.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from swifty_sandbox.messages import t
from swifty_sandbox.policy import (
    Effect,
    Mode,
    Policy,
    Request,
    SwiftyError,
    Tool,
    cachefile,
    decide,
)
from swifty_sandbox.policy.agents import (
    nested_folders,
    project_settings,
    user_settings,
    whole_folders,
)
from swifty_sandbox.policy.engine import temp_dirs
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.policy.paths import expand_home, is_within, project_digest, project_state_dir
from swifty_sandbox.policy.profile import Profile, SeccompProfile
from swifty_sandbox.policy.protected import (
    AGENT_SETTINGS,
    HOME_PROTECTED,
    SYSTEM_DIRS,
    UNGUARDED,
    guarded_as_dir,
)
from swifty_sandbox.policy.rules import PathPattern

from ..fsafe import first_link, links_on_the_way
from . import gitfiles, gitindex, gitstage, toolchains, walkcache
from .expand import Expansion, ExpansionTooLarge, Unenforceable, Unsearchable, expand
from .pathguard import host_paths, trusted_paths
from .reach import DENIED, MISSING, behind_out_of_reach
from .roots import plan as roots_plan
from .roots import planted_link

EXIT_SETUP = ExitCode.SETUP

# Where a command's /tmp and /var/tmp live on the host (`tmp: project`): one directory
# per project under the user's protected cache, never the shared /tmp.
TEMP_HOME = ".cache/swifty-sandbox/tmp"
TEMP_MOUNTS = ("/tmp", "/var/tmp")
# At most this many placeholders per run (each a descriptor bwrap inherits); the rest
# of the hidden files on /dev/null.
PLACEHOLDERS_MOST = 512
# The lock reason bound at each linked worktree's `locked` (see `worktree_locks`).
LOCK_REASON = ".cache/swifty-sandbox/worktree-locked"
# The agents' folders they read below the project root too (the agent table: Claude
# Code finds skills, whose frontmatter's hooks run on the host, in a `.claude/` below
# the project once it works on a file there; Gemini CLI reads the `.gemini/` of the
# folder it starts in; Codex each `.codex/config.toml` from the project root to where
# it starts): a nested one is kept read-only whole, and one a command makes is moved
# aside. The project's own `.claude/` is its settings files and folders
# (`AGENT_SETTINGS`), kept one by one.
NESTED_AGENT_DIRS = tuple("/" + name for name in nested_folders())
# Names looked for in the project before and after each command: a repository (a `.git`,
# or a bare one's `HEAD`), a policy directory or a nested agent folder that appears is
# checked.
MARKERS = frozenset((".git", ".swifty", "HEAD", *nested_folders()))


def nested_agent_dir(path: str, project: str) -> bool:
    """Whether `path` is an agent folder below the project's root (`NESTED_AGENT_DIRS`)."""
    return path.endswith(NESTED_AGENT_DIRS) and os.path.dirname(path) != project
# Symlinks inside hidden directories are followed to hide what they lead to; a hidden
# tree larger than this is refused rather than half scanned.
_HIDDEN_SCAN_LIMIT = 20_000


class SetupError(SwiftyError):
    """Confinement could not be set up; the command did not run."""

    code = "sandbox-setup"
    exit_code = EXIT_SETUP


@dataclass(frozen=True, slots=True)
class Limits:
    timeout: float | None = None  # seconds of wall-clock time; exit 124 when exceeded
    output_bytes: int = 1 << 20  # per stream; head and tail are kept beyond this
    # Caps (None: none); how they are enforced is linux/caps.py's business.
    memory_bytes: int | None = None  # the command's memory
    processes: int | None = None  # the command's processes and threads
    processes_required: bool = False  # asked for (not the default): unenforceable → error


# Protected paths as they were before a command: (inode, size, mtime, mode, owner,
# group) or None when missing, and the content of small files (to put back what a
# command changed anyway, exactly as it was).
Identity = tuple[int, int, int, int, int, int]
Snapshot = Mapping[str, tuple[Identity | None, bytes | None]]
_SNAPSHOT_CONTENT = 1 << 16


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """What the command may touch. Every path is absolute and resolved."""

    project: str
    cwd: str
    read_roots: tuple[str, ...] | None  # None: the whole file system is readable
    writable: tuple[str, ...]  # existing directories, bound read-write
    private_dirs: tuple[str, ...]  # replaced by an empty private tmpfs (strict's /tmp)
    pinned: tuple[str, ...]  # ancestors of read-only and hidden paths: must not be
    #                          renamed or removed (Linux binds each onto itself: EBUSY)
    read_only: tuple[str, ...]  # existing paths inside writable roots kept read-only
    guard_dirs: tuple[str, ...]  # missing protected directories: empty and read-only
    #                              (bwrap makes the mount point; removed after the run)
    unreadable_dirs: tuple[str, ...]  # hidden behind an empty read-only tmpfs
    unreadable_files: tuple[str, ...]  # hidden behind /dev/null
    env_drop: tuple[str, ...]  # case-insensitive shell globs of variable names
    env_keep: tuple[str, ...]
    seccomp: SeccompProfile
    nested_namespaces: bool
    limits: Limits = field(default_factory=Limits)
    # `tmp: project`: this host directory is bound read-write at each of `temp_mounts`
    # (and TMPDIR points there), so no command sees the host's shared /tmp.
    temp_dir: str | None = None
    temp_mounts: tuple[str, ...] = ()
    # Missing files git would trust (`.git/commondir`, `config.worktree`, included
    # config): what a command creates there is moved aside after it, and reported.
    watch: tuple[str, ...] = ()
    guard_files: tuple[str, ...] = ()  # missing protected files: empty and read-only
    bwrap: str | None = None  # the user's configured bwrap; None: the trusted places
    backend: str = "auto"  # Linux: auto | bwrap | landlock (sandbox/run/selection.py)
    # `.git` and `.swifty` entries in the writable trees before the command: one that
    # appears during it is checked (a planted repository or policy), `markers_in`
    # names the trees to search.
    markers: tuple[str, ...] = ()
    markers_in: tuple[str, ...] = ()
    # Every `HEAD` git may take a repository from that was none before the command: a
    # marked one whose directory is no repository yet (no `objects`, `refs` or
    # `commondir`), and that of each marked gitfile's git dir that is none yet, even
    # missing. Checked after it as a new one is, wherever it lies: a command completes
    # a repository without making the `HEAD` or the gitfile git finds it by (`mkdir
    # refs`, a `commondir`'s target, the directory an old gitfile names), and the
    # watcher names no unchanged directory.
    loose_heads: tuple[str, ...] = ()
    home: str = ""
    snapshot: Snapshot = field(default_factory=dict)
    # The project's toolchain cache directory (sandbox/spec/toolchains.py): bound read-write
    # where it is, its siblings (other projects' caches) hidden.
    toolchain_dir: str | None = None
    # Configured writable roots that do not exist (sandbox/spec/roots.py): made before the
    # command (they are in `writable` too), or not, and why.
    create_roots: tuple[str, ...] = ()
    refused_roots: tuple[tuple[str, str], ...] = ()
    # Hidden paths git tracks (sandbox/spec/gitindex.py): git inside sees a change it cannot
    # diff or commit, so each run says so.
    hidden_tracked: tuple[str, ...] = ()
    # Hidden files no git would stage as an empty file (sandbox/spec/gitstage.py): a
    # backend that can may bind each from an empty placeholder of its own and report
    # which the command opened (linux/placeholders.py).
    placeholders: tuple[str, ...] = ()
    # The anchored globs (`PathPattern.anchored`) behind `unreadable_*` and `read_only`,
    # also for paths that do not exist yet; basename globs apply below `pattern_roots`.
    hidden_patterns: tuple[str, ...] = ()
    protected_patterns: tuple[str, ...] = ()
    pattern_roots: tuple[str, ...] = ()
    # Symbolic links on the way to the watched paths before the command, with their
    # text: a link that is not one of these was made by the command (aftercare moves
    # it aside rather than leave what lies behind it).
    links_before: tuple[tuple[str, str], ...] = ()
    # Links on the way to what an agent's settings run (`.venv/bin/python3`): a link
    # cannot be mounted read-only, so each is checked after the command instead (one
    # that changed is moved aside); what it leads to, in a root, is read-only.
    kept_links: tuple[tuple[str, str], ...] = ()
    # The walk cache the walk before the command used (sandbox/spec/walkcache.py): the
    # after-run check reuses its records, each checked again by a `lstat`.
    walk_cache: str = ""
    # `locked` of each linked worktree (not locked yet): git inside finds the worktree
    # locked, so `git worktree remove`, `move` and `prune` stop before they change
    # anything — removed, they would stop half-way at the worktree's read-only git
    # files (EBUSY) and leave a half-deleted tree. Bound from `lock_reason` (a file of
    # ours saying why, which git prints), else /dev/null.
    worktree_locks: tuple[str, ...] = ()
    lock_reason: str | None = None
    # Work trees (linked worktrees, submodules) whose gitfile is read-only and that
    # hold more than it: one a command emptied (`rm -rf wt`, which stops at the
    # gitfile's mount) has its gitfile and itself removed after the run, so it is
    # gone as the command meant, not a gitfile left in an empty directory.
    gitfile_trees: tuple[str, ...] = ()
    # Missing directories made before the command (outermost first), following no
    # link, for the guards of protected home entries below them.
    guard_parents: tuple[str, ...] = ()
    # Descriptors held on the snapshot's files while the spec lives (`Held`).
    held: tuple[Held, ...] = field(default=(), compare=False, repr=False)


def _inside_any(path: str, roots: tuple[str, ...]) -> bool:
    return any(is_within(path, root) for root in roots)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _mount_path(path: str, roots: tuple[str, ...], *, resolved: bool = False
                ) -> str | None:
    """Where a path that must stay read-only really is, if a command could write it.

    None when it lies outside every writable root (read-only already). A symlink on
    the way inside a root fails closed: the command could swap the link, and a mount
    through it would land where the link points. `resolved`: the path has no links."""
    if not _inside_any(path, roots):
        if resolved or not _inside_any(_real(path), roots):
            return None
        raise SetupError(t("setup.symlink", path=path, link=first_link(path) or path))
    link = first_link(path, roots)
    if link is not None:
        raise SetupError(t("setup.symlink", path=path, link=link))
    return path


def _rule_patterns(policy: Policy, tools: tuple[Tool, ...]) -> tuple[list[PathPattern], bool]:
    """Path patterns of deny rules for `tools`, and whether one denies every path."""
    patterns: list[PathPattern] = []
    everything = False
    for layer in policy.layers:
        for rule in layer.rules:
            if rule.effect is not Effect.DENY or not any(rule.applies_to(t) for t in tools):
                continue
            if rule.path is not None:
                patterns.append(rule.path)
            elif rule.tool is not None:  # `WriteFile` alone; `*` is Bash's business too
                everything = True
    return patterns, everything


def _missing_parents(path: str, roots: tuple[str, ...]) -> list[str]:
    """The directories above `path`, inside its root, that do not exist: outermost
    first."""
    out = []
    parent = os.path.dirname(path)
    while not os.path.lexists(parent) and _inside_any(parent, roots) and \
            parent not in roots:
        out.append(parent)
        parent = os.path.dirname(parent)
    return out[::-1]


def _ancestors_below(path: str, roots: tuple[str, ...]) -> list[str]:
    root = max((r for r in roots if is_within(path, r)), key=len, default=None)
    if root is None:
        return []
    out = []
    parent = os.path.dirname(path)
    while parent != root and is_within(parent, root):
        out.append(parent)
        parent = os.path.dirname(parent)
    return out


def _unsafe_root(root: str, home: str, explicit: tuple[str, ...]) -> bool:
    """`/`, a top-level system directory, or home and its ancestors (unless the user's
    own config names that very directory)."""
    if root == "/" or (root.count("/") == 1 and root[1:] in SYSTEM_DIRS):
        return True
    return is_within(home, root) and root not in explicit


def temp_dir_for(project: str, home: str) -> str:
    """The host directory behind a project's /tmp (`tmp: project`)."""
    return os.path.join(home, TEMP_HOME,
                        f"{os.path.basename(project)[:32]}-{project_digest(project)}")


def compile_spec(policy: Policy, mode: Mode, cwd: str | None = None,
                 limits: Limits | None = None) -> SandboxSpec:
    """Compile the policy for one command. Reads the file system to expand globs, to
    skip paths that do not exist (bwrap cannot mount those) and to refuse mounts
    through symlinks; raises `SetupError` when the sandbox would not hold. In steps:
    1. writable roots, 2. read-only inside them and guards where a protected path is
    missing, 3. unreadable; then the pins that keep all of them where they are."""
    profile, settings = policy.profile, policy.settings
    project, home = str(policy.project), str(policy.home)
    write_patterns, all_writes_denied = _rule_patterns(policy, (Tool.WRITE_FILE,
                                                                Tool.EDIT_FILE))
    w = _writable(policy, mode, write_patterns, all_writes_denied)
    roots, temp_dir = w.roots, w.temp_dir
    # Basename globs are looked for in the project and configured roots, not in the
    # shared temp dirs (other programs' files; a walk there would be slow and moot).
    searched = tuple(r for r in roots if r not in w.temps) or (project,)
    read_patterns, _ = _rule_patterns(policy, (Tool.READ_FILE,))
    secrets = [*policy.deny_read, *read_patterns]  # the profile's and settings' denyRead
    marked: list[str] = []  # every `.git`, `.swifty` and `HEAD` in the walked trees
    walk = _walk_cache(home, (*roots, *w.create))
    expanded = _expand(policy, write_patterns, secrets, searched, roots, marked, walk)
    r = _read_only(policy, w, expanded["read-only"].paths, marked)
    g = _guards(policy, roots, r.git, r.launchers)
    unreadable_dirs, unreadable_files = _unreadable(policy, expanded["hidden"].paths, roots,
                                                    temp_dir, _own_caches(walk, home))
    locks = _worktree_locks(project, roots)
    pinned = _pins((*r.read_only, *g.dirs, *g.files, *unreadable_dirs, *unreadable_files,
                    *locks), roots)
    watch = _watched(project, roots, r, g)
    link_roots = (*roots, *((temp_dir,) if temp_dir else ()))
    snapshot, held = _snapshot([p for p in r.read_only if p in r.git_trusted],
                               [*g.dirs, *g.files])
    return SandboxSpec(
        project=project,
        cwd=_real(cwd) if cwd else project,
        read_roots=_read_roots(policy, roots),
        writable=tuple(sorted((*roots, *w.create), key=lambda p: p.count("/"))),
        private_dirs=tuple(p for p in w.private if os.path.isdir(p)),
        pinned=tuple(p for p in pinned if p not in r.read_only),
        read_only=tuple(dict.fromkeys(r.read_only)),
        guard_dirs=tuple(dict.fromkeys(g.dirs)),
        unreadable_dirs=tuple(dict.fromkeys(unreadable_dirs)),
        unreadable_files=tuple(dict.fromkeys(unreadable_files)),
        env_drop=(*profile.env_drop, *settings.env_drop),
        env_keep=(*profile.env_keep, *settings.env_keep),
        seccomp=profile.seccomp,
        nested_namespaces=profile.nested_namespaces,
        limits=limits or Limits(),
        temp_dir=temp_dir,
        temp_mounts=TEMP_MOUNTS if temp_dir else (),
        watch=watch,
        guard_files=tuple(dict.fromkeys(g.files)),
        guard_parents=tuple(dict.fromkeys(g.parents)),
        worktree_locks=locks,
        gitfile_trees=tuple(_gitfile_trees(project, r.read_only)),
        lock_reason=os.path.join(home, LOCK_REASON) if locks else None,
        bwrap=settings.bwrap,
        backend=settings.backend,
        markers=tuple(marked),
        loose_heads=_loose_heads(marked),
        markers_in=w.searched(),
        home=home,
        snapshot=snapshot,
        held=held,
        toolchain_dir=toolchains.cache_dir(policy),
        create_roots=w.create,
        refused_roots=w.refused,
        hidden_tracked=tuple(gitindex.tracked(project, unreadable_files, unreadable_dirs)),
        placeholders=tuple(gitstage.unstaged(list(dict.fromkeys(unreadable_files)))[
            :PLACEHOLDERS_MOST]),
        hidden_patterns=tuple(dict.fromkeys(p.anchored for p in secrets)),
        protected_patterns=tuple(dict.fromkeys(
            p.anchored for p in (*policy.protected, *write_patterns))),
        pattern_roots=tuple(dict.fromkeys((project, *searched))),
        links_before=tuple(dict.fromkeys(
            link for p in watch for link in links_on_the_way(p, link_roots))),
        kept_links=r.agent_links,
        walk_cache=walk.name,
    )


def _loose_heads(marked: list[str]) -> tuple[str, ...]:
    """The `HEAD`s (`SandboxSpec.loose_heads`) of every directory git may take for a
    repository that is none yet (gitfiles.is_git_dir): a command may complete one."""
    heads = [m for m in marked if m.endswith("/HEAD")]
    for dot_git in (m for m in marked if m.endswith("/.git")):
        if os.path.islink(dot_git):
            heads.append(os.path.join(os.path.realpath(dot_git), "HEAD"))
        elif not os.path.isdir(dot_git) and (named := gitfiles.gitdir_of(dot_git)):
            heads.append(os.path.join(named, "HEAD"))
    return tuple(dict.fromkeys(h for h in heads
                               if not gitfiles.is_git_dir(os.path.dirname(h))))


def _own_caches(walk: walkcache.Cache, home: str) -> list[str]:
    """swifty's signed caches that exist, hidden from the command: the walk cache's
    records name files inside hidden directories, and every cache's MAC secret must
    stay ours (policy/cachefile.py)."""
    folders = [walk.directory] if walk.directory is not None else []
    folders += [f for kind in cachefile.KINDS
                if (f := cachefile.folder_path(kind, home)) is not None]
    for folder in folders:
        # Made here, not at its first entry: otherwise whether it is hidden would
        # depend on whether an earlier run (or this one's render) stored an entry (the
        # walk cache stores none for a tree younger than its racy window), and
        # `compile` would not show the argv that runs.
        with contextlib.suppress(OSError):
            os.makedirs(folder, mode=0o700, exist_ok=True)
    return [r for f in folders if (r := _real(f)) and os.path.isdir(r)]


def _walk_cache(home: str, writable: tuple[str, ...]) -> walkcache.Cache:
    """The walk cache in the protected `~/.cache/swifty-sandbox/walk`, unless a command
    could write there (a writable root holds it: then records live for this run only)."""
    directory = _real(walkcache.cache_dir(home))
    inside = any(is_within(directory, root) or is_within(directory, _real(root))
                 for root in writable)
    return walkcache.Cache(None if inside else directory)


@dataclass(frozen=True, slots=True)
class _Writable:
    """Step 1: where the command may write."""

    roots: tuple[str, ...]  # existing writable roots, outer first
    temps: tuple[str, ...]  # the host's temp dirs (unless `tmp: project`)
    private: tuple[str, ...]  # `tmp: private`: replaced by empty ones
    temp_dir: str | None  # `tmp: project`: the project's own, bound at /tmp
    create: tuple[str, ...]  # configured roots that are missing: made before the run
    refused: tuple[tuple[str, str], ...]  # configured roots not made, and why

    def searched(self) -> tuple[str, ...]:
        """The writable trees searched after the run for planted repositories and
        policies: the project, the configured roots (those this run creates too), not
        the shared temp dirs. A repository planted in `~/w` runs its hooks there next."""
        return tuple(r for r in (*self.roots, *self.create) if r not in self.temps)


def _writable(policy: Policy, mode: Mode, write_patterns: list[PathPattern],
              all_writes_denied: bool) -> _Writable:
    """1. Writable roots: the project (not in plan mode, nor when every write is
    denied), the host temp dirs only with `tmp: host`, and the configured roots."""
    profile, settings = policy.profile, policy.settings
    project, home = str(policy.project), str(policy.home)
    explicit = tuple(str(p) for p in settings.writable)
    # Each root as written too (`settings.WrittenPath`): one written through a link in a
    # writable root is refused (sandbox/spec/roots.py).
    written = [(str(p), getattr(p, "written", "") or str(p)) for p in settings.writable]
    writable: list[str] = []
    if mode is not Mode.PLAN and not all_writes_denied:
        writable.append(project)
    # The host's temp dirs (resolving them costs a few lstats): only when they are used.
    temps = [str(tmp) for tmp in temp_dirs()] if profile.tmp != "project" else []
    private: list[str] = []
    temp_dir = None
    if profile.tmp == "host":
        tmpdir = os.environ.get("TMPDIR")
        link = first_link(os.path.abspath(tmpdir)) if tmpdir else None
        if link is not None:
            raise SetupError(t("setup.symlink", path=tmpdir, link=link))
        writable += temps
    elif profile.tmp == "private":
        private += temps
    else:
        # Resolved: a user may well keep ~/.cache on another disk through a link.
        temp_dir = _real(temp_dir_for(project, home))
    writable += [p for p in explicit if os.path.isdir(p)]
    create, refused = roots_plan(
        [(p, given) for p, given in written if not os.path.isdir(p)], home,
        [*policy.protected, *write_patterns, *policy.deny_read,
         *_rule_patterns(policy, (Tool.READ_FILE,))[0]])
    for root in writable:
        if _unsafe_root(root, home, explicit):
            raise SetupError(t("setup.unsafe_root", root=root))
    # Outer roots first: a later bind of `/tmp` would cover a project bound at `/tmp/x`.
    roots = tuple(sorted(dict.fromkeys(w for w in writable if os.path.isdir(w)),
                         key=lambda w: w.count("/")))
    for root in roots:
        link = first_link(root)
        if link is not None:  # resolved when loaded; a link now means it was swapped
            raise SetupError(t("setup.symlink", path=root, link=link))
    planted = planted_link(written, roots)
    if planted is not None:
        raise SetupError(t("setup.symlink", path=planted[0], link=planted[1]))
    return _Writable(roots, tuple(temps), tuple(private), temp_dir, create, refused)


def _expand(policy: Policy, write_patterns: list[PathPattern], secrets: list[PathPattern],
            searched: tuple[str, ...], roots: tuple[str, ...], marked: list[str],
            walk: walkcache.Cache) -> dict[str, Expansion]:
    """The read-only and hidden patterns → existing paths, in one walk (`marked`: the
    markers found on the way); a walk that cannot be complete refuses the run."""
    project = str(policy.project)
    try:
        return expand({"read-only": [*policy.protected, *write_patterns],
                       "hidden": secrets},
                      tuple(dict.fromkeys((project, *searched))), follow=("hidden",),
                      markers=MARKERS, marked=marked, strict=roots, cache=walk)
    except ExpansionTooLarge as e:
        raise SetupError(t("setup.too_large", path=e.path, limit=e.limit)) from e
    except Unsearchable as e:
        raise SetupError(t("setup.unsearchable", path=e.path, error=e.error.strerror)) from e
    except Unenforceable as e:
        raise SetupError(t("setup.root_glob", pattern=str(e))) from e


@dataclass(frozen=True, slots=True)
class _ReadOnly:
    """Step 2: what stays read-only inside the writable roots, and why."""

    read_only: list[str]
    git: gitfiles.GitPaths
    launchers: list[str]  # what runs by name outside (`swifty-sandbox`, `git`), in a root
    git_trusted: frozenset[str]  # what git, swifty or an agent reads or runs: snapshotted
    agent_missing: list[str]  # what the agents' settings run that is missing: watched
    agent_links: tuple[tuple[str, str], ...]  # links on the way to those: checked after


def _read_only(policy: Policy, w: _Writable, by_rule_paths: tuple[str, ...],
               marked: list[str]) -> _ReadOnly:
    """2. Read-only inside writable roots: protected paths, write-deny rules
    (`by_rule_paths`), what git executes or trusts, and what the next `run` and the
    agents themselves execute."""
    project, home, roots = str(policy.project), str(policy.home), w.roots
    dot_gits = [m for m in marked if m.endswith("/.git")]
    _refuse_unresolved(policy, dot_gits)
    git = gitfiles.protected(project, roots, dot_gits, home,
                             [m for m in marked if m.endswith("/HEAD")])
    # `.swifty` at any depth: a planted `pkg/.swifty` would be the policy of a later
    # session started in `pkg/`.
    policy_dirs = [m for m in marked if m.endswith("/.swifty")
                   or nested_agent_dir(m, project)]
    launchers = [p for p in host_paths(os.environ.get("PATH"), project)
                 if _inside_any(p, roots)]  # what runs by name outside (pathguard.py)
    agent_runs, agent_missing, agent_links = _agent_programs(project, home, roots)
    on_path, path_links = _linked_programs([p for p in launchers if os.path.lexists(p)],
                                           roots)
    agent_links = tuple(dict.fromkeys((*agent_links, *path_links)))
    # The user's agent settings where a variable moved them (`CLAUDE_CONFIG_DIR`,
    # `CODEX_HOME`) into a writable root: read-only, or watched while missing (the
    # default folders in home are protected entries already).
    user_files = [str(f) for f in user_settings(os.environ, policy.home)
                  if _inside_any(str(f), roots) and first_link(str(f), roots) is None]
    agent_missing += [f for f in user_files if not os.path.lexists(f)]
    # A `sandbox.writable` root (one this run creates too) is where the person may start
    # an agent next: the agents' settings files at its top are kept as the project's
    # are, read-only, or moved aside after the run if it makes them.
    at_roots = [os.path.join(r, name) for r in w.searched()
                if not is_within(r, project) for name in project_settings()]
    agent_missing += [f for f in at_roots if not os.path.lexists(f)]
    trusted = trusted_paths(policy.settings.bwrap)
    candidates = [*by_rule_paths, *git.read_only, *policy_dirs, *trusted,
                  *on_path, *agent_runs,
                  *(f for f in (*user_files, *at_roots) if os.path.isfile(f))]
    read_only = [p for p in dict.fromkeys(_mount_path(c, roots, resolved=c in trusted)
                                          for c in candidates) if p is not None]
    by_rule = set(by_rule_paths)
    # What git, swifty or an agent reads or runs on the host: checked after the run too.
    git_trusted = frozenset((*git.read_only, *policy_dirs, *agent_runs))
    _refuse_hard_links([p for p in read_only if p in by_rule],
                       [p for p in read_only if p in git_trusted])
    temp_targets = [*w.private, *(TEMP_MOUNTS if w.temp_dir else ())]
    if project not in roots and _inside_any(project, (*roots, *temp_targets)):
        # Plan mode on a project that lives in /tmp: read-only, and visible through a
        # private /tmp too.
        read_only.insert(0, project)
    return _ReadOnly(read_only, git, launchers, git_trusted, agent_missing, agent_links)


@dataclass(frozen=True, slots=True)
class _Guards:
    """Missing protected paths, guarded so that the command cannot create them: an
    empty read-only directory or file appears in their place during the run."""

    dirs: list[str]
    files: list[str]
    parents: list[str]  # missing parents of guarded home entries: made before the run
    watch_agents: tuple[str, ...]  # agents' settings files: watched instead


def _guards(policy: Policy, roots: tuple[str, ...], git: gitfiles.GitPaths,
            launchers: list[str]) -> _Guards:
    project = str(policy.project)
    guard: list[str] = []
    guard_files: list[str] = []
    missing = [(p.literal, guarded_as_dir(p.text)) for p in policy.protected
               if p.literal is not None and p.text not in AGENT_SETTINGS
               and p.text not in UNGUARDED]
    watch_agents = tuple(p.literal for p in policy.protected if p.literal is not None
                         and ((p.text in AGENT_SETTINGS and project in roots)
                              or (p.text in UNGUARDED and _inside_any(p.literal, roots)))
                         and not os.path.lexists(p.literal))
    # A protected home entry whose parent is missing too (`~/.config/git/config` with
    # no `~/.config`): the parents are made before the run (`guard_parents`), so that
    # the guard can be mounted and its ancestors pinned, rather than left creatable.
    in_home = {p.literal for p in policy.protected
               if p.literal is not None and p.text in HOME_PROTECTED}
    guard_parents: list[str] = []
    for path, is_dir in (*missing, *((g, True) for g in git.guard),
                         *((g, False) for g in (*git.guard_files, *launchers))):
        if not _inside_any(path, roots) or os.path.lexists(path):
            continue
        parents = _missing_parents(path, roots)
        if (parents and path not in in_home) or (
                not parents and not os.path.isdir(os.path.dirname(path))):
            continue
        link = first_link(path, roots)
        if link is not None:
            raise SetupError(t("setup.symlink", path=path, link=link))
        guard_parents += parents
        (guard if is_dir else guard_files).append(path)
    return _Guards(guard, guard_files, guard_parents, watch_agents)


def _unreadable(policy: Policy, hidden: tuple[str, ...], roots: tuple[str, ...],
                temp_dir: str | None, caches: list[str]) -> tuple[list[str], list[str]]:
    """3. Unreadable (directories, files): the profile's and settings' denyRead, and
    ReadFile deny rules; swifty's own `caches`. A symlink is hidden where it leads; so
    is each link inside a hidden directory. Nothing inside a hidden directory
    (`_outermost`)."""
    unreadable_dirs: list[str] = []
    unreadable_files: list[str] = []
    for path in _with_link_targets(_not_allowed(policy, hidden)):
        real = _real(path)
        try:
            info = os.stat(real)
        except OSError as e:
            # Missing, or behind a folder the command cannot search nor make searchable
            # (`reach`): nothing to hide. Any other error (a path longer than PATH_MAX,
            # which a command still reads by a relative one) would leave it unhidden.
            if e.errno in MISSING or (e.errno in DENIED and (
                    not _inside_any(real, roots) or behind_out_of_reach(real))):
                continue
            raise SetupError(t("setup.hidden_unchecked", path=real,
                               error=e.strerror)) from e
        if info.st_uid != os.getuid() and not os.access(real, os.R_OK):
            continue  # not ours and not readable (/etc/shadow as a user): a mount saved
        if stat.S_ISDIR(info.st_mode):
            unreadable_dirs.append(real)
        else:
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                # Another name of the same file would still be readable.
                raise SetupError(t("setup.hard_links", path=real, count=info.st_nlink))
            unreadable_files.append(real)
    if temp_dir is not None and os.path.isdir(os.path.dirname(temp_dir)):
        unreadable_dirs.append(os.path.dirname(temp_dir))  # other projects' temp files
    return _outermost([*unreadable_dirs, *caches], unreadable_files)


def _outermost(dirs: list[str], files: list[str]) -> tuple[list[str], list[str]]:
    """The hidden directories and files less those inside a hidden directory, which
    hides them already: a mount there would need a mount point made in the empty,
    read-only stand-in (bwrap: "Can't mkdir …: Read-only file system", every run
    refused), as `ReadFile(~/.ssh/keys)` beside the profile's `~/.ssh` asked."""
    kept: list[str] = []
    for path in sorted(dict.fromkeys(dirs), key=lambda p: p.count("/")):
        if not any(is_within(path, outer) for outer in kept):
            kept.append(path)
    order = {path: i for i, path in enumerate(dirs)}
    return (sorted(kept, key=order.__getitem__),
            [f for f in files if not any(is_within(f, outer) for outer in kept)])


def _pins(paths: Iterable[str], roots: tuple[str, ...]) -> dict[str, None]:
    """Every ancestor of `paths` inside a writable root: bound onto itself, it cannot be
    renamed (EBUSY). A link among them fails closed."""
    pinned = dict.fromkeys(a for p in paths for a in _ancestors_below(p, roots))
    for path in pinned:
        link = first_link(path, roots)
        if link is not None:
            raise SetupError(t("setup.symlink", path=path, link=link))
    return pinned


def _read_roots(policy: Policy, roots: tuple[str, ...]) -> tuple[str, ...] | None:
    """What a profile that limits reads leaves readable (None: everything)."""
    if policy.profile.read_roots is None:
        return None
    # Not resolved: `/lib64 -> usr/lib64` must stay at /lib64, where the dynamic
    # linker is looked for; bwrap binds the target there.
    listed = (expand_home(r, policy.home) for r in policy.profile.read_roots)
    return tuple(dict.fromkeys(
        r for r in (*listed, str(policy.project), *roots) if os.path.exists(r)))


def _watched(project: str, roots: tuple[str, ...], r: _ReadOnly, g: _Guards
             ) -> tuple[str, ...]:
    """Missing files git, the hooks or an agent would trust, checked after the run. A
    project that is not a repository may become one (`git init`), but not one that
    runs code: a new `.git` is checked after the command (`gitfiles.untrusted`)."""
    dot_git = os.path.join(project, ".git")
    watch_repo = (dot_git,) if project in roots and not os.path.lexists(dot_git) else ()
    return tuple(dict.fromkeys((*r.git.watch, *watch_repo, *g.watch_agents,
                                *(p for p in r.launchers if not os.path.lexists(p)),
                                *r.agent_missing)))


def _gitfile_trees(project: str, read_only: list[str]) -> list[str]:
    out = []
    for path in read_only:
        tree = os.path.dirname(path)
        if path.endswith("/.git") and tree != project and os.path.isfile(path) and \
                not os.path.islink(path):
            with contextlib.suppress(OSError):
                if any(name != ".git" for name in os.listdir(tree)):
                    out.append(tree)
    return out


def _worktree_locks(project: str, roots: tuple[str, ...]) -> tuple[str, ...]:
    """The missing `locked` files of the project's linked worktrees, in a root."""
    directory = gitfiles.gitdir_of(os.path.join(project, ".git"))
    if directory is None:
        return ()
    worktrees = os.path.join(directory, "worktrees")
    try:
        names = sorted(os.listdir(worktrees))
    except OSError:
        return ()
    out = []
    for name in names:
        admin = os.path.join(worktrees, name)
        lock = os.path.join(admin, "locked")
        if os.path.isdir(admin) and not os.path.islink(admin) and \
                not os.path.lexists(lock) and _inside_any(lock, roots):
            link = first_link(lock, roots)
            if link is not None:
                raise SetupError(t("setup.symlink", path=lock, link=link))
            out.append(lock)
    return tuple(out)


def _linked_programs(paths: list[str], roots: tuple[str, ...]
                     ) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    """What runs by name outside that exists in a writable root (`pathguard`): kept
    read-only where it lies; through a link (`node_modules/.bin/rg ->
    ../@vscode/ripgrep/bin/rg`) the file it leads to, where that lies in a root, and the
    links on the way checked after the run, as the agents' programs' are."""
    existing: list[str] = []
    links: list[tuple[str, str]] = []
    for path in paths:
        on_the_way = links_on_the_way(path, roots)
        if not on_the_way:
            existing.append(path)
            continue
        links += on_the_way
        real = _real(path)
        if _inside_any(real, roots) and real not in roots and os.path.exists(real):
            existing.append(real)
    return existing, tuple(links)


def _agent_programs(project: str, home: str, roots: tuple[str, ...]) -> tuple[
        list[str], list[str], tuple[tuple[str, str], ...]]:
    """What the agents' settings run that lies in a writable root (`agentexec`): the
    existing files (read-only), the missing ones (watched), and the links on the way
    (checked after the run; the file they lead to is read-only)."""
    from .agentexec import marketplaces, programs  # load only when a sandbox is built

    existing: list[str] = []
    missing: list[str] = []
    links: list[tuple[str, str]] = []
    # Folders kept whole: Claude Code's local plugin marketplaces, and the agents'
    # folders in the project that are theirs whole (`.codex/`, `.gemini/`).
    folders = {*marketplaces(project, home),
               *(os.path.join(project, name) for name in whole_folders())}
    for path in (*programs(project, home, os.environ.get("PATH"), roots), *folders):
        if not _inside_any(path, roots) or path in roots:
            continue
        on_the_way = links_on_the_way(path, roots)
        if on_the_way:
            links += on_the_way
            real = _real(path)
            if _inside_any(real, roots) and real not in roots and os.path.exists(real):
                existing.append(real)
        elif os.path.isfile(path) or os.path.isdir(path):  # a script, a script's folder
            existing.append(path)
        elif not os.path.lexists(path):
            missing.append(path)
    return existing, missing, tuple(dict.fromkeys(links))


def _not_allowed(policy: Policy, paths: tuple[str, ...]) -> tuple[str, ...]:
    """The hidden paths, less those a `ReadFile` request would be allowed: an exception
    written below a deny in the same file (`ReadFile(.env.example)` allow after
    `ReadFile(*.env*)` deny) holds inside the sandbox as it does for the file tools."""
    if not any(r.effect is Effect.ALLOW and r.applies_to(Tool.READ_FILE)
               for layer in policy.layers for r in layer.rules):
        return paths  # no exception anywhere: every hidden path stays (the usual case)
    return tuple(p for p in paths
                 if decide(policy, Request.file(Tool.READ_FILE, p)).effect is not Effect.ALLOW)


class Held:
    """A descriptor (`O_PATH`) on a protected file for as long as the spec lives:
    while it is open the file's inode cannot be freed and its number given to a new
    file, so the same inode after the command means the same file (written in place,
    which only a process outside the sandbox can do), never a replacement."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def __copy__(self) -> Held:  # one owner of the descriptor: a copy would close it twice
        return self

    def __deepcopy__(self, memo: object) -> Held:
        return self


def _snapshot(protected: list[str], missing: list[str]) -> tuple[dict[str, tuple[
        Identity | None, bytes | None]], tuple[Held, ...]]:
    """What git or swifty-sandbox trusts, as it is now: each file (and the files of each
    directory, one level: hooks) by identity, small files with their content; and a
    descriptor held on each (`Held`)."""
    out: dict[str, tuple[Identity | None, bytes | None]] = {p: (None, None) for p in missing}
    held: list[Held] = []
    todo = list(protected)
    for path in protected:
        if os.path.isdir(path) and not os.path.islink(path):
            with contextlib.suppress(OSError):
                todo += [os.path.join(path, n) for n in os.listdir(path)]
    for path in todo:
        try:
            pin = Held(os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC))
            info = os.fstat(pin.fd)
        except OSError:
            continue
        held.append(pin)
        content = None
        if stat.S_ISREG(info.st_mode) and info.st_size <= _SNAPSHOT_CONTENT:
            with contextlib.suppress(OSError), open(f"/proc/self/fd/{pin.fd}", "rb") as f:
                content = f.read(_SNAPSHOT_CONTENT + 1)
        out[path] = ((info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode,
                      info.st_uid, info.st_gid), content)
    return out, tuple(held)


def _may_exist(path: str) -> bool:
    """`lexists`, except that "cannot tell" (a path past PATH_MAX, which a command still
    reaches by a relative one; an I/O error) is yes."""
    try:
        os.lstat(path)
    except OSError as e:
        return e.errno not in MISSING
    return True


def _refuse_unresolved(policy: Policy, dot_gits: list[str]) -> None:
    """Refuse while something an earlier command left, and that could not be moved
    aside, is still there (`aftercare`); and for a `commondir` inside a `.git`
    directory, which only a command could have put there (git writes one only in
    `.git/worktrees/<name>/`): it would make git read another directory's config."""
    import json

    state = project_state_dir(policy.project, policy.home) / "unresolved"
    try:
        lines = state.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except OSError:
        lines = []
    for line in lines:
        with contextlib.suppress(ValueError):
            path = json.loads(line)
            if isinstance(path, str) and _may_exist(path):
                raise SetupError(t("setup.unresolved", path=path))
    for dot_git in (os.path.join(str(policy.project), ".git"), *dot_gits):
        common = os.path.join(dot_git, "commondir")
        if os.path.isdir(dot_git) and not os.path.islink(dot_git) and \
                os.path.lexists(common):
            raise SetupError(t("setup.unresolved", path=common))


def _below(tops: Iterable[str], skip: str | None = None) -> Iterator[os.DirEntry[str]]:
    """Every entry below the directories `tops` (links not followed, directories named
    `skip` not entered), `_HIDDEN_SCAN_LIMIT` entries in all: beyond it the run refuses
    rather than check half."""
    budget = _HIDDEN_SCAN_LIMIT
    for top in tops:
        stack = [top]
        while stack:
            try:
                entries = list(os.scandir(stack.pop()))
            except OSError:
                continue
            budget -= len(entries)
            if budget < 0:
                raise SetupError(t("setup.too_large", path=top, limit=_HIDDEN_SCAN_LIMIT))
            for entry in entries:
                yield entry
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False) and entry.name != skip:
                        stack.append(entry.path)


def _real_dirs(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if not os.path.islink(p) and os.path.isdir(p)]


def _refuse_hard_links(files: list[str], trees: list[str]) -> None:
    """A read-only file with other hard links could be changed under another name,
    made before it was protected (`git init && ln .git/config notes.txt`): refuse.
    `files` are checked themselves, `trees` (what git or swifty reads) all through."""
    def check(path: str, info: os.stat_result) -> None:
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise SetupError(t("setup.hard_links_protected", path=path,
                               count=info.st_nlink))

    for path in (*files, *trees):
        with contextlib.suppress(OSError):
            check(path, os.lstat(path))
    for entry in _below(_real_dirs(trees)):
        with contextlib.suppress(OSError):
            check(entry.path, entry.stat(follow_symlinks=False))


def _with_link_targets(paths: tuple[str, ...]) -> list[str]:
    """The hidden paths, plus every symlink found inside the hidden directories: the
    link's target must be hidden too, or `cat ~/.ssh/key` is denied while the file the
    link names stays readable under its own name. A file in there with other hard
    links refuses the run for the same reason (git's object stores excepted: `git
    clone --local` links objects between clones, and both copies are the user's)."""
    out = list(paths)
    for entry in _below(_real_dirs(paths), skip=".git"):
        with contextlib.suppress(OSError):
            if entry.is_symlink():
                out.append(entry.path)
            elif not entry.is_dir(follow_symlinks=False) and \
                    entry.stat(follow_symlinks=False).st_nlink > 1:
                raise SetupError(t("setup.hard_links", path=entry.path,
                                   count=entry.stat().st_nlink))
    return out


def ensure_temp_dir(path: str) -> None:
    """Create a project's temp directory (mode 0700) and check that it is a real
    directory of ours, not a link: it lives in the user's cache, which no command can
    write, but the check costs one lstat and keeps "no mount through a symlink".
    Raises OSError when it cannot be made (a read-only home)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise SetupError(t("setup.symlink", path=path, link=path))


# A URL with a password in it, `scheme://user:pass@host` (DATABASE_URL, a proxy, a
# remote with a token): its userinfo holds no `/`, so `http://h:80/a@b` is no match.
_URL_WITH_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]*@")


_GIT_CONFIG_PAIR = re.compile(r"GIT_CONFIG_(KEY|VALUE)_[0-9]+\Z")


@functools.lru_cache(maxsize=16)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Shell globs of variable names (any case) as one regex, compiled once."""
    from fnmatch import translate

    return re.compile("|".join(translate(p.upper()) for p in patterns) or r"(?!)")


def prepare_env_globs(profile: Profile) -> None:
    """Compile ahead the variable globs of a profile used as it is (the warm server's
    workers then find them compiled)."""
    _globs(profile.env_drop)
    _globs(profile.env_keep)


class SecretRule:
    """The one rule of what is a secret in a variable: a name matching a drop glob (any
    case), or a value holding a URL with a password, unless a keep glob names it. The
    environment is scrubbed by it (`scrub_env`), and so is the session log's text
    (`sandbox/agents/sessionlog.py`: `NAME=value` words, URLs)."""

    def __init__(self, drop: tuple[str, ...], keep: tuple[str, ...]) -> None:
        self._drop, self._keep = _globs(drop), _globs(keep)

    def secret(self, name: str, value: str) -> bool:
        upper = name.upper()
        return bool(self._drop.match(upper) or self.url_password(value)) \
            and not self._keep.match(upper)

    @staticmethod
    def url_password(value: str) -> bool:
        return "://" in value and _URL_WITH_PASSWORD.search(value) is not None

    @staticmethod
    def without_url_passwords(text: str, mask: str) -> str:
        """`scheme://user:pass@` → `scheme://user:MASK@` everywhere in `text`."""
        def masked(match: re.Match[str]) -> str:
            scheme, _, userinfo = match.group(0).partition("://")
            return f"{scheme}://{userinfo.partition(':')[0]}:{mask}@"
        return _URL_WITH_PASSWORD.sub(masked, text) if "://" in text else text


def scrub_env(environ: dict[str, str], spec: SandboxSpec) -> dict[str, str]:
    """The environment without secrets (`SecretRule`). Unless /tmp is the host's,
    TMPDIR is /tmp."""
    rule = SecretRule(spec.env_drop, spec.env_keep)
    out = {name: value for name, value in environ.items() if not rule.secret(name, value)}
    if any(_GIT_CONFIG_PAIR.match(name) for name in environ.keys() - out.keys()):
        # git's environment config is numbered pairs under GIT_CONFIG_COUNT: with a
        # `*_KEY*` name dropped, git refuses every command ("missing config key
        # GIT_CONFIG_KEY_0", as under Gemini CLI, which sets one). All of it goes.
        out = {n: v for n, v in out.items()
               if n != "GIT_CONFIG_COUNT" and not _GIT_CONFIG_PAIR.match(n)}
    if "TMPDIR" in out and "/tmp" in (*spec.temp_mounts, *spec.private_dirs):
        out["TMPDIR"] = "/tmp"  # the host's $TMPDIR is not there inside
    return out


def hidden_links(policy: Policy) -> frozenset[tuple[int, int]] | None:
    """(device, inode) of each hidden file that has other hard links: the files whose
    other names `compile_spec` refuses to run beside (`setup.hard_links`), for the file
    tools, which run outside the sandbox and would read such a file under a visible
    name. Found as `compile_spec` finds hidden paths (the same patterns, expansion and
    walk below hidden directories); None when they cannot all be found."""
    read_patterns, _ = _rule_patterns(policy, (Tool.READ_FILE,))
    roots = tuple(dict.fromkeys((str(policy.project), *(
        str(p) for p in policy.settings.writable if os.path.isdir(p)))))
    try:
        expanded = expand({"hidden": [*policy.deny_read, *read_patterns]}, roots,
                          follow=("hidden",))
        paths = _not_allowed(policy, expanded["hidden"].paths)
        out: set[tuple[int, int]] = set()
        for path in paths:
            with contextlib.suppress(OSError):
                info = os.stat(path)
                if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                    out.add((info.st_dev, info.st_ino))
        for entry in _below(_real_dirs(paths), skip=".git"):
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                    out.add((info.st_dev, info.st_ino))
    except (ExpansionTooLarge, Unsearchable, Unenforceable, SetupError):
        return None
    return frozenset(out)
