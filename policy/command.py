"""From a Bash request to the simple commands that rules are matched against.

This is the minimal, conservative split: it understands `;`, `&&`, `||`, `|`, `&`,
newlines, quoting and redirections. Anything it cannot see into — command or
process substitution, subshells, compound commands, heredocs, a program name known
only at run time — makes the command *unanalysable*: rules can still deny it, but
never allow it (the engine turns it into ask). Full analysis replaces this module.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", "\n", ";;", ";&"})
_REDIRECTS = frozenset({">", ">>", "<", "<>", ">&", "<&", "&>", "&>>", ">|"})
_OPAQUE_MARKERS = ("$(", "`", "<(", ">(", "<<")
_KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
    "esac", "select", "function", "{", "}", "[[", "]]", "!", "coproc",
})

# Wrapper programs run their arguments as a command. Each maps to the options that
# take a separate value, so `timeout -s KILL 5 make` unwraps to `make`.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "xargs": frozenset({"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s",
                        "--arg-file", "--delimiter", "--max-args", "--max-procs",
                        "--replace", "--max-lines", "--max-chars", "--eof"}),
}
# Wrappers whose first operand is not the command (`timeout 5 cmd`).
_LEADING_OPERAND = frozenset({"timeout"})


@dataclass(frozen=True, slots=True)
class Analysis:
    """The simple commands of a request (argv words), or why it could not be split."""

    commands: tuple[tuple[str, ...], ...]
    opaque: str | None = None  # the construct that stopped the analysis


def split_command(command: str) -> Analysis:
    """Split a shell string into simple commands, or report what is opaque in it."""
    for marker in _OPAQUE_MARKERS:
        if marker in command:
            return Analysis((), opaque=marker)
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"  # newline separates commands, it is not blank
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as e:  # unbalanced quotes
        return Analysis((), opaque=str(e))
    commands: list[tuple[str, ...]] = []
    words: list[str] = []
    skip_target = False
    for i, token in enumerate(tokens):
        if skip_target:
            skip_target = False
            continue
        if token in _OPERATORS:
            if words:
                commands.append(tuple(words))
            words = []
        elif token in _REDIRECTS:
            skip_target = True
        elif token and token[0] in "()<>;&|" and set(token) <= set("()<>;&|"):
            return Analysis((), opaque=token)
        elif token.isdigit() and i + 1 < len(tokens) and tokens[i + 1] in _REDIRECTS:
            continue  # the fd number of `2>&1`
        elif not words and token.partition("=")[0].isidentifier() and "=" in token:
            continue  # a leading assignment `FOO=1 cmd` is not part of argv
        elif not words and (token in _KEYWORDS or "$" in token):
            return Analysis((), opaque=token)  # a compound command or a computed program
        else:
            words.append(token)
    if words:
        commands.append(tuple(words))
    return Analysis(tuple(commands))


def unwrap(argv: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The command as written, then each command a wrapper would really run."""
    forms = [argv]
    current = argv
    while current:
        program = current[0].rsplit("/", 1)[-1]
        valued = _WRAPPERS.get(program)
        if valued is None:
            break
        rest = list(current[1:])
        while rest and rest[0].startswith("-") and rest[0] != "-":
            option = rest.pop(0)
            if option == "--":
                break
            if option in valued and rest and "=" not in option:
                rest.pop(0)
        if program == "env":
            while rest and "=" in rest[0]:
                rest.pop(0)
        if program in _LEADING_OPERAND and rest:
            rest.pop(0)
        if not rest:
            break
        current = tuple(rest)
        forms.append(current)
    return forms
