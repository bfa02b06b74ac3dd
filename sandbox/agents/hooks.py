"""Pre-tool hooks of the agents people run (SPEC §5): the agent's JSON in, our decision
out in that agent's format.

Claude Code can rewrite a tool call, so an allowed (or person-approved) Bash command
is rewritten to run through `swifty-sandbox run`: it executes confined. The other
agents only take a decision; the commands they run are not confined by us, so they are
decided as if the sandbox were off (the auto-allow that confinement earns does not
apply): an ask stays an ask.

Fail closed: input that is not the agent's documented shape, a broken rules file or any
internal error is the agent's blocking answer (exit 2, the reason on stderr), never an
exit that the agent reads as "go ahead".
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import assert_never

from swifty_sandbox.messages import t
from swifty_sandbox.policy import (
    Decision,
    Effect,
    Layer,
    Mode,
    Policy,
    Request,
    SandboxMode,
    Tool,
    find_project,
    local_rules_path,
    suggest_rules,
)
from swifty_sandbox.policy.agents import Agent, ShellTool
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.rules import fixed_prefix

from .api import Sandbox

EXIT_BLOCK = ExitCode.ERROR  # every supported agent reads 2 as "block", stderr the reason
MAX_INPUT = 16 << 20  # bytes of hook input; agents send kilobytes


class HookInputError(ValueError):
    """The hook input is not the agent's documented shape."""


@dataclass(frozen=True, slots=True)
class HookCall:
    """What the agent asked, in our terms. `request` None: a tool we do not decide."""

    cwd: Path
    request: Request | None
    mode: Mode | None = None
    tool_input: dict[str, object] = field(default_factory=dict)
    network: str | None = None  # a network tool's name: asks until an allowlist exists
    search: bool = False  # reads the contents of everything below `request.path`
    event: str = ""  # the hook event, as the agent named it (empty: the agent has one)
    shell: ShellTool | None = None  # the shell tool that runs `request.command`
    unconfinable: str | None = None  # a tool that runs code we cannot confine: denied
    # A name pattern that leaves `request.path` (absolute, or `..` before its first
    # wildcard: Glob's `../../.ssh/*`): the directory it lists from, decided too.
    pattern_root: str | None = None

    @property
    def confined(self) -> bool:
        """Whether the command will run through `swifty-sandbox run` if allowed."""
        return self.shell is not None and self.shell.rewrites


@dataclass(frozen=True, slots=True)
class HookAnswer:
    stdout: str
    stderr: str
    exit_code: int


# -- reading the agent's input -------------------------------------------------------------

def _text(payload: dict[str, object], key: str, *, required: bool = True) -> str | None:
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise HookInputError(t("hook.field_string", key=key))
    return value


def _object(payload: dict[str, object], key: str) -> dict[str, object]:
    value = payload.get(key)
    if not isinstance(value, dict):
        raise HookInputError(t("hook.field_object", key=key))
    return value


def _event(payload: dict[str, object], agent: Agent) -> str:
    """The event named in the input (the installed one when absent), one we answer."""
    info = agent.info
    expected = (info.event, *info.extra_events)
    event = payload.get("hook_event_name", info.event)
    if event not in expected:
        raise HookInputError(t("hook.field_event", event=json.dumps(event),
                               expected=" | ".join(expected)))
    assert isinstance(event, str)
    return event


def _cwd(payload: dict[str, object]) -> Path:
    cwd = _text(payload, "cwd")
    assert cwd is not None
    if not cwd.startswith("/"):
        raise HookInputError(t("hook.field_cwd", key="cwd"))
    return Path(cwd)


def _mode(agent: Agent, payload: dict[str, object]) -> Mode | None:
    modes = agent.info.modes
    if modes is None:  # the agent sends none
        return None
    value = payload.get("permission_mode")
    return modes.get(value, Mode.DEFAULT) if isinstance(value, str) else Mode.DEFAULT


