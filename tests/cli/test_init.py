"""`swifty-sandbox init AGENT`: merged into empty, existing and malformed settings."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from swifty_sandbox.cli.hook import runner
from swifty_sandbox.cli.init import launcher_problem
from swifty_sandbox.cli.main import main

# Every Claude Code tool the hook decides (policy/agents.py), spelled out: a tool dropped
# from the table must show here.
CLAUDE_TOOLS = "Bash|Monitor|Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|WebFetch|" \
    "PowerShell|REPL"
# The launcher the hook names: this install, by its absolute path (hook.runner()).
PROGRAM = shlex.join(runner())
FILES = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json",
         "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json"}


def init(project: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["init", *args, "--project", str(project)])
    return result.exit_code, result.stdout, result.stderr


def test_claude_code_into_an_empty_project(project: Path) -> None:
    code, out, _ = init(project, "claude-code")
    assert code == 0 and "+++ " in out and "Installed" in out
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    hook = [{"type": "command", "command": f"{PROGRAM} hook claude-code || exit 2"}]
    assert settings == {"hooks": {
        "PreToolUse": [{"matcher": CLAUDE_TOOLS, "hooks": hook}],
        # A skill's `!` lines arrive on an event of their own.
        "PreSkillShellCommand": [{"matcher": "Bash|PowerShell|REPL", "hooks": hook}]}}
    assert not (project / ".gitignore").exists()  # local rules live outside the project


@pytest.mark.parametrize("agent", sorted(FILES))
def test_every_agent_idempotent(project: Path, agent: str) -> None:
    assert init(project, agent)[0] == 0
    path = project / FILES[agent]
    first = path.read_text()
    code, out, _ = init(project, agent)
    assert code == 0 and "already" in out and "+++" not in out
    assert path.read_text() == first
    text = json.dumps(json.loads(first))
    assert f"{PROGRAM} hook {agent} || exit 2" in text


def test_exact_shapes(project: Path) -> None:
    for agent in FILES:
        init(project, agent)
    codex = json.loads((project / ".codex" / "hooks.json").read_text())
    assert codex["hooks"]["PreToolUse"] == [{"matcher": "^Bash$", "hooks": [
        {"type": "command", "command": f"{PROGRAM} hook codex || exit 2"}]}]
    gemini = json.loads((project / ".gemini" / "settings.json").read_text())
    assert gemini["hooks"]["BeforeTool"] == [{"matcher": "^run_shell_command$", "hooks": [
        {"type": "command", "command": f"{PROGRAM} hook gemini || exit 2",
         "name": "swifty-sandbox"}]}]
    # Gemini's own policy lets exactly the rewritten commands run without its prompt.
    assert gemini["tools"] == {"allowed": [f"run_shell_command({PROGRAM} run)"]}
    cursor = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert cursor == {"hooks": {"beforeShellExecution": [
        {"command": f"{PROGRAM} hook cursor || exit 2"}]}, "version": 1}


def test_existing_settings_are_kept(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    existing: dict[str, Any] = {"model": "opus", "permissions": {"allow": ["Bash(npm test)"]},
                "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
                    {"type": "command", "command": "prettier --check"}]}],
                          "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    path.write_text(json.dumps(existing))
    os.chmod(path, 0o600)
    code, out, _ = init(project, "claude-code")
    assert code == 0 and "-{" in out  # the diff shows the old text going
    merged = json.loads(path.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == existing["permissions"]
    assert merged["hooks"]["Stop"] == existing["hooks"]["Stop"]
    assert merged["hooks"]["PreToolUse"][0] == existing["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["PreToolUse"][1]["matcher"] == CLAUDE_TOOLS
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("text", ['{"hooks": ', "[1, 2]", '{"hooks": []}',
                                  '{"hooks": {"PreToolUse": {}}}', "// comment\n{}"])
def test_malformed_settings_are_refused_untouched(project: Path, text: str) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    code, out, err = init(project, "claude-code")
    assert code == 2 and str(path) in err and "nothing was changed" in err
    assert path.read_text() == text and out == ""
    assert list(path.parent.iterdir()) == [path]  # no temp file left behind


def test_user_scope(project: Path, home: Path) -> None:
    code, _, _ = init(project, "gemini", "--user")
    assert code == 0
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    command = settings["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    assert command.endswith(" hook gemini || exit 2") and command.startswith("/")
    assert not (project / ".gemini").exists()


def test_installed_command_resolves_without_the_venv_on_path(project: Path) -> None:
    # Agents run hooks with a PATH of their own: the installed command must not need
    # the venv's bin on it (a bare `swifty-sandbox` failed every tool call).
    init(project, "claude-code")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.dumps({"cwd": str(project), "hook_event_name": "PreToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "ls"}})
    found = subprocess.run(["bash", "-c", command], input=payload, text=True,
                           capture_output=True, check=False,
                           env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    # The launcher gone (uninstalled, moved): 127 must block, not read as allow.
    gone = command.replace(PROGRAM, shlex.quote(str(project / "no-such-launcher")), 1)
    missing = subprocess.run(["bash", "-c", gone], input=payload, text=True,
                             capture_output=True, check=False)
    assert missing.returncode == 2


def test_user_scope_honours_the_config_dir_variables(project: Path, home: Path) -> None:
    # The agent reads its user settings where its variable says: installed there.
    dirs = {"claude-code": ("CLAUDE_CONFIG_DIR", home / "cc", "settings.json"),
            "codex": ("CODEX_HOME", home / "cx", "hooks.json"),
            "gemini": ("GEMINI_CLI_HOME", home / "gh", ".gemini/settings.json")}
    for agent, (variable, where, name) in dirs.items():
        result = CliRunner().invoke(main, ["init", agent, "--user", "--project", str(project)],
                                    env={variable: str(where)})
        assert result.exit_code == 0, result.output
        assert str(where / name) in result.stdout
        assert f"hook {agent}" in (where / name).read_text()
    assert not (home / ".claude").exists() and not (home / ".gemini").exists()
    # Codex's approval rule lies in its config dir too.
    rules = (home / "cx" / "rules" / "swifty-sandbox.rules").read_text()
    assert f'pattern={json.dumps([*runner(), "run", "--approved"])}, decision="prompt"' \
        in rules


def test_codex_init_says_what_the_person_must_trust(project: Path) -> None:
    code, out, _ = init(project, "codex")
    assert code == 0 and "Trust all and continue" in out and "swifty-sandbox doctor" in out


def test_a_launcher_in_the_project_is_warned_about(project: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A venv inside the project: a confined command may rewrite its launcher, and the
    # next hook call would run that outside the sandbox.
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    for name in ("python", "swifty-sandbox"):  # the hook names both (`python -E script`)
        (venv / name).write_text("#!/bin/sh\n")
        (venv / name).chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(venv / "python"))
    problem = launcher_problem(project)
    assert problem is not None and str(project) in problem and "may write" in problem
    (venv / "python").unlink()
    assert "not a program that runs" in str(launcher_problem(project))
    monkeypatch.undo()
    assert launcher_problem(project) is None  # this install lies outside the project


@pytest.mark.parametrize("link", ["folder", "file"])
def test_never_writes_through_a_link(project: Path, home: Path, link: str) -> None:
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text("{}")
    if link == "folder":
        (project / ".claude").symlink_to(elsewhere)
    else:
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").symlink_to(elsewhere / "settings.json")
    code, _, err = init(project, "claude-code")
    assert code == 2 and "symbolic link" in err
    assert (elsewhere / "settings.json").read_text() == "{}"
    assert list(elsewhere.iterdir()) == [elsewhere / "settings.json"]
