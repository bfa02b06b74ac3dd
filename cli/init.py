"""`swifty-sandbox init AGENT [--user]`: install `hook AGENT` into the agent's settings.

The settings file is merged, never replaced: everything in it stays, our hook entry is
added once (a second run changes nothing), the change is shown as a diff, and the file
is replaced atomically. A file that is not valid JSON, or whose `hooks` is not what the
agent expects, is refused (exit 2) and left untouched.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
from pathlib import Path
from typing import assert_never

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import SwiftyError, find_project
from swifty_sandbox.policy.agents import Agent
from swifty_sandbox.policy.store import write_atomically

from .common import project_option, reports_errors
from .hook import runner


class SettingsFileError(SwiftyError):
    code = "settings-file"


def hook_command(agent: Agent, user: bool) -> str:
    """The command the agent runs. `|| exit 2`: if swifty-sandbox cannot be found (127)
    the agent must block, not read the failure as "no objection". A project file is
    shared, so it names the command on PATH; the user's own file names this install."""
    program = shlex.join(runner()) if user else "swifty-sandbox"
    return f"{program} hook {agent.value} || exit 2"


def _entry(agent: Agent, event: str, command: str) -> dict[str, object]:
    if agent is Agent.CURSOR:
        return {"command": command}
    hook: dict[str, object] = {"type": "command", "command": command}
    if agent is Agent.GEMINI:
        hook["name"] = "swifty-sandbox"
    elif agent is not Agent.CLAUDE_CODE and agent is not Agent.CODEX:
        assert_never(agent)
    return {"matcher": agent.info.matcher(event), "hooks": [hook]}


def _installed(groups: list[object], agent: Agent) -> bool:
    marker = f"hook {agent.value}"
    for group in groups:
        if not isinstance(group, dict):
            continue
        hooks = group.get("hooks") if agent is not Agent.CURSOR else [group]
        for hook in hooks if isinstance(hooks, list) else []:
            command = hook.get("command") if isinstance(hook, dict) else None
            if isinstance(command, str) and "swifty-sandbox" in command and marker in command:
                return True
    return False


def merged_settings(agent: Agent, path: Path, text: str | None, command: str) -> str | None:
    """The settings text with our hook added; None when it is already there. Pure."""
    try:
        settings = json.loads(text) if text is not None and text.strip() else {}
    except ValueError as e:
        raise SettingsFileError(t("init.malformed", file=path, error=e, agent=agent.value)) \
            from e
    if not isinstance(settings, dict):
        raise SettingsFileError(t("init.unexpected", file=path, key="(top level)",
                                  expected="a JSON object", agent=agent.value))
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError(t("init.unexpected", file=path, key="hooks",
                                  expected="a JSON object", agent=agent.value))
    changed = False
    for event in agent.info.events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsFileError(t("init.unexpected", file=path, key=f"hooks.{event}",
                                      expected="a JSON list", agent=agent.value))
        if not _installed(groups, agent):
            groups.append(_entry(agent, event, command))
            changed = True
    if not changed:
        return None
    if agent is Agent.CURSOR:
        settings.setdefault("version", 1)
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsFileError(t("init.unreadable", file=path, error=e)) from e


def write_atomic(path: Path, text: str) -> None:
    """Write beside the file and rename over it (`store.write_atomically`); a new
    settings file is 0644, as agents create theirs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text, new_mode=0o644)


def _show(path: Path, old: str | None, new: str) -> None:
    diff = difflib.unified_diff((old or "").splitlines(keepends=True),
                                new.splitlines(keepends=True),
                                fromfile=str(path) if old is not None else "/dev/null",
                                tofile=str(path))
    click.echo("".join(diff), nl=False)


@click.command("init")
@click.argument("agent", type=click.Choice([a.value for a in Agent]))
@click.option("--user", is_flag=True,
              help="Install in your own settings (~/.claude, ~/.codex, …) for every "
                   "project, instead of the project's.")
@project_option
@reports_errors
def init_command(agent: str, user: bool, project: Path | None) -> None:
    """Install the swifty-sandbox hook into AGENT's settings, showing the diff.

    \b
      claude-code  .claude/settings.json   (PreToolUse)
      codex        .codex/hooks.json       (PreToolUse)
      gemini       .gemini/settings.json   (BeforeTool)
      cursor       .cursor/hooks.json      (beforeShellExecution)
    (Your "always allow" rules live in ~/.swifty/projects/, outside the project, so
    nothing needs adding to .gitignore.)
    """
    which = Agent(agent)
    root = find_project(project if project is not None else Path.cwd())
    info = which.info
    path = (info.user_dir(os.environ, Path(os.path.expanduser("~"))) if user
            else root / info.folder) / info.hook_file
    for part in (path.parent, path):
        # A cloned repository could ship `.claude` or the file as a link elsewhere:
        # never write through one.
        if part.is_symlink():
            raise SettingsFileError(t("init.symlink", file=part, agent=which.value))
    old = _read(path)
    new = merged_settings(which, path, old, hook_command(which, user))
    if new is None:
        click.echo(t("init.already", agent=which.display, file=path))
    else:
        _show(path, old, new)
        write_atomic(path, new)
        click.echo(t("init.done", agent=which.display, file=path))
