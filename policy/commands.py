"""From a parsed script to the commands that will really run.

Wrappers (sudo, env, timeout, nice, nohup, xargs, exec, …) are unwrapped; shells given a
string (`bash -c '…'`, `eval '…'`, a heredoc or here-string fed to a shell, `echo … |
sh`) and `find -exec` are parsed and followed. Each result is an `Invocation`: the
argv that runs, every form it was written in (for rules: deny/ask on any form, allow
only on the innermost), and the simple command it came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .shell import MAX_DEPTH, Script, Simple, Word, parse

# Wrapper → its options that take a separate value.
WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T",
                       "--user", "--group", "--chdir", "--prompt", "--close-from"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "chrt": frozenset(),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "xargs": frozenset({"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s",
                        "--arg-file", "--delimiter", "--max-args", "--max-procs",
                        "--replace", "--max-lines", "--max-chars", "--eof"}),
    "watch": frozenset({"-n", "-d", "--interval", "--differences"}),
    "unbuffer": frozenset(),
    "setsid": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
}
# Wrappers whose first operand is not the command: `timeout 5 cmd`, `flock FILE cmd`.
_LEADING_OPERAND = frozenset({"timeout", "flock", "chrt"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True, slots=True)
class Invocation:
    argv: tuple[Word, ...]  # what runs, after unwrapping
    forms: tuple[tuple[Word, ...], ...]  # as written first, then each unwrapped form
    simple: Simple  # the simple command it came from (redirects, pipeline)
    script: Script  # the script holding `simple`
    via: tuple[str, ...] = ()  # wrappers, shells and finds it was reached through

    @property
    def program(self) -> str | None:
        """The program's base name; None when it is only known at run time."""
        value = self.argv[0].value if self.argv else None
        return value.rsplit("/", 1)[-1] if value is not None else None

    @property
    def args(self) -> list[str]:
        return [w.shown for w in self.argv[1:]]


def name(word: Word) -> str | None:
    return word.value.rsplit("/", 1)[-1] if word.value is not None else None


def invocations(script: Script, depth: int = 0) -> Iterator[Invocation]:
    """Every command the script may run, unwrapped, nested scripts followed."""
    simples = list(script.walk())
    for simple in simples:
        if simple.words:
            yield from _unwrap(simple, script, simple.words, (simple.words,), (), depth)
    yield from _piped_text(simples, script, depth)


def _unwrap(simple: Simple, script: Script, argv: tuple[Word, ...],
            forms: tuple[tuple[Word, ...], ...], via: tuple[str, ...],
            depth: int) -> Iterator[Invocation]:
    while (inner := peel(argv)) is not None:
        forms = (*forms, inner)
        via = (*via, name(argv[0]) or "")
        argv = inner
    program = name(argv[0]) if argv else None
    yield Invocation(argv, forms, simple, script, via)
    if program is not None and (program in SHELLS or program == "eval"):
        yield from _shell_strings(simple, script, argv, program, via, depth)
    elif program == "find":
        for command in _find_exec(argv):
            yield from _unwrap(simple, script, command, (command,), (*via, "find"), depth)


