"""Permission rules: `Tool(pattern)` text → a compiled, matchable `Rule`.

Bash patterns match one simple command's words joined by single spaces: `*` is any
text, a trailing ` *` (or Claude Code's `:*`) also matches no arguments at all, so
`Bash(ls *)` matches `ls` and `ls -la` but not `lsof`; `\\*` is a literal star.

Path patterns are gitignore globs (pathspec), anchored as SPEC §2 says: no `/` →
a basename at any depth; `/abs`; `~/home-relative`; anything else (`./name` too) →
the project root.
They are compiled into one absolute pattern, matched against absolute paths.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from .agents import AGENTS
from .errors import SwiftyError
from .types import Effect, RuleRef, Tool

if TYPE_CHECKING:
    from collections.abc import Iterable

_RULE_RE = re.compile(r"\s*(?P<tool>[^\s()]+)\s*(?:\((?P<pattern>.*)\))?\s*", re.DOTALL)
MAX_RULE_CHARS = 4096  # no real rule comes near; compiling a huge one costs seconds
_GLOB_SPECIAL = re.compile(r"([\\*?\[\]!#])")


class RuleSyntaxError(SwiftyError):
    """Raised with a translated message; the loader adds file:line:col. `kind` is the
    audit finding id: unknown-tool, malformed-rule or invalid-glob."""

    code = "rule-syntax"

    def __init__(self, message: str, kind: str = "malformed-rule") -> None:
        super().__init__(message)
        self.kind = kind


class BashPattern:
    """A compiled Bash rule pattern; `None` pattern text matches every command.

    Stars only, so no regex: the literal pieces between stars are found left to right,
    each at its earliest place (which leaves the most room for the rest) — linear time
    whatever the number of stars, where a backtracking regex takes exponential time on
    `*a*a*a…*b`."""

    __slots__ = ("_optional", "_pieces", "_prefix", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        body = text
        optional_args = False
        if body.endswith(":*") or (body.endswith(" *") and not body.endswith("\\ *")):
            body, optional_args = body[:-2], True
        # `\*` is a literal star: protect it, split on the real stars.
        pieces = tuple(p.replace("\0", "*") for p in body.replace("\\*", "\0").split("*"))
        self._pieces = pieces
        # A trailing ` *` also matches no arguments: the pieces, or the pieces, a blank
        # and anything.
        self._optional = (*pieces[:-1], pieces[-1] + " ", "") if optional_args else None
        # A startswith() test rejects most rules before anything else runs (hot path).
        self._prefix = pieces[0]

    def matches(self, command_text: str) -> bool:
        return command_text.startswith(self._prefix) and (
            star_match(self._pieces, command_text)
            or (self._optional is not None and star_match(self._optional, command_text)))


def star_match(pieces: tuple[str, ...], text: str) -> bool:
    """Whether `text` is the literal pieces with any text between them (`*` globs)."""
    first, last = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return text == first
    end = len(text) - len(last)
    if end < len(first) or not text.startswith(first) or not text.endswith(last):
        return False
    position = len(first)
    for piece in pieces[1:-1]:
        found = text.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def escape_glob(literal: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\1", literal)


def anchor_path_pattern(pattern: str, project: Path, home: Path) -> str:
    """The gitignore pattern, anchored at `/`, that SPEC §2's path rules mean."""
    if pattern.startswith("./"):
        return escape_glob(str(project)) + pattern[1:]  # `./name`: at the project root
    stripped = pattern.rstrip("/")
    if "/" not in stripped:
        return pattern  # a basename at any depth
    if pattern == "~" or pattern.startswith("~/"):
        return escape_glob(str(home)) + pattern[1:]
    if pattern.startswith("/"):
        return pattern
    return escape_glob(str(project)) + "/" + pattern


_GLOB_CHAR = re.compile(r"(?<!\\)[*?\[]")
_ESCAPED = re.compile(r"\\(.)")


def literal_path(anchored: str) -> str | None:
    """The one absolute path an anchored pattern without glob characters names."""
    if ("/" not in anchored.rstrip("/") or anchored.endswith(("/", "\\"))
            or _GLOB_CHAR.search(anchored) or anchored.startswith("!")):
        return None
    path = _ESCAPED.sub(r"\1", anchored)
    return path if path.startswith("/") else "/" + path


