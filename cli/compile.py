"""`swifty-sandbox compile`: show what a command would run in."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from swifty_sandbox.policy import Mode
from swifty_sandbox.sandbox import Sandbox
from swifty_sandbox.sandbox.backend import TARGETS, backend_for_target

from .common import echo_json, json_option, mode_option, project_option, reports_errors


@click.command(name="compile")
@click.option("--target", type=click.Choice(list(TARGETS)), required=True)
@project_option
@mode_option
@json_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@reports_errors
def compile_command(target: str, project: Path | None, mode: str | None,
                    as_json: bool, command: tuple[str, ...]) -> None:
    """Print the sandbox the policy compiles to, for any platform: the bwrap argv (for
    COMMAND after `--`, else a placeholder), the seccomp filter as BPF bytes or
    readable PFC text, or the seatbelt profile (its parameter values on stderr). With
    --json:
    `{"target", "argv"}`, `{"target", "pfc"}`, `{"target", "bpf_base64"}` or
    `{"target", "profile", "params", "argv"}`."""
    box = Sandbox(project, mode=Mode(mode) if mode else None)
    rendered = backend_for_target(target).render(target, box.spec(),
                                                 list(command) or ["CMD", "ARG..."])
    if as_json:
        echo_json(dict(rendered.json))
        return
    if isinstance(rendered.stdout, bytes):
        sys.stdout.buffer.write(rendered.stdout)
    else:
        click.echo(rendered.stdout)
    if rendered.stderr:
        click.echo(rendered.stderr, err=True, nl=False)
