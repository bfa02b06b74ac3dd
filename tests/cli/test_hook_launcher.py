"""The agents' file tools write outside the sandbox: they cannot replace the
`swifty-sandbox` the next hook call runs from PATH, nor the `git`, `rg`, `node` or shell
the agent itself runs from it (`pathguard.HOST_PROGRAMS`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.spec.pathguard import HOST_PROGRAMS


@pytest.mark.parametrize("program", HOST_PROGRAMS)
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_the_file_tools_cannot_rewrite_the_launcher_on_path(
        project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, tool: str,
        program: str) -> None:
    """The agents' file tools write outside the sandbox: with the project's venv on
    PATH, a Write to `.venv/bin/swifty-sandbox` (allowed in acceptEdits like any project
    file) replaced what the next hook call runs."""
    import json

    from swifty_sandbox.sandbox.agents.hooks import Agent, answer_hook

    bin_dir = project / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")

    def decision(path: Path) -> str:
        payload = {"session_id": "s", "transcript_path": "/t", "cwd": str(project),
                   "permission_mode": "acceptEdits", "hook_event_name": "PreToolUse",
                   "tool_name": tool, "tool_input": {"file_path": str(path), "content": "x",
                                                     "old_string": "a", "new_string": "b"}}
        answer = answer_hook(Agent.CLAUDE_CODE, json.dumps(payload), ["swifty-sandbox"],
                             home=home)
        out: str = json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"]
        return out

    assert decision(bin_dir / "other-tool") == "allow"  # control: project files are
    assert decision(bin_dir / program) == "deny"


