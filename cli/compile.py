"""`swifty-sandbox compile`: show what a command would run in."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from swifty_sandbox.policy import Mode
from swifty_sandbox.sandbox import Sandbox

from .common import echo_json, json_option, mode_option, project_option, reports_errors

TARGETS = ["bwrap", "seccomp-bpf", "seccomp-pfc"]


@click.command(name="compile")
@click.option("--target", type=click.Choice(TARGETS), required=True)
@project_option
@mode_option
@json_option
@reports_errors
def compile_command(target: str, project: Path | None, mode: str | None,
                    as_json: bool) -> None:
    """Print the sandbox the policy compiles to: the bwrap argv (for a placeholder
    command), or the seccomp filter as BPF bytes or readable PFC text. With --json:
    `{"target", "argv"}`, `{"target", "pfc"}` or `{"target", "bpf_base64"}`."""
    box = Sandbox(project, mode=Mode(mode) if mode else None)
    spec = box.spec()
    if target == "bwrap":
        from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv

        argv = bwrap_argv(spec, ["CMD", "ARG..."], seccomp_fd=3)
        if as_json:
            echo_json({"target": target, "argv": argv})
        else:
            click.echo(shlex.join(argv))
        return
    from swifty_sandbox.sandbox.linux.seccomp import export

    data = export(spec.seccomp, pfc=target == "seccomp-pfc")
    if as_json:
        import base64

        key, value = ("pfc", data.decode()) if target == "seccomp-pfc" else (
            "bpf_base64", base64.b64encode(data).decode())
        echo_json({"target": target, key: value})
    elif target == "seccomp-bpf":
        sys.stdout.buffer.write(data)
    else:
        click.echo(data.decode())
