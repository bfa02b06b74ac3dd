"""The `swifty-sandbox` command group."""

from __future__ import annotations

import click

from .audit import audit_command, policy_group, schema_command
from .check import check
from .compile import compile_command
from .doctor import doctor
from .run import run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="swifty-sandbox")
def main() -> None:
    """Confine the shell commands and file operations of an AI coding agent."""


for command in (check, run, compile_command, doctor, audit_command, policy_group,
                schema_command):
    main.add_command(command)
