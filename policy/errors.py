"""One exception hierarchy, and every exit status swifty-sandbox chooses. The CLI
catches `SwiftyError` once and exits with its `exit_code`."""

from __future__ import annotations

import enum
from typing import ClassVar


class ExitCode(enum.IntEnum):
    """Every exit status swifty-sandbox chooses itself (a command's own passes through).
    Numbers a shell also uses mean what they mean there (124-127, 128 + a signal)."""

    OK = 0  # check: allowed; audit: clean; doctor: can confine
    DENY = 1  # check: denied; audit: findings; doctor: cannot confine
    ERROR = 2  # usage, a broken rule or config file, a missing project; hook: block
    ASK = 3  # check: needs a person
    TIMEOUT = 124  # run: the wall clock ran out
    SETUP = 125  # run: the sandbox could not be set up; the command did not run
    DENIED = 126  # run: denied by policy (the JSON's decision says "deny")
    NOT_EXECUTABLE = 126  # run: found but cannot run (decision "allow"); alias of DENIED
    NOT_FOUND = 127  # run: command not found, as shells report it
    INTERRUPTED = 130  # 128 + SIGINT (Ctrl-C); SIGTERM 143, SIGHUP 129

    @staticmethod
    def signalled(signum: int) -> int:
        """The status of a process ended by a signal, as shells report it."""
        return 128 + signum


_LONGEST_MESSAGE = 400


class SwiftyError(Exception):
    """Base of every error swifty-sandbox reports to a person."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = ExitCode.ERROR

    def diagnostics(self) -> str:
        return str(self)


class PolicyFileError(SwiftyError):
    """A rule or config file that cannot be used; names file, line and column."""

    code = "policy-file"

    def __init__(self, file: str, line: int, column: int, message: str,
                 kind: str = "schema") -> None:
        if len(message) > _LONGEST_MESSAGE:  # a huge rule or scalar is never echoed whole
            message = message[:_LONGEST_MESSAGE - 1] + "…"
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.kind = kind  # yaml-syntax | schema | unknown-tool | malformed-rule | invalid-glob
        super().__init__(f"{file}:{line}:{column}: {message}")


class StoreError(SwiftyError):
    """A rule could not be recorded (the file is a symlink, read-only, the disk full)."""

    code = "store"


class UsageError(SwiftyError):
    code = "usage"
