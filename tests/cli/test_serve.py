"""`swifty-sandbox serve`: the JSON-lines protocol, driven like an agent drives it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import psutil
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


def test_a_permission_request_says_whether_always_can_be_kept(project: Path,
                                                             home: Path) -> None:
    """`always` is false where no rule can allow the request (the analysis could not
    see into it): an "always" answer there is yes once, and writes no rule."""
    agent = Agent(project, "--sandbox", "manual")
    try:
        agent.send(id=1, tool="Bash", command="echo kept")
        offered = agent.receive()
        assert (offered["type"], offered["always"]) == ("permission_request", True)
        agent.send(id=1, type="permission_response", allow=False)
        assert agent.receive()["exit_code"] == 126
        agent.send(id=2, tool="Bash", command='eval "$x"; echo once')
        unseen = agent.receive()
        assert (unseen["type"], unseen["always"]) == ("permission_request", False)
        agent.send(id=2, type="permission_response", allow=True, always=True)
        result = agent.receive()
        assert (result["exit_code"], result["stdout"]) == (0, "once\n")
        assert not local_rules_path(project, home).exists()
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


@pytest.mark.parametrize(("line", "id_"), [
    ('{"id": 7, "tool": "Bash", "command": "\\ud800"}', 7),
    ('{"id": "a", "tool": "Bash", "command": "\\udfff x"}', "a"),
    ('{"id": [1, "b"], "tool": "ReadFile", "path": "\\ud800"}', [1, "b"]),
    ('{"id": 3, "tool": "Bash", "timeout": NaN, "command": "true"}', 3),
    ('{"id": "\\ud800", "tool": "Bash", "command": "true"}', None),  # no id to echo
])
def test_a_bad_line_with_a_readable_id_is_answered_under_that_id(
        agent: Agent, line: str, id_: object) -> None:
    """The agent waits for an answer with its request's id: `"id": null` would leave it
    waiting forever."""
    assert agent.proc.stdin is not None
    agent.proc.stdin.write(line + "\n")
    agent.proc.stdin.flush()
    answer = agent.receive()
    assert (answer["id"], answer["type"]) == (id_, "error"), answer


def test_a_line_with_a_readable_id_but_bytes_that_are_not_utf8(project: Path) -> None:
    script = Path(sys.executable).with_name("swifty-sandbox")
    lines = b'{"id": 5, "tool": "Bash", "command": "\xff"}\n{"id": "\xff", "x": 1}\n'
    done = subprocess.run([str(script), "serve", "--project", str(project)], input=lines,
                          capture_output=True, timeout=60, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(a["id"], a["type"]) for a in answers] == [(5, "error"), (None, "error")]


def test_a_broken_rule_file_fails_closed(agent: Agent, project: Path) -> None:
    agent.send(id=1, tool="Bash", command="true")
    assert agent.receive()["exit_code"] == 0
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text("- rule: Bsh(x)\n  effect: deny\n")
    agent.send(id=2, tool="Bash", command="true")
    error = agent.receive()
    assert error["type"] == "error" and "unknown tool `Bsh`" in str(error["message"])


# -- strictness (docs/protocol.md) ------------------------------------------------------

@pytest.mark.parametrize(("allow", "always"), [
    ("false", False), ("true", False), (1, False), (None, False), (True, "false"),
    (True, 0), (True, None)])
def test_allow_and_always_must_be_booleans(project: Path, home: Path, allow: object,
                                           always: object) -> None:
    agent = Agent(project, "--sandbox", "manual")
    try:
        agent.send(id=1, tool="Bash", command="echo ran > ran.txt")
        assert agent.receive()["type"] == "permission_request"
        agent.send(id=1, type="permission_response", allow=allow, always=always)
        error = agent.receive()
        assert error["id"] == 1 and error["type"] == "error"
        assert "JSON boolean" in str(error["message"])
        result = agent.receive()
        assert result["type"] == "result" and result["exit_code"] == 126
        assert not (project / "ran.txt").exists()
        assert not local_rules_path(project, home).exists()
    finally:
        agent.close()


def test_an_answer_for_an_unknown_id_gets_an_error_at_once(project: Path) -> None:
    agent = Agent(project, "--sandbox", "manual")
    try:
        agent.send(id="a", tool="Bash", command="echo a")
        assert agent.receive()["type"] == "permission_request"
        agent.send(id="zzz", type="permission_response", allow=True, always=False)
        error = agent.receive()  # before "a" is answered
        assert (error["id"], error["type"]) == ("zzz", "error")
        assert 'id "zzz"' in str(error["message"]) and '"a"' in str(error["message"])
        agent.send(id="a", type="permission_response", allow=True, always=False)
        result = agent.receive()
        assert (result["id"], result["stdout"]) == ("a", "a\n")
    finally:
        agent.close()


@pytest.mark.parametrize("timeout", ["5", "", [1], {"s": 1}, True, 0, -1, "NaN"])
def test_a_timeout_that_is_not_a_positive_number_is_an_error(agent: Agent, project: Path,
                                                             timeout: object) -> None:
    agent.send(id=1, tool="Bash", command="echo ran > ran.txt", timeout=timeout)
    error = agent.receive()
    assert (error["id"], error["type"]) == (1, "error")
    assert "positive number" in str(error["message"])
    assert not (project / "ran.txt").exists()
    agent.send(id=2, tool="Bash", command="true", timeout=2.5)
    assert agent.receive()["exit_code"] == 0


def test_twenty_pipelined_requests_each_answered_once(project: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(echo *)\n  effect: allow\n")
    agent = Agent(project, "--sandbox", "manual")
    try:
        assert agent.proc.stdin is not None
        lines = []
        for i in range(20):
            if i % 5 == 0:  # every fifth asks; its answer is pipelined right behind it
                lines.append({"id": i, "tool": "Bash", "command": f"printf 'asked {i}'"})
                lines.append({"id": i, "type": "permission_response", "allow": i % 2 == 0,
                              "always": False})
            elif i % 5 == 1:
                lines.append({"id": i, "tool": "ReadFile", "path": "~/.ssh/id_rsa"})
            else:
                lines.append({"id": i, "tool": "Bash", "argv": ["echo", str(i)]})
        agent.proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
        agent.proc.stdin.flush()
        results: dict[int, dict[str, object]] = {}
        while len(results) < 20:
            message = agent.receive()
            if message["type"] == "permission_request":
                continue
            assert message["type"] == "result" and message["id"] not in results
            results[int(str(message["id"]))] = message
        for i, result in results.items():
            if i % 5 == 0:
                assert result["exit_code"] == (0 if i % 2 == 0 else 126), result
            elif i % 5 == 1:
                assert result["is_error"] is True
            else:
                assert result["stdout"] == f"{i}\n", result["stderr"]
        assert agent.close() == 0
    finally:
        agent.close()


# -- concurrency and EOF (docs/protocol.md) ----------------------------------------------

def _allow(project: Path, *rules: str) -> None:
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text(
        "".join(f"- rule: {rule}\n  effect: allow\n" for rule in rules))


OFF = ("--sandbox", "off", "--mode", "bypassPermissions")


def test_a_fast_command_is_answered_before_a_slow_one_sent_first(project: Path) -> None:
    agent = Agent(project, *OFF)  # confined commands run one at a time (see serve.py)
    try:
        agent.send(id="slow", tool="Bash", command="sleep 1.5; echo slow")
        agent.send(id="fast", tool="Bash", command="echo fast")
        first, second = agent.receive(), agent.receive()
        assert (first["id"], first["stdout"]) == ("fast", "fast\n")
        assert (second["id"], second["stdout"]) == ("slow", "slow\n")
        assert agent.close() == 0
    finally:
        agent.close()


def test_a_decision_is_answered_while_a_confined_command_runs(agent: Agent) -> None:
    agent.send(id="slow", tool="Bash", command="sleep 1.5; echo slow")
    agent.send(id="fast", tool="ReadFile", path="~/.ssh/id_rsa")
    first, second = agent.receive(), agent.receive()
    assert (first["id"], first["is_error"]) == ("fast", True)
    assert (second["id"], second["stdout"]) == ("slow", "slow\n")
    assert agent.close() == 0


def test_a_permission_request_while_another_command_runs(project: Path) -> None:
    _allow(project, "Bash(sleep *)", "Bash(echo long)")
    agent = Agent(project, "--sandbox", "manual")
    try:
        agent.send(id="long", tool="Bash", command="sleep 1.5 && echo long")
        agent.send(id="asks", tool="Bash", command="echo asked")
        request = agent.receive()  # while "long" still runs
        assert (request["id"], request["type"]) == ("asks", "permission_request")
        agent.send(id="asks", type="permission_response", allow=True, always=False)
        results = {str(m["id"]): m for m in (agent.receive(), agent.receive())}
        assert (results["asks"]["stdout"], results["long"]["stdout"]) == ("asked\n", "long\n")
        assert agent.close() == 0
    finally:
        agent.close()


def test_requests_with_the_same_id_run_one_after_another(agent: Agent) -> None:
    agent.send(id=5, tool="Bash", command="sleep 0.5; echo first")
    agent.send(id=5, tool="Bash", command="echo second")
    assert [agent.receive()["stdout"] for _ in range(2)] == ["first\n", "second\n"]


def _processes(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or ()):
            found.append(proc)
    return found


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.mark.parametrize("options", [(), OFF])
def test_eof_kills_the_running_command_and_serve_exits(project: Path,
                                                       options: tuple[str, ...]) -> None:
    seconds = f"29.{uuid.uuid4().int % 10**9}"  # a sleep no one else runs (under 30 s)
    agent = Agent(project, *options)
    try:
        agent.send(id="long", tool="Bash", command=f"sleep {seconds}; echo survived")
        deadline = time.monotonic() + 15
        sleepers: list[psutil.Process] = []
        while not sleepers:  # the control: it runs before stdin closes
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.05)
            sleepers = _processes(f"sleep {seconds}")
        assert agent.proc.stdin is not None
        agent.proc.stdin.close()
        result = agent.receive()  # the answer it owed, written before it exits
        assert (result["id"], result["type"], result["is_error"]) == ("long", "result", True)
        assert result["stdout"] == "" and "stdin closed" in str(result["stderr"])
        assert agent.close() == 0
        end = time.monotonic() + 5
        while _alive(sleepers) and time.monotonic() < end:
            time.sleep(0.05)
        assert _alive(sleepers) == [] and _processes(f"sleep {seconds}") == []
    finally:
        for proc in _alive(_processes(f"sleep {seconds}")):
            proc.kill()
        if agent.proc.poll() is None:
            agent.proc.kill()
        agent.close()


def test_eof_denies_an_ask_and_starts_nothing_more(project: Path) -> None:
    agent = Agent(project, "--sandbox", "manual")
    try:
        agent.send(id=1, tool="Bash", command="echo ran > ran.txt")
        assert agent.receive()["type"] == "permission_request"
        assert agent.proc.stdin is not None
        agent.proc.stdin.close()
        result = agent.receive()
        assert (result["id"], result["exit_code"], result["is_error"]) == (1, 126, True)
        assert agent.close() == 0
        assert not (project / "ran.txt").exists()
    finally:
        agent.close()


# -- docs/protocol.md: every message the server sends matches its schema -------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def schemas() -> dict[str, dict[str, object]]:
    text = DOC.read_text()
    found = re.findall(r"<!-- schema: ([a-z-]+) -->\n```json\n(.*?)\n```", text, re.S)
    return {name: json.loads(body) for name, body in found}


def test_protocol_doc_schemas_are_valid() -> None:
    found = schemas()
    assert set(found) == {"bash-request", "file-request", "permission-response",
                          "bash-result", "file-result", "permission-request", "error",
                          "output"}
    for schema in found.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    request = jsonschema.Draft202012Validator(found["bash-request"])
    assert request.is_valid({"id": 1, "tool": "Bash", "command": "ls", "timeout": 5})
    assert not request.is_valid({"id": 1, "tool": "Bash", "command": "ls", "timeout": "5"})
    answer = jsonschema.Draft202012Validator(found["permission-response"])
    assert answer.is_valid({"id": 1, "type": "permission_response", "allow": False})
    assert not answer.is_valid({"id": 1, "type": "permission_response", "allow": "false"})


def test_what_the_server_sends_matches_the_schemas(project: Path) -> None:
    found = schemas()
    agent = Agent(project, "--sandbox", "manual")
    try:
        sent: list[dict[str, object]] = []
        agent.send(id=1, tool="Bash", argv=["true"])
        sent.append(agent.receive())
        agent.send(id=1, type="permission_response", allow=True, always=False)
        sent.append(agent.receive())
        agent.send(id=2, tool="ReadFile", path="~/.ssh/id_rsa")
        sent.append(agent.receive())
        agent.send(id=3, tool="Bash", command="ls", timeout="5")
        sent.append(agent.receive())
        agent.send(id=4, tool="Bash", command="git push --force")
        sent.append(agent.receive())
        kinds = ["permission-request", "bash-result", "file-result", "error", "bash-result"]
        for message, kind in zip(sent, kinds, strict=True):
            jsonschema.validate(message, found[kind])
    finally:
        agent.close()


def test_a_hard_link_made_between_requests_is_seen(agent: Agent, project: Path,
                                                   home: Path) -> None:
    """A long-lived serve asks for the hidden files' other names on each request: one
    made after an earlier request (which had listed them) is refused all the same."""
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("SECRET\n")
    (project / "a.txt").write_text("a")
    os.link(project / "a.txt", project / "b.txt")  # linked, hiding nothing
    agent.send(id=1, tool="ReadFile", path="b.txt")
    first = agent.receive()
    assert first["decision"]["effect"] == "allow"  # type: ignore[index]
    os.link(home / ".ssh" / "id_rsa", project / "key.txt")
    agent.send(id=2, tool="ReadFile", path="key.txt")
    second = agent.receive()
    assert second["decision"]["effect"] == "deny", second  # type: ignore[index]
    assert "hard link" in second["decision"]["reason"]  # type: ignore[index]


def test_a_file_result_names_where_the_kernel_lands(agent: Agent, project: Path,
                                                    home: Path) -> None:
    (project / "a").mkdir()
    (project / "a" / "b").symlink_to("../..")  # a/b is home/code, a/b/.. is home
    agent.send(id=1, tool="ReadFile", path="a/b/../code/app/notes.md")
    result = agent.receive()
    assert result["path"] == str(project / "notes.md"), result  # not a/code/app/notes.md
    assert os.path.realpath(project / "a/b/../code/app/notes.md") == result["path"]


def test_every_change_to_the_policy_files_holds_on_the_next_request(
        agent: Agent, project: Path, home: Path) -> None:
    """`serve` reads the policy again when a file it loads changed (`Server.refresh`):
    an edit of the same size (at once, and once the file has settled past the 2 s in
    which no identity is trusted), a file made in a layer that had none, one swapped
    for a link to another."""
    def decided() -> object:
        agent.send(id=1, tool="ReadFile", path="notes.txt")
        answer = agent.receive()
        assert isinstance(answer["decision"], dict)
        return answer["decision"]["effect"]

    rules = project / ".swifty" / "permissions.yaml"
    rules.parent.mkdir()
    assert decided() == "allow"
    rules.write_text("- rule: ReadFile(notes.txt)\n  effect: deny \n")
    assert decided() == "deny"
    rules.write_text("- rule: ReadFile(notes.txt)\n  effect: allow\n")  # same size, at once
    assert decided() == "allow"
    time.sleep(2.5)  # settled: its identity is trusted from now on
    assert decided() == "allow"
    rules.write_text("- rule: ReadFile(notes.txt)\n  effect: deny \n")
    assert decided() == "deny"
    time.sleep(2.5)
    assert decided() == "deny"
    other = project / ".swifty" / "other.yaml"
    other.write_text("- rule: ReadFile(notes.txt)\n  effect: allow\n")
    time.sleep(2.5)  # both settled before the swap
    rules.unlink()
    rules.symlink_to(other)  # the link is new; the file it leads to is not
    assert decided() == "allow"
    local = local_rules_path(project, home)
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text("- rule: ReadFile(notes.txt)\n  effect: deny\n")
    assert decided() == "deny"
    assert agent.close() == 0
