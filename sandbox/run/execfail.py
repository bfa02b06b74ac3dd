"""A command that could not be started: "command not found" (127) or "cannot execute"
(126), as shells report it, confined or not.

Unconfined, `subprocess` raises the exec's own error. Confined, the exec fails inside
the sandbox, where one of two programs reports it: `prlimit` (when it sets the caps;
its own 127/126 and a last stderr line), or bwrap, which prints the error and exits 1
— told apart from a command that exits 1 by bwrap's status: the child was started
(`child-pid`) but no `exit-code` was written. Either way the program is then looked up
as a shell does, from outside (the sandbox sees the same paths): a directory on PATH
that cannot be searched is skipped, so the answer is "command not found", not EACCES.

On a terminal nothing is captured, so that report would reach the person as it is
(`prlimit: failed to execute …`): a command that would fail so, looked up from outside,
is started through `checked_argv` instead, which looks it up again inside (the
sandbox's view decides) and says what a shell says.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import replace

from swifty_sandbox.messages import t
from swifty_sandbox.policy.errors import ExitCode

from .executor import Completed

_BWRAP_EXEC = b"bwrap: execvp "
# $1 the status, $2 the message, $3… the command. The program is looked up again
# inside (a per-project /tmp differs from the host's): found, it is exec'd (a failing
# exec is then the shell's own report); not found, our message and status. Every
# value is an argument, never part of the script.
_CHECK = ('case $3 in */*) [ -f "$3" ] && [ -x "$3" ];; *) command -v -- "$3" >/dev/null;; '
          'esac && shift 2 && exec "$@"; printf \'%s\\n\' "$2" >&2; exit "$1"')
SHELL = "/bin/sh"
_PRLIMIT_EXEC = b"prlimit: failed to execute "


def unconfined_failure(error: OSError, command: Sequence[str], *, cwd: str,
                       path: str | None) -> Completed | None:
    """The result of a command whose exec raised `error`; None when the error is not
    the exec's (a missing working directory, no more processes)."""
    if not command or error.filename != command[0]:
        return None
    code, message = _lookup(command[0], cwd, path) or (ExitCode.NOT_EXECUTABLE, t(
        "run.not_executable", program=command[0], error=error.strerror or error))
    return Completed(code, b"", (message + "\n").encode(), False, False, 0)


def checked_argv(command: Sequence[str], *, cwd: str, path: str | None,
                 shell: str | None = SHELL) -> list[str]:
    """`command`, or — when its exec would fail, looked up from outside — `command`
    behind `shell`'s lookup inside, which reports it as a shell does (127/126 and
    "command not found: NAME"). `shell`: None where the sandbox cannot run it."""
    why = _lookup(command[0], cwd, path) if command and command[0] else None
    if why is None or shell is None:
        return list(command)
    code, message = why
    return [shell, "-c", _CHECK, "swifty-sandbox", str(int(code)), message, *command]


def confined_failure(done: Completed, command: Sequence[str], prefix: Sequence[str], *,
                     cwd: str, path: str | None) -> Completed:
    """`done` with the shell's status and message when the sandbox was built but
    `command` could not be executed in it; else `done` as it is."""
    if done.timed_out or not any("child-pid" in doc for doc in done.status):
        return done
    lines = done.stderr.splitlines(keepends=True)
    if not any("exit-code" in doc for doc in done.status) and done.exit_code == 1:
        program, mark = (prefix or command)[0], _BWRAP_EXEC  # bwrap's own exec failed
    elif done.exit_code in (ExitCode.NOT_FOUND, ExitCode.NOT_EXECUTABLE) and prefix and \
            lines and lines[-1].startswith(_PRLIMIT_EXEC + os.fsencode(command[0]) + b": "):
        program, mark = command[0], _PRLIMIT_EXEC  # prlimit's (seen only when captured)
    else:
        return done
    why = _lookup(program, cwd, path)
    if why is None:
        return done  # executable from outside: leave the reporter's message and status
    code, message = why
    stderr = b"".join(line for line in lines if not line.startswith(mark))
    return replace(done, exit_code=code, stderr=stderr + message.encode() + b"\n")


def _lookup(program: str, cwd: str, path: str | None) -> tuple[ExitCode, str] | None:
    """Why `execvp(program)` fails, found as it searches: None if it would run."""
    if "/" in program:
        candidates = [os.path.join(cwd, program)]
    else:
        candidates = [os.path.join(cwd, entry or ".", program)
                      for entry in (path if path is not None else os.defpath).split(":")]
    problem: str | None = None
    for candidate in candidates:
        try:
            info = os.stat(candidate)
        except OSError as e:  # a directory on PATH that is missing or not searchable
            if "/" in program and e.errno != errno.ENOENT:  # is skipped; a path is not
                problem = problem or os.strerror(e.errno or errno.EACCES)
            continue
        if stat.S_ISREG(info.st_mode) and os.access(candidate, os.X_OK):
            return None
        problem = problem or os.strerror(
            errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EACCES)
    if problem is None:
        return ExitCode.NOT_FOUND, t("run.not_found", program=program)
    return ExitCode.NOT_EXECUTABLE, t("run.not_executable", program=program, error=problem)
