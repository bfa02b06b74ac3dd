"""`swifty-sandbox hook AGENT`: the agent's pre-tool hook (stdin JSON → its answer)."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path

import click

from swifty_sandbox.messages import t
from swifty_sandbox.sandbox.agents.hooks import (
    EXIT_BLOCK,
    MAX_INPUT,
    Agent,
    HookAnswer,
    answer_hook,
    blocked,
)

from .texts import argument, command


def runner() -> list[str]:
    """How the hooks, the rewritten command and Codex's and Gemini CLI's rules call us:
    this interpreter with `-E` and the installed script next to it, else the package
    with `-P` too (the working directory, which the agent controls, never goes on the
    import path). `-E`: they run on the host with the agent's environment, and a
    `PYTHONPATH` into the project (`src`, set by direnv or by hand) put a
    `sitecustomize.py` a confined command wrote there on our import path, run at the
    next hook's start-up, outside the sandbox (the script's `#!` line cannot carry the
    option: the installer drops it)."""
    script = Path(sys.executable).with_name("swifty-sandbox")
    if script.is_file():
        return [_interpreter(str(script)), "-E", str(script)]
    return [sys.executable, "-E", "-P", "-m", "swifty_sandbox.cli"]


@functools.cache
def _interpreter(script: str) -> str:
    """The interpreter the installer wrote on the script's `#!` line (`python3` of a
    venv, where `sys.executable` may be its `python` link): the same command whichever
    way this process was started, so the agents' rules keep matching it."""
    with contextlib.suppress(OSError), open(script, "rb") as f:
        line = f.readline(4096)
        if line.startswith(b"#!/"):
            words = os.fsdecode(line[2:]).split()
            if len(words) == 1 and os.path.realpath(words[0]) == \
                    os.path.realpath(sys.executable):  # this interpreter, by that name
                return words[0]
    return sys.executable


@command(help="help.hook")
@argument("agent", type=click.Choice([a.value for a in Agent]), metavar="help.meta.agent")
def hook(agent: str) -> None:
    """`hook AGENT` (its help: `help.hook`)."""
    which = Agent(agent)
    try:
        answer = answer_hook(which, sys.stdin.buffer.read(MAX_INPUT + 1), runner())
    except BaseException as e:  # even an interrupt must not read as allow
        answer = blocked(which, t("hook.error", agent=agent, error=type(e).__name__))
    try:
        _emit(answer)
    except Exception:  # the answer could not be written: block, in plain ASCII
        os.write(2, b"swifty-sandbox hook: could not write the answer; blocked\n")
        os._exit(EXIT_BLOCK)
    raise SystemExit(answer.exit_code)


def _emit(answer: HookAnswer) -> None:
    """Bytes, not text: whatever the locale, the answer is written or we block."""
    if answer.stdout:
        sys.stdout.buffer.write((answer.stdout + "\n").encode("utf-8", "backslashreplace"))
        sys.stdout.buffer.flush()
    if answer.stderr:
        sys.stderr.buffer.write(answer.stderr.encode("utf-8", "backslashreplace"))
        sys.stderr.buffer.flush()
