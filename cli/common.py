"""What every command shares: option types, error reporting (exit codes:
`policy.errors.ExitCode`)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import Mode, SandboxMode, SwiftyError, Tool
from swifty_sandbox.policy.errors import ExitCode

from .texts import option

if TYPE_CHECKING:
    from swifty_sandbox.sandbox.agents import Sandbox

TOOL_NAMES = [*(tool.value for tool in Tool), "Read", "Write", "Edit"]

project_option = option(
    "--project", type=click.Path(file_okay=False, path_type=Path), help="help.project",
    metavar="help.meta.dir")
mode_option = option("--mode", type=click.Choice([m.value for m in Mode]), help="help.mode")
sandbox_option = option(
    "--sandbox", "sandbox_mode", type=click.Choice([m.value for m in SandboxMode]),
    help="help.sandbox")
json_option = option("--json", "as_json", is_flag=True, help="help.json")
backend_option = option("--backend", type=click.Choice(["auto", "bwrap", "landlock"]),
                        help="help.backend")


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False))


def warn(message: str) -> None:
    click.echo(t("cli.warning", message=message), err=True)


def warned(box: Sandbox) -> Sandbox:
    """`box`, once what its settings ignored (a committed file's attempt to loosen them)
    is said on stderr: every command that works with a `Sandbox` says it."""
    for warning in box.warnings:
        warn(warning)
    return box


P = ParamSpec("P")
R = TypeVar("R")


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived: unwind (the executor's cleanup kills the
    command's whole tree on the way) and exit 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT, errno.EFBIG})


def _interrupted(signum: int, frame: object) -> None:
    for other in _ENDING_SIGNALS:  # the first signal wins: cleanup runs uninterrupted
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)


def _quiet_stdout() -> None:
    """stdout failed (a full disk, a closed pipe): nothing more goes there, not even the
    interpreter's last flush, which would print its own traceback."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Map `SwiftyError` to its message on stderr (and JSON on stdout) and exit code;
    end on SIGINT/SIGTERM/SIGHUP with 130/143/129 and no traceback; a failed write to
    stdout is an error (exit 2), not a traceback."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        for signum in _ENDING_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup stays nohup
                signal.signal(signum, _interrupted)
        try:
            return func(*args, **kwargs)
        except SwiftyError as e:
            with contextlib.suppress(OSError):
                if kwargs.get("as_json"):
                    echo_json({"error": {"code": e.code, "message": e.diagnostics()}})
            click.echo(t("cli.error", message=e.diagnostics()), err=True)
            sys.exit(e.exit_code)
        except Interrupted as e:
            sys.exit(ExitCode.signalled(e.signum))
        except OSError as e:  # the system refused (stdout on a full device, …)
            message = t("cli.system_error", error=e.strerror or e)
            if e.errno == errno.EAGAIN and isinstance(e, BlockingIOError) \
                    and e.filename is None:  # fork or clone: no more processes
                message = t("cli.no_processes", error=e.strerror or e)
            if e.errno in _OUTPUT_ERRORS:  # files are written only by the store, which
                message = t("cli.output_failed", error=e.strerror or e)  # says so itself
                _quiet_stdout()
            with contextlib.suppress(OSError):
                click.echo(t("cli.error", message=message), err=True)
            sys.exit(ExitCode.ERROR)

    return wrapper


def _network_entries(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
                     ) -> tuple[str, ...]:
    """Each `--allow-net` entry checked as the option's value: a bad one is a usage
    error of the option (exit 2), with the reason (`pypi` → "write `@pypi`")."""
    if not values:
        return values
    # The network tables load only for a run that names a host (start-up time).
    from swifty_sandbox.policy.network import NetworkEntryError, expand

    for value in values:
        try:
            expand([value])
        except NetworkEntryError as e:
            raise click.BadParameter(str(e), ctx, param) from e
    return values


allow_net_option = option("--allow-net", "allow_net", multiple=True, metavar="help.meta.host",
                          callback=_network_entries, help="help.allow_net")