def fixed_prefix(anchored: str) -> tuple[str, bool]:
    """The leading directories without glob characters, and whether that is all."""
    parts = anchored.strip("/").split("/")
    fixed: list[str] = []
    for part in parts:
        if _GLOB_CHAR.search(part):
            break
        fixed.append(_ESCAPED.sub(r"\1", part))
    return "/" + "/".join(fixed), len(fixed) == len(parts)


class PathPattern:
    """A gitignore glob over absolute paths.

    A pattern without glob characters (`~/.ssh`, `./.swifty`) is a plain path: it
    matches itself and everything below it, as gitignore does, without a regex (most
    profile entries are such). A glob is compiled when loaded if `validate` (user rule
    files: an invalid glob is a load error with file:line:col); the built-in profiles'
    and mandatory patterns, checked by the test suite, compile on first use, which
    keeps pathspec off the start-up path when no candidate path ever needs it.
    """

    __slots__ = ("_regex", "anchored", "head", "literal", "simple", "tail", "text")

    def __init__(self, text: str, anchored: str, *, validate: bool = True) -> None:
        self.text = text
        self.anchored = anchored
        self.literal = literal_path(anchored)
        # The literal last segments (`.git/hooks` of `**/.git/hooks`): any path the
        # glob matches, or lies below a match, contains them — a cheap prefilter.
        tail: list[str] = []
        for part in reversed(anchored.rstrip("/").split("/")):
            if _GLOB_CHAR.search(part) or "\\" in part:
                break
            tail.insert(0, part)
        self.tail = "/" + "/".join(tail) if tail else None
        # The fixed leading directories (`/tmp/` of `/tmp/krb5cc_*`): every path the glob
        # matches starts with them — the prefilter for globs without a literal tail.
        head = fixed_prefix(anchored)[0] if "/" in anchored.rstrip("/") else "/"
        self.head = head + "/" if head != "/" else None  # a basename glob has none
        # A glob of plain components with only `*` and `?` (`/tmp/krb5cc_*`,
        # `~/.docker/*.pem`): matched component by component, without pathspec, whose
        # import alone costs a cold `run` several milliseconds.
        parts = anchored.strip("/").split("/")
        self.simple = tuple(parts) if (
            self.literal is None and anchored.startswith("/") and not anchored.endswith("/")
            and "**" not in anchored and not any(c in anchored for c in "[]\\!")
            and "" not in parts) else None
        self._regex: re.Pattern[str] | None = None
        if self.literal is None and validate:
            self._regex = compile_glob(anchored, text)

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = compile_glob(self.anchored, self.text)
            if len(_LATE) < _LATE_MAX:
                _LATE.append((self.text, self.anchored))
        return self._regex

    def prime(self) -> None:
        """Compile now what `matches` would compile on its first call here: the regex,
        or for a simple glob `fnmatch`'s per component (cached per process)."""
        if self.literal is not None:
            return
        if self.simple is None:
            if self._regex is None:  # not through `regex`: not this process's use
                self._regex = compile_glob(self.anchored, self.text)
            return
        for part in self.simple:
            fnmatchcase("", part)

    def matches(self, absolute_path: str) -> bool:
        if self.literal is not None:
            return absolute_path == self.literal or absolute_path.startswith(
                self.literal.rstrip("/") + "/")
        if self.tail is not None and not (absolute_path.endswith(self.tail)
                                          or self.tail + "/" in absolute_path):
            return False
        if self.head is not None and not absolute_path.startswith(self.head):
            return False
        if self.simple is not None and self._regex is None:
            names = absolute_path.strip("/").split("/")
            return len(names) >= len(self.simple) and all(
                fnmatchcase(name, glob) for name, glob in zip(names, self.simple, strict=False))
        # Patterns are anchored at `/`, so the match runs on the path without it.
        return self.regex.match(absolute_path.lstrip("/")) is not None


