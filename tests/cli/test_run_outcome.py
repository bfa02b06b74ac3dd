"""Whether the command ran, on every surface: a run the sandbox could not set up (125)
or the policy denied says `"ran": false` and `is_error`, with the policy's decision
kept as it was (allow: the policy let it; the run did not happen); a command that
exits 125 itself ran, and says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main

from ..sandbox.test_fail_closed import fake_bwrap
from .test_mcp import call, session
from .test_serve import Agent

SWIFTY = Path(sys.executable).with_name("swifty-sandbox")


@pytest.fixture
def broken_bwrap(outside_temp: Path, home: Path) -> Path:
    """The user's configured bwrap, failing as where user namespaces are off, as the
    only backend: the sandbox cannot be set up."""
    fake = fake_bwrap(outside_temp / "bin", (
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"))
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(
        f"sandbox: {{bwrap: {fake}, backend: bwrap}}\n")
    return fake


def serve_one(project: Path, **request: object) -> dict[str, Any]:
    agent = Agent(project)
    try:
        agent.send(id=1, **request)
        return dict(agent.receive())
    finally:
        assert agent.close() == 0


def run_json(project: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["run", "--project", str(project), "--json", *args])
    data: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, data


def test_a_run_the_sandbox_could_not_set_up_did_not_run_on_every_surface(
        broken_bwrap: Path, project: Path, home: Path) -> None:
    marker = project / "ran"
    result = Sandbox(project, home=home).run(["touch", str(marker)])
    assert (result.exit_code, result.ran, result.is_error) == (125, False, True)
    # The policy's decision stays what it was: the command was allowed …
    assert result.decision.effect.value == "allow"
    # … and `ran` says that it still did not happen.
    assert result.as_json()["ran"] is False and not marker.exists()
    code, data = run_json(project, "--", "touch", str(marker))
    assert (code, data["exit_code"], data["ran"], data["is_error"]) == (125, 125, False, True)
    assert data["decision"]["effect"] == "allow" and "did not run" in data["stderr"]
    served = serve_one(project, tool="Bash", argv=["touch", str(marker)])
    assert (served["type"], served["exit_code"], served["ran"], served["is_error"]) == (
        "result", 125, False, True)
    [mcp], _ = session(project, home, call("bash", command=f"touch {marker}"))
    assert mcp["is_error"] and mcp["text"].endswith("[not run: exit code 125]"), mcp
    assert not marker.exists()


def test_a_denied_command_did_not_run(project: Path, home: Path) -> None:
    result = Sandbox(project, home=home).run("git push --force")
    assert (result.exit_code, result.ran, result.is_error) == (126, False, True)
    served = serve_one(project, tool="Bash", command="git push --force")
    assert (served["exit_code"], served["ran"], served["is_error"]) == (126, False, True)


@pytest.mark.bwrap
@pytest.mark.unprivileged
@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_command_that_exits_125_itself_ran(project: Path, home: Path, backend: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: 125 is also a status any program may choose; only what our launcher
    reports (bwrap's status, the Landlock launcher's) says the run did not happen."""
    if backend == "landlock":
        from swifty_sandbox.sandbox.landlock.backend import kernel_abi

        if not kernel_abi()[0]:
            pytest.skip("no Landlock on this kernel")
    monkeypatch.setenv("SWIFTY_BACKEND", backend)
    own = ["sh", "-c", "echo own >&2; exit 125"]
    result = Sandbox(project, home=home).run(own)
    assert (result.exit_code, result.ran, result.is_error, result.stderr) == (
        125, True, False, "own\n")
    assert result.backend == backend and result.as_json()["ran"] is True
    code, data = run_json(project, "--", *own)
    assert (code, data["ran"], data["is_error"]) == (125, True, False)
    served = serve_one(project, tool="Bash", argv=own)
    assert (served["exit_code"], served["ran"], served["is_error"]) == (125, True, False)
    [mcp], _ = session(project, home, call("bash", command="echo own >&2; exit 125"))
    assert not mcp["is_error"] and mcp["text"].endswith("[exit code 125]"), mcp
