"""What every command shares: exit codes, option types, error reporting."""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

import click

from swifty_sandbox.policy import Mode, SandboxMode, SwiftyError, Tool
from swifty_sandbox.policy.messages import t


class CheckExit(enum.IntEnum):
    """`check` exit codes (SPEC §4)."""

    ALLOW = 0
    DENY = 1
    ERROR = 2
    ASK = 3


TOOL_NAMES = [*(tool.value for tool in Tool), "Read", "Write", "Edit"]

project_option = click.option(
    "--project", type=click.Path(file_okay=False, path_type=Path),
    help="Project root (default: the git top-level of the current directory, else it).")
mode_option = click.option(
    "--mode", type=click.Choice([m.value for m in Mode]),
    help="Permission mode (default: permissions.defaultMode from config.yaml).")
sandbox_option = click.option(
    "--sandbox", "sandbox_mode", type=click.Choice([m.value for m in SandboxMode]),
    help="auto: confined and auto-allowed; manual: confined, asks stay; off: UNCONFINED.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False))


def warn(message: str) -> None:
    click.echo(t("cli.warning", message=message), err=True)


P = ParamSpec("P")
R = TypeVar("R")


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Map `SwiftyError` to its message on stderr (and JSON on stdout) and exit code."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except SwiftyError as e:
            if kwargs.get("as_json"):
                echo_json({"error": {"code": e.code, "message": e.diagnostics()}})
            click.echo(t("cli.error", message=e.diagnostics()), err=True)
            sys.exit(e.exit_code)

    return wrapper
