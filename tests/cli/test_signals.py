"""SIGINT, SIGTERM and SIGHUP to `run` (confined or not) and `serve`: every child ends,
no traceback, exit 130 / 143 / 129. Real processes, judged from outside: the process
tree is recorded before the signal and must be gone after it."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

SWIFTY = Path(sys.executable).with_name("swifty-sandbox")
# A background loop and a foreground loop: two levels of children that ignore nothing.
LOOPS = "(while :; do sleep 0.31; done) & while :; do sleep 0.37; done"
SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]


_STARTED: list[subprocess.Popen[bytes]] = []


def _default_sigint() -> None:
    # This suite may run as a background job, whose SIGINT is ignored (and inherited):
    # the process under test must start as a person's foreground command would.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args: list[str], *, stdin: int | None = None) -> subprocess.Popen[bytes]:
    # swifty-sandbox keeps an ignored signal ignored, as shells' background jobs expect.
    proc = subprocess.Popen([str(SWIFTY), *args], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    _STARTED.append(proc)
    return proc


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    yield
    # A failed test may leave the whole tree running (an unconfined command outlives a
    # killed swifty-sandbox and holds its pipes): kill every descendant, never wait on
    # the pipes unbounded.
    while _STARTED:
        proc = _STARTED.pop()
        try:
            tree = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            tree = []
        if proc.poll() is None:
            proc.kill()
        for p in tree:
            with contextlib.suppress(psutil.Error):
                p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=10)


def _sleepers(proc: subprocess.Popen[bytes], deadline: float = 30.0) -> list[psutil.Process]:
    """The command's processes once both loops run (the sandboxed ones included: they are
    descendants in the host's PID namespace too)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            tree = psutil.Process(proc.pid).children(recursive=True)
            names = [" ".join(p.cmdline()) for p in tree]
        except psutil.Error:
            tree, names = [], []
        if any("sleep 0.31" in n for n in names) and any("sleep 0.37" in n for n in names):
            return tree
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the command did not start")


def _gone(tree: list[psutil.Process], deadline: float = 5.0) -> list[psutil.Process]:
    """Processes of the tree still alive after a while (zombies count as gone). SIGKILL
    is sent at once, but on a loaded machine a process may take a moment to die."""
    end = time.monotonic() + deadline
    while True:
        alive = []
        for p in tree:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.05)


def _ends_cleanly(proc: subprocess.Popen[bytes], signum: int, code: int) -> None:
    tree = _sleepers(proc)
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    alive = _gone(tree)
    for p in alive:  # leave nothing behind, even when the test fails
        p.kill()
    assert proc.returncode == code, err
    assert b"Traceback" not in err, err
    assert alive == []


@pytest.mark.parametrize(("signum", "code"), SIGNALS)
def test_run_unconfined_ends_the_command(project: Path, signum: int, code: int) -> None:
    proc = _start(["run", "--project", str(project), "--sandbox", "off", "--mode",
                   "bypassPermissions", "-c", LOOPS])
    _ends_cleanly(proc, signum, code)


@pytest.mark.bwrap
@pytest.mark.unprivileged
@pytest.mark.parametrize(("signum", "code"), SIGNALS)
def test_run_confined_ends_the_command(project: Path, signum: int, code: int) -> None:
    proc = _start(["run", "--project", str(project), "-c", LOOPS])
    _ends_cleanly(proc, signum, code)


@pytest.mark.parametrize(("signum", "code"), SIGNALS)
def test_serve_ends_the_running_command(project: Path, signum: int, code: int) -> None:
    proc = _start(["serve", "--project", str(project), "--sandbox", "off", "--mode",
                   "bypassPermissions"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"id": 1, "tool": "Bash", "command": LOOPS}).encode() + b"\n")
    proc.stdin.flush()
    _ends_cleanly(proc, signum, code)


@pytest.mark.parametrize(("signum", "code"), SIGNALS)
def test_serve_waiting_for_input_ends_quietly(project: Path, signum: int, code: int) -> None:
    proc = _start(["serve", "--project", str(project)], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(b'{"id": 1, "tool": "ReadFile", "path": "README"}\n')
    proc.stdin.flush()
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline())["type"] == "result"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=15)
    assert (proc.returncode, b"Traceback" in err) == (code, False), err
