"""What the sandbox refused a command, explained: each violation the run found
(`sandbox/run/violations.py`) gets the rule or default that caused it — asked of the
policy as a file request would be (`decide`, the one place rules live) — and the one
change that would allow it; and the lines said on stderr, one per distinct path or
host, capped (text mode, and what the Claude Code rewrite's model reads)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy.engine import Host, Policy, decide
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.profile import load_profile
from swifty_sandbox.policy.types import Decision, Layer, Request, Tool

from ..spec.pathguard import host_paths

SHOWN = 10  # lines on stderr; the JSON keeps every one (bounded where they are found)
# The closed sets of `op` (sandbox/run/violations.py makes them): every one has its words.
OPS = ("read", "write", "create", "remove", "connect", "resolve", "memory", "processes")
LIMITS = ("memory", "processes")


def explain(policy: Policy, found: Sequence[dict[str, object]],
            host: Host | None = None) -> tuple[dict[str, object], ...]:
    """{kind, op, path | host, rule, fix} per violation, in the order found. `host`:
    what this machine runs outside (`Sandbox.host`), so that a path kept read-only for
    that is said to be so, with its own fix."""
    out = []
    for one in found:
        kind, op = str(one["kind"]), str(one["op"])
        item: dict[str, object] = {"kind": kind, "op": op}
        printed = one.get("seen") == "output"
        if kind == "network":
            item["host"] = one.get("host")
            item["rule"], item["fix"] = _network(one.get("host"))
        elif kind == "limit":
            item["rule"], item["fix"] = t(f"violation.rule.{op}"), t(f"violation.fix.{op}")
        elif kind == "syscall":
            item["rule"], item["fix"] = _syscall(op, one.get("key"), one.get("value"))
        else:
            path = str(one["path"])
            item["path"] = path
            item["rule"], item["fix"] = _file(policy, kind, op, path, host)
        # What the command printed is its claim: said so, and no fix follows from it.
        item["seen"] = str(one.get("seen", "kernel"))  # kernel, proxy or output
        if printed:
            item["fix"] = None
        out.append(item)
    return tuple(out)


def _syscall(name: str, key: object, value: object) -> tuple[str, str]:
    """A call the seccomp profile refused: the profile key and value that refused it,
    and the profile that would allow it (none for a row every profile has)."""
    if not key or not value:
        return t("violation.rule.syscall_always"), t("violation.fix.syscall_none")
    rule = t("violation.rule.syscall", key=key, value=value)
    if key == "seccomp.deny":
        permissive = load_profile("permissive", Path.cwd()).seccomp
        allowed = not permissive.deny_namespaces if value == "namespaces" else \
            name not in permissive.deny
        return rule, t("violation.fix.syscall_permissive" if allowed else
                       "violation.fix.syscall_deny", name=name, value=value)
    if key == "seccomp.ioctls":
        return rule, t("violation.fix.syscall_ioctls", value=value)
    return rule, t("violation.fix.syscall_list", key=key, value=value)


def _network(host: object) -> tuple[str, str]:
    name = str(host).rsplit(":", 1)[0].strip("[]") if host else "HOST"
    return t("violation.rule.network"), t("violation.fix.network", host=name)


def _file(policy: Policy, kind: str, op: str, path: str,
          host: Host | None) -> tuple[str, str]:
    if kind == "outside":
        return t("violation.rule.outside"), t("violation.fix.outside",
                                               directory=_existing_parent(path))
    tool = Tool.READ_FILE if kind == "hidden" else Tool.WRITE_FILE
    decision = decide(policy, Request.file(tool, path), host=host)
    rule = _rule_text(decision)
    if decision.rule is not None and decision.layer is Layer.RULE:
        fix = t("violation.fix.hidden_rule", path=path, file=decision.rule.file) \
            if kind == "hidden" else t("violation.fix.write_rule", file=decision.rule.file,
                                       line=decision.rule.line)
        return rule, fix
    if kind == "hidden":
        return rule, t("violation.fix.secret")
    if any(is_within(path, p) for p in host_paths(os.environ.get("PATH"),
                                                    str(policy.project))):
        # A name the agent runs from its PATH (`rm -rf node_modules` with
        # node_modules/.bin on it): the change is to that PATH, not to any rule. Asked
        # of the PATH lookups themselves: `host.launchers` also holds what the agents'
        # settings run (a hook script), which no PATH change frees.
        return rule, t("violation.fix.launcher", directory=os.path.dirname(path))
    return rule, t("violation.fix.protected")


def _rule_text(decision: Decision) -> str:
    if decision.rule is not None:
        return f"{decision.rule.text} ({decision.rule.file}:{decision.rule.line})"
    if decision.effect.value != "deny":
        return t("violation.rule.mount")
    # A sentence of its own; here it is the middle of one ("…: {rule}; to allow it: …").
    return decision.reason.rstrip(".。")


def _existing_parent(path: str) -> str:
    here = os.path.dirname(path)
    while here != "/" and not os.path.isdir(here):
        here = os.path.dirname(here)
    return here


def lines(violations: Sequence[dict[str, object]]) -> str:
    """One line per distinct path or host (the first seen for it), at most `SHOWN`."""
    firsts: dict[object, dict[str, object]] = {}
    for one in violations:
        firsts.setdefault(one.get("path") or one.get("host") or (one["kind"], one["op"]), one)
    shown = list(firsts.values())
    text = "".join(t("violation.line", what=_what(one), rule=one["rule"], fix=one["fix"])
                   + "\n" if one["fix"] is not None else
                   t("violation.line_printed", what=_what(one), rule=one["rule"]) + "\n"
                   for one in shown[:SHOWN])
    if len(shown) > SHOWN:
        text += t("violation.more", count=len(shown) - SHOWN) + "\n"
    return text


def _what(one: dict[str, object]) -> str:
    op = str(one["op"])
    if one["kind"] == "syscall":
        return t("violation.op.syscall", name=op)
    words = t(f"violation.op.{op}")
    target = one.get("path") or one.get("host")
    return f"{words} {target}" if target else words
