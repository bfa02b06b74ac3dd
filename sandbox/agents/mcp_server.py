"""`swifty-sandbox mcp`: a confined shell and policy-checked file tools for any MCP
client, on the official `mcp` SDK (imported only here, only when the server starts).

Every call is decided by the project's policy. `bash` then runs confined (no network,
writes only in the project and its temp dir); the file tools run here, outside the
sandbox, on the path the policy decided (`Decision.target`: where the kernel lands,
links and `..` resolved), opened by `fileio` following no link, so nothing swapped in
after the decision — during an elicitation, or by a command still running — is followed.
A denial is an `isError` result with the reason. An ask goes to the person through MCP
elicitation when the client offers it (form elicitation), otherwise it is denied with
how to allow it. The question is a resolver's (`Resolve`): the SDK asks it the way the
negotiated protocol wants — from 2026-07-28 an `InputRequiredResult` the client answers
by calling again, before that an `elicitation/create` in the middle of the call (Claude
Code speaks the new one: the old mid-call request failed there with "no back-channel").
The tool body decides again and takes the answer only for an ask. Calls are handled one
at a time.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations, and a
# tool's `Resolve(...)` names a resolver local to `build_server`, which a string
# annotation could not reach.
import asyncio
from typing import Annotated, Any

import anyio
from mcp.server.elicitation import (
    AcceptedElicitation,
    CancelledElicitation,
    ElicitationResult,
)
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from swifty_sandbox.messages import t
from swifty_sandbox.policy import (
    Decision,
    Effect,
    Mode,
    Request,
    SwiftyError,
    Tool,
    local_rules_path,
    suggest_rules,
)

from .api import Answer, Sandbox
from .fileio import FileToolError
from .fileio import read_file as read_target
from .fileio import write_file as write_target
from .outputs import Emit, TextEvents

READ_LIMIT = 1 << 20  # bytes read_file returns at most
EDIT_LIMIT = 16 << 20  # bytes of a file edit_file rewrites at most
DEFAULT_TIMEOUT = 120.0


class ApprovalOnce(BaseModel):
    """The form for an ask no rule can allow for good (`Sandbox.can_always`): no
    "always", which would write a rule and ask again next time."""

    allow: bool = Field(description=t("mcp.form.allow"))


class Approval(ApprovalOnce):
    """What the elicitation form asks the person."""

    always: bool = Field(default=False, description=t("mcp.form.always"))


def describe_sandbox(box: Sandbox) -> str:
    """What the sandbox allows, in the words the tool descriptions give the model."""
    policy = box.policy
    denied = [rule.path.text for layer in policy.layers for rule in layer.rules
              if rule.effect is Effect.DENY and rule.applies_to(Tool.READ_FILE)
              and rule.path is not None]
    hidden = list(dict.fromkeys([*denied, *policy.settings.deny_read,
                                 *policy.profile.deny_read]))
    writable = [str(box.project)] if box.effective_mode is not Mode.PLAN else []
    writable += [str(p) for p in policy.settings.writable]
    return t("mcp.sandbox", writable=", ".join(writable) or "-",
             hidden=", ".join(hidden[:40]) + (" …" if len(hidden) > 40 else ""))


def _how_to_allow(box: Sandbox, request: Request, decision: Decision) -> str:
    rules = suggest_rules(box.policy, request) if box.can_always(request) else []
    if rules:
        return t("mcp.ask_denied", reason=decision.reason,
                 rules=", ".join(f"`{r}`" for r in rules),
                 file=local_rules_path(box.policy.project, box.policy.home))
    return t("mcp.ask_denied_norule", reason=decision.reason)


class NotAsked(BaseModel):
    """The resolver's outcome when no question was put: the call is no ask, or the
    client cannot be asked (then an ask is denied with how to allow it)."""

    can_ask: bool


# What a resolver returns: the form to put to the person, or why none.
Question = Elicit[ApprovalOnce] | NotAsked  # the SDK: one form per resolver
# The outcome the tool body receives for its question.
Asked = ElicitationResult[Any]


def _question(request: Request, decision: Decision) -> str:
    """The question as the person reads it, with where a file tool really lands."""
    what = request.describe()
    if decision.target is not None and decision.target != request.path:
        what += f" → {decision.target}"
    return t("mcp.elicit", reason=decision.reason, request=what)


def _can_elicit(ctx: Context) -> bool:
    """Whether the client declared form elicitation (a bare `elicitation: {}` is form)."""
    capabilities = ctx.session.client_params.capabilities if ctx.session.client_params \
        else None
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


class Tools:
    """The four tools over one `Sandbox`; one call at a time."""

    def __init__(self, box: Sandbox) -> None:
        self.box = box
        self.lock = asyncio.Lock()
        # The questions put to the person, as worded (what the answer is about): an
        # answer counts only for the same question decided again in the tool body.
        self.asked: set[str] = set()

    def decide(self, request: Request) -> Decision:
        try:
            self.box.reload()  # rule files may have changed since the last call
        except SwiftyError as e:  # a rule file broke: every call fails closed
            raise ToolError(e.diagnostics()) from e
        return self.box.check(request)

    def question(self, request: Request, ctx: Context) -> Question:
        """The resolver: the question to put to the person, when the call is an ask."""
        decision = self.decide(request)
        if decision.effect is not Effect.ASK:
            return NotAsked(can_ask=True)
        if not _can_elicit(ctx):
            return NotAsked(can_ask=False)
        text = _question(request, decision)
        self.asked.add(text)
        return Elicit(text, Approval if self.box.can_always(request) else ApprovalOnce)

    async def settle(self, request: Request, ctx: Context,
                     asked: Asked | None = None) -> tuple[Decision, Answer | None]:
        """The decision, decided again here; an ask takes the person's answer, and
        without one it is denied with how to allow it."""
        decision = self.decide(request)
        if decision.effect is not Effect.ASK:
            return decision, None
        data = asked.data if isinstance(asked, AcceptedElicitation) else None
        if asked is None or isinstance(data, NotAsked) or isinstance(asked,
                                                                     CancelledElicitation):
            # Nobody answered (a headless client cancels): denied with how to allow it.
            raise ToolError(_how_to_allow(self.box, request, decision))
        text = _question(request, decision)
        if text not in self.asked:
            # Decided again, it is not what the person was asked (a link swapped in while
            # they answered leads elsewhere now): their answer is not for this.
            raise ToolError(t("mcp.question_changed", reason=decision.reason))
        self.asked.discard(text)
        if not isinstance(data, ApprovalOnce) or not data.allow:  # declined, no
            raise ToolError(t("decision.user_denied", reason=decision.reason))
        always = isinstance(data, Approval) and data.always
        return decision, Answer.ALWAYS if always else Answer.YES

    async def file_request(self, tool: Tool, path: str, ctx: Context,
                           asked: Asked | None = None) -> str:
        """The path to open: where the decision says the kernel lands (`~`, `~/x` and
        relative paths as the policy reads them), opened by `fileio` following no link."""
        try:
            request = Request.file(tool, path)
        except ValueError as e:  # a NUL: no file has that name
            raise ToolError(str(e)) from e
        decision, answer = await self.settle(request, ctx, asked)
        if decision.effect is Effect.DENY:
            raise ToolError(decision.reason)
        if answer is Answer.ALWAYS and self.box.can_always(request):
            self.box.always_allow(request)
        assert decision.target is not None  # every file decision carries it
        return decision.target

    def read(self, target: str, limit: int) -> bytes:
        try:
            host = self.box.host()
            return read_target(target, limit, host.hidden_links, host.held)
        except FileToolError as e:
            raise ToolError(str(e)) from e

    def write(self, target: str, text: str) -> None:
        try:
            write_target(target, text.encode(), self.box.host().hidden_links)
        except FileToolError as e:
            raise ToolError(str(e)) from e

    async def bash(self, command: str, timeout: float | None, ctx: Context,
                   asked: Asked | None = None) -> CallToolResult:
        async with self.lock:
            request = Request.bash(command)
            decision, answer = await self.settle(request, ctx, asked)
            if decision.effect is Effect.DENY:
                raise ToolError(decision.reason)
            limit = timeout if timeout is not None and timeout > 0 else DEFAULT_TIMEOUT
            # The person's answer (if any) settles the ask `run` meets again, for this
            # call only; without one nobody is asked (the box has no asker of its own).
            again = (lambda r, d: answer) if answer is not None else None
            events = TextEvents(_progress(ctx))
            result = await anyio.to_thread.run_sync(
                lambda: self.box.run(request, timeout=limit, cwd=self.box.project,
                                     ask=again, on_output=events))
            events.flush()
            text = result.stdout
            if result.stderr:
                text += ("\n" if text and not text.endswith("\n") else "") + result.stderr
            text += t("mcp.exit" if result.ran else "mcp.not_run", code=result.exit_code)
            return CallToolResult(content=[TextContent(type="text", text=text)],
                                  is_error=result.is_error)

    async def read_file(self, path: str, ctx: Context, asked: Asked | None = None) -> str:
        async with self.lock:
            target = await self.file_request(Tool.READ_FILE, path, ctx, asked)
            data = self.read(target, READ_LIMIT)
            text = data[:READ_LIMIT].decode(errors="replace")
            return text + (t("mcp.truncated", limit=READ_LIMIT) if len(data) > READ_LIMIT
                           else "")

    async def write_file(self, path: str, content: str, ctx: Context,
                         asked: Asked | None = None) -> str:
        async with self.lock:
            target = await self.file_request(Tool.WRITE_FILE, path, ctx, asked)
            self.write(target, content)
            return t("mcp.written", path=target, size=len(content.encode()))

    async def edit_file(self, path: str, old_string: str, new_string: str,
                        replace_all: bool, ctx: Context, asked: Asked | None = None) -> str:
        async with self.lock:
            target = await self.file_request(Tool.EDIT_FILE, path, ctx, asked)
            data = self.read(target, EDIT_LIMIT)
            if len(data) > EDIT_LIMIT:
                raise ToolError(t("mcp.edit_too_large", path=target, limit=EDIT_LIMIT))
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ToolError(f"{target}: {e}") from e
            count = text.count(old_string) if old_string else 0
            if count == 0 or (count > 1 and not replace_all):
                raise ToolError(t("mcp.edit_mismatch", path=target, count=count))
            new = text.replace(old_string, new_string, -1 if replace_all else 1)
            self.write(target, new)
            return t("mcp.edited", path=target, count=count if replace_all else 1)


def _progress(ctx: Context) -> Emit:
    """The output while `bash` runs, as progress notifications of the call (the
    spec's way to tell a client about a call under way; logging is deprecated from
    2026-07-28): `message` the text, `progress` the characters so far. Sent only when
    the client asked for progress (a `progressToken`); called from the worker thread
    the command runs in, it waits for each notification to be sent, so a client that
    does not read holds the command back."""
    done = 0

    def emit(stream: str, text: str) -> None:
        nonlocal done
        done += len(text)
        anyio.from_thread.run(ctx.report_progress, done, None, text)

    return emit


def build_server(box: Sandbox) -> MCPServer:
    tools = Tools(box)
    sandbox = describe_sandbox(box)
    server: MCPServer = MCPServer("swifty-sandbox", instructions=sandbox)

    def file_question(tool: Tool) -> Any:
        def question(path: str, ctx: Context) -> Question:
            try:
                request = Request.file(tool, path)
            except ValueError:  # a NUL: the body reports it
                return NotAsked(can_ask=False)
            return tools.question(request, ctx)
        return question

    def bash_question(command: str, ctx: Context) -> Question:
        return tools.question(Request.bash(command), ctx)

    read_question = file_question(Tool.READ_FILE)
    write_question = file_question(Tool.WRITE_FILE)
    edit_question = file_question(Tool.EDIT_FILE)

    @server.tool(description=t("mcp.tool.bash", sandbox=sandbox, timeout=DEFAULT_TIMEOUT))
    async def bash(command: str, ctx: Context,
                   asked: Annotated[Asked, Resolve(bash_question)],
                   timeout: float | None = None) -> CallToolResult:
        return await tools.bash(command, timeout, ctx, asked)

    @server.tool(description=t("mcp.tool.read_file", sandbox=sandbox, limit=READ_LIMIT))
    async def read_file(path: str, ctx: Context,
                        asked: Annotated[Asked, Resolve(read_question)]) -> str:
        return await tools.read_file(path, ctx, asked)

    @server.tool(description=t("mcp.tool.write_file", sandbox=sandbox))
    async def write_file(path: str, content: str, ctx: Context,
                         asked: Annotated[Asked, Resolve(write_question)]) -> str:
        return await tools.write_file(path, content, ctx, asked)

    @server.tool(description=t("mcp.tool.edit_file", sandbox=sandbox))
    async def edit_file(path: str, old_string: str, new_string: str, ctx: Context,
                        asked: Annotated[Asked, Resolve(edit_question)],
                        replace_all: bool = False) -> str:
        return await tools.edit_file(path, old_string, new_string, replace_all, ctx, asked)

    return server


def serve_stdio(box: Sandbox) -> None:
    build_server(box).run("stdio")


__all__ = ["build_server", "describe_sandbox", "serve_stdio"]
