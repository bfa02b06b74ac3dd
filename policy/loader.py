"""Loading the three rule layers, the settings and the sandbox profile.

Fail closed (SPEC §2): a missing file is empty; an unreadable or invalid one raises
`PolicyFileError` with file:line:col — never ignored, never read as "allow".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import PolicyFileError
from .limits import default_max_memory, default_max_processes, parse_memory, parse_processes
from .messages import t
from .rules import (
    PathPattern,
    Rule,
    RuleSyntaxError,
    anchor_path_pattern,
    fixed_prefix,
    parse_rule,
)
from .types import Effect, Mode, SandboxMode, Scope, Settings, Tool
from .yamlnodes import (
    Source,
    choice,
    compose,
    describe,
    fail,
    is_null,
    mapping,
    read_source,
    shown,
    string,
    string_list,
)

if TYPE_CHECKING:
    import yaml

SWIFTY_DIR = ".swifty"
RULE_FILES: dict[Scope, str] = {
    Scope.LOCAL: "permissions.local.yaml",
    Scope.PROJECT: "permissions.yaml",
    Scope.USER: "permissions.yaml",
}
CONFIG_FILE = "config.yaml"
_EFFECTS = tuple(e.value for e in Effect)


@dataclass(frozen=True, slots=True)
class RuleFile:
    """One layer's rules, plus per-tool views in reverse order (last match first)."""

    scope: Scope
    path: Path
    rules: tuple[Rule, ...]
    reversed_by_tool: Mapping[Tool, tuple[Rule, ...]] = field(repr=False, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, scope: Scope, path: Path, rules: tuple[Rule, ...],
           warnings: tuple[str, ...] = ()) -> RuleFile:
        by_tool = {tool: tuple(r for r in reversed(rules) if r.applies_to(tool)) for tool in Tool}
        return cls(scope, path, rules, by_tool, warnings)


def project_state_dir(project: Path, home: Path) -> Path:
    """The user's own directory for one project (`~/.swifty/projects/<name>-<hash>`):
    outside the repository, so nothing in it can come from a clone or a commit."""
    return home / SWIFTY_DIR / "projects" / f"{project.name[:32]}-{project_digest(project)}"


def project_digest(project: Path | str) -> str:
    """16 hex digits naming a project's own state (local rules, temp dir): BLAKE2b, a
    cryptographic hash, so no crafted path can share another project's state. From
    CPython's built-in `_blake2` where present: `hashlib` loads OpenSSL (~4 ms)."""
    data = str(project).encode(errors="surrogateescape")
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - every CPython build has it
        from hashlib import blake2b
    return blake2b(data, digest_size=8).hexdigest()


def rule_file_path(scope: Scope, project: Path, home: Path) -> Path:
    """Where each layer's file is. The local layer lives in the user's home, not in
    the project: a repository can commit anything under `.swifty/`, and a local file
    there would outrank the user's own rules."""
    if scope is Scope.LOCAL:
        return project_state_dir(project, home) / RULE_FILES[scope]
    base = home if scope is Scope.USER else project
    return base / SWIFTY_DIR / RULE_FILES[scope]


def in_project_local_file(project: Path) -> Path:
    """Where the local file used to be: never read now (a repository could ship it)."""
    return project / SWIFTY_DIR / RULE_FILES[Scope.LOCAL]


def parse_rules(source: Source, project: Path, home: Path,
                on_error: Callable[[PolicyFileError], None] | None = None) -> tuple[Rule, ...]:
    """The rules of one file's text. Raises `PolicyFileError` on the first problem, or,
    given `on_error`, reports each bad item to it and goes on (the audit's way)."""
    import yaml

    def report(error: PolicyFileError) -> None:
        if on_error is None:
            raise error
        on_error(error)

    root = compose(source)
    if root is None or is_null(root):
        return ()
    if not isinstance(root, yaml.SequenceNode):
        raise fail(source, root, t("file.not_list", found=describe(root)))
    rules: list[Rule] = []
    for item in root.value:
        try:
            rules.append(_parse_item(source, item, project, home))
        except PolicyFileError as e:
            report(e)
    return tuple(rules)


