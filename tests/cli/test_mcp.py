"""`swifty-sandbox mcp`, driven by the official SDK's own client over stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.context import ClientRequestContext
from mcp.client.session import ClientSession, ElicitationFnT
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.bwrap
SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))

def session_run(project: Path, home: Path, body: Callable[[ClientSession], Awaitable[Any]],
                elicit: ElicitationFnT | None = None) -> Any:
    params = StdioServerParameters(command=SCRIPT, args=["mcp", "--project", str(project)],
                                   env={"HOME": str(home), "PATH": os.environ["PATH"]},
                                   cwd=str(project))

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(
                read, write, elicitation_callback=elicit) as session:
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_tools_listed_with_what_the_sandbox_allows(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env*)\n  effect: deny\n")
    async def body(session: ClientSession) -> types.ListToolsResult:
        return await session.list_tools()

    listed = session_run(project, home, body)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"bash", "read_file", "write_file", "edit_file"}
    description = tools["bash"].description or ""
    assert "no network" in description and str(project) in description
    assert "~/.ssh" in description and "*.env*" in description
    assert set(tools["bash"].input_schema["properties"]) == {"command", "timeout"}


def test_bash_confined_denied_and_hidden_reads(project: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("SECRET\n")

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("bash", {"command": "echo hi > out.txt && cat out.txt"}),
            await session.call_tool("bash", {"command": "git push --force origin main"}),
            await session.call_tool("read_file", {"path": str(home / ".ssh/id_ed25519")}),
            await session.call_tool("bash", {"command": "cat ~/.ssh/id_ed25519"}),
            await session.call_tool("bash", {"command": "touch ~/escaped"}),
            await session.call_tool("write_file", {"path": ".swifty/config.yaml",
                                                   "content": "x"}),
            await session.call_tool("read_file", {"path": "out.txt"}),
            await session.call_tool("write_file", {"path": ".cursor/hooks.json",
                                                   "content": "{}"}),
            await session.call_tool("bash", {"command": "sleep 5", "timeout": 0.5}),
            await broken_rules(session),
        ]

    async def broken_rules(session: ClientSession) -> types.CallToolResult:
        (project / ".swifty").mkdir()
        (project / ".swifty" / "permissions.yaml").write_text("- rule: Bsh(x)\n  effect: deny\n")
        return await session.call_tool("bash", {"command": "echo ran > ran.txt"})

    ok, denied, hidden, cat, escape, protected, read, settings, slow, broken = session_run(
        project, home, body)
    assert not ok.is_error and text(ok).startswith("hi\n") and "[exit code 0]" in text(ok)
    assert denied.is_error and "git-destructive" in text(denied)
    assert hidden.is_error and "SECRET" not in text(hidden) and "secrets" in text(hidden)
    assert "SECRET" not in text(cat) and "[exit code 0]" not in text(cat)
    assert not (home / "escaped").exists() and "[exit code 0]" not in text(escape)
    assert protected.is_error and "protected" in text(protected)
    assert not read.is_error and text(read) == "hi\n"
    assert settings.is_error and "hook settings" in text(settings)
    assert not (project / ".cursor").exists()
    assert slow.is_error and "[exit code 124]" in text(slow)
    assert broken.is_error and "unknown tool `Bsh`" in text(broken)
    assert not (project / "ran.txt").exists()


def test_ask_without_elicitation_is_denied_with_how_to_allow(project: Path,
                                                              home: Path) -> None:
    async def body(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("write_file", {"path": "a.txt", "content": "x"})

    result = session_run(project, home, body)
    assert result.is_error and f"`WriteFile({project / 'a.txt'})`" in text(result)
    assert not (project / "a.txt").exists()


def test_ask_with_elicitation(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(touch *)\n  effect: ask\n")
    asked: list[str] = []

    async def approve(context: ClientRequestContext,
                      params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        allow = "yes.txt" in params.message or "touch" in params.message
        return types.ElicitResult(action="accept", content={"allow": allow, "always": False})

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [await session.call_tool("write_file", {"path": "yes.txt", "content": "y"}),
                await session.call_tool("write_file", {"path": "no.txt", "content": "n"}),
                await session.call_tool("edit_file", {"path": "yes.txt", "old_string": "y",
                                                      "new_string": "z"}),
                await session.call_tool("bash", {"command": f"touch made {home}/escaped"})]

    yes, no, edit, touch = session_run(project, home, body, approve)
    assert not yes.is_error and (project / "yes.txt").read_text() == "z"
    assert no.is_error and "Denied by the user" in text(no)
    assert not (project / "no.txt").exists()
    assert len(asked) == 4 and not edit.is_error
    # Approved, and still confined: the project file is made, the one in home is not.
    assert (project / "made").exists() and not (home / "escaped").exists()
    assert "[exit code 0]" not in text(touch)


def test_cli_start_up_does_not_import_mcp() -> None:
    code = ("import sys\n"
            "from swifty_sandbox.cli import check, hook, main, mcp, run\n"
            "loaded = [m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')]\n"
            "assert not loaded, loaded\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
