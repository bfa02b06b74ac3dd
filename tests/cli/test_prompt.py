"""The terminal prompt of `run`, driven through a real pseudo-terminal."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swifty_sandbox.policy import local_rules_path

pytestmark = pytest.mark.bwrap
SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))
QUESTION = b"[a]lways"


class Terminal:
    """`swifty-sandbox run --sandbox manual` on a pty of its own (its controlling
    terminal, so Ctrl-C there is a real SIGINT from the line discipline)."""

    def __init__(self, project: Path, home: Path, command: str) -> None:
        env = {"HOME": str(home), "PATH": os.environ["PATH"], "TERM": "dumb"}
        argv = [SCRIPT, "run", "--project", str(project), "--sandbox", "manual", "-c",
                command]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: becomes swifty-sandbox
            # A person's terminal: SIGINT at its default even when this suite was
            # started as a background job (which ignores it, and the ignore is inherited).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(project)
            os.execve(SCRIPT, argv, env)
        self.seen = b""

    def expect(self, text: bytes, count: int = 1, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while self.seen.count(text) < count:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {text!r}; got {self.seen!r}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"ended before {text!r}; got {self.seen!r}"
                self.seen += chunk

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def finish(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                with contextlib.suppress(OSError):  # EIO once the child has gone
                    self.seen += os.read(self.fd, 4096)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError(f"did not finish; got {self.seen!r}")


def test_yes_runs(project: Path, home: Path) -> None:
    term = Terminal(project, home, "echo ran > marker")
    term.expect(QUESTION)
    assert b"[N]o" in term.seen and b"echo ran > marker" in term.seen  # default shown
    term.send(b"y\n")
    assert term.finish() == 0 and (project / "marker").read_text() == "ran\n"


def test_unknown_answer_asks_again(project: Path, home: Path) -> None:
    term = Terminal(project, home, "echo ran > marker")
    term.expect(QUESTION)
    term.send(b"maybe\n")
    term.expect(b"Please answer y, n or a.")
    term.expect(QUESTION, count=2)  # asked again
    term.send(b"a\n")
    assert term.finish() == 0 and (project / "marker").exists()
    assert term.seen.count(QUESTION) == 2
    local = local_rules_path(project, home).read_text()
    assert "Bash(echo ran)" in local


def test_enter_is_no_in_words_for_a_person(project: Path, home: Path) -> None:
    term = Terminal(project, home, "echo ran > marker")
    term.expect(QUESTION)
    term.send(b"\n")
    assert term.finish() == 126 and not (project / "marker").exists()
    assert b"not run (you answered no)" in term.seen
    assert b"Do not retry" not in term.seen  # that sentence is for agents


def test_ctrl_d_is_no(project: Path, home: Path) -> None:
    term = Terminal(project, home, "echo ran > marker")
    term.expect(QUESTION)
    term.send(b"\x04")
    assert term.finish() == 126 and not (project / "marker").exists()


def test_ctrl_c_exits_130_quietly(project: Path, home: Path) -> None:
    term = Terminal(project, home, "echo ran > marker")
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


def test_always_is_not_offered_where_no_rule_can_allow(project: Path, home: Path) -> None:
    """A command the analysis cannot see into asks in every mode and no rule lifts
    that: "always" would write a rule and ask again next time, so it is not offered."""
    term = Terminal(project, home, 'eval "$x"; echo ran > marker')
    term.expect(b"[N]o (no rule can allow this one for good)")
    assert QUESTION not in term.seen
    term.send(b"a\n")
    term.expect(b"Please answer y or n.")
    term.send(b"y\n")
    assert term.finish() == 0 and (project / "marker").exists()
    assert QUESTION not in term.seen and not local_rules_path(project, home).exists()
