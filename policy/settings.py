"""`config.yaml` settings: one table of keys (`SETTINGS`), each with its parser, how a
project's value meets the user's, and when a committed file may not set it.

A committed project file comes from whoever wrote the repository, so it may only
tighten: a value that would loosen the user's own (or, when the user set none, the
default) is ignored with a warning, never applied. The table's keys are the leaves of
`profiles/config.schema.json` (a test compares them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path, PosixPath
from typing import TYPE_CHECKING, Any

from swifty_sandbox.messages import t

from .errors import PolicyFileError
from .files import PolicyFiles
from .limits import default_max_memory, default_max_processes, parse_memory, parse_processes
from .paths import expand_home, expand_path, is_within
from .profile import toolchain_choice
from .rules import PathPattern, RuleSyntaxError, anchor_path_pattern
from .types import Mode, SandboxMode, Scope, Settings
from .yamlnodes import (
    Source,
    choice,
    compose,
    describe,
    dotted_nodes,
    fail,
    is_null,
    read_source,
    shown,
    string,
    string_list,
)

if TYPE_CHECKING:
    import yaml

# parser: (file, key, value node, project, home) → the `Settings` field's value
Parser = Callable[[Source, str, "yaml.Node", Path, Path], Any]
# loosening rule: (a committed file's value, the user's value or the default, project)
Loosens = Callable[[Any, Any, Path], bool]


@dataclass(frozen=True, slots=True)
class Setting:
    key: str  # dotted path in config.yaml
    field: str  # the `Settings` field it sets
    parse: Parser
    loosens: Loosens | None = None  # None: a committed file may set any value
    each: bool = False  # `loosens` judges each item of the list; the others are kept
    merge: str = "replace"  # the project's value and the user's: replace | add | min


def _choice(kind: type[Mode] | type[SandboxMode]) -> Parser:
    def parse(source: Source, key: str, node: yaml.Node, project: Path, home: Path) -> Any:
        return kind(choice(source, key, node, tuple(m.value for m in kind)))
    return parse


def _string(source: Source, key: str, node: yaml.Node, project: Path, home: Path) -> str:
    return string(source, key, node)


def _strings(source: Source, key: str, node: yaml.Node, project: Path, home: Path
             ) -> tuple[str, ...]:
    return tuple(string_list(source, key, node))


class WrittenPath(PosixPath):
    """A resolved root that remembers how it was written (normalised, links not
    resolved): a root written through a link that a command could have planted is
    refused (sandbox/spec/roots.py)."""

    written: str = ""


def _roots(source: Source, key: str, node: yaml.Node, project: Path, home: Path
           ) -> tuple[Path, ...]:
    out = []
    for entry in string_list(source, key, node):
        root = WrittenPath(expand_path(entry, base=project, home=home))
        root.written = os.path.normpath(os.path.join(project, expand_home(entry, home)))
        out.append(root)
    return tuple(out)


def _globs(source: Source, key: str, node: yaml.Node, project: Path, home: Path
           ) -> tuple[str, ...]:
    entries = string_list(source, key, node)
    for item, entry in zip(node.value if entries else [], entries, strict=True):
        try:  # an invalid glob is an error at its own line, not at match time
            PathPattern(entry, anchor_path_pattern(entry, project, home))
        except RuleSyntaxError as e:
            raise fail(source, item, str(e), e.kind) from e
    return tuple(entries)


def _toolchain_caches(source: Source, key: str, node: yaml.Node, project: Path,
                      home: Path) -> str:
    return toolchain_choice(source, key, node)


def _absolute(source: Source, key: str, node: yaml.Node, project: Path, home: Path) -> str:
    chosen = expand_home(string(source, key, node), home)
    if not chosen.startswith("/"):
        raise fail(source, node, t("config.bwrap_absolute", value=chosen))
    return chosen


def _cap(parse: Callable[[str], int]) -> Parser:
    def read(source: Source, key: str, node: yaml.Node, project: Path, home: Path) -> int:
        if not isinstance(node.value, str):
            raise fail(source, node, t("file.bad_choice", key=key, value=describe(node),
                                       expected="a scalar"))
        try:
            return parse(node.value)
        except ValueError as e:
            raise fail(source, node, str(e)) from e
    return read


# Strictest first. A committed file may choose a value only as strict as the user's own
# (or, when the user set none, the default's): `plan` in ~/.swifty stays `plan`.
_MODE_ORDER = (Mode.PLAN, Mode.DEFAULT, Mode.ACCEPT_EDITS, Mode.BYPASS)
_SANDBOX_ORDER = (SandboxMode.MANUAL, SandboxMode.AUTO, SandboxMode.OFF)
_SAFE_PROJECT_PROFILES = ("default", "strict")


def _looser_mode(value: Mode, mine: Mode, project: Path) -> bool:
    return value is Mode.BYPASS or _MODE_ORDER.index(value) > _MODE_ORDER.index(mine)


def _looser_sandbox(value: SandboxMode, mine: SandboxMode, project: Path) -> bool:
    return value is SandboxMode.OFF or \
        _SANDBOX_ORDER.index(value) > _SANDBOX_ORDER.index(mine)


def _looser_profile(value: str, mine: str, project: Path) -> bool:
    # Only default → strict; never replace a profile of the user's.
    return value not in _SAFE_PROJECT_PROFILES or (
        value != mine and not (mine == "default" and value == "strict"))


def _backend(source: Source, key: str, node: yaml.Node, project: Path, home: Path) -> str:
    return choice(source, key, node, ("auto", "bwrap", "landlock"))


def _weaker_backend(value: str, mine: str, project: Path) -> bool:
    return value != "bwrap"  # a repository may insist on namespaces, never give them up


def _outside(root: Path, mine: object, project: Path) -> bool:
    return not is_within(str(root), str(project))


def _always(value: object, mine: object, project: Path) -> bool:
    return True  # the repository must not pick it (the sandbox's own binary)


def _caches_on(value: str, mine: object, project: Path) -> bool:
    return value != "off"  # a writable directory outside the project


def _any_kept(value: tuple[str, ...], mine: object, project: Path) -> bool:
    return bool(value)


def _network(source: Source, key: str, node: yaml.Node, project: Path, home: Path
             ) -> tuple[str, ...]:
    # Here, not at the top: a config without `network:` never loads the network tables.
    from .netconfig import network_entries

    return network_entries(source, key, node)


def _not_the_user_s(entry: str, mine: tuple[str, ...], project: Path) -> bool:
    """A committed `network.allow` entry the user's own config does not allow already:
    a repository may narrow network access (its list replaces the user's), never widen."""
    from .network import project_allow  # as above: only a `network:` entry needs it

    return bool(project_allow(mine, [entry]))


def _flag(source: Source, key: str, node: yaml.Node, project: Path, home: Path) -> bool:
    if node.tag != "tag:yaml.org,2002:bool":
        raise fail(source, node, t("file.bad_choice", key=key, value=describe(node),
                                   expected="true | false"))
    return str(node.value).lower() in ("true", "yes", "on")


def _off(value: bool, mine: object, project: Path) -> bool:
    return not value  # a repository must not switch off the record of what ran in it


def _above(default: Callable[[], int]) -> Loosens:
    def loosens(value: int, mine: object, project: Path) -> bool:
        return value == 0 or value > default()  # only lower than the default
    return loosens


SETTINGS: tuple[Setting, ...] = (
    Setting("permissions.defaultMode", "default_mode", _choice(Mode), _looser_mode),
    Setting("sandbox.mode", "sandbox_mode", _choice(SandboxMode), _looser_sandbox),
    Setting("sandbox.profile", "profile", _string, _looser_profile),
    Setting("sandbox.writable", "writable", _roots, _outside, each=True),
    Setting("sandbox.bwrap", "bwrap", _absolute, _always),
    Setting("sandbox.backend", "backend", _backend, _weaker_backend),
    # A committed file may hide paths outside the project too: that only tightens (at
    # worst a repository makes its own runs fail, which it can anyway with a deny rule).
    Setting("sandbox.denyRead", "deny_read", _globs, merge="add"),
    Setting("sandbox.env.keep", "env_keep", _strings, _any_kept),
    Setting("sandbox.env.drop", "env_drop", _strings, merge="add"),
    Setting("sandbox.limits.processes", "max_processes", _cap(parse_processes),
            _above(default_max_processes), merge="min"),
    Setting("sandbox.limits.memory", "max_memory", _cap(parse_memory),
            _above(default_max_memory), merge="min"),
    Setting("sandbox.toolchainCaches", "toolchain_caches", _toolchain_caches, _caches_on),
    Setting("network.allow", "network_allow", _network, _not_the_user_s, each=True),
    Setting("network.deny", "network_deny", _network, merge="add"),
    Setting("log.enabled", "log_enabled", _flag, _off),
)


_KEYS = tuple(s.key for s in SETTINGS)
_DEFAULTS = {f.name: getattr(Settings(), f.name) for f in fields(Settings)}


def _text(node: yaml.Node) -> str:
    """A value as written, for a warning."""
    if isinstance(node.value, list):  # a list of scalars
        return shown("[" + ", ".join(str(item.value) for item in node.value) + "]")
    return shown(node.value)


def config_layer(source: Source, files: PolicyFiles, *, committed: bool,
                 user: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    """One config file's settings as `Settings` field values, and the warnings.

    In a committed file, a value that `loosens` the user's (`user`: the user's field
    values; a field missing there is the default) is left out with a warning.
    """
    values: dict[str, Any] = {}
    warnings: list[str] = []
    root = compose(source)
    if root is None or is_null(root):
        return values, warnings
    nodes = dotted_nodes(source, root, _KEYS, what="file.config_not_mapping")

    def refuse(setting: Setting, node: yaml.Node) -> None:
        warnings.append(t("config.project_loosens", file=source.name, key=setting.key,
                          value=_text(node)))

    mine = {**_DEFAULTS, **(user or {})}
    for setting in SETTINGS:
        node = nodes.get(setting.key)
        if node is None:
            continue
        value = setting.parse(source, setting.key, node, files.project, files.home)
        rule = setting.loosens if committed else None
        if rule is None:
            values[setting.field] = value
        elif setting.each:
            kept = []
            for item, item_node in zip(value, node.value if value else [], strict=True):
                if rule(item, mine[setting.field], files.project):
                    refuse(setting, item_node)
                else:
                    kept.append(item)
            values[setting.field] = tuple(kept)
        elif rule(value, mine[setting.field], files.project):
            refuse(setting, node)
        else:
            values[setting.field] = value
    return values, warnings


def load_settings(files: PolicyFiles) -> Settings:
    """User config, then the project's on top (additive for the deny lists)."""
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    for scope in (Scope.USER, Scope.PROJECT):
        path = files.config(scope)
        if scope is Scope.PROJECT and path == files.config(Scope.USER):
            break  # the project is the home directory: one file, read once
        source = read_source(path)
        if source is None:
            continue
        values, layer_warnings = config_layer(source, files, user=merged,
                                              committed=files.is_committed(path))
        warnings.extend(layer_warnings)
        for setting in SETTINGS:
            name = setting.field
            if name not in values or name not in merged:
                continue
            if setting.merge == "add":  # lists that only tighten add up
                values[name] = (*merged[name], *values[name])
            elif setting.merge == "min" and merged[name]:  # 0 is "no cap"
                values[name] = min(values[name], merged[name])
        merged.update(values)
    return Settings(**merged, warnings=tuple(warnings))


def user_settings(files: PolicyFiles) -> dict[str, Any]:
    """The user's own config as field values (what a committed file is compared with);
    empty when it is missing or broken (its own audit reports that)."""
    try:
        source = read_source(files.config(Scope.USER))
        return config_layer(source, files, committed=False)[0] if source else {}
    except PolicyFileError:
        return {}
