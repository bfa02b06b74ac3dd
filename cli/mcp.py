"""`swifty-sandbox mcp`: the MCP stdio server (optional extra `swifty-sandbox[mcp]`)."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy import UsageError
from swifty_sandbox.sandbox.agents import Sandbox
from swifty_sandbox.sandbox.spec import treewatch

from .common import mode_option, project_option, reports_errors, sandbox_option, warned
from .texts import command


@command("mcp", help="help.mcp")
@project_option
@mode_option
@sandbox_option
@reports_errors
def mcp_command(project: Path | None, mode: str | None, sandbox_mode: str | None) -> None:
    """`mcp` (its help: `help.mcp`)."""
    try:
        # The MCP SDK is an optional extra: only `mcp` loads it.
        from swifty_sandbox.sandbox.agents.mcp_server import serve_stdio
    except ImportError as e:
        raise UsageError(t("mcp.missing")) from e
    box = warned(Sandbox(project, mode=mode, sandbox_mode=sandbox_mode, surface="mcp"))
    treewatch.watch_here()  # long-lived: the walks ask a watcher of ours
    serve_stdio(box)
