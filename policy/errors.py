"""One exception hierarchy. The CLI catches `SwiftyError` once and maps `exit_code`."""

from __future__ import annotations

from typing import ClassVar

_LONGEST_MESSAGE = 400


class SwiftyError(Exception):
    """Base of every error swifty-sandbox reports to a person."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = 2

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
