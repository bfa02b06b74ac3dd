"""`swifty-sandbox run`: decide, then run the command confined."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import Decision, Request, UsageError
from swifty_sandbox.policy.limits import parse_memory, parse_processes
from swifty_sandbox.sandbox.agents import Answer, Sandbox

from .common import (
    Interrupted,
    allow_net_option,
    backend_option,
    echo_json,
    json_option,
    mode_option,
    project_option,
    reports_errors,
    sandbox_option,
    warned,
)
from .texts import Seconds, argument, command, option

_ANSWERS = {"y": Answer.YES, "yes": Answer.YES, "n": Answer.NO, "no": Answer.NO,
            "a": Answer.ALWAYS, "always": Answer.ALWAYS, "": Answer.NO}


class TerminalPrompt:
    """Asks the person on the terminal: yes / no (the default) / always.

    An unknown answer asks again; Ctrl-D is no; Ctrl-C stops swifty-sandbox quietly with
    exit 130. Remembers whether the person said no, so the person is told "not run"
    rather than the agent-facing "do not retry" text.
    """

    def __init__(self) -> None:
        self.refused = False
        # Whether "always" can keep its word for a request (`Sandbox.can_always`): set
        # once the sandbox exists; offered only then.
        self.can_always: Callable[[Request], bool] = lambda request: False

    def __call__(self, request: Request, decision: Decision) -> Answer:
        offered = self.can_always(request)
        text = t("prompt.question" if offered else "prompt.question_once",
                 reason=decision.reason, request=request.describe())
        while True:
            sys.stderr.write(text)
            sys.stderr.flush()
            try:
                line = sys.stdin.readline()
            except Interrupted:  # Ctrl-C: `reports_errors` exits 130
                sys.stderr.write("\n")
                raise
            if not line:  # Ctrl-D
                sys.stderr.write("\n")
                answer = Answer.NO
                break
            found = _ANSWERS.get(line.strip().lower())
            if found is not None and (offered or found is not Answer.ALWAYS):
                answer = found
                break
            sys.stderr.write(t("prompt.again" if offered else "prompt.again_once") + "\n")
        self.refused = answer is Answer.NO
        return answer

    def host(self, host: str, port: int) -> Answer:
        """A destination outside the network allowlist, asked while the command runs
        ("always" adds it to network.allow in ~/.swifty/config.yaml). The command
        shares this terminal and can erase our question and draw one naming another
        host, so a yes is the host name typed back, compared with the real one."""
        shown = f"[{host}]" if ":" in host else host
        sys.stderr.write(t("prompt.host_typed", reason=t("net.ask", host=host, port=port),
                           host=shown))
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stderr.write("\n")
            return Answer.NO
        answer = " ".join(line.split()).lower()
        names = {host, shown, host + "."}
        if answer in names:
            return Answer.YES
        if answer.startswith("always ") and answer[len("always "):] in names:
            return Answer.ALWAYS
        if _ANSWERS.get(answer) is not Answer.NO:
            sys.stderr.write(t("prompt.host_other", answer=answer, host=shown) + "\n")
        return Answer.NO


def _approved(request: Request, decision: Decision) -> Answer:
    return Answer.YES


# Options end at the first argument (`run ls -la`, as `env` and `sudo` read theirs); an
# unknown option before it is a usage error, never the program to run.
@command(help="help.run", context_settings={"allow_interspersed_args": False})
@project_option
@mode_option
@sandbox_option
@backend_option
@json_option
@option("--timeout", type=Seconds(), help="help.run.timeout",
        metavar="help.meta.seconds")
@option("--max-processes", "max_processes", metavar="help.meta.n",
        help="help.run.max_processes")
@option("--max-memory", "max_memory", metavar="help.meta.size", help="help.run.max_memory")
@option("-c", "command", help="help.run.command", metavar="help.meta.command")
@allow_net_option
@option("--approved", is_flag=True, help="help.run.approved")
@argument("args", nargs=-1, type=click.UNPROCESSED, metavar="help.meta.args")
@reports_errors
def run(project: Path | None, mode: str | None, sandbox_mode: str | None,
        backend: str | None, as_json: bool,
        timeout: float | None, max_processes: str | None, max_memory: str | None,
        command: str | None, allow_net: tuple[str, ...], approved: bool,
        args: tuple[str, ...]) -> None:
    """`run` (its help: `help.run` in the message table)."""
    if (command is None) == (not args):
        raise UsageError(t("cli.need_command"))
    try:
        processes = parse_processes(max_processes) if max_processes is not None else None
        memory = parse_memory(max_memory) if max_memory is not None else None
    except ValueError as e:
        raise UsageError(str(e)) from e
    interactive = not as_json and sys.stdin.isatty() and sys.stderr.isatty()
    person = TerminalPrompt()
    asker = _approved if approved else person if interactive else None
    box = warned(Sandbox(project, mode=mode, sandbox_mode=sandbox_mode, ask=asker,
                         allow_net=allow_net, ask_host=person.host if interactive else None,
                         backend=backend, surface="run"))
    person.can_always = box.can_always
    request = Request.bash(command) if command is not None else Request.bash_argv(args)
    if box.effective_sandbox_mode.value == "off":
        click.echo(t("run.unconfined"), err=True)
    if as_json:
        result = box.run(request, timeout=timeout, memory_bytes=memory, processes=processes)
        echo_json(result.as_json())
    else:
        # Output streams straight to the terminal; stdin stays the user's.
        result = box.run(request, timeout=timeout, capture=False, stdin=None,
                         memory_bytes=memory, processes=processes)
        if person.refused:
            click.echo(t("prompt.not_run"), err=True)
        elif result.stderr:
            click.echo(result.stderr, err=True, nl=False)
    raise SystemExit(result.exit_code)
