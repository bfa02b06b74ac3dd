"""Mandatory write-protected paths: the one place they are listed.

No setting, rule, profile or mode removes them; profiles can only add. Every backend
(decisions here, bwrap/seatbelt later) appends them after the user's own paths.

Why each is here:
- `.swifty/` (project and home): the agent must never edit its own policy — a model
  that can write `permissions.local.yaml` can grant itself anything.
- `.git/hooks`, `.git/config`: code that git runs later, outside the sandbox
  (`core.fsmonitor`, `core.hooksPath`, hooks) — the classic sandbox escape.
- shell rc files: run by the user's next terminal, outside the sandbox.
- the session log (`~/.local/state/swifty-sandbox`, or under `$XDG_STATE_HOME`): the
  record of what each command did, written outside the sandbox after it. A command that
  could write it would forge or erase that record; one that could read it would learn
  the other commands and their exact form. So it is protected and hidden alike.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .agents import project_settings, user_dirs
from .paths import DEFAULT_STATE_HOME, LOG_DIR_NAME, state_home

# Patterns in rule syntax; `./` anchors a single name at the project root.
PROJECT_PROTECTED: tuple[str, ...] = (
    "./.swifty",
    "./.git/hooks",
    "./.git/config",
    "*/**/.git/hooks",  # nested repositories (vendored, submodule work trees)
    "*/**/.git/config",
    "**/.git/modules/**/hooks",  # submodules' git dirs
    "**/.git/modules/**/config",
)

HOME_PROTECTED: tuple[str, ...] = (
    "~/.swifty",
    # What shells read at start.
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.bash_aliases",
    "~/.profile",
    "~/.inputrc",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.zlogout",
    "~/.config/fish",
    "~/.pam_environment",
    "~/.config/environment.d",
    "~/.xprofile",
    "~/.xsessionrc",
    # What git reads at start, and tools' configs that name programs to run.
    "~/.gitconfig",
    "~/.config/git",
    "~/.cargo/config",
    "~/.cargo/config.toml",
    # Run at the next log-in or put first on PATH.
    "~/.config/autostart",
    "~/.config/systemd",
    "~/.local/bin",
    "~/.cache/swifty-sandbox",  # each project's /tmp lives here (sandbox/spec/compiler.py)
    f"{DEFAULT_STATE_HOME}/{LOG_DIR_NAME}",  # the session log (sandbox/agents/sessionlog.py)
    # The agents' own folders: user settings with hooks and MCP servers, their hook
    # scripts, instructions (CLAUDE.md) — all run or read on the host at the next start.
    "~/.claude",
    "~/.codex",
    "~/.gemini",
    "~/.cursor",
    "~/.claude.json",  # Claude Code's state: each project's MCP servers
    "~/.env",  # Gemini CLI's environment when no folder on the way has one
)

# The protected entries that are directories: guarded by an empty read-only directory
# when missing (the others by an empty read-only file), see sandbox/spec/compiler.py.
PROTECTED_DIRS: frozenset[str] = frozenset({
    "./.swifty", "./.git/hooks", "~/.swifty", "~/.config/fish", "~/.config/environment.d",
    "~/.config/git", "~/.config/autostart", "~/.config/systemd", "~/.local/bin",
    "~/.cache/swifty-sandbox", "~/.claude", "~/.codex", "~/.gemini", "~/.cursor",
    f"{DEFAULT_STATE_HOME}/{LOG_DIR_NAME}",
})

# Protected files that are watched while missing rather than guarded: an agent running
# on the host meanwhile would read an empty stand-in as a broken file of its own.
UNGUARDED: frozenset[str] = frozenset({"~/.claude.json"})

# Agents' settings in the project (the agent table, policy/agents.py): their hooks and
# MCP servers are programs the agent starts on the host, and their allow lists decide
# without us. Read-only where they exist; where missing they are watched (moved aside
# if a command creates them), not guarded: an empty stand-in would be read by the agent
# as a broken settings file.
AGENT_SETTINGS: tuple[str, ...] = tuple("./" + name for name in project_settings())

POLICY_PATTERNS: frozenset[str] = frozenset({"./.swifty", "~/.swifty"})


def session_log_patterns(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The session log's directories: the default one always, and the one under
    `$XDG_STATE_HOME` where that is set (the log is written where the environment says,
    so it is protected where the environment says too)."""
    state = state_home(os.environ if environ is None else environ)
    default = f"{DEFAULT_STATE_HOME}/{LOG_DIR_NAME}"
    return (default,) if state is None else (default, f"{state}/{LOG_DIR_NAME}")


def agent_dirs(environ: Mapping[str, str] | None = None, home: Path | None = None,
               project: Path | None = None) -> tuple[str, ...]:
    """The agents' user config dirs where their variables (`CLAUDE_CONFIG_DIR`,
    `CODEX_HOME`, `GEMINI_CLI_HOME`) moved them, protected whole as `~/.codex` is, and
    the environment files of a moved agent home (the agent table: `user_dirs`)."""
    env = os.environ if environ is None else environ
    return user_dirs(env, home if home is not None else Path(os.path.expanduser("~")),
                     project)


def mandatory_protected(environ: Mapping[str, str] | None = None, home: Path | None = None,
                        project: Path | None = None) -> tuple[str, ...]:
    return PROJECT_PROTECTED + AGENT_SETTINGS + HOME_PROTECTED + \
        session_log_patterns(environ)[1:] + agent_dirs(environ, home, project)


def guarded_as_dir(pattern: str) -> bool:
    """Whether a missing protected entry is guarded by an empty directory (else a file)."""
    return pattern in PROTECTED_DIRS or pattern in session_log_patterns() or (
        pattern in agent_dirs() and not pattern.endswith("/.env"))


def is_policy_pattern(pattern: str) -> bool:
    """Whether the pattern guards swifty's own files (for the reason text)."""
    return pattern in POLICY_PATTERNS


# Top-level system directories: never a writable root, never to be deleted recursively.
SYSTEM_DIRS: frozenset[str] = frozenset({
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
    "nix", "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "usr", "var",
    "Applications", "Library", "System", "Users", "Volumes", "private",
})
