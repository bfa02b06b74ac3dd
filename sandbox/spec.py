"""The policy compiler: `Policy + mode → SandboxSpec`, platform neutral.

The spec lists concrete, existing paths (globs are expanded here, once), so each backend
(bwrap argv, SBPL, OCI) is a pure translation of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from swifty_sandbox.policy import Effect, Mode, Policy, Tool
from swifty_sandbox.policy.engine import temp_dirs
from swifty_sandbox.policy.loader import SeccompProfile, expand_home, is_within
from swifty_sandbox.policy.rules import PathPattern

from .expand import expand

# Protected directories that are mounted read-only even when missing, so that the
# command cannot create them: an empty read-only directory appears in their place.
_GUARD_WHEN_MISSING = (".swifty", ".git/hooks")


@dataclass(frozen=True, slots=True)
class Limits:
    timeout: float | None = None  # seconds of wall-clock time; exit 124 when exceeded
    output_bytes: int = 1 << 20  # per stream; head and tail are kept beyond this
    memory_bytes: int | None = None  # RLIMIT_AS of the command
    processes: int | None = None  # RLIMIT_NPROC of the command


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """What the command may touch. Every path is absolute and resolved."""

    project: str
    cwd: str
    read_roots: tuple[str, ...] | None  # None: the whole file system is readable
    writable: tuple[str, ...]  # existing directories, bound read-write
    private_dirs: tuple[str, ...]  # replaced by an empty private tmpfs (strict's /tmp)
    pinned: tuple[str, ...]  # ancestors of read-only paths: bound onto themselves so
    #                          they cannot be renamed or removed (mount points are busy)
    read_only: tuple[str, ...]  # existing paths inside writable roots kept read-only
    guard_dirs: tuple[str, ...]  # missing protected directories: empty and read-only
    unreadable_dirs: tuple[str, ...]  # hidden behind an empty read-only tmpfs
    unreadable_files: tuple[str, ...]  # hidden behind /dev/null
    env_drop: tuple[str, ...]  # case-insensitive shell globs of variable names
    env_keep: tuple[str, ...]
    seccomp: SeccompProfile
    nested_namespaces: bool
    limits: Limits = field(default_factory=Limits)


def _inside_any(path: str, roots: tuple[str, ...]) -> bool:
    return any(is_within(path, root) for root in roots)


def _real(path: str) -> str:
    return os.path.realpath(path)


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


def compile_spec(policy: Policy, mode: Mode, cwd: str | None = None,
                 limits: Limits | None = None) -> SandboxSpec:
    """Compile the policy for one command. Reads the file system only to expand globs
    and to skip paths that do not exist (bwrap cannot mount those)."""
    profile, settings = policy.profile, policy.settings
    project = str(policy.project)
    write_patterns, all_writes_denied = _rule_patterns(policy, (Tool.WRITE_FILE,
                                                                Tool.EDIT_FILE))
    # 1. Writable roots: the project (not in plan mode, nor when every write is
    #    denied), the temp dirs (unless private) and the configured roots that exist.
    writable: list[str] = []
    if mode is not Mode.PLAN and not all_writes_denied:
        writable.append(project)
    private: list[str] = []
    temps = [str(tmp) for tmp in temp_dirs()]
    for tmp in temps:
        (private if profile.private_tmp else writable).append(tmp)
    writable += [str(p) for p in settings.writable if p.is_dir()]
    # Outer roots first: a later bind of `/tmp` would cover a project bound at `/tmp/x`.
    roots = tuple(sorted(dict.fromkeys(w for w in writable if os.path.isdir(w)),
                         key=lambda w: w.count("/")))

    # 2. Read-only inside writable roots: protected paths and write-deny rules.
    # Basename globs are looked for in the project and configured roots, not in the
    # shared temp dirs (other programs' files; a walk there would be slow and moot).
    searched = tuple(r for r in roots if r not in temps) or (project,)
    read_patterns, _ = _rule_patterns(policy, (Tool.READ_FILE,))
    secrets = [*policy.deny_read, *read_patterns]  # the profile's and settings' denyRead
    expanded = expand({"read-only": [*policy.protected, *write_patterns], "hidden": secrets},
                      tuple(dict.fromkeys((project, *searched))))
    read_only = [p for p in expanded["read-only"].paths if _inside_any(p, roots)]
    if project not in roots and _inside_any(project, (*roots, *private)):
        # Plan mode on a project that lives in /tmp: read-only, and visible through a
        # private /tmp too.
        read_only.insert(0, project)
    guard = []
    for relative in _GUARD_WHEN_MISSING:
        path = os.path.join(project, relative)
        if (project in roots and not os.path.lexists(path)
                and os.path.isdir(os.path.dirname(path))):
            guard.append(path)
    pinned = dict.fromkeys(a for p in (*read_only, *guard) for a in _ancestors_below(p, roots))

    # 3. Unreadable: the profile's and settings' denyRead, and ReadFile deny rules.
    unreadable_dirs, unreadable_files = [], []
    for path in expanded["hidden"].paths:
        real = _real(path)  # a symlink is hidden where it leads
        if os.path.isdir(real):
            unreadable_dirs.append(real)
        elif os.path.exists(real):
            unreadable_files.append(real)

    read_roots = None
    if profile.read_roots is not None:
        # Not resolved: `/lib64 -> usr/lib64` must stay at /lib64, where the dynamic
        # linker is looked for; bwrap binds the target there.
        listed = (expand_home(r, policy.home) for r in profile.read_roots)
        read_roots = tuple(dict.fromkeys(
            r for r in (*listed, project, *roots) if os.path.exists(r)))

    return SandboxSpec(
        project=project,
        cwd=_real(cwd) if cwd else project,
        read_roots=read_roots,
        writable=roots,
        private_dirs=tuple(p for p in private if os.path.isdir(p)),
        pinned=tuple(p for p in pinned if p not in read_only),
        read_only=tuple(dict.fromkeys(read_only)),
        guard_dirs=tuple(guard),
        unreadable_dirs=tuple(dict.fromkeys(unreadable_dirs)),
        unreadable_files=tuple(dict.fromkeys(unreadable_files)),
        env_drop=(*profile.env_drop, *settings.env_drop),
        env_keep=(*profile.env_keep, *settings.env_keep),
        seccomp=profile.seccomp,
        nested_namespaces=profile.nested_namespaces,
        limits=limits or Limits(),
    )


def scrub_env(environ: dict[str, str], spec: SandboxSpec) -> dict[str, str]:
    """The environment without secrets: names matching a drop glob (any case) are
    removed unless a keep glob names them."""
    from fnmatch import fnmatchcase

    drop = [p.upper() for p in spec.env_drop]
    keep = [p.upper() for p in spec.env_keep]
    out = {}
    for name, value in environ.items():
        upper = name.upper()
        if any(fnmatchcase(upper, p) for p in drop) and not any(
                fnmatchcase(upper, p) for p in keep):
            continue
        out[name] = value
    return out

