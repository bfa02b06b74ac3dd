"""The files a Bash command may write, followed through what the shell knows.

Redirections and the write targets of programs (`programs.yaml`: `tee`, `cp`, `sed
-i`, `dd of=`, …) are made absolute against every directory an earlier `cd` in the same
string may have moved to, with `~`, `$HOME` and `${HOME}` expanded, and through the
symbolic links an earlier `ln -s` made. The engine checks each against protected paths
and WriteFile deny rules, like a WriteFile request.

An allow rule grants a program's ordinary behaviour, which stays in the places a
command may write (`beyond_roots`): a write elsewhere (`tar -xf a -C ~`, `gcc -o
~/.local/bin/x`, `rsync a ~/.bashrc`, `> /etc/x`) or a directory switch into another tree
(`make -C /other`, `cargo --manifest-path /other/Cargo.toml`) is a feature the rule must
name.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .blacklist import known_values
from .commands import name
from .paths import is_within
from .programs import Table, Use, directory_switches, targets_shown, write_targets
from .shell import Word

if TYPE_CHECKING:
    from .analysis import BashAnalysis
    from .commands import Invocation

_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_KNOWN_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))(/[^$`\\'*?]*)?")
_HOME_VAR = re.compile(r"(?:\$HOME|\$\{HOME\})(/[^$`\\'*?]*)?")
MAX_BASES = 8
_MOVES = frozenset({"cd", "pushd", "ln"})
# Archivers whose ordinary behaviour writes into the working directory when no target
# is named (`cd ~ && tar -xf a.tar`).
_WRITES_HERE = frozenset({"tar", "gtar", "bsdtar", "unzip", "cpio", "7z", "7za", "ar",
                          "unrar", "gunzip", "bunzip2", "unxz"})


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


def beyond_roots(table: Table, invocation: Invocation, roots: tuple[str, ...], home: str
                 ) -> Use | None:
    """The first thing `invocation` does outside its places: a file it writes outside
    every root (the project, the temp dirs, the writable roots), or a directory switch
    (`make -C`, `go -C`, `cargo --manifest-path`, …) to a tree outside the project, whose
    build files nothing protects. Paths are judged where the kernel would write (a
    committed `out -> ~` is home), from every directory an earlier `cd` may lead to."""
    argv = invocation.argv
    program = name(argv[0]) if argv else None
    if program is None or not roots:
        return None
    writes = [(path, shown) for path, shown in targets_shown(table, argv)
              if path not in _HARMLESS]
    for redirect in invocation.simple.redirects:
        target = redirect.target
        if redirect.writes and target is not None and target.value not in _HARMLESS \
                and not (target.value or "").isdigit():
            path = static_value(target, home)
            writes.append((path if path is not None else "\0", f"{redirect.op} {target.text}"))
    switches = directory_switches(table, argv)
    if not writes and not switches and program not in _WRITES_HERE:
        return None  # most commands
    project = roots[0]
    bases = [project]
    for simple in invocation.script.commands:
        if simple.words and simple.words[0].value in ("cd", "pushd"):
            operands = [w for w in simple.words[1:] if (w.value or "x")[:1] != "-"]
            place = operands[0].value if operands else "~"
            shown = f"(after cd {operands[0].text if operands else ''})".replace(" )", ")")
            if place is None:
                return Use("write", shown, program)
            base = _absolute(place, project, home)
            if not writes and not _inside(base, roots):
                # A writer's own default target is the working directory (`cd ~ && tar
                # -xf a.tar`, `cd /etc && unzip a.zip`).
                return Use("write", shown, program)
            bases.append(base)
    for path, shown in writes:
        if path.startswith("\0") or any(not _inside(_absolute(path, base, home), roots)
                                        for base in bases):  # unknown: anywhere
            return Use("write", shown, program, _option(shown))
    for place, shown in switches:
        if place is None or any(not _inside(_absolute(place, base, home), (project,))
                                for base in bases):
            return Use("exec", shown, program, _option(shown))
    return None


def _option(shown: str) -> str:
    """`-C` of `-C ~` or `--directory=~`: a rule naming `-C *` covers every value."""
    return shown.split("=", 1)[0].split(" ", 1)[0] if shown.startswith("-") else ""


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    """In a root where the kernel would write: links resolved (a committed `out -> ~`
    is home; `/tmp` on macOS is `/private/tmp`, as the roots are)."""
    real = os.path.realpath(path)
    return any(is_within(real, root) for root in roots)