_TRUSTED: dict[tuple[str, str], PathPattern] = {}
# The (text, anchored) of trusted patterns whose regex this process compiled on use (a
# warm worker: the project-anchored ones its server could not know), for its server to
# compile too (`learn_patterns`).
_LATE: list[tuple[str, str]] = []
_LATE_MAX = 256
_LATE_CHARS = 4096


def trusted_pattern(text: str, anchored: str) -> PathPattern:
    """A built-in profile's or mandatory pattern (trusted data, compiled on first use),
    made once per process: a `PathPattern` depends on its two strings only, and a policy
    load makes ~200 of them (a warm worker finds those its server made, `cli/warm.py`)."""
    key = (text, anchored)
    found = _TRUSTED.get(key)
    if found is None:
        if len(_TRUSTED) >= 4096:  # a long-lived `serve` over many projects
            _TRUSTED.clear()
        found = _TRUSTED[key] = PathPattern(text, anchored, validate=False)
    return found


def late_patterns() -> list[tuple[str, str]]:
    """The (text, anchored) of the trusted patterns this process compiled on use."""
    return list(_LATE)


def learn_patterns(keys: object) -> int:
    """Make and compile each (text, anchored) trusted pattern (the warm server, from
    its workers' reports), so that the workers forked next find them compiled; how many
    were new. A `PathPattern` is a pure function of its two strings: a report can only
    make us compile, and anything but a short list of string pairs is skipped."""
    new = 0
    if not isinstance(keys, list):
        return 0
    for key in keys[:_LATE_MAX]:
        if not (isinstance(key, list) and len(key) == 2
                and all(isinstance(k, str) and len(k) <= _LATE_CHARS for k in key)):
            continue
        text, anchored = key
        known = _TRUSTED.get((text, anchored))
        if known is not None and (known.literal is not None or known._regex is not None):
            continue
        try:
            trusted_pattern(text, anchored).prime()
            new += 1
        except Exception:  # a glob that does not compile stays uncompiled (as on use)
            continue
    return new


def prime_trusted() -> None:
    """Compile every trusted pattern made so far (`PathPattern.prime`): the warm
    server, once it has made the built-in ones."""
    for pattern in list(_TRUSTED.values()):
        with contextlib.suppress(Exception):  # uncompilable: fails on use, as before
            pattern.prime()


# One atom of a path glob's regex: an escape, a class, a group's start, one character;
# then its quantifier, if any.
_ATOM = re.compile(r"(\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|\(\?[:>]|\(\?P<\w+>|.)([*+?]\??|\{[^}]*\})?",
                   re.DOTALL)
_STAR = "[^/]*"


def bounded(regex: str) -> str:
    """A path glob's regex without exponential backtracking on many stars (`*a*a…*b`).

    Within a path segment a glob is fixed-length pieces joined by stars (`[^/]*`). Each
    star followed by a piece and another star is rewritten as `(?>[^/]*?PIECE)`: the
    piece at its earliest place, never revisited. The earliest place leaves the most
    room for the rest, so for pieces that cannot match `/` the matches are the same, and
    the time is linear per piece instead of exponential in the number of stars.
    """
    atoms = [m.group(1) + (m.group(2) or "") for m in _ATOM.finditer(regex)]
    out: list[str] = []
    index = 0
    while index < len(atoms):
        if atoms[index] != _STAR:
            out.append(atoms[index])
            index += 1
            continue
        if index + 1 < len(atoms) and atoms[index + 1] == _STAR:
            index += 1  # two stars in a row are one
            continue
        end = index + 1  # the piece: one-character atoms up to the next star
        while end < len(atoms) and _one_character(atoms[end]):
            end += 1
        piece = "".join(atoms[index + 1:end])
        if piece and end < len(atoms) and atoms[end] == _STAR:
            out.append(f"(?>{_STAR}?{piece})")
        else:
            out.append(_STAR + piece)
        index = end
    return "".join(out)


def _one_character(atom: str) -> bool:
    """Matches exactly one character, never `/`."""
    if atom.startswith("["):
        return atom.endswith("]") and ("/" in atom) == atom.startswith("[^")
    if atom.startswith("\\"):
        return len(atom) == 2 and atom[1] not in "/dDwWsSbBAZ0123456789"
    return len(atom) == 1 and atom not in "./()|^$*+?{}"


