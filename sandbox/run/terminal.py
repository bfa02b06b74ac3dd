"""A command run at the user's terminal gets a terminal of its own: a fresh pty whose
slave is its controlling terminal, in a session of its own, relayed to and from the
user's terminal.

Why: the sandbox starts the command in a new session (bwrap's `--new-session`, the
Landlock launcher's own), so that it can never push input into the user's terminal
(TIOCSTI) or become its foreground; without a controlling terminal, though, Ctrl-C and
Ctrl-Z reach only the wrapper, which then ended the command instead of interrupting it,
and window sizes never arrived. With a pty of ours the command has job control on
*our* pty, while the user's terminal is never one of its descriptors: what it injects
reaches only itself. The user's terminal is in raw mode while the command runs (so
Ctrl-C, Ctrl-Z and every other key pass as bytes to the pty, whose line discipline
turns them into the command's signals) and is restored on every way out: the end, an
error, a signal's exception, a suspension. When the command's foreground process
group stops (Ctrl-Z, or a program suspending itself), the wrapper stops itself too,
so the shell's job control sees the job stopped; when it is continued (`fg`), it
continues the command's group. SIGWINCH is relayed as the new size, which the pty
delivers to the command's foreground group.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import selectors
import signal
import sys
import termios
import threading
import time
import tty
from collections.abc import Callable, Sequence
from typing import IO, Any, TypeVar

from swifty_sandbox.messages import t

_STOP_CHECK = 0.1  # seconds between looks at whether the command's group is stopped
_READ = 65536
_PENDING = 1 << 16  # input bytes held for the pty at most (then the keyboard waits)
_LEND_WAIT = 1.0  # seconds a question waits for the relay to let go of the keyboard
A = TypeVar("A")

# The first process of the command on our pty, inside the sandbox: a session of its
# own (when bwrap's `--new-session` has not made it a leader already) with our pty as
# its controlling terminal, then the command in a process group of its own, the
# terminal's foreground. The leader stays as the group's parent in the same session:
# a group without one is orphaned, and the kernel discards Ctrl-Z's SIGTSTP to it. The
# leader ends with the command's status (128 + N for signal N); an exec that fails
# ends as a shell's (127/126: a directory on PATH we may not search is skipped, as
# `execfail` reads it). The signals Python ignores are back at their default.
_HELPER = """\
import os, sys, fcntl, _signal
not_found, not_executable, *command = sys.argv[1:]
try:
    os.setsid()
except OSError:
    pass
