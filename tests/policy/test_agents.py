"""The agent table (policy/agents.py): what every surface reads about an agent."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox.policy.agents import AGENTS, Agent, project_settings, user_settings
from swifty_sandbox.policy.engine import AGENT_SETTINGS_NAMES
from swifty_sandbox.policy.protected import AGENT_SETTINGS


def test_protected_paths_are_the_tables_settings_files() -> None:
    assert tuple("./" + name for name in project_settings()) == AGENT_SETTINGS
    assert tuple("/" + name for name in project_settings()) == AGENT_SETTINGS_NAMES
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
