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

from .commands import name
from .programs import Table, write_targets
from .shell import Word

if TYPE_CHECKING:
    from .analysis import BashAnalysis

_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_HOME_VAR = re.compile(r"(?:\$HOME|\$\{HOME\})(/[^$`\\'*?]*)?")
MAX_BASES = 8


def static_value(word: Word, home: str) -> str | None:
    """The word's value, or for `$HOME/…`/`"${HOME}"/…` the path it names."""
    if word.value is not None:
        return word.value
    m = _HOME_VAR.fullmatch(word.text.replace('"', ""))
    return home + (m.group(1) or "") if m else None


def _absolute(path: str, base: str, home: str) -> str:
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.normpath(os.path.join(base, path))


def written_paths(analysis: BashAnalysis, table: Table, project: str, home: str
                  ) -> list[str]:
    """Absolute paths the command may write (every reading: cd may or may not run)."""
    bases = [project]
    links: dict[str, str] = {}
    raw: list[str] = []
    seen: set[int] = set()
    for inv in analysis.invocations:
        argv = inv.argv
        if any(w.value is None for w in argv):
            argv = tuple(Word(w.text, static_value(w, home), w.subs) for w in argv)
        program = name(argv[0]) if argv else None
        if program in ("cd", "pushd"):
            operands = [w for w in argv[1:] if w.shown != "--" and not w.shown.startswith("-")]
            target = operands[0].value if operands else home
            if target is not None and len(bases) < MAX_BASES:
                bases.extend(_absolute(target, b, home) for b in list(bases))
        elif program == "ln" and any((w.shown.startswith("-") and "s" in w.shown.lstrip("-"))
                                     or w.shown == "--symbolic" for w in argv[1:]):
            values = [w.value for w in argv[1:] if not w.shown.startswith("-")]
            if len(values) == 2 and all(values):
                links[str(values[1])] = str(values[0])
        if id(inv.simple) not in seen:
            seen.add(id(inv.simple))
            for redirect in inv.simple.redirects:
                if redirect.writes and redirect.target is not None:
                    value = static_value(redirect.target, home)
                    if value and not value.isdigit():
                        raw.append(value)
        raw.extend(write_targets(table, argv))
    out: dict[str, None] = {}
    for path in raw:
        if path in _HARMLESS:
            continue
        for base in bases:
            absolute = _absolute(path, base, home)
            out[absolute] = None
            for link, target in links.items():  # `ln -s ~/.bashrc r && echo x >> r`
                where = _absolute(link, base, home)
                if absolute == where or absolute.startswith(where + "/"):
                    out[_absolute(target + absolute[len(where):],
                                  os.path.dirname(where), home)] = None
    return list(out)
