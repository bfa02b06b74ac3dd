"""`swifty-sandbox serve`: the JSON-lines executor for agents (SPEC §5)."""

from __future__ import annotations

import sys
from pathlib import Path

from swifty_sandbox.sandbox.agents import Sandbox
from swifty_sandbox.sandbox.agents.serve import Server
from swifty_sandbox.sandbox.spec import treewatch

from .common import (
    allow_net_option,
    backend_option,
    mode_option,
    project_option,
    reports_errors,
    sandbox_option,
    warned,
)
from .texts import command


@command(help="help.serve")
@project_option
@mode_option
@sandbox_option
@backend_option
@allow_net_option
@reports_errors
def serve(project: Path | None, mode: str | None, sandbox_mode: str | None,
          backend: str | None, allow_net: tuple[str, ...]) -> None:
    """`serve` (its help: `help.serve`)."""
    box = warned(Sandbox(project, mode=mode, sandbox_mode=sandbox_mode,
                         allow_net=allow_net, backend=backend, surface="serve"))
    treewatch.watch_here()  # long-lived: the walks ask a watcher of ours
    Server(box, sys.stdin.buffer, sys.stdout).serve()
