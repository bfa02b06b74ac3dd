"""A person at a terminal: a command on a pty of its own, answered once a prompt shows."""

from __future__ import annotations

import os
import pty
import select
import time


def person_at_a_terminal(argv: list[str], env: dict[str, str], wait_for: bytes,
                         answer: bytes, timeout: float = 30) -> tuple[bytes, int]:
    """Run `argv` on a pty; when `wait_for` is on the screen, type `answer` (once).
    What the screen showed, and the exit status."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    seen = b""
    answered = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO once the child has gone
                break
            if not chunk:
                break
            seen += chunk
        if not answered and wait_for in seen:
            os.write(fd, answer)
            answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert answered, seen
    return seen, os.waitstatus_to_exitcode(status)
