"""The official MCP SDK's client, run as its own process by test_mcp.py (the SDK then
never loads into the test process, whose memory other tests measure).

    python tests/cli/mcp_client.py < steps.json > results.json

stdin: {"project", "home", "approve": [substrings] | null, "always": answer "always" too,
"env": {more variables for the
server}, "steps": [...]} where a step
is {"list": true}, {"call": name, "args": {...}} or {"write": path, "text": "..."};
"on_ask": [{"rename": path, "to": path} | {"symlink": path, "to": target}] is done once,
at the first elicitation, before it is answered (what a command still running could do
while the person thinks).
A call step with "progress": true asks for progress notifications.
stdout: {"results": [...], "asked": [messages], "forms": [each question's fields]}; a
call's result is {"is_error", "text", "progress": [[seconds before the result, progress,
message], ...]},
a listing's is {"tools": {name: {"description", "properties"}}}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.client.context import ClientRequestContext
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))


class Progress:
    """A call's progress notifications, each with when it arrived."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float, str | None]] = []

    async def __call__(self, progress: float, total: float | None,
                       message: str | None) -> None:
        self.seen.append((time.monotonic(), progress, message))


def main() -> None:
    plan: dict[str, Any] = json.load(sys.stdin)
    asked: list[str] = []
    forms: list[list[str]] = []  # each question's form: the fields it asks
    approve: list[str] | None = plan.get("approve")

    on_ask: list[dict[str, str]] = plan.get("on_ask", [])

    async def elicit(context: ClientRequestContext,
                     params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        schema = getattr(params, "requested_schema", None) or {}
        forms.append(sorted(schema.get("properties", {})))
        while on_ask:
            change = on_ask.pop(0)
            if "rename" in change:
                os.rename(change["rename"], change["to"])
            else:
                os.symlink(change["to"], change["symlink"])
        allow = any(word in params.message for word in approve or [])
        return types.ElicitResult(action="accept", content={
            "allow": allow, "always": bool(plan.get("always"))})

    params = StdioServerParameters(
        command=SCRIPT, args=["mcp", "--project", plan["project"]],
        env={"HOME": plan["home"], "PATH": os.environ["PATH"], **plan.get("env", {})},
        cwd=plan["project"])

    async def run() -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        async with stdio_client(params, errlog=sys.stderr) as (read, write), ClientSession(
                read, write, elicitation_callback=elicit if approve is not None else None
        ) as session:
            await session.initialize()
            for step in plan["steps"]:
                if "write" in step:
                    Path(step["write"]).parent.mkdir(parents=True, exist_ok=True)
                    Path(step["write"]).write_text(step["text"])
                elif "list" in step:
                    listed = await session.list_tools()
                    results.append({"tools": {
                        tool.name: {"description": tool.description or "",
                                    "properties": sorted(tool.input_schema["properties"])}
                        for tool in listed.tools}})
                else:
                    progress = Progress()
                    result = await session.call_tool(
                        step["call"], step.get("args", {}),
                        progress_callback=progress if step.get("progress") else None)
                    ended = time.monotonic()
                    text = "".join(c.text for c in result.content
                                   if isinstance(c, types.TextContent))
                    results.append({"is_error": bool(result.is_error), "text": text,
                                    "progress": [[ended - at, done, message]
                                                 for at, done, message in progress.seen]})
        return results

    results = anyio.run(run)
    json.dump({"results": results, "asked": asked, "forms": forms}, sys.stdout)


if __name__ == "__main__":
    main()