def compile_glob(anchored: str, shown: str) -> re.Pattern[str]:
    """The regex for one gitignore pattern; raises `RuleSyntaxError` when invalid."""
    if anchored.startswith("!"):
        raise RuleSyntaxError(t("rule.negated_glob", rule=shown), "invalid-glob")
    from pathspec.patterns.gitignore.base import GitIgnorePatternError
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    try:
        compiled = GitIgnoreSpecPattern(anchored)
    except (GitIgnorePatternError, ValueError) as e:
        raise RuleSyntaxError(t("rule.bad_glob", rule=shown, error=e), "invalid-glob") from e
    if compiled.include is None or compiled.regex is None:
        raise RuleSyntaxError(t("rule.bad_glob", rule=shown, error="unmatched `[`"),
                              "invalid-glob")
    # DOTALL: a file name may contain a newline (`a\nb/x/.git/hooks` is a hooks dir too).
    return re.compile(bounded(compiled.regex.pattern), compiled.regex.flags | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of one file. `tool is None` means every tool (`*`)."""

    tool: Tool | None
    effect: Effect
    text: str
    file: str
    line: int
    column: int
    bash: BashPattern | None = None  # None with tool Bash: matches every command
    path: PathPattern | None = None  # None with a file tool: matches every path

    @property
    def ref(self) -> RuleRef:
        return RuleRef(self.file, self.line, self.text)

    @property
    def matches_everything(self) -> bool:
        return self.bash is None and self.path is None

    def applies_to(self, tool: Tool) -> bool:
        return self.tool is None or self.tool is tool


def parse_rule(
    text: str,
    effect: Effect,
    *,
    file: str,
    line: int,
    column: int,
    project: Path,
    home: Path,
) -> Rule:
    """Parse `Tool(pattern)`; raises `RuleSyntaxError` with a translated message."""
    if len(text) > MAX_RULE_CHARS:
        raise RuleSyntaxError(t("rule.too_long", length=len(text), limit=MAX_RULE_CHARS))
    m = _RULE_RE.fullmatch(text)
    if m is None:
        if "(" in text and not text.rstrip().endswith(")"):
            raise RuleSyntaxError(t("rule.missing_paren", rule=text))
        raise RuleSyntaxError(t("rule.syntax", rule=text))
    tool_name, pattern = m.group("tool"), m.group("pattern")

    def make(tool: Tool | None, bash: BashPattern | None = None,
             path: PathPattern | None = None) -> Rule:
        return Rule(tool, effect, text.strip(), file, line, column, bash, path)

    if tool_name == "*":
        if pattern not in (None, "*"):
            raise RuleSyntaxError(t("rule.syntax", rule=text))
        return make(None)
    tool = Tool.parse(tool_name)
    if tool is None:
        known = ", ".join([*(x.value for x in Tool), "Read", "Write", "Edit", "*"])
        message = t("rule.unknown_tool", tool=tool_name, rule=text, known=known)
        retired = next((info for info in AGENTS.values() if tool_name in info.retired), None)
        if retired is not None:
            # Claude Code's Grep and Glob are gone: a rule for them would never apply.
            message += " " + t("rule.retired_tool", tool=tool_name, agent=retired.title)
        raise RuleSyntaxError(message, "unknown-tool")
    if pattern is not None and not pattern.strip():
        raise RuleSyntaxError(t("rule.empty_pattern", rule=text, tool=tool.value))
    if pattern is None or pattern.strip() in ("*", "**"):
        return make(tool)
    pattern = pattern.strip()
    if tool is Tool.BASH:
        return make(tool, bash=BashPattern(pattern))
    return make(tool, path=PathPattern(pattern, anchor_path_pattern(pattern, project, home)))


def last_match_bash(rules: Iterable[Rule], command_text: str) -> Rule | None:
    """The file's verdict for one command: its last matching rule (rules reversed)."""
    for rule in rules:
        if rule.bash is None or rule.bash.matches(command_text):
            return rule
    return None


def last_match_path(rules: Iterable[Rule], absolute_path: str) -> Rule | None:
    for rule in rules:
        if rule.path is None or rule.path.matches(absolute_path):
            return rule
    return None
