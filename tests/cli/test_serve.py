"""`swifty-sandbox serve`: the JSON-lines protocol, driven like an agent drives it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox.policy.store import local_rules_path

pytestmark = pytest.mark.bwrap


class Agent:
    def __init__(self, project: Path, *options: str) -> None:
        script = Path(sys.executable).with_name("swifty-sandbox")
        self.proc = subprocess.Popen([str(script), "serve", "--project", str(project),
                                      *options], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(self, **message: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, object]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "serve ended early"
        message: dict[str, object] = json.loads(line)
        return message

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.proc.stdout.close()


@pytest.fixture
def agent(project: Path) -> Iterator[Agent]:
    a = Agent(project)
    yield a
    a.close()


def test_commands_run_confined_one_after_another(agent: Agent, project: Path) -> None:
    agent.send(id=1, tool="Bash", command="echo hi > out.txt && cat out.txt")
    first = agent.receive()
    assert (first["id"], first["type"], first["exit_code"], first["stdout"]) == (
        1, "result", 0, "hi\n")
    agent.send(id=2, tool="Bash", argv=["sh", "-c", "echo x > ~/outside"])
    second = agent.receive()
    assert second["exit_code"] != 0 and not (project.parent.parent / "outside").exists()
    agent.send(id=3, tool="Bash", command="sleep 5", timeout=0.5)
    third = agent.receive()
    assert (third["exit_code"], third["timed_out"], third["is_error"]) == (124, True, True)
    assert agent.close() == 0


def test_denial_is_an_error_result_and_the_loop_goes_on(agent: Agent) -> None:
    agent.send(id="a", tool="Bash", command="git push --force")
    denied = agent.receive()
    assert denied["exit_code"] == 126 and denied["is_error"] is True
    assert denied["decision"]["category"] == "git-destructive"  # type: ignore[index]
    agent.send(id="b", tool="ReadFile", path="~/.ssh/id_ed25519")
    read = agent.receive()
    assert read["is_error"] is True and read["decision"]["category"] == "deny-read"  # type: ignore[index]


def test_permission_request_and_always(project: Path, home: Path) -> None:
    agent = Agent(project, "--sandbox", "manual")
    try:
        agent.send(id=7, tool="Bash", command="echo approved")
        request = agent.receive()
        assert (request["id"], request["type"]) == (7, "permission_request")
        agent.send(id=7, type="permission_response", allow=True, always=True)
        result = agent.receive()
        assert (result["exit_code"], result["stdout"]) == (0, "approved\n")
        assert "Bash(echo approved)" in local_rules_path(project, home).read_text()
        agent.send(id=8, tool="Bash", command="echo approved")  # now allowed by the rule
        again = agent.receive()
        assert again["type"] == "result" and again["decision"]["layer"] == "rule"  # type: ignore[index]
        agent.send(id=9, tool="Bash", command="echo other")
        assert agent.receive()["type"] == "permission_request"
        agent.send(id=9, type="permission_response", allow=False, always=False)
        refused = agent.receive()
        assert refused["exit_code"] == 126 and "Denied by the user" in str(refused["stderr"])
    finally:
        agent.close()


def test_bad_lines_get_errors(agent: Agent) -> None:
    agent.send(id=1, tool="Shell", command="ls")
    assert agent.receive()["type"] == "error"
    assert agent.proc.stdin is not None
    agent.proc.stdin.write("not json\n")
    agent.proc.stdin.flush()
    assert agent.receive() == {"id": None, "type": "error",
                               "message": "Expecting value: line 1 column 1 (char 0)"}
    agent.send(id=2, tool="Bash", command="true")
    assert agent.receive()["exit_code"] == 0


def test_a_broken_rule_file_fails_closed(agent: Agent, project: Path) -> None:
    agent.send(id=1, tool="Bash", command="true")
    assert agent.receive()["exit_code"] == 0
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text("- rule: Bsh(x)\n  effect: deny\n")
    agent.send(id=2, tool="Bash", command="true")
    error = agent.receive()
    assert error["type"] == "error" and "unknown tool `Bsh`" in str(error["message"])
