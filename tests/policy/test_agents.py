"""The agent table (policy/agents.py): what every surface reads about an agent."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox.policy.agents import (
    AGENTS,
    Agent,
    project_settings,
    upward_env_files,
    user_dirs,
    user_secrets,
    user_settings,
    whole_folders,
)
from swifty_sandbox.policy.engine import AGENT_SETTINGS_NAMES
from swifty_sandbox.policy.protected import AGENT_SETTINGS


def test_protected_paths_are_the_tables_settings_files() -> None:
    assert tuple("./" + name for name in project_settings()) == AGENT_SETTINGS
    # The file tools refuse the settings at any depth, and all of a folder that is the
    # agent's whole (Codex's `.codex/`, Gemini CLI's `.gemini/`).
    assert tuple("/" + name for name in (*project_settings(), *whole_folders())) == \
        AGENT_SETTINGS_NAMES
    assert whole_folders() == (".codex", ".gemini")
    assert "./.claude/settings.json" in AGENT_SETTINGS and "./.mcp.json" in AGENT_SETTINGS


def test_config_dir_variables() -> None:
    home = Path("/home/u")
    assert Agent.CLAUDE_CODE.info.user_dir({}, home) == home / ".claude"
    assert Agent.CLAUDE_CODE.info.user_dir({"CLAUDE_CONFIG_DIR": "/c"}, home) == Path("/c")
    assert Agent.CODEX.info.user_dir({"CODEX_HOME": "/x"}, home) == Path("/x")
    # GEMINI_CLI_HOME stands for the home that `.gemini` lies in.
    assert Agent.GEMINI.info.user_dir({"GEMINI_CLI_HOME": "/g"}, home) == Path("/g/.gemini")
    assert Agent.GEMINI.info.user_dir({"GEMINI_CLI_HOME": ""}, home) == home / ".gemini"
    files = user_settings({"CODEX_HOME": "/x"}, home)
    assert Path("/x/hooks.json") in files and home / ".claude" / "settings.json" in files


def test_every_shell_tool_is_matched_on_its_event() -> None:
    for info in AGENTS.values():
        for tool in info.shell_tools:
            assert tool.event in info.events
            matcher = info.matcher(tool.event)
            assert matcher is None or tool.name in matcher
        for name in info.unconfinable:
            matcher = info.matcher(info.event)
            assert matcher is not None and name in matcher


def test_moved_config_dirs_are_protected_whole_and_their_secrets_hidden() -> None:
    home = Path("/home/u")
    env = {"CODEX_HOME": "/x/codex", "CLAUDE_CONFIG_DIR": "/x/claude",
           "GEMINI_CLI_HOME": "/x/g"}
    assert user_dirs(env, home) == ("/x/claude", "/x/codex", "/x/g/.gemini", "/x/g/.env")
    assert user_dirs({}, home) == ()  # the default folders are in the mandatory list
    # Not a dir that holds the home or the project: only its settings files there.
    assert user_dirs({"CODEX_HOME": "/home"}, home) == ()
    assert user_dirs({"CODEX_HOME": "/p"}, home, Path("/p/app")) == ()
    secrets = user_secrets(env, home)
    assert {"/x/codex/auth.json", "/x/codex/.env", "/x/g/.gemini/.env",
            "/x/claude/.credentials.json", "/x/claude/.claude.json"} <= set(secrets)
    assert "~/.codex/.env" in user_secrets({}, home)
    assert "~/.claude/.claude.json" not in user_secrets({}, home)


def test_gemini_env_files_above_the_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "code" / "app"
    project.mkdir(parents=True)
    above = upward_env_files({}, home, project)
    # `.gemini/.env` always; `.env` only for a Gemini CLI user; none in the home itself
    # (protected already).
    assert str(home / "code" / ".gemini" / ".env") in above
    assert str(home / "code" / ".env") not in above
    assert not any(p.startswith(str(home) + "/.") for p in above)
    (home / ".gemini").mkdir()
    assert str(home / "code" / ".env") in upward_env_files({}, home, project)
