"""The executor: bounded output, timeouts that kill trees, exit statuses."""

from __future__ import annotations

import sys
import time

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
