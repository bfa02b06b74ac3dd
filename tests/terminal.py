"""A person at a terminal: a program on a pty of its own (its controlling terminal, so
what is typed there reaches it through the line discipline, Ctrl-C as a real SIGINT),
the screen read from the master. The one pty driver of the tests."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time
from pathlib import Path
from types import TracebackType


class Person:
    """A terminal (our pty's master) with a program as its session leader, started as a
    person's shell starts it: SIGINT at its default (even when this suite runs as a
    background job, which ignores it, and the ignore is inherited), in `cwd`, with `env`
    (None: ours, TERM=dumb). Used as a context manager, the program is killed and the
    terminal closed at the end."""

    def __init__(self, argv: list[str], cwd: Path | None = None, *,
                 env: dict[str, str] | None = None, rows: int = 24, cols: int = 80) -> None:
        if env is None:
            env = {**os.environ, "TERM": "dumb", "PYTHONSTARTUP": ""}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                if cwd is not None:
                    os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.reaped = False
        self.resize(rows, cols)
        self.seen = b""

    def __enter__(self) -> Person:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.kill()
        self.close()

    def resize(self, rows: int, cols: int) -> None:
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def read(self, seconds: float) -> bytes:
        """What the screen shows in the next `seconds`."""
        got = b""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # EIO once every holder of the pty's slave has gone
                    break
                if not chunk:
                    break
                got += chunk
        self.seen += got
        return got

    def expect(self, text: bytes, count: int = 1, timeout: float = 30) -> None:
        """Wait until `text` has been on the screen `count` times (a bound on a hang,
        not a check of speed)."""
        deadline = time.monotonic() + timeout
        while self.seen.count(text) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r}; the screen: {self.seen!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"ended before {text!r}; the screen: {self.seen!r}"
                self.seen += chunk

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def finish(self, timeout: float = 30) -> int:
        """The program's exit status, once it has ended (the screen read meanwhile)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.reaped = True
                self.read(0.2)
                return os.waitstatus_to_exitcode(status)
        self.kill()
        raise AssertionError(f"did not finish; the screen: {self.seen!r}")

    def kill(self) -> None:
        """Its process group killed and the program reaped, unless already reaped (its
        number may then be another process's)."""
        if self.reaped:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        self.reaped = True

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def person_at_a_terminal(argv: list[str], env: dict[str, str], wait_for: bytes,
                         answer: bytes, timeout: float = 30) -> tuple[bytes, int]:
    """Run `argv` on a pty; when `wait_for` is on the screen, type `answer` (once).
    What the screen showed, and the exit status."""
    with Person(argv, env=env) as term:
        term.expect(wait_for, timeout=timeout)
        term.send(answer)
        status = term.finish(timeout)
        return term.seen, status
