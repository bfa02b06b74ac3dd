"""The executor: bounded output, timeouts that kill trees, exit statuses."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from swifty_sandbox.sandbox.run.executor import BoundedBuffer, execute


def test_bounded_buffer_keeps_head_and_tail() -> None:
    buf = BoundedBuffer(10)
    for chunk in (b"0123", b"4567", b"89ab", b"cdef"):
        buf.add(chunk)
    assert buf.truncated and buf.total == 16
    assert buf.value() == b"01234\n[... 6 bytes truncated ...]\nbcdef"


def test_bounded_buffer_small_output_untouched() -> None:
    buf = BoundedBuffer(100)
    buf.add(b"hello")
    assert not buf.truncated and buf.value() == b"hello"


def test_exit_status_and_signals() -> None:
    assert execute(["sh", "-c", "exit 7"]).exit_code == 7
    assert execute(["sh", "-c", "kill -9 $$"]).exit_code == 137


def test_timeout_is_124_and_fast() -> None:
    start = time.monotonic()
    done = execute(["sh", "-c", "trap '' TERM; sleep 30"], timeout=0.5)
    assert done.timed_out and done.exit_code == 124
    assert time.monotonic() - start < 3


def test_output_is_captured_while_running() -> None:
    code = "import sys\nfor i in range(3): print(i, flush=True)\nprint('err', file=sys.stderr)"
    done = execute([sys.executable, "-c", code])
    assert done.stdout == b"0\n1\n2\n" and done.stderr == b"err\n"


def test_background_child_holding_the_pipe_does_not_hang() -> None:
    start = time.monotonic()
    done = execute(["sh", "-c", "sleep 30 & echo parent-done"])
    assert done.stdout == b"parent-done\n"
    assert time.monotonic() - start < 3


def test_a_signal_while_the_command_starts_still_ends_it() -> None:
    """Ctrl-C (or SIGTERM, SIGHUP) that lands while the command is being started — on a
    loaded machine the command may run long before we return from the fork — still
    reaches its handler, once the process is ours to kill, and the command is killed:
    it used to escape the cleanup and keep running (test_signals' unconfined run)."""
    started: list[subprocess.Popen[bytes]] = []

    def spawn(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        started.append(start())
        signal.raise_signal(signal.SIGINT)  # as the spawn returns
        return started[0]

    # Python's own handler, whatever an earlier test in this process left (the CLI's
    # `_interrupted`, from a command run in-process, raises its own exception).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            execute(["sleep", "30"], capture=False, spawn=spawn)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert started[0].poll() == -signal.SIGKILL
