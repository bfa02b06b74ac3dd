"""The only module that spawns processes.

`execute()` runs an argv (a bwrap command line, or the command itself when the user
chose `--sandbox off`) and returns what happened: exit status, bounded output, whether
the wall clock ran out. It owns the process tree: on timeout or when the command ends,
everything it started is killed, whatever signals it ignores.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import IO, TYPE_CHECKING

from swifty_sandbox.policy.errors import ExitCode

if TYPE_CHECKING:
    from .terminal import Terminal

EXIT_TIMEOUT = ExitCode.TIMEOUT
DEVNULL = subprocess.DEVNULL
_DRAIN_AFTER_EXIT = 1.0  # seconds to read what is left in the pipes after the exit
_CHUNK = 65536
EVENT_BYTES = 8192  # the most one on-output call carries
OnOutput = Callable[[str, bytes], None]  # ("stdout" | "stderr", bytes) as they arrive
_ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class BoundedBuffer:
    """Keeps the first and the last `limit // 2` bytes of a stream, so memory stays
    bounded whatever the command prints; the middle is dropped and marked."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit - limit // 2
        self.tail_limit = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_limit:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim rarely, not on every chunk
                del self.tail[:len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_limit + self.tail_limit

    def value(self) -> bytes:
        tail = bytes(self.tail[-self.tail_limit:]) if self.tail_limit else b""
        if not self.truncated:
            return bytes(self.head) + tail
        dropped = self.total - len(self.head) - len(tail)
        marker = f"\n[... {dropped} bytes truncated ...]\n".encode()
        return bytes(self.head) + marker + tail


@dataclass(frozen=True, slots=True)
class Completed:
    exit_code: int
    stdout: bytes
    stderr: bytes
    truncated: bool
    timed_out: bool
    duration_ms: int
    status: tuple[dict[str, object], ...] = ()  # bwrap's --json-status-fd documents
    network: tuple[dict[str, object], ...] | None = None  # proxied runs: destinations
    backend: str | None = None  # which backend confined it (sandbox/run/selection.py)
    # What the sandbox refused it (sandbox/run/violations.py): {kind, op, path|host, …}
    violations: tuple[dict[str, object], ...] = ()


# Starts the process: `execute` hands it the Popen call (the observer makes it on a
# thread under its filter, `linux/observe.py`).
Spawner = Callable[[Callable[[], "subprocess.Popen[bytes]"]], "subprocess.Popen[bytes]"]


def kill_tree(pid: int) -> None:
    """SIGKILL the process, its process group and every descendant still visible."""
    import psutil  # imported here: a confined run that ends by itself never needs it

    try:
        victims = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        victims = []
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def streamed(name: str, keep: Callable[[bytes], None], on_output: OnOutput,
             limit: int) -> Callable[[bytes], None]:
    """A sink that keeps every chunk and also passes it on at once, in pieces of at most
    EVENT_BYTES, until `limit` bytes of the stream have gone (what the result could hold
    whole; past it, the result's tail says the rest). `on_output` blocking holds the
    command back: its pipe fills and its writes wait (a reader that does not read costs
    no memory)."""
    sent = 0

    def sink(data: bytes) -> None:
        nonlocal sent
        keep(data)
        part = data[:max(0, limit - sent)]
        sent += len(part)
        for start in range(0, len(part), EVENT_BYTES):
            on_output(name, part[start:start + EVENT_BYTES])

    return sink


class _SignalsHeld:
    """The ending signals' Python handlers held back while the command starts. A
    handler that raises (the CLI's `Interrupted`) anywhere between the fork and the
    `try` that owns the process would unwind past the cleanup and leave the command
    running, holding our caller's pipes (an unconfined one has nothing else to end
    it). The first such signal is noted instead and handed to its own handler by
    `release`, once the process is ours to kill. Only in the main thread (where
    Python runs handlers); ignored and default dispositions are left as they are."""

    def __init__(self) -> None:
        self.saved: dict[int, Callable[[int, FrameType | None], object]] = {}
        self.arrived: int | None = None
        if threading.current_thread() is threading.main_thread():
            for signum in _ENDING_SIGNALS:
                handler = signal.getsignal(signum)
                if callable(handler):
                    self.saved[signum] = handler
                    signal.signal(signum, self._note)

    def _note(self, signum: int, frame: FrameType | None) -> None:
        if self.arrived is None:
            self.arrived = signum

    def release(self) -> None:
        saved, self.saved = self.saved, {}
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        if self.arrived is not None and self.arrived in saved:
            signal.raise_signal(self.arrived)  # its handler runs now, here


def _status_from_returncode(code: int) -> int:
    return 128 - code if code < 0 else code


def execute(
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    timeout: float | None = None,
    capture: bool = True,
    output_bytes: int = 1 << 20,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    pass_fds: Sequence[int] = (),
    status_fd: int | None = None,
    preexec: Callable[[], None] | None = None,
    close_after_spawn: Sequence[int] = (),
    own_tree: bool = False,
    on_output: OnOutput | None = None,
    terminal: Terminal | None = None,
    spawn: Spawner | None = None,
) -> Completed:
    """Run `argv` to completion (or timeout); `status_fd` is the read end of bwrap's
    --json-status-fd pipe, read alongside the output. `close_after_spawn` are fds only
    the child needs (the pipe's write end: the read end sees EOF when bwrap exits);
    execute() closes them, even when it fails or is interrupted.
    `own_tree`: the command reaps its own tree when it exits (bwrap: the PID
    namespace dies with it), so a normal exit needs no tree walk.
    `on_output`: each stream's output as it arrives (`streamed`). `terminal`: the
    command's pty (`terminal.py`), relayed to the user's terminal; execute() closes
    it. `spawn`: starts the process (the observer's, on a thread under its filter);
    None: here."""
    start = time.monotonic()
    out_buf, err_buf = BoundedBuffer(output_bytes), BoundedBuffer(output_bytes)
    status_raw = bytearray()
    sel = selectors.DefaultSelector()
    sinks: dict[int, Callable[[bytes], None]] = {}
    deadline = start + timeout if timeout is not None else None
    held = _SignalsHeld()
    try:
        proc = _spawn(argv, env=env, cwd=cwd, capture=capture, stdin=stdin,
                      pass_fds=pass_fds, preexec=preexec,
                      close_after_spawn=close_after_spawn, terminal=terminal, spawn=spawn)
    except BaseException:
        sel.close()
        held.release()
        raise
    try:
        held.release()  # a signal that came meanwhile ends the run here: the finally kills
        kept: tuple[tuple[str, IO[bytes] | None, Callable[[bytes], None]], ...] = (
            ("stdout", proc.stdout, out_buf.add), ("stderr", proc.stderr, err_buf.add))
        for name, stream, sink in kept:
            if stream is not None:
                if on_output is not None:
                    sink = streamed(name, sink, on_output, output_bytes)
                os.set_blocking(stream.fileno(), False)
                sel.register(stream.fileno(), selectors.EVENT_READ)
                sinks[stream.fileno()] = sink
        if status_fd is not None:
            sel.register(status_fd, selectors.EVENT_READ)
            sinks[status_fd] = status_raw.extend
        if terminal is not None:
            timed_out = _relay(proc, terminal, sinks, deadline, own_tree=own_tree)
        else:
            timed_out = _pump(proc, sel, sinks, deadline, own_tree=own_tree)
        if timed_out:
            kill_tree(proc.pid)
        proc.wait()
    finally:
        _close(proc, sel, terminal)

    status = tuple(_json_documents(bytes(status_raw)))
    return Completed(
        exit_code=EXIT_TIMEOUT if timed_out else _status_from_returncode(proc.returncode),
        stdout=out_buf.value(),
        stderr=err_buf.value(),
        truncated=out_buf.truncated or err_buf.truncated,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - start) * 1000),
        status=status,
    )


