"""`doctor`'s view of the agents: where the hook is installed (project and user settings,
through the agents' config-dir variables), whether what it names runs, whether it is on
every event it must be, and whether the agent will run it at all (Codex: the person's
trust; Gemini: its own policy lets the rewritten commands run). From the agent table."""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy.agents import AGENTS, Agent, AgentInfo, Trust

from ..backend import Check


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _ours(agent: Agent, command: object) -> bool:
    return isinstance(command, str) and f"hook {agent.value}" in command \
        and "swifty-sandbox" in command


def installed(agent: Agent, settings: Mapping[str, object]) -> dict[str, list[tuple[int, int,
                                                                                      str]]]:
    """Per event, where our hook is: (group index, hook index, command). Pure."""
    hooks = settings.get("hooks")
    found: dict[str, list[tuple[int, int, str]]] = {}
    if not isinstance(hooks, dict):
        return found
    for event in agent.info.events:
        groups = hooks.get(event)
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, dict):
                continue
            entries = [group] if agent is Agent.CURSOR else group.get("hooks")
            for h, hook in enumerate(entries if isinstance(entries, list) else []):
                command = hook.get("command") if isinstance(hook, dict) else None
                if _ours(agent, command):
                    assert isinstance(command, str)
                    found.setdefault(event, []).append((g, h, command))
    return found


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _read_toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def _codex_trust(info: AgentInfo, path: Path, found: dict[str, list[tuple[int, int, str]]],
                 user_dir: Path, project: Path | None) -> str | None:
    """Why Codex will not run the installed hook, or None. Codex records the person's
    trust per hook as `[hooks.state."<file>:<event>:<group>:<hook>"] trusted_hash`."""
    config = _read_toml(user_dir / "config.toml")
    state = config.get("hooks", {})
    state = state.get("state", {}) if isinstance(state, dict) else {}
    for event, places in found.items():
        for g, h, _ in places:
            entry = state.get(f"{path}:{_snake(event)}:{g}:{h}") if isinstance(
                state, dict) else None
            if not (isinstance(entry, dict) and entry.get("trusted_hash")):
                return t("doctor.agent_untrusted", file=path)
    if project is not None:
        projects = config.get("projects", {})
        entry = projects.get(str(project)) if isinstance(projects, dict) else None
        if not (isinstance(entry, dict) and entry.get("trust_level") == "trusted"):
            return t("doctor.agent_project_untrusted", project=project)
    if info.ask_rules is not None and not (user_dir / info.ask_rules).is_file():
        return t("doctor.agent_no_rules", file=user_dir / info.ask_rules)
    return None


def _gemini_allowed(settings: Mapping[str, object], program: list[str]) -> bool:
    tools = settings.get("tools")
    allowed = tools.get("allowed") if isinstance(tools, dict) else None
    entry = f"run_shell_command({shlex.join([*program, 'run'])})"
    return isinstance(allowed, list) and entry in allowed


def agent_checks(project: Path, home: Path, env: Mapping[str, str]) -> list[Check]:
    """One check per place an agent's hook is installed; nothing for an agent without."""
    checks: list[Check] = []
    for agent, info in AGENTS.items():
        user_dir = info.user_dir(env, home)
        for path, where in ((project / info.folder / info.hook_file, project),
                            (user_dir / info.hook_file, None)):
            settings = _read_json(path)
            found = installed(agent, settings) if settings is not None else {}
            if settings is None or not found:
                continue
            checks.append(_verdict(agent, info, path, where, settings, found, user_dir))
    return checks


def _verdict(agent: Agent, info: AgentInfo, path: Path, project: Path | None,
             settings: Mapping[str, object], found: dict[str, list[tuple[int, int, str]]],
             user_dir: Path) -> Check:
    name = f"{agent.value} hook"
    fix = f"swifty-sandbox init {agent.value}" + ("" if project is not None else " --user")
    command = next(iter(found.values()))[0][2]
    try:
        program = shlex.split(command.split("||")[0])[:-2]  # without `hook AGENT`
    except ValueError:
        program = []
    if not program or not all(os.access(p, os.X_OK) for p in program
                              if p == program[0] or p.startswith("/")):
        return Check(name, False, t("doctor.agent_launcher", file=path, command=command), fix)
    if program[1:2] != ["-E"]:  # installed before `init` named the interpreter with -E
        return Check(name, False, t("doctor.agent_environment", file=path,
                                    command=command), fix)
    missing = [e for e in info.events if e not in found]
    if missing:
        return Check(name, False, t("doctor.agent_events", file=path,
                                    events=", ".join(missing)), fix)
    if info.trust is Trust.CODEX_HOOKS:
        problem = _codex_trust(info, path, found, user_dir, project)
        if problem is not None:
            return Check(name, False, problem, t("doctor.fix.codex_trust"))
    if agent is Agent.GEMINI and not _gemini_allowed(settings, program):
        return Check(name, False, t("doctor.agent_gemini_policy", file=path), fix)
    return Check(name, True, t("doctor.agent_ok", file=path, events=", ".join(info.events)))


__all__ = ["agent_checks", "installed"]


def confined_run(backend_choice: str | None) -> Check:
    """`true` run confined in the project of the current directory, as `run` would
    (`run.doctor.diagnose`'s last line)."""
    # doctor's only: kept off run's start-up path
    from swifty_sandbox.policy import SwiftyError

    # doctor's only: kept off run's start-up path
    from .api import Sandbox

    try:
        result = Sandbox(Path.cwd(), backend=backend_choice, surface="doctor").run(["true"])
    except SwiftyError as e:
        return Check("run", False, str(e), t("doctor.fix.run"))
    if result.exit_code != 0:
        return Check("run", False, result.stderr.strip() or f"exit {result.exit_code}",
                     t("doctor.fix.run"))
    return Check("run", True, t("doctor.run_ok", backend=result.backend or "-"))
