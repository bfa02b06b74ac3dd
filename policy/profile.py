"""Sandbox profiles: built-in ones by name (`profiles/*.yaml`) or a YAML file by path.

One table of keys (`PROFILE_KEYS`), each with its parser and how it meets the parent
profile's value under `extends` (lists of what is hidden or protected add up, the rest
replaces); its keys are the leaves of `profiles/profile.schema.json` (a test compares).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swifty_sandbox import profiles
from swifty_sandbox.messages import t

from .errors import PolicyFileError
from .yamlnodes import (
    Source,
    choice,
    compose,
    dotted_nodes,
    fail,
    mapping,
    read_source,
    shown,
    string,
    string_list,
)

if TYPE_CHECKING:
    import yaml


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


_SOCKETPAIRS = SeccompProfile.__dataclass_fields__["socketpairs"].default


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
    toolchain_caches: str = "project"  # project (a cache directory per project) | off


TMP_CHOICES = ("project", "private", "host")
TOOLCHAIN_CHOICES = ("project", "off")  # sandbox/spec/toolchains.py
SOCKET_TYPES = ("SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW", "SOCK_RDM", "SOCK_SEQPACKET")
_NOT_PROFILES = ("syscalls.yaml", "programs.yaml", "network.yaml")

# parser: (file, key, value node) → the value
Parser = Callable[[Source, str, "yaml.Node"], Any]


@dataclass(frozen=True, slots=True)
class ProfileKey:
    key: str  # dotted path in the profile file
    parse: Parser
    default: Any  # when neither the profile nor its parent sets it
    adds: bool = False  # under `extends`: added to the parent's list (else replaces it)


def _string(source: Source, key: str, node: yaml.Node) -> str:
    return string(source, key, node)


def _strings(source: Source, key: str, node: yaml.Node) -> tuple[str, ...]:
    return tuple(string_list(source, key, node))


def _read(source: Source, key: str, node: yaml.Node) -> tuple[str, ...] | None:
    if node.tag == "tag:yaml.org,2002:str":
        choice(source, key, node, ("all",))
        return None
    return _strings(source, key, node)


def _tmp(source: Source, key: str, node: yaml.Node) -> str:
    return choice(source, key, node, TMP_CHOICES)


def toolchain_choice(source: Source, key: str, node: yaml.Node) -> str:
    """`project` | `off`; YAML reads a bare `off` (and `false`) as a boolean: off."""
    if node.tag == "tag:yaml.org,2002:bool":
        return "project" if str(node.value).lower() in ("true", "yes", "on") else "off"
    return choice(source, key, node, TOOLCHAIN_CHOICES)


def _flag(source: Source, key: str, node: yaml.Node) -> bool:
    if node.tag != "tag:yaml.org,2002:bool":
        raise fail(source, node, t("file.bad_choice", key=key, value=shown(node.value),
                                   expected="true | false"))
    return str(node.value).lower() in ("true", "yes", "on")


def _syscall_sets(source: Source, key: str, node: yaml.Node
                  ) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """Named sets → (EPERM calls, ENOSYS calls, whether namespaces are denied)."""
    sets, enosys = _builtin_syscall_sets()
    chosen = _strings(source, key, node)
    calls: dict[str, None] = {}
    for set_name in chosen:
        if set_name not in sets:
            raise fail(source, node, t("file.bad_choice", key=key, value=set_name,
                                       expected=" | ".join(sets)))
        calls.update(dict.fromkeys(sets[set_name]))
    return (tuple(c for c in calls if c not in enosys), tuple(c for c in calls if c in enosys),
            "namespaces" in chosen)


def _socket_types(source: Source, key: str, node: yaml.Node) -> tuple[str, ...]:
    pairs = _strings(source, key, node)
    for kind in pairs:
        if kind not in SOCKET_TYPES:
            raise fail(source, node, t("file.bad_choice", key=key, value=kind,
                                       expected=" | ".join(SOCKET_TYPES)))
    return pairs


PROFILE_KEYS: tuple[ProfileKey, ...] = (
    ProfileKey("extends", _string, None),
    ProfileKey("description", _string, ""),
    ProfileKey("read", _read, None),
    ProfileKey("tmp", _tmp, "project"),
    ProfileKey("denyRead", _strings, (), adds=True),
    ProfileKey("protected", _strings, (), adds=True),
    ProfileKey("env.drop", _strings, (), adds=True),
    ProfileKey("env.keep", _strings, (), adds=True),
    ProfileKey("nestedNamespaces", _flag, False),
    ProfileKey("toolchainCaches", toolchain_choice, "project"),
    # A profile that extends another and leaves out `seccomp.deny` keeps the parent's
    # denied calls (changing only `socketpairs` must not drop them).
    ProfileKey("seccomp.deny", _syscall_sets, ((), (), False)),
    ProfileKey("seccomp.sockets", _strings, ()),
    ProfileKey("seccomp.ioctls", _strings, ()),
    ProfileKey("seccomp.socketpairs", _socket_types, _SOCKETPAIRS),
)
_KEYS = tuple(k.key for k in PROFILE_KEYS)


def builtin_profiles() -> list[str]:
    return list(_builtin_names())


@functools.cache  # package data (the warm server's code stamp covers it)
def _builtin_names() -> tuple[str, ...]:
    return tuple(sorted(name[:-5] for name in profiles.names()
                        if name.endswith(".yaml") and name not in _NOT_PROFILES))


def _is_file(name: str) -> bool:
    """A profile named by path (a user's file, read on every load), not a built-in."""
    return "/" in name or name.endswith((".yaml", ".yml"))


def _profile_source(name: str, project: Path) -> Source:
    if _is_file(name):
        path = Path(name) if name.startswith("/") else project / name
        source = read_source(path)
    elif name in _builtin_names():
        source = Source(f"<profile {name}>", profiles.read(f"{name}.yaml"))
    else:
        source = None
    if source is None:
        raise PolicyFileError(name, 1, 1, t("profile.unknown", name=name,
                                             known=", ".join(builtin_profiles())))
    return source


@functools.cache  # package data: parsed once per process (the warm server, cli/warm.py)
def _builtin_syscall_sets() -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
    text = profiles.read("syscalls.yaml")
    source = Source("<profiles/syscalls.yaml>", text)
    root = compose(source)
    assert root is not None
    top = mapping(source, root, ("sets", "enosys"))
    sets_node = top["sets"][1]
    names = mapping(source, sets_node, tuple(k.value for k, _ in sets_node.value))
    sets = {key: tuple(string_list(source, key, value)) for key, (_, value) in names.items()}
    return sets, frozenset(string_list(source, "enosys", top["enosys"][1]))


def is_builtin(name: str) -> bool:
    """Whether `name` is a built-in profile (package data), not a file of the user's."""
    return not _is_file(name) and name in _builtin_names()


def _values(name: str, project: Path, seen: tuple[str, ...]) -> dict[str, Any]:
    """Every key's value for one profile, its parents' folded in."""
    if is_builtin(name):
        # A built-in extends built-ins only: package data, parsed once per process
        # (a cold `run` parses one; the warm server's workers and `serve` none).
        return dict(_builtin_values(name))
    return _parsed_values(name, project, seen)


@functools.cache
def _builtin_values(name: str) -> dict[str, Any]:  # copied by `_values`: never changed
    return _parsed_values(name, Path("/"), ())


def _parsed_values(name: str, project: Path, seen: tuple[str, ...]) -> dict[str, Any]:
    source = _profile_source(name, project)
    root = compose(source)
    if root is None:
        raise PolicyFileError(source.name, 1, 1, t("file.not_mapping", found="nothing"))
    nodes = dotted_nodes(source, root, _KEYS)
    own = {key: next(k for k in PROFILE_KEYS if k.key == key).parse(source, key, node)
           for key, node in nodes.items()}
    inherited = {k.key: k.default for k in PROFILE_KEYS}
    base = own.get("extends")
    if base is not None:
        if base in (*seen, name):
            raise fail(source, nodes["extends"], t("profile.cycle", name=base))
        inherited = _values(base, project, (*seen, name))
    values = {}
    for k in PROFILE_KEYS:
        if k.key not in own:
            values[k.key] = inherited[k.key]
        elif k.adds:
            values[k.key] = (*inherited[k.key], *own[k.key])
        else:
            values[k.key] = own[k.key]
    values["extends"] = base
    return values


def load_profile(name: str, project: Path) -> Profile:
    """A built-in profile by name, or a YAML file by path (relative to the project)."""
    values = _values(name, project, ())
    deny, enosys, deny_namespaces = values["seccomp.deny"]
    return Profile(
        name=name,
        description=values["description"],
        read_roots=values["read"],
        tmp=values["tmp"],
        deny_read=values["denyRead"],
        protected=values["protected"],
        env_drop=values["env.drop"],
        env_keep=values["env.keep"],
        nested_namespaces=values["nestedNamespaces"],
        toolchain_caches=values["toolchainCaches"],
        seccomp=SeccompProfile(deny=deny, enosys=enosys, deny_namespaces=deny_namespaces,
                               sockets=values["seccomp.sockets"],
                               ioctls=values["seccomp.ioctls"],
                               socketpairs=values["seccomp.socketpairs"]),
    )