def _parse_tool_call(agent: Agent, payload: dict[str, object]) -> HookCall:
    """A tool call of Claude Code, Codex or Gemini CLI, read through the agent table."""
    info = agent.info
    event = _event(payload, agent)
    tool = _text(payload, "tool_name")
    assert tool is not None
    tool_input = _object(payload, "tool_input")
    cwd, mode = _cwd(payload), _mode(agent, payload)
    shell = info.shell_tool(event, tool)
    if shell is not None:
        if shell.network_key is not None and shell.network_key in tool_input:
            return HookCall(cwd, None, mode, tool_input, network=tool, event=event)
        command = _text(tool_input, shell.command)
        assert command is not None
        # The command runs in this directory (relative to the workspace) when given.
        where = tool_input.get(shell.cwd) if shell.cwd is not None else None
        if isinstance(where, str) and where:
            cwd = cwd / where
        return HookCall(cwd, Request.bash(command), mode, tool_input, event=event,
                        shell=shell)
    if tool in info.unconfinable or event != info.event:
        # A shell of a kind we cannot read or confine (PowerShell, a REPL).
        return HookCall(cwd, None, mode, tool_input, event=event, unconfinable=tool)
    file_tool = next((f for f in info.file_tools if f.name == tool), None)
    if file_tool is not None:
        key = next((k for k in file_tool.keys if k in tool_input), file_tool.keys[0])
        path = _text(tool_input, key, required=not file_tool.optional) or "."
        return HookCall(cwd, Request.file(file_tool.tool, str(cwd / path)), mode, tool_input,
                        search=file_tool.search, event=event,
                        pattern_root=_pattern_root(cwd / path, tool_input.get("pattern"))
                        if tool == "Glob" else None)
    if tool in info.network_tools:
        return HookCall(cwd, None, mode, tool_input, network=tool, event=event)
    return HookCall(cwd, None, mode, tool_input, event=event)


def _parse_cursor(payload: dict[str, object]) -> HookCall:
    _event(payload, Agent.CURSOR)
    command = _text(payload, "command")
    assert command is not None
    cwd = payload.get("cwd")
    if not (isinstance(cwd, str) and cwd.startswith("/")):
        roots = payload.get("workspace_roots")
        cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) \
            else None
    if not (isinstance(cwd, str) and cwd.startswith("/")):
        raise HookInputError(t("hook.field_cwd", key="cwd` (or `workspace_roots"))
    return HookCall(Path(cwd), Request.bash(command), shell=Agent.CURSOR.info.shell_tools[0])


def parse_call(agent: Agent, raw: str | bytes) -> HookCall:
    """The agent's hook JSON → a `HookCall`; raises `HookInputError` on any other shape."""
    if len(raw) > MAX_INPUT:
        raise HookInputError(t("hook.too_large", limit=MAX_INPUT))
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise HookInputError(t("hook.not_json", error=e)) from e
    except RecursionError as e:
        raise HookInputError(t("hook.not_json", error="nested too deeply")) from e
    if not isinstance(payload, dict):
        raise HookInputError(t("hook.not_object"))
    _check_strings(payload)
    if agent is Agent.CURSOR:
        return _parse_cursor(payload)
    return _parse_tool_call(agent, payload)