def _close(proc: subprocess.Popen[bytes], sel: selectors.BaseSelector,
           terminal: Terminal | None) -> None:
    """Every way out of a run: our ends closed, and nothing of the command left."""
    sel.close()
    if terminal is not None:
        terminal.close()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    if proc.poll() is None:
        kill_tree(proc.pid)
        proc.wait()


def _spawn(argv: Sequence[str], *, env: dict[str, str] | None, cwd: str | None,
           capture: bool, stdin: int | IO[bytes] | None, pass_fds: Sequence[int],
           preexec: Callable[[], None] | None, close_after_spawn: Sequence[int],
           terminal: Terminal | None, spawn: Spawner | None = None
           ) -> subprocess.Popen[bytes]:
    """The child, in a new session; on a pty of ours, its stdin (and the outputs that
    are the user's terminal) are the pty's slave."""
    child_out: int | None = subprocess.PIPE if capture else None
    child_err: int | None = child_out
    if terminal is not None:
        stdin, child_out, child_err = terminal.child_fds()
    def start_process() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(argv), env=env, cwd=cwd, stdin=stdin, stdout=child_out, stderr=child_err,
            pass_fds=tuple(pass_fds), start_new_session=True,
            preexec_fn=preexec,  # no threads here; rlimits must be set in the child
        )

    try:
        proc = start_process() if spawn is None else spawn(start_process)
    except BaseException:
        if terminal is not None:
            terminal.close()
        raise
    finally:  # they are ours to close from the call on, whatever happens
        for fd in close_after_spawn:
            os.close(fd)
    if terminal is not None:
        terminal.spawned()
    return proc


