"""`swifty-sandbox mcp`: the MCP stdio server (optional extra `swifty-sandbox[mcp]`)."""

from __future__ import annotations

from pathlib import Path

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import UsageError
from swifty_sandbox.sandbox.agents import Sandbox

from .common import mode_option, project_option, reports_errors, sandbox_option, warn


@click.command("mcp")
@project_option
@mode_option
@sandbox_option
@reports_errors
def mcp_command(project: Path | None, mode: str | None, sandbox_mode: str | None) -> None:
    """Serve MCP over stdio: `bash` (confined), `read_file`, `write_file`, `edit_file`.

    \b
    Every call is decided by the project's policy; a denial is an isError result with
    the reason; an ask uses MCP elicitation when the client offers it.
      claude mcp add swifty -- swifty-sandbox mcp --project .
    """
    try:
        # The MCP SDK is an optional extra: only `mcp` loads it.
        from swifty_sandbox.sandbox.agents.mcp_server import serve_stdio
    except ImportError as e:
        raise UsageError(t("mcp.missing")) from e
    box = Sandbox(project, mode=mode, sandbox_mode=sandbox_mode, surface="mcp")
    for warning in box.warnings:
        warn(warning)
    serve_stdio(box)