def _parse_item(source: Source, item: yaml.Node, project: Path, home: Path) -> Rule:
    fields = mapping(source, item, ("rule", "effect"))
    for key in ("rule", "effect"):
        if key not in fields:
            raise fail(source, item, t("file.missing_key", key=key))
    effect = Effect(choice(source, "effect", fields["effect"][1], _EFFECTS))
    rule_node = fields["rule"][1]
    text = string(source, "rule", rule_node)
    mark = rule_node.start_mark
    try:
        return parse_rule(text, effect, file=source.name, line=mark.line + 1,
                          column=mark.column + 1, project=project, home=home)
    except RuleSyntaxError as e:
        raise fail(source, rule_node, str(e), e.kind) from e


def names_outside(rule: Rule, project: Path) -> bool:
    """Whether a path rule can name anything outside the project, after resolving the
    symlinks on its fixed leading directories (`..` counts as outside)."""
    return rule.path is not None and anchored_outside(rule.path.anchored, project)


def anchored_outside(anchored: str, project: Path) -> bool:
    """Whether an anchored path pattern can name anything outside the project."""
    if "/" not in anchored.rstrip("/"):
        return False  # a basename at any depth of the project
    if ".." in anchored.split("/"):
        return True
    prefix, _ = fixed_prefix(anchored)
    return not is_within(os.path.realpath(prefix), str(project))


def load_rule_file(scope: Scope, path: Path, project: Path, home: Path) -> RuleFile:
    source = read_source(path)
    rules = parse_rules(source, project, home) if source else ()
    warnings: list[str] = []
    if scope is Scope.PROJECT and project != home:
        # The committed file comes from whoever wrote the repository: its rules speak
        # only of the project. A path outside it (`~/.local/bin/*`, or a link in the repo
        # that leads to home) is ignored, allow and deny alike — a deny there would make
        # the sandbox mount, and so touch, paths the author chose outside the project.
        kept = []
        for rule in rules:
            if names_outside(rule, project):
                warnings.append(t("rules.project_outside", file=rule.file, line=rule.line,
                                  rule=rule.text))
            else:
                kept.append(rule)
        rules = tuple(kept)
    return RuleFile.of(scope, path, rules, tuple(warnings))


def load_rule_layers(project: Path, home: Path) -> tuple[RuleFile, ...]:
    """The three layers, highest priority first: local, project, user."""
    layers = [load_rule_file(scope, rule_file_path(scope, project, home), project, home)
              for scope in (Scope.LOCAL, Scope.PROJECT, Scope.USER)]
    stray = in_project_local_file(project)
    if project != home and os.path.lexists(stray):
        local = layers[0]
        layers[0] = RuleFile.of(local.scope, local.path, local.rules, (
            *local.warnings, t("rules.local_in_project", file=stray,
                               path=rule_file_path(Scope.LOCAL, project, home))))
    return tuple(layers)


# -- settings --------------------------------------------------------------------------

_SAFE_PROJECT_PROFILES = ("default", "strict")


