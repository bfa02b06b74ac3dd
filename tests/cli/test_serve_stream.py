"""`serve`'s `output` events (`"stream": true`): the output while the command runs,
bounded, flow-controlled (a client that does not read holds the command back, not our
memory), per id when requests run side by side; the result exactly as without them."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import psutil
import pytest

from .test_serve import Agent, schemas

pytestmark = pytest.mark.bwrap
PY = sys.executable


def _until_result(agent: Agent, id_: object) -> tuple[list[tuple[float, dict[str, Any]]],
                                                      dict[str, Any]]:
    """Every message for `id_` up to its result, each with when it arrived."""
    seen: list[tuple[float, dict[str, Any]]] = []
    while True:
        message = agent.receive()
        if message.get("id") != id_:
            continue
        if message["type"] == "result":
            return seen, message
        seen.append((time.monotonic(), message))


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two results equal but for how long they took."""
    assert {k: v for k, v in a.items() if k not in ("duration_ms", "id")} == \
        {k: v for k, v in b.items() if k not in ("duration_ms", "id")}


def test_output_arrives_while_the_command_runs(project: Path) -> None:
    agent = Agent(project)
    try:
        command = "echo first; sleep 2; echo second >&2"
        agent.send(id=1, tool="Bash", command=command, stream=True)
        events, result = _until_result(agent, 1)
        done = time.monotonic()
        assert [(e["stream"], e["data"]) for _, e in events] == [
            ("stdout", "first\n"), ("stderr", "second\n")]
        assert done - events[0][0] > 1.5, "the first line came only with the result"
        for _, event in events:
            jsonschema.validate(event, schemas()["output"])
        jsonschema.validate(result, schemas()["bash-result"])
        # The control: without `stream`, nothing but the result, and the same result.
        agent.send(id=2, tool="Bash", command=command)
        first = agent.receive()
        assert first["type"] == "result" and first["id"] == 2
        _same(first, result)
    finally:
        agent.close()


def test_events_are_bounded_and_the_result_is_unchanged(project: Path) -> None:
    """3 MiB on stdout, and characters of two bytes across every read's boundary: the
    events carry at most 8 KiB each and exactly the first 1 MiB of the stream, no
    character broken; the result is the truncated one a run without events gives."""
    code = "import sys; sys.stdout.write('\u00e9' * (3 << 19)); sys.stdout.flush()"
    agent = Agent(project)
    try:
        agent.send(id="big", tool="Bash", argv=[PY, "-c", code], stream=True)
        events, result = _until_result(agent, "big")
        data = [e["data"] for _, e in events]
        assert all(len(d.encode()) <= 8192 for d in data)
        assert "".join(data) == "\u00e9" * (1 << 19)  # 1 MiB of output, whole characters
        assert result["truncated"] is True
        agent.send(id="control", tool="Bash", argv=[PY, "-c", code])
        _same(agent.receive(), result)
    finally:
        agent.close()


def test_a_client_that_does_not_read_holds_the_command_back(project: Path) -> None:
    """The command writes 1.6 MiB in 4 KiB steps, counting them in a file. While the
    client reads nothing, the count stays near what the pipes hold and serve's memory
    does not grow; once it reads, everything arrives and the command finishes."""
    code = ("import sys\n"
            "for n in range(1, 401):\n"
            "    sys.stdout.write('x' * 4096); sys.stdout.flush()\n"
            "    open('progress', 'w').write(str(n))\n")
    agent = Agent(project)
    try:
        server = psutil.Process(agent.proc.pid)
        agent.send(id=1, tool="Bash", argv=[PY, "-c", code], stream=True)
        progress = project / "progress"
        deadline = time.monotonic() + 30
        while not progress.exists() or not progress.read_text():
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        rss = server.memory_info().rss
        time.sleep(3)
        held = int(progress.read_text() or 0)
        assert held < 100, f"{held * 4} KiB written while nobody read (not held back)"
        assert server.memory_info().rss - rss < 16 << 20
        events, result = _until_result(agent, 1)
        assert result["exit_code"] == 0 and progress.read_text() == "400"
        assert sum(len(e["data"]) for _, e in events) == 1 << 20  # the first 1 MiB
    finally:
        agent.close()


def test_side_by_side_requests_keep_their_ids(project: Path) -> None:
    """Two commands at once (`--sandbox off` runs them side by side), each printing its
    own word: each id's events hold its own words only, in order, before its result,
    and joined they are its result's stdout."""
    agent = Agent(project, "--sandbox", "off", "--mode", "bypassPermissions")
    try:
        for word in ("alpha", "beta"):
            agent.send(id=word, tool="Bash", stream=True,
                       command=f"for i in 1 2 3 4 5; do echo {word} $i; sleep 0.2; done")
        texts: dict[str, str] = {"alpha": "", "beta": ""}
        results: dict[str, dict[str, Any]] = {}
        while len(results) < 2:
            message = agent.receive()
            id_ = str(message["id"])
            assert id_ not in results, "an event after its request's result"
            if message["type"] == "result":
                results[id_] = message
            else:
                assert message["type"] == "output", message
                texts[id_] += str(message["data"])
        for word in ("alpha", "beta"):
            expected = "".join(f"{word} {i}\n" for i in range(1, 6))
            assert texts[word] == expected == results[word]["stdout"]
    finally:
        agent.close()


def test_stream_must_be_a_boolean(project: Path) -> None:
    agent = Agent(project)
    try:
        agent.send(id=1, tool="Bash", command="touch ran", stream="yes")
        answer = agent.receive()
        assert answer["type"] == "error" and "stream" in str(answer["message"])
        assert not (project / "ran").exists()
    finally:
        agent.close()


def test_the_stream_field_is_in_the_request_schema() -> None:
    request = jsonschema.Draft202012Validator(schemas()["bash-request"])
    assert request.is_valid({"id": 1, "tool": "Bash", "command": "ls", "stream": True})
    assert not request.is_valid({"id": 1, "tool": "Bash", "command": "ls",
                                 "stream": "true"})
