"""The terminal prompt of `run`, driven through a real pseudo-terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox.policy import local_rules_path

from ..terminal import Person

pytestmark = pytest.mark.bwrap
SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))
QUESTION = b"[a]lways"
Start = Callable[[str], Person]


@pytest.fixture
def terminal(project: Path, home: Path) -> Iterator[Start]:
    """`swifty-sandbox run --sandbox manual -c COMMAND` at a person's terminal."""
    started: list[Person] = []

    def start(command: str) -> Person:
        env = {"HOME": str(home), "PATH": os.environ["PATH"], "TERM": "dumb"}
        argv = [SCRIPT, "run", "--project", str(project), "--sandbox", "manual", "-c",
                command]
        started.append(Person(argv, project, env=env))
        return started[-1]

    yield start
    for term in started:
        term.kill()
        term.close()


def test_yes_runs(project: Path, home: Path, terminal: Start) -> None:
    term = terminal("echo ran > marker")
    term.expect(QUESTION)
    assert b"[N]o" in term.seen and b"echo ran > marker" in term.seen  # default shown
    term.send(b"y\n")
    assert term.finish() == 0 and (project / "marker").read_text() == "ran\n"


def test_unknown_answer_asks_again(project: Path, home: Path, terminal: Start) -> None:
    term = terminal("echo ran > marker")
    term.expect(QUESTION)
    term.send(b"maybe\n")
    term.expect(b"Please answer y, n or a.")
    term.expect(QUESTION, count=2)  # asked again
    term.send(b"a\n")
    assert term.finish() == 0 and (project / "marker").exists()
    assert term.seen.count(QUESTION) == 2
    local = local_rules_path(project, home).read_text()
    assert "Bash(echo ran)" in local


def test_enter_is_no_in_words_for_a_person(project: Path, home: Path, terminal: Start) -> None:
    term = terminal("echo ran > marker")
    term.expect(QUESTION)
    term.send(b"\n")
    assert term.finish() == 126 and not (project / "marker").exists()
    assert b"not run (you answered no)" in term.seen
    assert b"Do not retry" not in term.seen  # that sentence is for agents


def test_ctrl_d_is_no(project: Path, home: Path, terminal: Start) -> None:
    term = terminal("echo ran > marker")
    term.expect(QUESTION)
    term.send(b"\x04")
    assert term.finish() == 126 and not (project / "marker").exists()


def test_ctrl_c_exits_130_quietly(project: Path, home: Path, terminal: Start) -> None:
    term = terminal("echo ran > marker")
    term.expect(QUESTION)
    term.send(b"\x03")
    assert term.finish() == 130 and not (project / "marker").exists()
    assert b"Traceback" not in term.seen and b"Aborted" not in term.seen


def test_without_a_terminal_the_denial_says_how_to_allow(project: Path, home: Path) -> None:
    result = subprocess.run([SCRIPT, "run", "--project", str(project), "--sandbox",
                             "manual", "--", "make", "build"], capture_output=True,
                            text=True, check=False, stdin=subprocess.DEVNULL,
                            env={"HOME": str(home), "PATH": os.environ["PATH"]})
    assert result.returncode == 126
    assert "non-interactive" in result.stderr
    assert "`Bash(make build)`" in result.stderr and "permissions.local.yaml" in result.stderr
    assert "--sandbox auto" in result.stderr and "on a terminal" in result.stderr


def test_always_is_not_offered_where_no_rule_can_allow(project: Path, home: Path,
                                                       terminal: Start) -> None:
    """A command the analysis cannot see into asks in every mode and no rule lifts
    that: "always" would write a rule and ask again next time, so it is not offered."""
    term = terminal('eval "$x"; echo ran > marker')
    term.expect(b"[N]o (no rule can allow this one for good)")
    assert QUESTION not in term.seen
    term.send(b"a\n")
    term.expect(b"Please answer y or n.")
    term.send(b"y\n")
    assert term.finish() == 0 and (project / "marker").exists()
    assert QUESTION not in term.seen and not local_rules_path(project, home).exists()