def config_layer(source: Source, project: Path, home: Path, *, committed: bool
                  ) -> tuple[dict[str, Any], list[str]]:
    """One config file's settings as `Settings` field values, and the warnings.

    A committed project file comes from whoever wrote the repository, so it may only
    tighten: it cannot choose bypassPermissions, turn the sandbox off, pick a profile
    other than default/strict, keep secret variables, or open writable roots outside
    the project. Those values are ignored with a warning, never applied.
    """
    root = compose(source)
    values: dict[str, Any] = {}
    warnings: list[str] = []
    if root is None or is_null(root):
        return values, warnings

    def refuse(key: str, value: object) -> None:
        warnings.append(t("config.project_loosens", file=source.name, key=key, value=value))

    top = mapping(source, root, ("permissions", "sandbox"), what="file.config_not_mapping")
    if "permissions" in top:
        perms = mapping(source, top["permissions"][1], ("defaultMode",))
        if "defaultMode" in perms:
            mode = Mode(choice(source, "defaultMode", perms["defaultMode"][1],
                               tuple(m.value for m in Mode)))
            if committed and mode is Mode.BYPASS:
                refuse("permissions.defaultMode", mode.value)
            else:
                values["default_mode"] = mode
    if "sandbox" in top:
        box = mapping(source, top["sandbox"][1],
                      ("mode", "profile", "writable", "denyRead", "env", "bwrap",
                       "limits"))
        if "mode" in box:
            sandbox_mode = SandboxMode(choice(source, "sandbox.mode", box["mode"][1],
                                              tuple(m.value for m in SandboxMode)))
            if committed and sandbox_mode is SandboxMode.OFF:
                refuse("sandbox.mode", sandbox_mode.value)
            else:
                values["sandbox_mode"] = sandbox_mode
        if "profile" in box:
            profile = string(source, "sandbox.profile", box["profile"][1])
            if committed and profile not in _SAFE_PROJECT_PROFILES:
                refuse("sandbox.profile", profile)
            else:
                values["profile"] = profile
        if "writable" in box:
            roots: list[Path] = []
            for entry in string_list(source, "sandbox.writable", box["writable"][1]):
                root_path = expand_path(entry, base=project, home=home)
                if committed and not is_within(str(root_path), str(project)):
                    refuse("sandbox.writable", entry)
                else:
                    roots.append(root_path)
            values["writable"] = tuple(roots)
        if "bwrap" in box:
            node = box["bwrap"][1]
            chosen = expand_home(string(source, "sandbox.bwrap", node), home)
            if not chosen.startswith("/"):
                raise fail(source, node, t("config.bwrap_absolute", value=chosen))
            if committed:
                refuse("sandbox.bwrap", chosen)  # the repository must not pick the sandbox
            else:
                values["bwrap"] = chosen
        if "denyRead" in box:
            node = box["denyRead"][1]
            entries = string_list(source, "sandbox.denyRead", node)
            for item, entry in zip(node.value if entries else [], entries, strict=True):
                try:  # an invalid glob is an error at its own line, not at match time
                    PathPattern(entry, anchor_path_pattern(entry, project, home))
                except RuleSyntaxError as e:
                    raise fail(source, item, str(e), e.kind) from e
            # A committed file may hide paths outside the project too: that only
            # tightens (at worst a repository makes its own runs fail, which it can
            # anyway with a `Bash` deny rule).
            values["deny_read"] = tuple(entries)
        if "env" in box:
            env = mapping(source, box["env"][1], ("keep", "drop"))
            if "keep" in env:
                keep = tuple(string_list(source, "sandbox.env.keep", env["keep"][1]))
                if committed and keep:
                    refuse("sandbox.env.keep", list(keep))
                else:
                    values["env_keep"] = keep
            if "drop" in env:
                values["env_drop"] = tuple(
                    string_list(source, "sandbox.env.drop", env["drop"][1]))
        if "limits" in box:
            caps = mapping(source, box["limits"][1], ("processes", "memory"))
            for key, field_name, parse, default in (
                    ("processes", "max_processes", parse_processes, default_max_processes),
                    ("memory", "max_memory", parse_memory, default_max_memory)):
                if key not in caps:
                    continue
                node = caps[key][1]
                if not isinstance(node.value, str):
                    raise fail(source, node, t("file.bad_choice", key=f"sandbox.limits.{key}",
                                               value=describe(node), expected="a scalar"))
                try:
                    value = parse(node.value)
                except ValueError as e:
                    raise fail(source, node, str(e)) from e
                if committed and (value == 0 or value > default()):
                    refuse(f"sandbox.limits.{key}", node.value)  # only lower than default
                else:
                    values[field_name] = value
    return values, warnings


def load_settings(project: Path, home: Path) -> Settings:
    """User config, then the project's on top (additive for the deny lists)."""
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    for path, committed in ((home / SWIFTY_DIR / CONFIG_FILE, False),
                            (project / SWIFTY_DIR / CONFIG_FILE, True)):
        if committed and path.parent.parent == home:
            committed = False  # the project is the home directory: it is the user's file
        source = read_source(path)
        if source is None:
            continue
        values, layer_warnings = config_layer(source, project, home, committed=committed)
        warnings.extend(layer_warnings)
        for key in ("deny_read", "env_drop"):  # lists that only tighten add up
            if key in values and key in merged:
                values[key] = (*merged[key], *values[key])
        if committed:
            for key in [k for k in values if _looser(k, values[k], merged)]:
                warnings.append(t("config.project_loosens", file=source.name, key=_KEYS[key],
                                  value=str(values.pop(key))))
        for key in ("max_processes", "max_memory"):  # the project's can only lower
            if committed and key in values and merged.get(key):
                values[key] = min(values[key], merged[key])
        merged.update(values)
    return Settings(**merged, warnings=tuple(warnings))


# Strictest first. A committed file may choose a value only as strict as the user's own
# (or, when the user set none, the default's): `plan` in ~/.swifty stays `plan`.
_MODE_ORDER = (Mode.PLAN, Mode.DEFAULT, Mode.ACCEPT_EDITS, Mode.BYPASS)
_SANDBOX_ORDER = (SandboxMode.MANUAL, SandboxMode.AUTO, SandboxMode.OFF)
_KEYS = {"default_mode": "permissions.defaultMode", "sandbox_mode": "sandbox.mode",
         "profile": "sandbox.profile"}


