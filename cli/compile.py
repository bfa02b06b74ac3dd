"""`swifty-sandbox compile`: show what a command would run in."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import Mode
from swifty_sandbox.sandbox.agents import Sandbox
from swifty_sandbox.sandbox.backend import TARGETS, Host, backend_for_target
from swifty_sandbox.sandbox.oci.backend import DEFAULT_IMAGE

from .common import (
    backend_option,
    echo_json,
    json_option,
    mode_option,
    project_option,
    reports_errors,
    warned,
)
from .texts import argument, command, option


@command("compile", help="help.compile")
@option("--target", type=click.Choice(list(TARGETS)), help="help.compile.target")
@backend_option
@project_option
@mode_option
@json_option
@option("--bundle", type=click.Path(file_okay=False, path_type=Path),
        help="help.compile.bundle", metavar="help.meta.dir")
@option("--image", default=DEFAULT_IMAGE, show_default=True, help="help.compile.image",
        metavar="help.meta.image")
@argument("command", nargs=-1, type=click.UNPROCESSED, metavar="help.meta.args")
@reports_errors
def compile_command(target: str | None, backend: str | None, project: Path | None,
                    mode: str | None,
                    as_json: bool, bundle: Path | None, image: str,
                    command: tuple[str, ...]) -> None:
    """Print the sandbox the policy compiles to, for any platform: the bwrap argv (for
    COMMAND after `--`, else a placeholder), the seccomp filter as BPF bytes or
    readable PFC text, or the seatbelt profile (its parameter values on stderr); `oci`
    writes a runtime bundle (runc, crun) to --bundle DIR, `oci-seccomp` prints the OCI
    `linux.seccomp` object (docker/podman `--security-opt seccomp=FILE`), `kubernetes`
    a Job and a NetworkPolicy as YAML. With --json:
    `{"target", "argv"}`, `{"target", "pfc"}`, `{"target", "bpf_base64"}`,
    `{"target", "profile", "params", "argv"}`, `{"target", "bundle", "config"}`,
    `{"target", "seccomp"}` or `{"target", "objects", "seccomp_profile"}`."""
    if target is None:
        if backend is None or backend == "auto":
            raise click.UsageError(t("cli.compile_target"))
        target = backend
    box = warned(Sandbox(project, mode=Mode(mode) if mode else None, backend=backend))
    placeholder = [] if TARGETS[target] == "oci" else ["CMD", "ARG..."]  # oci: a real one
    # bwrap, seatbelt: described as `run` would launch it here (its working directory,
    # caps and network; dry: placeholder descriptors, nothing made).
    host = Host(network=box.network(), dry=True)
    spec = box.spec() if TARGETS[target] == "oci" else box.run_spec()
    rendered = backend_for_target(target).render(target, spec,
                                                 list(command) or placeholder,
                                                 {"bundle": bundle, "image": image}, host)
    if as_json:
        echo_json(dict(rendered.json))
        return
    if isinstance(rendered.stdout, bytes):
        sys.stdout.buffer.write(rendered.stdout)
    else:
        click.echo(rendered.stdout)
    if rendered.stderr:
        click.echo(rendered.stderr, err=True, nl=False)
