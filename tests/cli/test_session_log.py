"""Every surface records in the session log (`run`, `check`, the hook, `serve`, MCP, the
Python API) through the one entry point, and `log` reads it back: text, `--json` lines,
`--since`, `--project`, `--follow` across a rotation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.messages import MESSAGES
from swifty_sandbox.sandbox.agents import sessionlog

pytestmark = pytest.mark.bwrap

SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))
CLIENT = Path(__file__).with_name("mcp_client.py")


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"}
    return env | {"HOME": str(home), "SWIFTY_LANG": "en"}


def cli(home: Path, *args: str, stdin: str = "", cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, *args], input=stdin, text=True, capture_output=True,
                          env=environment(home), check=False, timeout=120, cwd=cwd)


def records(project: Path, home: Path) -> list[dict[str, object]]:
    path = sessionlog.log_file(Path(os.path.realpath(project)), Path(os.path.realpath(home)))
    return list(sessionlog.read(path))


def via_run(project: Path, home: Path, marker: str) -> None:
    done = cli(home, "run", "--project", str(project), "--", "echo", marker)
    assert done.returncode == 0, done.stderr


def via_check(project: Path, home: Path, marker: str) -> None:
    assert cli(home, "check", "--project", str(project), "--", "echo", marker).returncode == 0


def via_hook(project: Path, home: Path, marker: str) -> None:
    payload = {"session_id": "s1", "transcript_path": str(home / "t.jsonl"),
               "cwd": str(project), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": f"echo {marker}"}, "tool_use_id": "toolu_01"}
    done = cli(home, "hook", "claude-code", stdin=json.dumps(payload))
    assert done.returncode == 0, done.stderr


def via_serve(project: Path, home: Path, marker: str) -> None:
    proc = subprocess.Popen([SCRIPT, "serve", "--project", str(project)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=environment(home))
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({"id": 1, "tool": "Bash", "command": f"echo {marker}"})
                         + "\n")
        proc.stdin.flush()
        while (message := json.loads(proc.stdout.readline()))["type"] != "result":
            pass  # output events, if the server streams them
        assert message["exit_code"] == 0, message
    finally:
        proc.stdin.close()
        proc.wait(30)
        proc.stdout.close()


def via_mcp(project: Path, home: Path, marker: str) -> None:
    plan = {"project": str(project), "home": str(home), "approve": None,
            "steps": [{"call": "bash", "args": {"command": f"echo {marker}"}}]}
    done = subprocess.run([sys.executable, str(CLIENT)], input=json.dumps(plan), text=True,
                          capture_output=True, env=environment(home), check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert marker in json.loads(done.stdout)["results"][0]["text"]


def via_api(project: Path, home: Path, marker: str) -> None:
    assert Sandbox(project, home=home).run(["echo", marker]).exit_code == 0


# surface → (how to drive it, the surface name recorded, the kind of record it leaves)
SURFACES: dict[str, tuple[Callable[[Path, Path, str], None], str, str]] = {
    "run": (via_run, "run", "run"),
    "check": (via_check, "check", "decision"),
    "hook": (via_hook, "hook:claude-code", "decision"),
    "serve": (via_serve, "serve", "run"),
    "mcp": (via_mcp, "mcp", "run"),
    "api": (via_api, "api", "run"),
}


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_every_surface_records(project: Path, home: Path, name: str) -> None:
    drive, surface, kind = SURFACES[name]
    marker = f"marker-{name}-5150"
    drive(project, home, marker)
    mine = [r for r in records(project, home) if marker in json.dumps(r["request"])]
    assert mine, records(project, home)
    assert {r["surface"] for r in mine} == {surface}
    assert kind in {r["kind"] for r in mine}
    for entry in mine:
        assert entry["decision"]["effect"] == "allow"  # type: ignore[index]
        if entry["kind"] == "run":
            assert entry["exit_code"] == 0 and "stdout" not in entry


def test_log_text_json_since_and_project(project: Path, home: Path,
                                         outside_temp: Path) -> None:
    box = Sandbox(project, home=home)
    box.check("git push --force")
    box.run(["sh", "-c", "exit 7"])
    text = cli(home, "log", "--project", str(project))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert len(lines) == 2
    assert "deny" in lines[0] and "git push --force" in lines[0] and "not run" in lines[0]
    assert "exit 7" in lines[1] and "api" in lines[1]
    as_json = cli(home, "log", "--json", "--project", str(project))
    parsed = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [p["kind"] for p in parsed] == ["decision", "run"]
    # from inside the project, no --project: the same log
    assert cli(home, "log", cwd=project / ".git").stdout == text.stdout
    assert cli(home, "log", "--since", "1h", "--project", str(project)).stdout == text.stdout
    later = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() + 60))
    assert cli(home, "log", "--since", later, "--project", str(project)).stdout == ""
    bad = cli(home, "log", "--since", "yesterday-ish", "--project", str(project))
    assert bad.returncode == 2 and "--since takes a duration" in bad.stderr
    other = outside_temp / "other"
    (other / ".git").mkdir(parents=True)
    empty = cli(home, "log", "--project", str(other))
    assert empty.stdout == "" and "No records" in empty.stderr


def test_log_in_chinese(project: Path, home: Path) -> None:
    Sandbox(project, home=home).check("git push --force")
    done = subprocess.run([SCRIPT, "log", "--project", str(project)], text=True,
                          capture_output=True, check=False, timeout=60,
                          env=environment(home) | {"SWIFTY_LANG": "zh_CN.UTF-8"})
    assert MESSAGES["log.line_decision"][1].split("}")[-1].strip() in done.stdout


def test_follow_prints_new_records_through_a_rotation(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home)
    box.check("echo before-follow")
    proc = subprocess.Popen([SCRIPT, "log", "--follow", "--json", "--project", str(project)],
                            stdout=subprocess.PIPE, text=True, env=environment(home))
    assert proc.stdout is not None
    try:
        time.sleep(1.5)  # it has read what is there and is waiting
        path = sessionlog.log_file(Path(os.path.realpath(project)),
                                   Path(os.path.realpath(home)))
        box.check("echo first-new")
        os.rename(path, f"{path}.1")  # rotated, as the writer does at its cap
        box.check("echo after-rotation")
        seen = [json.loads(proc.stdout.readline())["request"]["command"] for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
    assert seen == ["echo before-follow", "echo first-new", "echo after-rotation"]


def test_log_shows_hostile_text_without_interpreting_it(project: Path, home: Path) -> None:
    """A command string with a terminal escape (retitle, clear), a bidirectional override
    and a newline: `log` shows them as escapes, in one line, and `--json` keeps them
    escaped too."""
    hostile = "echo \x1b]0;owned\x07\x1b[2J \u202egnp.exe\u202c\nrm -rf ~ \x9b31m"
    Sandbox(project, home=home).check(["sh", "-c", hostile])
    for args in ((), ("--json",)):
        done = cli(home, "log", "--project", str(project), *args)
        assert len(done.stdout.splitlines()) == 1
        assert not any(c in done.stdout for c in "\x1b\x07\u202e\u202c\x9b")
    text = cli(home, "log", "--project", str(project)).stdout
    assert "\\x1b]0;owned\\x07" in text and "\\u202e" in text and "\\x0a" in text
    as_json = cli(home, "log", "--json", "--project", str(project)).stdout
    assert json.loads(as_json)["request"]["argv"][2] == hostile
