"""The files a Bash command may write, followed through what the shell knows.

Redirections and the write targets of programs (`programs.yaml`: `tee`, `cp`, `sed
-i`, `dd of=`, …) are made absolute against every directory an earlier `cd` in the same
string may have moved to, with `~`, `$HOME` and `${HOME}` expanded, and through the
symbolic links an earlier `ln -s` made. The engine checks each against protected paths
and WriteFile deny rules, like a WriteFile request.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .blacklist import known_values
from .commands import name
from .programs import Table, write_targets
from .shell import Word

if TYPE_CHECKING:
    from .analysis import BashAnalysis

_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_KNOWN_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))(/[^$`\\'*?]*)?")
_HOME_VAR = re.compile(r"(?:\$HOME|\$\{HOME\})(/[^$`\\'*?]*)?")
MAX_BASES = 8
_MOVES = frozenset({"cd", "pushd", "ln"})


def static_value(word: Word, home: str, known: dict[str, list[str]] | None = None
                 ) -> str | None:
    """The word's value, or for `$HOME/…`/`"${HOME}"/…` the path it names, or for
    `$d/…` with `d` set to a literal earlier in the string (`d=.git`), that path."""
    if word.value is not None:
        return word.value
    text = word.text.replace('"', "")
    m = _HOME_VAR.fullmatch(text)
    if m:
        return home + (m.group(1) or "")
    m = _KNOWN_VAR.fullmatch(text) if known else None
    if m and known and len(known.get(m.group(1) or m.group(2), ())) == 1:
        return known[m.group(1) or m.group(2)][0] + (m.group(3) or "")
    return None


def _absolute(path: str, base: str, home: str) -> str:
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.normpath(os.path.join(base, path))


def written_paths(analysis: BashAnalysis, table: Table, project: str, home: str
                  ) -> list[str]:
    """Absolute paths the command may write (every reading: cd may or may not run)."""
    bases = [project]
    links: list[tuple[str, str]] = []  # (link, what it leads to)
    known: dict[str, list[str]] | None = None  # read when a word needs it
    raw: list[str] = []
    seen: set[int] = set()
    for inv in analysis.invocations:
        if id(inv.simple) not in seen:
            seen.add(id(inv.simple))
            for redirect in inv.simple.redirects:
                if redirect.writes and redirect.target is not None:
                    if redirect.target.value is None and known is None:
                        known = known_values(list(analysis.invocations))
                    value = static_value(redirect.target, home, known)
                    if value and not value.isdigit():
                        raw.append(value)
        argv = inv.argv
        program = name(argv[0]) if argv else None
        if program not in table.writers and program not in _MOVES:
            continue  # most commands: nothing more to read
        if any(w.value is None for w in argv):
            if known is None:
                known = known_values(list(analysis.invocations))
            argv = tuple(Word(w.text, static_value(w, home, known), w.subs) for w in argv)
        if program in ("cd", "pushd"):
            operands = [w for w in argv[1:] if w.shown != "--" and not w.shown.startswith("-")]
            target = operands[0].value if operands else home
            if target is not None and len(bases) < MAX_BASES:
                bases.extend(_absolute(target, b, home) for b in list(bases))
        elif program == "ln":  # symbolic or hard, a later write through the link lands there
            values = [w.value for w in argv[1:] if not w.shown.startswith("-")]
            if len(values) == 2 and all(values):
                links.append((str(values[1]), str(values[0])))
        raw.extend(write_targets(table, argv))
    out: dict[str, None] = {}
    for path in raw:
        if path in _HARMLESS:
            continue
        for base in bases:
            absolute = _absolute(path, base, home)
            out[absolute] = None
            for link, target in links:  # `ln -s ~/.bashrc r && echo x >> r`
                where = _absolute(link, base, home)
                if absolute == where or absolute.startswith(where + "/"):
                    rest = target + absolute[len(where):]
                    # A symbolic link's target is read from its directory, a hard
                    # link's from the current one: both readings are checked.
                    out[_absolute(rest, os.path.dirname(where), home)] = None
                    out[_absolute(rest, base, home)] = None
    return list(out)