def _check_strings(value: object) -> None:
    """No string of the input may hold a NUL (no command or path can) or a lone
    surrogate (`\\ud800`: it cannot be encoded, so the answer could not be written)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\0" in item:
                raise HookInputError(t("hook.bad_string", what="NUL"))
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as e:
                raise HookInputError(t("hook.bad_string", what="lone surrogate")) from e
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item


# -- the rewrite ------------------------------------------------------------------------------

def confined_command(runner: Sequence[str], command: str, project: Path, mode: Mode | None,
                     sandbox_mode: SandboxMode, *, approved: bool = False) -> str:
    """`command` as a shell string that runs it through `swifty-sandbox run`.

    Every word is quoted with `shlex.quote`, so any command — quotes, newlines, heredocs,
    `$`, backticks — reaches `run -c` byte for byte, and nothing of it is expanded by
    the outer shell.
    """
    # `--approved` right after `run`: Codex's approval rule (`init codex`) names this
    # prefix to put the command to the person.
    argv = [*runner, "run", *(["--approved"] if approved else []), "--project", str(project),
            "--sandbox", sandbox_mode.value]
    if mode is not None:
        argv += ["--mode", mode.value]
    return shlex.join([*argv, "-c", command])


# -- answering --------------------------------------------------------------------------------

def hidden_below(policy: Policy, directory: str) -> str | None:
    """An unreadable pattern (profile, settings, `ReadFile` deny rule) that can match
    something below `directory`: a content search there would read it, and the agent's
    own search tool runs outside the sandbox. Decided on the patterns, without a walk."""
    patterns = list(policy.deny_read)
    for layer in policy.layers:
        patterns += [rule.path for rule in layer.rules
                     if rule.effect is Effect.DENY and rule.applies_to(Tool.READ_FILE)
                     and rule.path is not None]
    for pattern in patterns:
        if "/" not in pattern.anchored.rstrip("/"):  # a name at any depth
            return pattern.text
        prefix, _ = fixed_prefix(pattern.anchored)
        if is_within(prefix, directory) or is_within(directory, prefix):
            return pattern.text
    return None


_WILDCARDS = frozenset("*?[{")


def _pattern_root(base: Path, pattern: object) -> str | None:
    """The directory a name pattern lists from when it leaves `base`: its components up
    to the first wildcard, from `base` (or `/`); None when it stays below `base`."""
    if not isinstance(pattern, str) or not pattern:
        return None
    fixed: list[str] = []
    for part in pattern.split("/"):
        if _WILDCARDS & set(part):
            break
        fixed.append(part)
    if not pattern.startswith("/") and ".." not in fixed:
        return None
    return "/".join(fixed) if pattern.startswith("/") else str(base) + "/" + "/".join(fixed)


def _pattern_check(box: Sandbox, call: HookCall, decision: Decision) -> Decision:
    """A Glob whose pattern leaves its path lists names from another directory: that
    directory is decided as a read too, and refused when the sandbox hides something
    below it (Glob walks the whole tree a `**` names)."""
    if call.pattern_root is None or decision.effect is Effect.DENY:
        return decision
    root = box.check(Request.file(Tool.READ_FILE, call.pattern_root))
    hidden = hidden_below(box.policy, root.target or "/")
    if hidden is None or root.effect is Effect.DENY:
        return decision if root.effect is Effect.ALLOW else root
    return Decision(Effect.DENY, t("hook.search_hidden", path=root.target, pattern=hidden),
                    Layer.PATH)


def _search_check(box: Sandbox, call: HookCall, decision: Decision) -> Decision:
    if not call.search or decision.effect is Effect.DENY or call.request is None:
        return decision
    path = decision.target or "/"  # where the kernel lands, as decided
    if not os.path.isdir(path):
        return decision
    hidden = hidden_below(box.policy, path)
    if hidden is None:
        return decision
    return Decision(Effect.DENY, t("hook.search_hidden", path=path, pattern=hidden),
                    Layer.PATH)


def _how_to_allow(box: Sandbox, request: Request, decision: Decision, agent: Agent) -> str:
    """An ask the agent cannot put to a person: denied, saying how to allow it."""
    rules = suggest_rules(box.policy, request) if box.can_always(request) else []
    if rules:
        return t("hook.ask_denied", reason=decision.reason, agent=agent.display,
                 rules=", ".join(f"`{r}`" for r in rules),
                 file=local_rules_path(box.policy.project, box.policy.home))
    return t("hook.ask_denied_norule", reason=decision.reason, agent=agent.display)


def _rewritten(call: HookCall, box: Sandbox | None, decision: Decision,
               runner: Sequence[str]) -> dict[str, object] | None:
    """The tool input with its command run through `swifty-sandbox run`; None when the
    command is not to run (denied) or not to run confined (the agent applies no rewrite
    for this tool, or the user turned the sandbox off)."""
    request, shell = call.request, call.shell
    if (box is None or request is None or shell is None or not shell.rewrites
            or request.tool is not Tool.BASH or decision.effect is Effect.DENY
            or box.effective_sandbox_mode is SandboxMode.OFF):
        return None
    assert request.command is not None
    # An ask shows the rewritten command in the agent's own prompt; once the person says
    # yes it runs confined too (`--approved`: the ask is answered; a deny holds).
    command = confined_command(runner, request.command, box.project, call.mode,
                               box.effective_sandbox_mode,
                               approved=decision.effect is Effect.ASK)
    return {**call.tool_input, shell.command: command}


def asks_reach_person(agent: Agent, project: Path, home: Path) -> bool:
    """Whether an ask of ours reaches a person through the agent's own approval flow.
    Codex has no ask answer: only its approval rule (`init codex`) makes it put the
    rewritten `run --approved` to the person; without that rule it would just run it."""
    info = agent.info
    if info.ask_rules is None:
        return info.asks
    return (info.user_dir(os.environ, home) / info.ask_rules).is_file()


def _claude(call: HookCall, box: Sandbox | None, decision: Decision,
            runner: Sequence[str]) -> dict[str, object]:
    effect, reason = decision.effect, decision.reason
    if effect is Effect.ASK and call.request is not None and call.shell is not None \
            and not call.shell.rewrites:
        # A skill's shell line: Claude Code refuses an ask there without asking anyone.
        assert box is not None
        effect, reason = Effect.DENY, _how_to_allow(box, call.request, decision,
                                                    Agent.CLAUDE_CODE)
    output: dict[str, object] = {"hookEventName": call.event or "PreToolUse",
                                 "permissionDecision": effect.value,
                                 "permissionDecisionReason": reason}
    updated = _rewritten(call, box, Decision(effect, reason, decision.layer), runner)
    if updated is not None:
        output["updatedInput"] = updated
    return {"hookSpecificOutput": output}


def _answer(agent: Agent, call: HookCall, box: Sandbox | None, decision: Decision,
            runner: Sequence[str]) -> HookAnswer:
    if agent is Agent.CLAUDE_CODE:
        return HookAnswer(json.dumps(_claude(call, box, decision, runner),
                                     ensure_ascii=False), "", 0)
    effect, reason = decision.effect, decision.reason
    if agent is Agent.CURSOR:
        message = {"permission": effect.value, "user_message": reason, "agent_message": reason}
        return HookAnswer(json.dumps(message, ensure_ascii=False), "", 0)
    updated = _rewritten(call, box, decision, runner)
    if effect is Effect.ASK and (updated is None or box is None or not asks_reach_person(
            agent, box.project, box.policy.home)):
        # Nobody would be asked: denied, saying how to allow it.
        assert box is not None and call.request is not None
        effect, reason = Effect.DENY, _how_to_allow(box, call.request, decision, agent)
        updated = None
    if agent is Agent.GEMINI:
        answer: dict[str, object] = {"decision": effect.value, "reason": reason}
        if effect is Effect.ASK:
            answer["systemMessage"] = reason  # shown with Gemini's confirmation
        if updated is not None:
            answer["hookSpecificOutput"] = {"tool_input": updated}
        return HookAnswer(json.dumps(answer, ensure_ascii=False), "", 0)
    if agent is not Agent.CODEX:  # an agent added later gets no one else's format
        assert_never(agent)
    if effect is Effect.DENY:
        deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}
        return HookAnswer(json.dumps(deny, ensure_ascii=False), "", 0)
    if updated is not None:
        # Codex runs the rewritten command when the answer is allow; an ask's `--approved`
        # form is put to the person by the approval rule `init codex` installs.
        rewrite = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                          "permissionDecision": "allow",
                                          "permissionDecisionReason": reason,
                                          "updatedInput": updated}}
        return HookAnswer(json.dumps(rewrite, ensure_ascii=False), "", 0)
    # Codex reads an empty answer as "no objection" (its own approval policy then applies).
    return HookAnswer("", "", 0)


def _defer(agent: Agent) -> HookAnswer:
    """A tool we do not decide: no opinion, the agent's own permission flow applies."""
    return HookAnswer("{}" if agent is Agent.GEMINI else "", "", 0)