fcntl.ioctl(0, 0x540E, 0)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    _signal.signal(_signal.SIGTTOU, _signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpgrp())
    for sig in (_signal.SIGTTOU, _signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(sig, _signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as e:
        program = command[0]
        places = [program] if "/" in program else [
            os.path.join(d or ".", program) for d in os.get_exec_path()]
        def there(place):
            try:
                return bool(os.stat(place))
            except OSError:
                return False
        if isinstance(e, (FileNotFoundError, NotADirectoryError)) or not any(
                there(place) for place in places):
            os.write(2, not_found.encode(errors="surrogateescape"))
            os._exit(127)
        os.write(2, not_executable.replace("{error}", e.strerror or "").encode(
            errors="replace"))
        os._exit(126)
for sig in (_signal.SIGINT, _signal.SIGQUIT, _signal.SIGTSTP, _signal.SIGHUP):
    _signal.signal(sig, _signal.SIG_IGN)
try:
    os.setpgid(pid, pid)
    os.tcsetpgrp(0, pid)
except OSError:
    pass
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
os._exit(128 - code if code < 0 else code)
"""


def helper_argv(command: Sequence[str]) -> list[str]:
    """`command` behind the helper that makes our pty (its stdin) its controlling
    terminal, in a session of its own (`_HELPER`)."""
    program = command[0]
    return [os.path.realpath(sys.executable), "-I", "-S", "-c", _HELPER,
            t("run.not_found", program=program) + "\n",
            t("run.not_executable", program=program, error="{error}") + "\n", *command]


def wanted(stdin: int | IO[bytes] | None, capture: bool) -> bool:
    """Whether a run gets a pty of its own: not captured, the user's terminal on our
    stdin (inherited) and on stdout or stderr, and we are the terminal's foreground
    (in the background, touching the terminal would stop us); from the main thread
    (the relay's signal handlers are installed there)."""
    if capture or stdin is not None or not sys.platform.startswith("linux") or \
            threading.current_thread() is not threading.main_thread():
        return False
    try:
        return os.isatty(0) and (os.isatty(1) or os.isatty(2)) and \
            os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


class Terminal:
    """A pty of ours for one command: the slave for its stdin (and its stdout and
    stderr where ours are the terminal), the master relayed to the user's terminal."""

    def __init__(self) -> None:
        self.outer_in = 0
        self.outer_out = 1 if os.isatty(1) else 2
        self.master, self.slave = os.openpty()  # both close-on-exec
        try:
            termios.tcsetattr(self.slave, termios.TCSANOW, termios.tcgetattr(0))
            self.resize()
            self.name = os.ttyname(self.slave)
        except BaseException:
            self.close()
            raise
        self.saved: list[Any] | None = None
        # A question put on the user's terminal while the command runs (a host outside
        # the network allowlist, from the proxy's thread): the relay stops reading keys
        # and gives the terminal back cooked until it is answered (`lending`).
        self.borrowed, self.lent, self.asking = threading.Event(), threading.Event(), \
            threading.Lock()

    def child_fds(self) -> tuple[int, int | None, int | None]:
        """The command's stdin, stdout and stderr (None: inherited as they are)."""
        return (self.slave, self.slave if os.isatty(1) else None,
                self.slave if os.isatty(2) else None)

    def spawned(self) -> None:
        """The child has its copies of the slave: ours would keep the master from
        seeing the end."""
        if self.slave >= 0:
            os.close(self.slave)
            self.slave = -1

    def close(self) -> None:
        self.restore()
        for fd in (self.master, self.slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = -1

    def lending(self, ask: Callable[[str, int], A]) -> Callable[[str, int], A]:
        """`ask` with the user's terminal lent to it: no key of its answer reaches the
        command, and the terminal is cooked while it reads a line."""
        def asked(host: str, port: int) -> A:
            with self.asking:
                self.borrowed.set()
                self.lent.wait(_LEND_WAIT)  # the relay has let go of the keyboard
                try:
                    return ask(host, port)
                finally:
                    self.lent.clear()
                    self.borrowed.clear()
        return asked

    def resize(self) -> None:
        """The user's terminal's size onto our pty (which signals its foreground)."""
        with contextlib.suppress(OSError):
            size = fcntl.ioctl(self.outer_out, termios.TIOCGWINSZ, b"\0" * 8)
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)

    def raw(self) -> None:
        if self.saved is None:
            self.saved = termios.tcgetattr(self.outer_in)
        tty.setraw(self.outer_in, termios.TCSADRAIN)

    def restore(self) -> None:
        if self.saved is not None:
            with contextlib.suppress(OSError, termios.error):
                termios.tcsetattr(self.outer_in, termios.TCSADRAIN, self.saved)
            self.saved = None

    def stopped_group(self) -> int | None:
        """The command's foreground process group, when it is stopped."""
        try:
            group = os.tcgetpgrp(self.master)
            with open(f"/proc/{group}/stat", "rb") as f:
                state = f.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            return None
        return group if state == b"T" else None

    def stop_command(self) -> int | None:
        """SIGTSTP to the command's foreground group, as Ctrl-Z on its pty sends it
        (a SIGTSTP sent to us, not typed); the group, or None when there is none."""
        try:
            group = os.tcgetpgrp(self.master)
            os.killpg(group, signal.SIGTSTP)
        except OSError:
            return None
        return group

    def suspend(self, group: int | None) -> None:
        """Stop ourselves as the command stopped (job control sees the job stopped);
        once continued, take the terminal again and continue the command's group."""
        self.restore()
        try:
            ours = os.getpgrp() == os.tcgetpgrp(self.outer_in)
        except OSError:
            ours = False
        # SIGSTOP, not SIGTSTP: an orphaned group (no job-control shell above us)
        # discards SIGTSTP, and we must not run on while the command is stopped.
        if ours:
            os.killpg(os.getpgrp(), signal.SIGSTOP)  # the whole job, as Ctrl-Z stops it
        else:
            os.kill(os.getpid(), signal.SIGSTOP)
        self.raw()  # continued (`fg`)
        self.resize()
        if group is not None:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGCONT)


def relay(terminal: Terminal, exited: Callable[[], bool],
          sinks: dict[int, Callable[[bytes], None]], deadline: float | None,
          on_deadline: Callable[[], None], drain: float) -> bool:
    """Relay the user's terminal and our pty (and read `sinks`, the status pipe) until
    the pty's slave is closed by everyone (or `drain` seconds after the exit); at the
    deadline `on_deadline` (kill the tree). Whether the wall clock ran out. The
    user's terminal is raw in here and restored on every way out."""
    flags: set[int] = set()

    def noted(signum: int, frame: object) -> None:
        flags.add(signum)

    old = {s: signal.signal(s, noted) for s in (signal.SIGWINCH, signal.SIGTSTP)}
    sel = selectors.DefaultSelector()
    try:
        terminal.raw()
        return _loop(terminal, sel, exited, sinks, deadline, on_deadline, drain, flags)
    finally:
        sel.close()
        for signum, handler in old.items():
            signal.signal(signum, handler)
        terminal.restore()


def _loop(terminal: Terminal, sel: selectors.BaseSelector, exited: Callable[[], bool],
          sinks: dict[int, Callable[[bytes], None]], deadline: float | None,
          on_deadline: Callable[[], None], drain: float, flags: set[int]) -> bool:
    master, keyboard = terminal.master, terminal.outer_in
    os.set_blocking(master, False)
    sel.register(master, selectors.EVENT_READ)
    sel.register(keyboard, selectors.EVENT_READ)
    for fd in sinks:
        sel.register(fd, selectors.EVENT_READ)
    pending = bytearray()  # keys not yet taken by the pty
    reading_keys, pty_open, timed_out = True, True, False
    exited_at: float | None = None
    checked = 0.0
    given = False  # the terminal is lent to a question
    while pty_open or sinks:
        now = time.monotonic()
        if exited_at is None and exited():
            exited_at = now
        if exited_at is not None and now - exited_at > drain:
            break
        if deadline is not None and now >= deadline and exited_at is None:
            timed_out = True
            on_deadline()
            continue
        if terminal.borrowed.is_set() != given:
            given = _lend(terminal, sel, reading_keys)
        if signal.SIGWINCH in flags:
            flags.discard(signal.SIGWINCH)
            terminal.resize()
        if now - checked >= _STOP_CHECK or signal.SIGTSTP in flags:
            checked = now
            group = terminal.stopped_group()
            if group is None and signal.SIGTSTP in flags:
                group = terminal.stop_command()  # we were told to stop: the command too
            if group is not None or signal.SIGTSTP in flags:
                flags.discard(signal.SIGTSTP)
                terminal.suspend(group)
        wait = _STOP_CHECK if deadline is None else max(0.0, min(_STOP_CHECK, deadline - now))
        for key, mask in sel.select(wait):
            fd = int(key.fd)
            if fd == master:
                if mask & selectors.EVENT_WRITE:
                    pending = _feed(master, pending)
                if mask & selectors.EVENT_READ:
                    data = _read(master)
                    if data == b"":  # every copy of the slave is closed
                        pty_open = False
                        sel.unregister(master)
                    elif data is not None:
                        _write_all(terminal.outer_out, data)
            elif fd == keyboard:
                data = _read(keyboard)
                if data == b"":  # the user's terminal hung up: no more keys
                    sel.unregister(keyboard)
                    reading_keys = False
                elif data is not None:
                    pending = _feed(master, pending + data) if pty_open else bytearray()
            else:
                data = _read(fd)
                if data == b"":
                    sel.unregister(fd)
                    del sinks[fd]
                elif data is not None:
                    sinks[fd](data)
        if pty_open:
            sel.modify(master, selectors.EVENT_READ |
                       (selectors.EVENT_WRITE if pending else 0))
        # Keys wait in the user's terminal while the pty has not taken ours, and while
        # a question has the terminal.
        listening = keyboard in sel.get_map()
        hold = len(pending) >= _PENDING or given
        if reading_keys and listening and hold:
            sel.unregister(keyboard)
        elif reading_keys and not listening and not hold:
            sel.register(keyboard, selectors.EVENT_READ)
    return timed_out


def _lend(terminal: Terminal, sel: selectors.BaseSelector, reading_keys: bool) -> bool:
    """A question wants the terminal (let go of the keyboard, cooked), or is answered
    (raw again, keys to the pty). Whether it is lent now."""
    keyboard = terminal.outer_in
    if terminal.borrowed.is_set():
        if keyboard in sel.get_map():
            sel.unregister(keyboard)
        terminal.restore()
        terminal.lent.set()
        return True
    terminal.raw()
    if reading_keys and keyboard not in sel.get_map():
        sel.register(keyboard, selectors.EVENT_READ)
    return False


def _read(fd: int) -> bytes | None:
    """What `fd` has; None: nothing after all (a spurious wake-up); b"": its end."""
    try:
        return os.read(fd, _READ)
    except BlockingIOError:
        return None
    except OSError as e:  # EIO: the pty's slave is closed by every process
        if e.errno == errno.EIO:
            return b""
        raise


def _feed(master: int, pending: bytearray) -> bytearray:
    try:
        written = os.write(master, pending)
    except BlockingIOError:
        return pending
    except OSError as e:
        if e.errno == errno.EIO:
            return bytearray()
        raise
    return pending[written:]


def _write_all(fd: int, data: bytes) -> None:
    """To the user's terminal; blocking there holds the command back (flow control)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            select.select([], [fd], [], 1.0)
