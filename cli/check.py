"""`swifty-sandbox check`: decide requests without running anything."""

from __future__ import annotations

from pathlib import Path
from typing import IO

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import Decision, Effect, Request, Tool, UsageError
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.sandbox.agents import Sandbox
from swifty_sandbox.sandbox.agents.api import request_from_json
from swifty_sandbox.sandbox.agents.jsonlines import read_json_lines

from .common import (
    TOOL_NAMES,
    echo_json,
    json_option,
    mode_option,
    project_option,
    reports_errors,
    sandbox_option,
    warned,
)
from .texts import argument, command, option

EXIT_FOR = {Effect.ALLOW: ExitCode.OK, Effect.DENY: ExitCode.DENY,
            Effect.ASK: ExitCode.ASK}


def _print(decision: Decision, as_json: bool) -> None:
    if as_json:
        echo_json(decision.as_json())
        return
    click.echo(f"{decision.effect.value} [{decision.layer.value}] {decision.reason}")


def _run_batch(box: Sandbox, batch: IO[bytes]) -> ExitCode:
    """One object per request line; a line that is not a request gets an error object
    (and makes the exit code 2), and the batch goes on."""
    worst = ExitCode.OK
    order = [ExitCode.OK, ExitCode.ASK, ExitCode.DENY, ExitCode.ERROR]
    name = getattr(batch, "name", "<batch>")
    for line in read_json_lines(batch):
        try:
            if line.error is not None:
                raise ValueError(line.error)
            decision = box.check(request_from_json(line.value))
        except ValueError as e:
            message = t("cli.batch_line", file=name, line=line.number, error=e)
            echo_json({"error": {"code": "batch-line", "message": message}})
            worst = ExitCode.ERROR
            continue
        echo_json(decision.as_json())
        worst = max(worst, EXIT_FOR[decision.effect], key=order.index)
    return worst


@command(help="help.check")
@project_option
@mode_option
@sandbox_option
@json_option
@option("--batch", type=click.File("rb"), help="help.check.batch", metavar="help.meta.file")
@option("-c", "command", help="help.check.command", metavar="help.meta.command")
@option("--tool", "tool_name", type=click.Choice(TOOL_NAMES), default="Bash",
        show_default=True, help="help.check.tool")
@argument("args", nargs=-1, type=click.UNPROCESSED, metavar="help.meta.args")
@reports_errors
def check(project: Path | None, mode: str | None, sandbox_mode: str | None, as_json: bool,
          batch: IO[bytes] | None, command: str | None, tool_name: str,
          args: tuple[str, ...]) -> None:
    """`check` (its help: `help.check`)."""
    tool = Tool.parse(tool_name) or Tool.BASH  # click.Choice admits known names only
    given = sum(x is not None and x != () for x in (batch, command, args or None))
    if given == 0:
        raise UsageError(t("cli.need_request"))
    if given > 1 and tool is Tool.BASH:
        raise UsageError(t("cli.one_request"))
    box = warned(Sandbox(project, mode=mode, sandbox_mode=sandbox_mode, surface="check"))
    if batch is not None:
        raise SystemExit(_run_batch(box, batch))
    if tool is not Tool.BASH:
        if len(args) != 1 or command is not None:
            raise UsageError(t("cli.file_tool_path", tool=tool.value))
        request = Request.file(tool, args[0])
    else:
        request = Request.bash(command) if command is not None else Request.bash_argv(args)
    decision = box.check(request)
    _print(decision, as_json)
    raise SystemExit(EXIT_FOR[decision.effect])