def _pump(proc: subprocess.Popen[bytes], sel: selectors.BaseSelector,
          sinks: dict[int, Callable[[bytes], None]], deadline: float | None, *,
          own_tree: bool) -> bool:
    """Read each stream into its sink until all are closed (or a moment after the
    exit: a descendant may hold them open); at the deadline, kill the tree. Whether
    the wall clock ran out."""
    timed_out = False
    exited_at: float | None = None
    while sinks:
        now = time.monotonic()
        if exited_at is None and proc.poll() is not None:
            exited_at = now
            if not own_tree:
                kill_tree(proc.pid)  # nothing outlives the command
        if exited_at is not None and now - exited_at > _DRAIN_AFTER_EXIT:
            break
        if deadline is not None and now >= deadline and exited_at is None:
            timed_out = True
            kill_tree(proc.pid)
            proc.wait()
            exited_at = time.monotonic()
            continue
        wait = 0.05 if exited_at is None else _DRAIN_AFTER_EXIT
        if deadline is not None and exited_at is None:
            wait = max(0.0, min(wait, deadline - now))
        for key, _ in sel.select(wait):
            fd = int(key.fd)
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            if data:
                sinks[fd](data)
            else:
                sel.unregister(fd)
                del sinks[fd]
    if deadline is not None and not timed_out:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
    return timed_out


def _relay(proc: subprocess.Popen[bytes], terminal: Terminal,
           sinks: dict[int, Callable[[bytes], None]], deadline: float | None, *,
           own_tree: bool) -> bool:
    """`_pump` for a command on a pty of ours: the terminal relayed both ways."""
    from .terminal import relay  # runs at a terminal only (start-up time)

    def exited() -> bool:
        if proc.poll() is None:
            return False
        if not own_tree:
            kill_tree(proc.pid)  # nothing outlives the command
        return True

    def on_deadline() -> None:
        kill_tree(proc.pid)
        proc.wait()

    timed_out = relay(terminal, exited, sinks, deadline, on_deadline, _DRAIN_AFTER_EXIT)
    if deadline is not None and not timed_out:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    return timed_out


def _json_documents(raw: bytes) -> list[dict[str, object]]:
    """bwrap writes one JSON object per line."""
    docs = []
    for line in raw.decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                docs.append(value)
    return docs
