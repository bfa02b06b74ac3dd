"""`swifty-sandbox log`: the session log of a project, as text or JSON lines."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import find_project
from swifty_sandbox.sandbox.agents import sessionlog

from .common import json_option, project_option, reports_errors
from .texts import command, option

_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([smhdw])\Z")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class Since(click.ParamType[float]):
    """`--since`: a duration back from now (90s, 10m, 2h, 3d, 1w) or an ISO 8601 time
    (local time unless it names a zone) → epoch seconds."""

    name = "since"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        duration = _DURATION.match(text)
        if duration:
            return time.time() - float(duration.group(1)) * _SECONDS[duration.group(2)]
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            self.fail(t("log.bad_since", value=text), param, ctx)


since_option = option("--since", type=Since(), default=None, help="help.since",
                      metavar="help.meta.since")


def project_log(project: Path | None) -> tuple[Path, Path]:
    """The project (as `Sandbox` finds it) and its log file."""
    here = project if project is not None else Path.cwd()
    root = Path(os.path.realpath(find_project(here)))
    return root, sessionlog.log_file(root, Path(os.path.realpath(Path.home())))


def visible(text: str) -> str:
    """Text safe to print on a terminal: control and format characters (escape
    sequences a hostile command string carries, bidirectional overrides that reorder
    what is shown, line breaks) as `\\xNN` / `\\uNNNN`."""
    import unicodedata  # only the text output needs it

    def shown(char: str) -> str:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            code = ord(char)
            return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        return char

    return "".join(shown(c) for c in text) if not text.isprintable() else text


def line(entry: Mapping[str, object]) -> str:
    """One record as a line of text (what it carries made visible, never interpreted)."""
    decision = entry.get("decision")
    effect = decision.get("effect", "?") if isinstance(decision, dict) else "?"
    stamp = str(entry.get("time", ""))[:19].replace("T", " ")
    params = {"time": stamp, "surface": visible(str(entry.get("surface", "?"))),
              "effect": visible(str(effect)), "what": visible(what(entry))}
    if entry.get("kind") == "run":
        return t("log.line_run", **params, exit_code=entry.get("exit_code"),
                 ms=entry.get("duration_ms"))
    return t("log.line_decision", **params)


def what(entry: Mapping[str, object]) -> str:
    request = entry.get("request")
    if not isinstance(request, dict):
        return "?"
    if isinstance(request.get("command"), str):
        return str(request["command"])
    if isinstance(request.get("argv"), list):
        return " ".join(str(a) for a in request["argv"])
    return f"{request.get('tool', '?')} {request.get('path', '')}"


def _emit(entries: Iterable[Mapping[str, object]], as_json: bool) -> int:
    count = 0
    for entry in entries:
        # JSON escapes every non-ASCII character too: no C1 control or bidirectional
        # override reaches the terminal raw.
        click.echo(json.dumps(entry) if as_json else line(entry))
        sys.stdout.flush()  # --follow: each record as it comes, also into a pipe
        count += 1
    return count


@command("log", help="help.log")
@project_option
@since_option
@option("--follow", "-f", is_flag=True, help="help.log.follow")
@json_option
@reports_errors
def log_command(project: Path | None, since: float | None, follow: bool,
                as_json: bool) -> None:
    """`log` (its help: `help.log`)."""
    root, path = project_log(project)
    count = _emit(sessionlog.read(path, since), as_json)
    if follow:
        _emit(sessionlog.follow(path), as_json)
    elif count == 0 and not as_json:
        click.echo(t("log.empty", project=root, path=path), err=True)
