"""Violation reports reach every surface: `serve`'s result, the MCP `bash` tool's text,
and the output of Claude Code's rewritten command (text mode, what the model reads).
Real confined commands; the report from what the kernel saw."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents.hooks import Agent as HookAgent

from .test_hook import claude, hook
from .test_mcp import call, session
from .test_serve import Agent

pytestmark = pytest.mark.bwrap


def _ssh(home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("SECRET\n")
    (home / ".netrc").write_text("machine x password SECRET\n")  # a hidden file


def test_serve_results_carry_the_violations(project: Path, home: Path) -> None:
    _ssh(home)
    agent = Agent(project)
    try:
        agent.send(id=1, tool="Bash",
                   argv=["sh", "-c", "echo x >> ~/outside; ls ~/.ssh; cat ~/.netrc"])
        result = agent.receive()
        agent.send(id=2, tool="Bash", argv=["sh", "-c", "echo fine > ok.txt"])
        control = agent.receive()
    finally:
        agent.close()
    assert not (home / "outside").exists()
    listed = result["violations"]
    assert isinstance(listed, list)
    found = {(v["kind"], v["op"], v["path"]): v for v in listed}
    outside = found[("outside", "write", str(home / "outside"))]
    assert "sandbox.writable" in outside["fix"] and str(home) in outside["fix"]
    hidden = found[("hidden", "read", str(home / ".ssh"))]
    assert "denyRead" in hidden["rule"] and hidden["seen"] == "kernel"
    read = found[("hidden", "read", str(home / ".netrc"))]
    assert "denyRead" in read["rule"] and read["seen"] == "kernel" and read["fix"]
    assert "SECRET" not in json.dumps(result)
    assert control["violations"] == [] and control["exit_code"] == 0


def test_mcp_bash_text_names_what_was_refused(project: Path, home: Path) -> None:
    _ssh(home)
    results, _ = session(project, home,
                         call("bash", command="touch ~/escaped; ls ~/.ssh; cat ~/.netrc"),
                         call("bash", command="echo fine > ok.txt"))
    refused, control = results
    assert not (home / "escaped").exists()
    text = refused["text"]
    assert f"refused the write to {home}/escaped" in text, text
    assert "sandbox.writable" in text
    assert f"refused the read of {home}/.ssh" in text
    assert f"refused the read of {home}/.netrc" in text
    assert "SECRET" not in text
    assert "refused" not in control["text"]


def test_the_claude_rewrite_output_names_what_was_refused(project: Path, home: Path
                                                           ) -> None:
    """Claude Code runs the rewritten command through its Bash tool (pipes, no
    terminal) and gives the model what it printed: the refusal is in it."""
    _ssh(home)
    out = json.loads(hook(HookAgent.CLAUDE_CODE, claude(project, "Bash", {
        "command": "ls ~/.ssh; touch ~/escaped; cat ~/.netrc"})).stdout)
    rewritten = out["hookSpecificOutput"]["updatedInput"]["command"]
    done = subprocess.run(["bash", "-c", rewritten], cwd=project, capture_output=True,
                          text=True, check=False, timeout=60,
                          env={**os.environ, "HOME": str(home)})
    assert not (home / "escaped").exists()
    assert f"refused the read of {home}/.ssh" in done.stderr, done.stderr
    assert f"refused the write to {home}/escaped" in done.stderr
    assert f"refused the read of {home}/.netrc" in done.stderr
    assert "printed by the command" not in done.stderr  # seen by the kernel
    assert "SECRET" not in done.stdout + done.stderr
