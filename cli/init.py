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
from swifty_sandbox.policy.agents import Agent, Trust
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.store import write_atomically

from .common import project_option, reports_errors
from .hook import runner
from .texts import argument, command, option


class SettingsFileError(SwiftyError):
    code = "settings-file"


def hook_command(agent: Agent) -> str:
    """The command the agent runs: this install by its absolute path (agents run hooks
    with a PATH of their own, often without the venv's `bin`; a bare name failed with
    "command not found" on every tool call). `|| exit 2`: if it cannot be started after
    all (127) the agent must block, not read the failure as "no objection"."""
    return f"{shlex.join(runner())} hook {agent.value} || exit 2"


def launcher_problem(project: Path) -> str | None:
    """Why the launcher the hook names is not safe to name, or None. It must be a file
    that runs, outside the project and the temp dirs: a confined command may write
    there, and the agent's next hook call would run what it wrote, unconfined."""
    command = runner()
    program = Path(command[0])
    if not os.access(program, os.X_OK):
        return t("init.launcher_missing", path=program)
    for path in (Path(p) for p in command if p.startswith("/")):  # the interpreter, script
        real = Path(os.path.realpath(path))
        for root in (project, Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")):
            if is_within(str(real), os.path.realpath(root)):
                return t("init.launcher_writable", path=path, root=root)
    return None


def gemini_allow(settings: dict[str, object], path: Path) -> bool:
    """Gemini's own policy must let the rewritten command run: in its default mode every
    shell command waits for a confirmation (and headless, the shell tool is not even
    offered). `tools.allowed` with our `run` as the prefix allows exactly the commands
    that go through `swifty-sandbox run`; the hook rewrites every command into that
    form, deciding first. True when the entry was added."""
    entry = f"run_shell_command({shlex.join([*runner(), 'run'])})"
    tools = settings.setdefault("tools", {})
    if not isinstance(tools, dict):
        raise SettingsFileError(t("init.unexpected", file=path, key="tools",
                                  expected="a JSON object", agent=Agent.GEMINI.value))
    allowed = tools.setdefault("allowed", [])
    if not isinstance(allowed, list):
        raise SettingsFileError(t("init.unexpected", file=path, key="tools.allowed",
                                  expected="a JSON list", agent=Agent.GEMINI.value))
    if entry in allowed:
        return False
    allowed.append(entry)
    return True


def codex_rules() -> str:
    """Codex's approval rules (`$CODEX_HOME/rules/`) for the rewritten commands: an ask
    of ours (`run --approved`) is put to the person by Codex's own prompt (and refused
    where nobody can answer, as in `codex exec`); every other rewritten command runs
    without a prompt of Codex's, because swifty-sandbox decided it and confines it."""
    program = runner()
    return (
        "# Written by `swifty-sandbox init codex`; the hook rewrites every command to run\n"
        "# through `swifty-sandbox run`. Most restrictive rule wins.\n"
        f"prefix_rule(pattern={json.dumps([*program, 'run', '--approved'])}, "
        'decision="prompt", justification="swifty-sandbox: this command needs your '
        'approval")\n'
        f"prefix_rule(pattern={json.dumps([*program, 'run'])}, decision=\"allow\")\n")


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
    changed = agent is Agent.GEMINI and gemini_allow(settings, path)
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


@command("init", help="help.init")
@argument("agent", type=click.Choice([a.value for a in Agent]), metavar="help.meta.agent")
@option("--user", is_flag=True, help="help.init.user")
@project_option
@reports_errors
def init_command(agent: str, user: bool, project: Path | None) -> None:
    """`init AGENT` (its help: `help.init`)."""
    which = Agent(agent)
    root = find_project(project if project is not None else Path.cwd())
    info = which.info
    user_dir = info.user_dir(os.environ, Path(os.path.expanduser("~")))
    path = (user_dir if user else root / info.folder) / info.hook_file
    old = _read(_not_a_link(which, path))
    new = merged_settings(which, path, old, hook_command(which))
    _write(which, path, old, new)
    if info.ask_rules is not None:
        # Codex reads its rules from the user's config dir only: installed there either way.
        rules = _not_a_link(which, user_dir / info.ask_rules)
        old_rules = _read(rules)
        wanted = codex_rules()
        _write(which, rules, old_rules, None if old_rules == wanted else wanted)
    problem = launcher_problem(root)
    if problem is not None:
        click.echo(t("init.launcher_warning", problem=problem), err=True)
    if info.trust is Trust.CODEX_HOOKS:
        click.echo(t("init.trust_codex", file=path, project=root) if not user
                   else t("init.trust_codex_user", file=path))
    elif info.trust is Trust.GEMINI_FOLDER and not user:
        click.echo(t("init.trust_gemini", project=root))
    click.echo(t("init.check"))


def _not_a_link(agent: Agent, path: Path) -> Path:
    """A cloned repository could ship `.claude` or the file as a link elsewhere: never
    write through one."""
    for part in (path.parent, path):
        if part.is_symlink():
            raise SettingsFileError(t("init.symlink", file=part, agent=agent.value))
    return path


def _write(agent: Agent, path: Path, old: str | None, new: str | None) -> None:
    if new is None:
        click.echo(t("init.already", agent=agent.display, file=path))
        return
    _show(path, old, new)
    write_atomic(path, new)
    click.echo(t("init.done", agent=agent.display, file=path))
