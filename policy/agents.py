"""What swifty-sandbox knows about each agent it hooks into: one table, pure data.

`hook` (which tools run a shell command and where their command is), `init` (which
file, event and matcher), `doctor` (where to look, what the person must trust) and the
protected paths (which of the agent's files start programs on the host) all read it,
so a new tool or settings file of an agent is one edit here.

Checked against the agents as they are today (Claude Code 2.1.332, Codex CLI 0.171.0,
Gemini CLI 0.61.0, driven for real by the end-to-end tests in `tests/agents/`):
- every tool that runs a shell command is listed with the key of its command, and
  whether the agent applies a rewritten command from the hook (`rewrites`);
- a tool the agent offers that runs code we cannot confine is in `unconfinable`, and
  the hook denies it;
- each agent's settings files, project and user, and the variable that moves the user's.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import assert_never

from .types import Mode, Tool


class Agent(enum.StrEnum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    GEMINI = "gemini"
    CURSOR = "cursor"

    @property
    def info(self) -> AgentInfo:
        return AGENTS[self]

    @property
    def display(self) -> str:
        return AGENTS[self].title

    @property
    def confines(self) -> bool:
        """Whether our answer can make its shell commands run through `swifty-sandbox run`."""
        return any(tool.rewrites for tool in AGENTS[self].shell_tools)


class Trust(enum.StrEnum):
    """What the person must do once, in the agent, before the installed hook runs."""

    NONE = "none"  # the agent runs the hooks in its settings files as they are
    # Codex runs a hook only once the person trusted it (`/hooks` in the TUI, or
    # `--dangerously-bypass-hook-trust`); the trust is the hook's hash under
    # `[hooks.state."<key>"]` in `$CODEX_HOME/config.toml`. A project's `.codex/` is read
    # only in a project the person trusted (`[projects."<path>"] trust_level`).
    CODEX_HOOKS = "codex-hooks"
    # Gemini reads a project's `.gemini/settings.json` only in a trusted folder when
    # folder trust is on (`security.folderTrust.enabled`; `~/.gemini/trustedFolders.json`).
    GEMINI_FOLDER = "gemini-folder"


@dataclass(frozen=True, slots=True)
class ShellTool:
    """A tool (or hook event) whose input is a shell command the agent runs on the host."""

    name: str  # `tool_name` in the hook input
    event: str  # the hook event it arrives in
    command: str = "command"  # the key of the command string in `tool_input`
    cwd: str | None = None  # the key of a directory the command runs in, relative to cwd
    rewrites: bool = True  # the agent runs the command our answer gives instead
    # Another key of `tool_input` that, when present, makes the call something other
    # than a command (Claude Code's Monitor opens a WebSocket with `ws`): decided as a
    # network tool.
    network_key: str | None = None


@dataclass(frozen=True, slots=True)
class FileTool:
    name: str
    tool: Tool
    keys: tuple[str, ...]  # where the path is, first present wins
    search: bool = False  # reads the contents of everything below the path
    optional: bool = False  # no path: the working directory


@dataclass(frozen=True, slots=True)
class AgentInfo:
    agent: Agent
    title: str
    folder: str  # the agent's folder in a project (and, by default, in home)
    hook_file: str  # where `init` installs the hook, in `folder` or the user's config dir
    event: str  # the pre-tool event `init` installs
    shell_tools: tuple[ShellTool, ...]
    file_tools: tuple[FileTool, ...] = ()
    network_tools: tuple[str, ...] = ()  # asks until an allowlist exists
    # Tools the agent offers that run code on the host in a way no answer of ours can
    # confine (Claude Code's REPL): denied.
    unconfinable: tuple[str, ...] = ()
    # Tools no longer offered whose rules therefore never apply (`audit` says so).
    retired: tuple[str, ...] = ()
    # Files (or folders of them) in a project the agent reads hooks, MCP servers or
    # allow lists from, relative to the project root: whoever writes one runs a
    # program at the agent's next start, outside any sandbox.
    project_settings: tuple[str, ...] = ()
    # The same in the user's config dir (`user_dir`).
    user_settings: tuple[str, ...] = ()
    # The agent reads its folder below the project root too (Claude Code's skills once
    # it works on a file there; Gemini CLI's `.gemini/` in the folder it starts in;
    # Codex's `.codex/config.toml` in each folder from the project root to where it
    # starts): such a folder is kept read-only whole, and one a command makes is moved
    # aside (`nested_folders`).
    nested: bool = False
    # Everything in the agent's folder in the project is the agent's, not the project's
    # (Codex, Gemini CLI; not Claude Code, whose `.claude/worktrees/` holds the agent's
    # own work): kept read-only whole, one a command makes moved aside, never written
    # by the file tools, at any depth (`whole_folders`).
    whole_folder: bool = False
    # Files in the project the agent loads into its own environment, relative to the
    # root: every process it starts on the host inherits them, so a `BASH_ENV` or
    # `LD_PRELOAD` written there runs code outside the sandbox (kept as what the
    # agents run are: read-only, the file a link leads to too, watched while missing).
    env_files: tuple[str, ...] = ()
    # The variable that moves the user's config dir, and whether it names the dir
    # itself (Claude Code, Codex) or a home the `folder` lies in (Gemini). The user's
    # config dir is protected whole wherever the variable puts it (`user_dirs`): all of
    # it is read or run at the agent's next start (hooks, rules, skills, plugins,
    # instructions, Codex's `.env`).
    config_dir_var: str | None = None
    config_var_is_home: bool = False
    # Files in the user's config dir that hold the agent's credentials (Codex's and
    # Gemini's `.env` hold the API key): hidden inside the sandbox and from the file
    # tools, where the agent reads them (`user_secrets`).
    secrets: tuple[str, ...] = ()
    # The same, only where the variable moved the dir (by default they lie elsewhere:
    # Claude Code's `~/.claude.json`, in the profile's denyRead).
    moved_secrets: tuple[str, ...] = ()
    # Environment files in the agent's home (the `config_dir_var` home, else the
    # user's): Gemini CLI's `.env` when no folder on the way has one.
    home_env_files: tuple[str, ...] = ()
    # Environment files the agent looks for in the folder it starts in and in each
    # folder above it, to the root (Gemini CLI's `findEnvFile`): whoever writes one
    # in a folder the person may start the agent in runs code at that start.
    upward_env_files: bool = False
    trust: Trust = Trust.NONE
    # The agent's `permission_mode` names → ours; a name not here is the default mode.
    modes: Mapping[str, Mode] | None = None
    # An ask can reach the person through the agent's own approval flow.
    asks: bool = False
    # A file in the user's config dir without which an ask reaches nobody (Codex's
    # approval rule, written by `init`): asks are denied while it is missing.
    ask_rules: str | None = None

    @property
    def events(self) -> tuple[str, ...]:
        """Every event `init` installs the hook on: the pre-tool one first."""
        return (self.event, *self.extra_events)

    def matcher(self, event: str) -> str | None:
        """The hook matcher `init` installs on `event`: every tool the hook decides."""
        if self.agent is Agent.CURSOR:
            return None
        names = [t.name for t in self.shell_tools if t.event == event]
        if event == self.event:
            names += [t.name for t in self.file_tools] + list(self.network_tools)
        names = list(dict.fromkeys(names + list(self.unconfinable)))
        if self.agent is Agent.CLAUDE_CODE:
            return "|".join(names)
        if self.agent is not Agent.CODEX and self.agent is not Agent.GEMINI:
            assert_never(self.agent)
        return f"^{names[0]}$" if len(names) == 1 else "^(" + "|".join(names) + ")$"

    @property
    def extra_events(self) -> tuple[str, ...]:
        """Events besides `event` that carry a shell command (installed with no matcher
        filter but their tools')."""
        return tuple(dict.fromkeys(t.event for t in self.shell_tools if t.event != self.event))

    def shell_tool(self, event: str, name: str) -> ShellTool | None:
        return next((t for t in self.shell_tools if t.event == event and t.name == name),
                    None)

    def user_dir(self, env: Mapping[str, str], home: Path) -> Path:
        """The user's config dir of this agent, as the agent finds it."""
        value = env.get(self.config_dir_var) if self.config_dir_var else None
        if value:
            base = Path(os.path.expanduser(value))
            return base / self.folder if self.config_var_is_home else base
        return home / self.folder

    def moved_dir(self, env: Mapping[str, str]) -> Path | None:
        """The user's config dir where the variable moves it (absolute), else None."""
        value = env.get(self.config_dir_var) if self.config_dir_var else None
        if not value:
            return None
        return Path(os.path.abspath(self.user_dir(env, Path("/nonexistent"))))

    def agent_home(self, env: Mapping[str, str], home: Path) -> Path:
        """The home the agent finds its home files in (`home_env_files`)."""
        value = env.get(self.config_dir_var) if self.config_dir_var else None
        if value and self.config_var_is_home:
            return Path(os.path.abspath(os.path.expanduser(value)))
        return home

    def user_files(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        directory = self.user_dir(env, home)
        return tuple(directory / name for name in self.user_settings)


_CLAUDE_MODES = {
    "default": Mode.DEFAULT, "acceptEdits": Mode.ACCEPT_EDITS, "plan": Mode.PLAN,
    "bypassPermissions": Mode.BYPASS,
    # `auto`: Claude Code's classifier answers its own prompts instead of the person; it
    # loosens nothing of ours, so our asks stay asks (and Claude Code's flow answers
    # them). `dontAsk`: Claude Code refuses what would ask; an ask of ours stays an ask
    # it refuses. Both are the default mode here, deliberately, not by falling through.
    "auto": Mode.DEFAULT, "dontAsk": Mode.DEFAULT,
}
# Codex reports `bypassPermissions` whenever its approval policy is `never`, which is
# what `codex exec` always runs with: no person chose to bypass anything, so it is our
# default mode (its commands run confined all the same; an ask is refused by Codex).
_CODEX_MODES = {"default": Mode.DEFAULT, "acceptEdits": Mode.ACCEPT_EDITS,
                "plan": Mode.PLAN, "bypassPermissions": Mode.DEFAULT}

AGENTS: Mapping[Agent, AgentInfo] = {
    Agent.CLAUDE_CODE: AgentInfo(
        Agent.CLAUDE_CODE, "Claude Code", ".claude", "settings.json", "PreToolUse",
        shell_tools=(
            ShellTool("Bash", "PreToolUse"),
            ShellTool("Monitor", "PreToolUse", network_key="ws"),
            # A skill's or command's `!`cmd`` lines: the hook may refuse them, but
            # Claude Code never applies a rewritten command here ("updatedInput: never
            # applied"), so they cannot be confined.
            ShellTool("Bash", "PreSkillShellCommand", rewrites=False),
        ),
        file_tools=(
            FileTool("Read", Tool.READ_FILE, ("file_path",)),
            FileTool("Write", Tool.WRITE_FILE, ("file_path",)),
            FileTool("Edit", Tool.EDIT_FILE, ("file_path",)),
            FileTool("MultiEdit", Tool.EDIT_FILE, ("file_path",)),
            FileTool("NotebookEdit", Tool.EDIT_FILE, ("notebook_path", "file_path")),
            # Gone from current versions (`retired`), still decided for older ones.
            FileTool("Grep", Tool.READ_FILE, ("path",), search=True, optional=True),
            FileTool("Glob", Tool.READ_FILE, ("path",), optional=True),
        ),
        network_tools=("WebFetch",),
        # PowerShell's commands are not shell syntax our analysis reads, and a rewrite
        # to `run` would be bash inside PowerShell; REPL runs JavaScript in-process.
        unconfinable=("PowerShell", "REPL"),
        retired=("Grep", "Glob"),
        # Skills, subagents and commands are folders: each file's frontmatter may hold
        # `hooks`, which Claude Code runs on the host as it runs its settings' hooks.
        # The rest is what Claude Code 2.1.332's own sandbox keeps unwritable in a
        # project, for the same reason: `hooks/` (the scripts settings name),
        # `launch.json` (the dev-server commands its preview starts on the host),
        # `workflows/*.js` (scripts its Workflow tool runs), `routines/`,
        # `scheduled_tasks.json` and `loop.md` (prompts it runs in later sessions, with
        # no person typing them), `output-styles/` (its system prompt).
        project_settings=(".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
                          ".claude/skills", ".claude/agents", ".claude/commands",
                          ".claude/hooks", ".claude/launch.json", ".claude/workflows",
                          ".claude/routines", ".claude/scheduled_tasks.json",
                          ".claude/loop.md", ".claude/output-styles"),
        nested=True,
        user_settings=("settings.json", "settings.local.json"),
        config_dir_var="CLAUDE_CONFIG_DIR", secrets=(".credentials.json",),
        moved_secrets=(".claude.json",),
        modes=_CLAUDE_MODES, asks=True),
    Agent.CODEX: AgentInfo(
        Agent.CODEX, "Codex CLI", ".codex", "hooks.json", "PreToolUse",
        shell_tools=(
            # Codex's hooks name its command tools (`exec_command`, `shell`) "Bash".
            ShellTool("Bash", "PreToolUse"),
        ),
        # And the whole folder (`whole_folder`: its agents, hooks, skills too).
        project_settings=(".codex/config.toml", ".codex/hooks.json"),
        nested=True, whole_folder=True,
        user_settings=("config.toml", "hooks.json"),
        # Codex loads `$CODEX_HOME/.env` at every start (0.171's arg0 `load_dotenv`),
        # over what is set already (`PATH`, `BASH_ENV`, `LD_PRELOAD`; only `CODEX_*`
        # is filtered): every process it starts inherits it, the hook included.
        config_dir_var="CODEX_HOME", secrets=("auth.json", ".env"),
        trust=Trust.CODEX_HOOKS, modes=_CODEX_MODES, asks=True,
        ask_rules="rules/swifty-sandbox.rules"),
    Agent.GEMINI: AgentInfo(
        Agent.GEMINI, "Gemini CLI", ".gemini", "settings.json", "BeforeTool",
        shell_tools=(ShellTool("run_shell_command", "BeforeTool", cwd="dir_path"),),
        # And the whole folder (`whole_folder`): besides the settings, `commands/` (`!{…}`
        # runs a shell on the host), `extensions/` (MCP servers), `policies/`,
        # `skills/`, `agents/`, `.env`.
        project_settings=(".gemini/settings.json",), nested=True, whole_folder=True,
        # A trusted folder's `.gemini/.env`, else `.env` (0.61's `loadEnvironment`):
        # each variable not set already, the bash that runs our rewrite included. Looked
        # for in the folder Gemini starts in and each one above it (`findEnvFile`),
        # then in its home (`$GEMINI_CLI_HOME`, else `~`): `.gemini/.env`, `.env`.
        env_files=(".gemini/.env", ".env"), upward_env_files=True,
        home_env_files=(".env",),
        user_settings=("settings.json",),
        config_dir_var="GEMINI_CLI_HOME", config_var_is_home=True,
        secrets=("oauth_creds.json", "google_accounts.json", ".env"),
        trust=Trust.GEMINI_FOLDER, asks=True),
    Agent.CURSOR: AgentInfo(
        Agent.CURSOR, "Cursor", ".cursor", "hooks.json", "beforeShellExecution",
        shell_tools=(ShellTool("", "beforeShellExecution", rewrites=False),),
        # Cursor is VS Code's fork and reads `.vscode/` too, with Workspace Trust off by
        # default: a `tasks.json` task with `runOn: folderOpen` runs on the host when the
        # folder is opened, `settings.json` names programs (`git.path`, terminal env).
        project_settings=(".cursor/hooks.json", ".cursor/mcp.json", ".vscode"),
        user_settings=("hooks.json", "mcp.json"),
        asks=True),
}


def project_settings() -> tuple[str, ...]:
    """Every agent's settings files in a project, relative to its root."""
    return tuple(dict.fromkeys(name for info in AGENTS.values()
                               for name in info.project_settings))


def env_files(env: Mapping[str, str], home: Path, project: Path) -> tuple[str, ...]:
    """The environment files in a project, relative to its root: those in an agent's
    own folder always; the others (a root `.env`) only for an agent this user or
    project has (its config dir, or its folder in the project, exists), since a root
    `.env` kept read-only for everyone would break everyday work (`cp .env.example
    .env`) for the many who never run an agent that loads it."""
    return tuple(dict.fromkeys(
        name for info in AGENTS.values() for name in info.env_files
        if name.startswith(info.folder + "/") or info.user_dir(env, home).exists()
        or (project / info.folder).exists()))


def _contains(directory: str, path: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def user_dirs(env: Mapping[str, str], home: Path, project: Path | None = None
              ) -> tuple[str, ...]:
    """The agents' user config dirs where a variable moved them away from home
    (absolute), to be protected whole as `~/.codex` and the other default folders are
    (`policy/protected.py`), and the environment files of a moved agent home. Not a
    dir that holds the project or the home (a variable pointed at either): there
    only its settings files (`user_settings`) and secrets are kept."""
    out: list[str] = []
    for info in AGENTS.values():
        moved = info.moved_dir(env)
        if moved is None:
            continue
        directory = str(moved)
        if directory != "/" and not _contains(directory, str(home)) and (
                project is None or not _contains(directory, str(project))):
            out.append(directory)
        agent_home = info.agent_home(env, home)
        out += [str(agent_home / name) for name in info.home_env_files
                if agent_home != home]
    return tuple(dict.fromkeys(out))


def user_secrets(env: Mapping[str, str], home: Path) -> tuple[str, ...]:
    """Every agent's credential files, as patterns: `~/…` in a default folder, the
    absolute path where a variable moved it."""
    out: list[str] = []
    for info in AGENTS.values():
        moved = info.moved_dir(env)
        base = str(moved) if moved is not None else "~/" + info.folder
        names = (*info.secrets, *(info.moved_secrets if moved is not None else ()))
        out += [f"{base}/{name}" for name in names]
    return tuple(dict.fromkeys(out))


def whole_folders() -> tuple[str, ...]:
    """The agents' folders in a project that are theirs whole (`AgentInfo.whole_folder`)."""
    return tuple(info.folder for info in AGENTS.values() if info.whole_folder)


def nested_folders() -> tuple[str, ...]:
    """The agents' folders they read below the project root too (`AgentInfo.nested`)."""
    return tuple(info.folder for info in AGENTS.values() if info.nested)


def upward_env_files(env: Mapping[str, str], home: Path, project: Path) -> tuple[str, ...]:
    """The environment files an agent looks for in the folders above the project too
    (Gemini CLI walks up from where it starts): each ancestor's, absolute. Those in
    the agent's own folder always, the others where `env_files` keeps the project's."""
    kept = env_files(env, home, project)
    out: list[str] = []
    for info in AGENTS.values():
        if not info.upward_env_files:
            continue
        for ancestor in project.parents:
            if ancestor != home:  # `~/.env` and the agents' folders are protected already
                out += [str(ancestor / name) for name in info.env_files if name in kept]
    return tuple(dict.fromkeys(out))


def user_settings(env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """Every agent's settings files of this user, where the agents read them."""
    return tuple(dict.fromkeys(path for info in AGENTS.values()
                               for path in info.user_files(env, home)))


__all__ = ["AGENTS", "Agent", "AgentInfo", "FileTool", "ShellTool", "Trust", "env_files",
           "nested_folders", "project_settings", "upward_env_files", "user_dirs",
           "user_secrets", "user_settings", "whole_folders"]
