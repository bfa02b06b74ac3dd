"""Value types of the policy model: closed sets as enums, values as frozen dataclasses."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import assert_never

from swifty_sandbox.messages import t


class Tool(enum.StrEnum):
    BASH = "Bash"
    READ_FILE = "ReadFile"
    WRITE_FILE = "WriteFile"
    EDIT_FILE = "EditFile"

    @classmethod
    def parse(cls, name: str) -> Tool | None:
        """The tool for a name or alias (Read, Write, Edit), None if unknown."""
        return _TOOL_NAMES.get(name)

    @property
    def category(self) -> Category:
        if self is Tool.BASH:
            return Category.COMMAND
        if self is Tool.READ_FILE:
            return Category.READ
        if self is Tool.WRITE_FILE or self is Tool.EDIT_FILE:
            return Category.WRITE
        assert_never(self)


class Category(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    COMMAND = "command"


_TOOL_NAMES: dict[str, Tool] = {
    **{t.value: t for t in Tool},
    "Read": Tool.READ_FILE,
    "Write": Tool.WRITE_FILE,
    "Edit": Tool.EDIT_FILE,
}


class Effect(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"

    @property
    def severity(self) -> int:
        """Order for "most restrictive wins": deny > ask > allow."""
        return _SEVERITY[self]


_SEVERITY = {Effect.ALLOW: 0, Effect.ASK: 1, Effect.DENY: 2}


class Mode(enum.StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"


class SandboxMode(enum.StrEnum):
    AUTO = "auto"  # confined, and mode-table asks for Bash are allowed
    MANUAL = "manual"  # confined, asks stay asks
    OFF = "off"  # unconfined: the user's explicit, loud choice


class Layer(enum.StrEnum):
    """Which step of SPEC §2 "Decision order" decided."""

    BLACKLIST = "blacklist"
    PROTECTED = "protected"
    RULE = "rule"
    PATH = "path"
    MODE = "mode"
    SANDBOX = "sandbox"
    # Not in the spec's list: a command the analysis could not see into is never
    # allowed on the strength of rules that could not be checked against it.
    ANALYSIS = "analysis"


class Scope(enum.StrEnum):
    """The three rule-file layers, lowest priority first."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"


@dataclass(frozen=True, slots=True)
class RuleRef:
    """Where the deciding rule was written."""

    file: str
    line: int
    text: str

    def as_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass(frozen=True, slots=True)
class Decision:
    effect: Effect
    reason: str
    layer: Layer
    category: str | None = None
    rule: RuleRef | None = None
    # A file request: the path it was decided on, where the kernel will open it (no link,
    # no `..`); a tool that performs the I/O opens exactly this, following no link.
    target: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "effect": self.effect.value,
            "reason": self.reason,
            "layer": self.layer.value,
            "category": self.category,
            "rule": self.rule.as_json() if self.rule else None,
        }


@dataclass(frozen=True, slots=True)
class Request:
    """One thing the agent wants to do.

    A Bash request carries either a shell string (`command`) or an argv (`argv`);
    a file request carries a path, absolute or relative to the project root.
    """

    tool: Tool
    command: str | None = None
    argv: tuple[str, ...] | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        # No file name, argument or command line of the system can hold a NUL: such a
        # request could only fail later, at a worse place.
        if any("\0" in text for text in (self.command or "", self.path or "",
                                         *(self.argv or ()))):
            raise ValueError(t("request.nul"))

    @classmethod
    def bash(cls, command: str) -> Request:
        return cls(Tool.BASH, command=command)

    @classmethod
    def bash_argv(cls, argv: tuple[str, ...] | list[str]) -> Request:
        return cls(Tool.BASH, argv=tuple(argv))

    @classmethod
    def file(cls, tool: Tool, path: str | Path) -> Request:
        if tool is Tool.BASH:
            raise ValueError("a file request needs a file tool")
        return cls(tool, path=str(path))

    def describe(self) -> str:
        """The request as a person would write it, for prompts and logs."""
        if self.tool is Tool.BASH:
            if self.command is not None:
                return self.command
            import shlex

            return shlex.join(self.argv or ())
        return f"{self.tool.value}({self.path})"


@dataclass(frozen=True, slots=True)
class Settings:
    """The merged `config.yaml` settings (user, then project)."""

    default_mode: Mode = Mode.DEFAULT
    sandbox_mode: SandboxMode = SandboxMode.AUTO
    profile: str = "default"
    writable: tuple[Path, ...] = ()
    deny_read: tuple[str, ...] = ()
    env_keep: tuple[str, ...] = ()
    env_drop: tuple[str, ...] = ()
    bwrap: str | None = None  # an absolute path chosen in the user's own config
    backend: str = "auto"  # auto | bwrap | landlock; a committed file: bwrap only
    max_processes: int | None = None  # None: the default cap; 0: no cap
    max_memory: int | None = None  # bytes; None: the default cap; 0: no cap
    toolchain_caches: str | None = None  # project | off; None: the profile's
    network_allow: tuple[str, ...] = ()  # `network.allow` entries (policy/network.py)
    network_deny: tuple[str, ...] = ()
    log_enabled: bool = True  # the session log (`log.enabled`); a committed file: true only
    # Settings a committed project file tried to loosen, with why they were ignored.
    warnings: tuple[str, ...] = field(default=(), compare=False)