def blocked(agent: Agent, message: str) -> HookAnswer:
    """The fail-closed answer: exit 2 with the reason on stderr (and, for Cursor, its
    JSON deny too, in case a version reads stdout first)."""
    stdout = ""
    if agent is Agent.CURSOR:
        stdout = json.dumps({"permission": "deny", "user_message": message,
                             "agent_message": message}, ensure_ascii=False)
    return HookAnswer(stdout, message + "\n", EXIT_BLOCK)


def answer_hook(agent: Agent, raw: str | bytes, runner: Sequence[str], *,
                home: Path | None = None) -> HookAnswer:
    """The whole hook: never raises, never answers "allow" for what it could not decide."""
    try:
        call = parse_call(agent, raw)
    except HookInputError as e:
        return blocked(agent, t("hook.bad_input", agent=agent.value, error=e))
    try:
        if call.network is not None:
            reason = t("hook.network", tool=call.network)
            return _answer(agent, call, None, Decision(Effect.ASK, reason, Layer.RULE),
                           runner)
        if call.unconfinable is not None:
            reason = t("hook.unconfinable", tool=call.unconfinable, agent=agent.display)
            return _answer(agent, call, None, Decision(Effect.DENY, reason, Layer.PROTECTED),
                           runner)
        if call.request is None:
            return _defer(agent)
        box = Sandbox(find_project(call.cwd), home=home, mode=call.mode,
                      surface=f"hook:{agent.value}")
        if not agent.confines or (call.shell is not None and not call.shell.rewrites):
            # We do not run the command: it gets no auto-allow for running confined.
            box.sandbox_mode = SandboxMode.OFF
        decision = _pattern_check(box, call,
                                  _search_check(box, call, box.check(call.request)))
        return _answer(agent, call, box, decision, runner)
    except Exception as e:  # any failure blocks, never allows
        detail = e.diagnostics() if hasattr(e, "diagnostics") else f"{type(e).__name__}: {e}"
        return blocked(agent, t("hook.error", agent=agent.value, error=detail))


__all__ = ["EXIT_BLOCK", "MAX_INPUT", "Agent", "HookAnswer", "HookCall",
           "HookInputError", "answer_hook", "blocked",
           "confined_command", "hidden_below", "parse_call"]