def peel(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """One wrapper removed: what `sudo …`, `env -S '…'`, `busybox rm …`, … run; None
    when `argv` is not a wrapper (or wraps nothing)."""
    program = name(argv[0]) if argv else None
    if program is None:
        return None
    if program == "command" and len(argv) > 1 and argv[1].value in ("-v", "-V"):
        return None  # `command -v x` looks x up, it does not run it
    if program == "env" and len(argv) > 2 and argv[1].value in ("-S", "--split-string"):
        split = argv[2].value  # `env -S 'rm -rf /'` splits the string into argv
        if split is not None:
            return (*(Word(part, part) for part in split.split()), *argv[3:])
    if program in WRAPPERS:
        return tuple(_strip_options(program, list(argv[1:]))) or None
    if program == "busybox" and len(argv) > 1 and name(argv[1]) not in SHELLS:
        return argv[1:]  # `busybox rm -rf /` runs the applet `rm`
    return None


def innermost(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    """The command the wrappers finally run."""
    while (inner := peel(argv)) is not None:
        argv = inner
    return argv


def _strip_options(program: str, rest: list[Word]) -> list[Word]:
    valued = WRAPPERS[program]
    while rest and (rest[0].shown.startswith("-") and rest[0].shown != "-"):
        option = rest.pop(0).shown
        if option == "--":
            break
        if option in valued and rest and "=" not in option:
            rest.pop(0)
    if program == "env":
        while rest and "=" in rest[0].shown and not rest[0].shown.startswith("="):
            rest.pop(0)
    if program in ("sudo", "doas") and rest and "=" in rest[0].shown:
        while rest and "=" in rest[0].shown:
            rest.pop(0)
    if program in _LEADING_OPERAND and rest:
        rest.pop(0)
    return rest


def _follow(text: str | None, simple: Simple, script: Script, via: tuple[str, ...],
            depth: int) -> Iterator[Invocation]:
    """Parse a string a shell will run and yield its invocations."""
    if text is None or depth >= MAX_DEPTH:
        return
    inner = parse(text, depth + 1)
    for invocation in invocations(inner, depth + 1):
        yield Invocation(invocation.argv, invocation.forms, invocation.simple,
                         invocation.script, (*via, *invocation.via))


def _shell_strings(simple: Simple, script: Script, argv: tuple[Word, ...], program: str,
                   via: tuple[str, ...], depth: int) -> Iterator[Invocation]:
    if program == "eval":
        values = [w.value for w in argv[1:]]
        text = None if any(v is None for v in values) else " ".join(v for v in values if v)
        yield from _follow(text, simple, script, (*via, "eval"), depth)
        return
    args = list(argv[1:])
    if program == "busybox":
        if not args or name(args[0]) not in SHELLS:
            return
        args = args[1:]
    reads_stdin = True
    for index, word in enumerate(args):
        value = word.shown
        if value == "--":
            reads_stdin = index + 1 >= len(args)
            break
        if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
            text = args[index + 1].value if index + 1 < len(args) else None
            yield from _follow(text, simple, script, (*via, program), depth)
            return
        if value in ("-o", "+o", "-O", "+O"):
            continue
        if not value.startswith(("-", "+")):
            reads_stdin = False  # a script file: its content is not ours to see
            break
    if reads_stdin:
        for redirect in simple.redirects:
            if redirect.op in ("<<", "<<-", "<<<") and redirect.body is not None:
                yield from _follow(redirect.body, simple, script, (*via, program), depth)


def _find_exec(argv: tuple[Word, ...]) -> Iterator[tuple[Word, ...]]:
    words = list(argv)
    for index, word in enumerate(words):
        if word.value in _FIND_EXEC:
            command: list[Word] = []
            for following in words[index + 1:]:
                if following.value in (";", "+", "\\;"):
                    break
                command.append(following)
            if command:
                yield tuple(command)


def _fed_text(feeder: Simple) -> str | None:
    """The static text a command writes to the pipe: `echo`/`printf` arguments, or the
    heredoc / here-string `cat` passes on."""
    program = name(feeder.words[0])
    if program in ("echo", "printf"):
        values = [w.value for w in feeder.words[1:] if not (w.value or "").startswith("-")]
        if any(v is None for v in values):
            return None
        return " ".join(v for v in values if v is not None).replace("\\n", "\n")
    if program == "cat" and len(feeder.words) == 1:
        return next((r.body for r in feeder.redirects if r.op in ("<<", "<<-", "<<<")), None)
    return None


def _piped_text(simples: list[Simple], script: Script, depth: int) -> Iterator[Invocation]:
    """`echo 'rm -rf /' | sh` and `echo / | xargs rm -rf`: static text piped into a
    shell reading stdin runs; piped into xargs it becomes arguments."""
    by_position = {(s.pipeline, s.stage): s for s in simples if s.words}
    for simple in simples:
        if not simple.words or simple.stage == 0:
            continue
        program = name(simple.words[0])
        feeder = by_position.get((simple.pipeline, simple.stage - 1))
        text = _fed_text(feeder) if feeder is not None else None
        if text is None:
            continue
        if program in SHELLS and all(w.shown.startswith("-") for w in simple.words[1:]):
            yield from _follow(text, simple, script, (program or "sh",), depth)
        elif program == "xargs":
            command = _strip_options("xargs", list(simple.words[1:]))
            if command:
                argv = (*command, *(Word(v, v) for v in text.split()))
                yield from _unwrap(simple, script, argv, (argv,), ("xargs",), depth)