def _looser(key: str, value: Any, user: dict[str, Any]) -> bool:
    """Whether a committed setting would loosen the user's (or the default)."""
    if key == "default_mode":
        return _MODE_ORDER.index(value) > _MODE_ORDER.index(
            user.get(key, Mode.DEFAULT))
    if key == "sandbox_mode":
        return _SANDBOX_ORDER.index(value) > _SANDBOX_ORDER.index(
            user.get(key, SandboxMode.AUTO))
    if key == "profile":  # only default → strict; never replace a profile of the user's
        mine = user.get(key, "default")
        return bool(value != mine and not (mine == "default" and value == "strict"))
    return False


# -- paths -----------------------------------------------------------------------------

def expand_home(entry: str, home: Path | str) -> str:
    """`~` and `~/x` under `home`; anything else as it is (not `~user`)."""
    return str(home) + entry[1:] if entry == "~" or entry.startswith("~/") else entry


def expand_path(entry: str, *, base: Path, home: Path) -> Path:
    """`~`/`~/x` → home; relative → under `base`; then normalised (symlinks resolved)."""
    entry = expand_home(entry, home)
    path = Path(entry) if entry.startswith("/") else base / entry
    return Path(os.path.realpath(path))


def is_within(path: str, root: str) -> bool:
    """`path` is `root` or below it, on a path-component boundary."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


# -- profiles ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SeccompProfile:
    deny: tuple[str, ...]  # syscall names that fail with EPERM
    enosys: tuple[str, ...]  # syscall names that fail with ENOSYS (libc falls back)
    deny_namespaces: bool  # clone() with CLONE_NEW* flags fails too
    sockets: tuple[str, ...]  # socket families that may be created (AF_* names)
    ioctls: tuple[str, ...]  # ioctl requests that fail (TIOC* names)
    # AF_UNIX socket types socketpair() may create: a datagram pair can sendto() any
    # host socket by path, so it is left out by default.
    socketpairs: tuple[str, ...] = ("SOCK_STREAM", "SOCK_SEQPACKET")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    read_roots: tuple[str, ...] | None  # None: the whole file system is readable
    tmp: str  # project (a per-project directory at /tmp) | private (empty) | host
    deny_read: tuple[str, ...]
    protected: tuple[str, ...]
    env_drop: tuple[str, ...]
    env_keep: tuple[str, ...]
    nested_namespaces: bool
    seccomp: SeccompProfile


TMP_CHOICES = ("project", "private", "host")
_PROFILE_KEYS = ("extends", "description", "read", "tmp", "denyRead", "protected",
                 "env", "nestedNamespaces", "seccomp")
_ADDITIVE = ("denyRead", "protected")
SOCKET_TYPES = ("SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW", "SOCK_RDM", "SOCK_SEQPACKET")


def builtin_profiles() -> list[str]:
    files = resources.files("swifty_sandbox.profiles")
    return sorted(p.name[:-5] for p in files.iterdir()
                  if p.name.endswith(".yaml") and p.name not in ("syscalls.yaml",
                                                                 "programs.yaml"))


def _profile_source(name: str, project: Path) -> Source:
    if "/" in name or name.endswith((".yaml", ".yml")):
        path = Path(name) if name.startswith("/") else project / name
        source = read_source(path)
    elif name in builtin_profiles():
        resource = resources.files("swifty_sandbox.profiles") / f"{name}.yaml"
        source = Source(f"<profile {name}>", resource.read_text("utf-8"))
    else:
        source = None
    if source is None:
        raise PolicyFileError(name, 1, 1, t("profile.unknown", name=name,
                                             known=", ".join(builtin_profiles())))
    return source


def _syscall_sets() -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
    text = (resources.files("swifty_sandbox.profiles") / "syscalls.yaml").read_text("utf-8")
    source = Source("<profiles/syscalls.yaml>", text)
    root = compose(source)
    assert root is not None
    top = mapping(source, root, ("sets", "enosys"))
    sets_node = top["sets"][1]
    names = mapping(source, sets_node, tuple(k.value for k, _ in sets_node.value))
    sets = {key: tuple(string_list(source, key, value)) for key, (_, value) in names.items()}
    return sets, frozenset(string_list(source, "enosys", top["enosys"][1]))


def load_profile(name: str, project: Path, _seen: tuple[str, ...] = ()) -> Profile:
    """A built-in profile by name, or a YAML file by path (relative to the project)."""
    source = _profile_source(name, project)
    root = compose(source)
    if root is None:
        raise PolicyFileError(source.name, 1, 1, t("file.not_mapping", found="nothing"))
    top = mapping(source, root, _PROFILE_KEYS)
    parent: Profile | None = None
    if "extends" in top:
        base = string(source, "extends", top["extends"][1])
        if base in (*_seen, name):
            raise fail(source, top["extends"][1], t("profile.cycle", name=base))
        parent = load_profile(base, project, (*_seen, name))

    def strings(key: str, node: yaml.Node | None = None) -> tuple[str, ...] | None:
        if node is None:
            node = top[key][1] if key in top else None
        return tuple(string_list(source, key, node)) if node is not None else None

    def flag(key: str, inherited: bool) -> bool:
        if key not in top:
            return inherited
        node = top[key][1]
        if node.tag != "tag:yaml.org,2002:bool":
            raise fail(source, node, t("file.bad_choice", key=key, value=shown(node.value),
                                       expected="true | false"))
        return str(node.value).lower() in ("true", "yes", "on")

    def added(key: str, inherited: tuple[str, ...]) -> tuple[str, ...]:
        return (*inherited, *(strings(key) or ()))

    env = mapping(source, top["env"][1], ("drop", "keep")) if "env" in top else {}
    env_drop = strings("env.drop", env["drop"][1]) if "drop" in env else None
    env_keep = strings("env.keep", env["keep"][1]) if "keep" in env else None

    read_roots: tuple[str, ...] | None = parent.read_roots if parent else None
    if "read" in top:
        node = top["read"][1]
        if node.tag == "tag:yaml.org,2002:str":
            choice(source, "read", node, ("all",))
            read_roots = None
        else:
            read_roots = strings("read")

    seccomp = parent.seccomp if parent else SeccompProfile((), (), False, (), ())
    if "seccomp" in top:
        fields = mapping(source, top["seccomp"][1],
                         ("deny", "sockets", "ioctls", "socketpairs"))
        sets, enosys = _syscall_sets()
        chosen = strings("seccomp.deny", fields["deny"][1]) if "deny" in fields else ()
        calls: dict[str, None] = {}
        for set_name in chosen or ():
            if set_name not in sets:
                raise fail(source, fields["deny"][1], t(
                    "file.bad_choice", key="seccomp.deny", value=set_name,
                    expected=" | ".join(sets)))
            calls.update(dict.fromkeys(sets[set_name]))
        pairs = seccomp.socketpairs
        if "socketpairs" in fields:
            node = fields["socketpairs"][1]
            pairs = strings("seccomp.socketpairs", node) or ()
            for kind in pairs:
                if kind not in SOCKET_TYPES:
                    raise fail(source, node, t("file.bad_choice", key="seccomp.socketpairs",
                                               value=kind, expected=" | ".join(SOCKET_TYPES)))
        seccomp = SeccompProfile(
            deny=tuple(c for c in calls if c not in enosys),
            enosys=tuple(c for c in calls if c in enosys),
            deny_namespaces="namespaces" in (chosen or ()),
            sockets=strings("seccomp.sockets", fields["sockets"][1]) or ()
            if "sockets" in fields else seccomp.sockets,
            ioctls=strings("seccomp.ioctls", fields["ioctls"][1]) or ()
            if "ioctls" in fields else seccomp.ioctls,
            socketpairs=pairs,
        )

    description = string(source, "description", top["description"][1]) \
        if "description" in top else (parent.description if parent else "")
    return Profile(
        name=name,
        description=description,
        read_roots=read_roots,
        tmp=choice(source, "tmp", top["tmp"][1], TMP_CHOICES) if "tmp" in top
        else (parent.tmp if parent else "project"),
        deny_read=added("denyRead", parent.deny_read if parent else ()),
        protected=added("protected", parent.protected if parent else ()),
        env_drop=(*(parent.env_drop if parent else ()), *(env_drop or ())),
        env_keep=(*(parent.env_keep if parent else ()), *(env_keep or ())),
        nested_namespaces=flag("nestedNamespaces",
                               parent.nested_namespaces if parent else False),
        seccomp=seccomp,
    )


def find_project(start: Path) -> Path:
    """The git top-level containing `start` (a `.git` dir or file), else `start`."""
    start = Path(os.path.realpath(start))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start
