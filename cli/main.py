"""The `swifty-sandbox` command group.

Subcommands are imported when invoked (click's lazy-group pattern): `run` and `check`
are on an agent's hot path and should not pay for `audit`'s or `doctor`'s imports.
"""

from __future__ import annotations

import importlib

import click

from .texts import TableGroup, install, option, text

install()  # click's own words from the message table too

_COMMANDS = {
    "check": "check:check",
    "run": "run:run",
    "compile": "compile:compile_command",
    "doctor": "doctor:doctor",
    "audit": "audit:audit_command",
    "policy": "audit:policy_group",
    "schema": "audit:schema_command",
    "serve": "serve:serve",
    "hook": "hook:hook",
    "init": "init:init_command",
    "mcp": "mcp:mcp_command",
    "log": "log:log_command",
    "report": "report:report_command",
}


class LazyGroup(TableGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
        assert isinstance(command, click.Command)
        return command


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version

    click.echo(text("usage.version") % {"prog": "swifty-sandbox",
                                        "version": version("swifty-sandbox")})
    ctx.exit()


@click.group(cls=LazyGroup, help_key="help.main",
             context_settings={"help_option_names": ["-h", "--help"]})
@option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
        help="help.version")
def main() -> None:
    """The group (its help: `help.main`)."""
