"""`doctor` on the agents' hooks: installed where the agent reads it, runnable, on every
event, and run by the agent (Codex: the person's trust; Gemini: its own policy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox.cli.main import main
from swifty_sandbox.sandbox.agents.doctor import agent_checks


def init(project: Path, *args: str, env: dict[str, str] | None = None) -> None:
    result = CliRunner().invoke(main, ["init", *args, "--project", str(project)], env=env)
    assert result.exit_code == 0, result.output


def verdicts(project: Path, home: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    return {f"{c.name}{'' if c.ok else ' FAIL'}": c.detail
            for c in agent_checks(project, home, env or {})}


def test_nothing_installed_says_nothing(project: Path, home: Path) -> None:
    assert verdicts(project, home) == {}


def test_claude_and_gemini_installed_and_working(project: Path, home: Path) -> None:
    init(project, "claude-code")
    init(project, "gemini", "--user", env={"GEMINI_CLI_HOME": str(home / "g")})
    found = verdicts(project, home, {"GEMINI_CLI_HOME": str(home / "g")})
    assert set(found) == {"claude-code hook", "gemini hook"}
    assert "PreSkillShellCommand" in found["claude-code hook"]
    # Read where the variable says, not in ~/.gemini.
    assert str(home / "g" / ".gemini" / "settings.json") in found["gemini hook"]
    assert verdicts(project, home) == {"claude-code hook": found["claude-code hook"]}


def test_a_launcher_that_is_gone_and_a_missing_event(project: Path, home: Path) -> None:
    init(project, "claude-code")
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["hooks"]["PreSkillShellCommand"]
    path.write_text(json.dumps(settings))
    assert "not on PreSkillShellCommand" in verdicts(project, home)["claude-code hook FAIL"]
    path.write_text(path.read_text().replace("swifty-sandbox hook", "gone/swifty-sandbox hook"))
    assert "does not run" in verdicts(project, home)["claude-code hook FAIL"]


def test_a_hook_installed_without_minus_e_is_reported(project: Path, home: Path) -> None:
    """A hook `init` wrote before it named the interpreter with `-E` (the script alone):
    a PYTHONPATH into the project reaches it, so doctor asks for `init` again."""
    import shlex

    from swifty_sandbox.cli.hook import runner

    init(project, "claude-code")
    assert "claude-code hook" in verdicts(project, home)  # control: as init writes it
    path = project / ".claude" / "settings.json"
    path.write_text(path.read_text().replace(
        json.dumps(shlex.join(runner()[:2]))[1:-1] + " ", ""))
    assert "without `-E`" in verdicts(project, home)["claude-code hook FAIL"]


def test_gemini_without_its_policy_entry(project: Path, home: Path) -> None:
    init(project, "gemini")
    path = project / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    settings["tools"]["allowed"] = []
    path.write_text(json.dumps(settings))
    assert "tools.allowed" in verdicts(project, home)["gemini hook FAIL"]


def test_codex_installed_but_not_trusted(project: Path, home: Path) -> None:
    # After `init codex`, `codex exec` made no hook call and nothing said why.
    codex_home = home / "cx"
    env = {"CODEX_HOME": str(codex_home)}
    init(project, "codex", "--user", env=env)
    hooks = codex_home / "hooks.json"
    assert "not trusted" in verdicts(project, home, env)["codex hook FAIL"]
    # What Codex writes when the person chooses "Trust all and continue".
    (codex_home / "config.toml").write_text(
        f'[hooks.state."{hooks}:pre_tool_use:0:0"]\ntrusted_hash = "sha256:00"\n')
    assert "the agent runs it" in verdicts(project, home, env)["codex hook"]
    (codex_home / "rules" / "swifty-sandbox.rules").unlink()
    assert "approval rule" in verdicts(project, home, env)["codex hook FAIL"]


def test_codex_project_install_needs_the_project_trusted(project: Path, home: Path) -> None:
    init(project, "codex")
    hooks = project / ".codex" / "hooks.json"
    config = home / ".codex" / "config.toml"
    config.write_text(f'[hooks.state."{hooks}:pre_tool_use:0:0"]\ntrusted_hash = "x"\n')
    assert "not a project Codex trusts" in verdicts(project, home)["codex hook FAIL"]
    config.write_text(config.read_text() + f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert "codex hook" in verdicts(project, home)


def test_doctor_fails_on_an_untrusted_codex_hook(project: Path, home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    init(project, "codex")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert "FAIL codex hook" in result.stdout and "Trust all and continue" in result.stdout
    assert result.exit_code != 0
