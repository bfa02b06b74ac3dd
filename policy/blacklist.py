"""The dangerous-command blacklist (SPEC §2): semantic matchers over invocations.

Each category has a stable id and a reason sentence in the message table. Matching
is on what runs — flags in any order and spelling, absolute program paths, quoting,
wrappers and shells already unwrapped (`commands.py`) — never on text that is data
(`echo "rm -rf /"`). A program name computed at run time is checked as each program
it could be, so `$(echo rm) -rf /` is still a recursive delete of `/`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from swifty_sandbox.messages import t

from .commands import INTERPRETERS, Invocation, innermost, name, reads_code_from_stdin
from .protected import SYSTEM_DIRS
from .shell import Script, Simple, Word

RECURSIVE_DELETE = "recursive-delete"
MKFS = "mkfs"
BLOCK_DEVICE = "block-device-write"
RECURSIVE_PERMISSIONS = "recursive-chmod-chown"
FORK_BOMB = "fork-bomb"
PIPE_TO_INTERPRETER = "pipe-to-interpreter"
GIT_DESTRUCTIVE = "git-destructive"
LONG_SLEEP = "long-sleep"
CATEGORIES = (RECURSIVE_DELETE, MKFS, BLOCK_DEVICE, RECURSIVE_PERMISSIONS, FORK_BOMB,
              PIPE_TO_INTERPRETER, GIT_DESTRUCTIVE, LONG_SLEEP)

MAX_SLEEP_SECONDS = 30.0
_BLOCK_DEVICE = re.compile(
    r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|loop\d|"
    r"dm-\d|md\d|sr\d|sg\d|mapper/|nbd\d|zd\d|bcache\d|mtdblock\d|ubi)")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "nc", "ncat",
                          "netcat", "ftp", "tftp", "lynx", "links", "socat", "xh"})
_GIT_ALIAS = re.compile(r"alias\.([^=]+)=\s*([^!].*)", re.DOTALL | re.IGNORECASE)
_GIT_VALUED_GLOBALS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                 "--exec-path", "--config-env", "--super-prefix"})


@dataclass(frozen=True, slots=True)
class Match:
    category: str
    reason: str
    command: str  # the offending command as it will run


@dataclass(frozen=True, slots=True)
class Context:
    home: str
    # Where a regular file may be formatted (`mkfs.ext4 disk.img`): the writable roots,
    # the project first; empty when unknown (then every mkfs is denied).
    roots: tuple[str, ...] = ()
    # The command changes directory or moves files around (`cd`, `ln`, `mv`, …): what a
    # path names when mkfs runs is not what it names now.
    moves: bool = False


# -- helpers ----------------------------------------------------------------------------

def _split_options(args: list[Word]) -> tuple[set[str], set[str], list[Word]]:
    """(short flag letters, long options without values, operands) — `--` ends options."""
    letters: set[str] = set()
    longs: set[str] = set()
    operands: list[Word] = []
    ended = False
    for word in args:
        value = word.shown
        if ended or not value.startswith("-") or value == "-":
            operands.append(word)
        elif value == "--":
            ended = True
        elif value.startswith("--"):
            longs.add(value.split("=", 1)[0])
        else:
            letters.update(value[1:])
    return letters, longs, operands


def _home_forms(ctx: Context) -> set[str]:
    return {"~", "$HOME", "${HOME}", ctx.home, ctx.home.rstrip("/")}


def _critical(word: Word, ctx: Context, *, relative: bool) -> bool:
    """`/`, home, a top-level system directory, `*`, `.`, `..` — with `/`, `/*` tails."""
    text = word.value if word.value is not None else word.text.replace('"', "")
    text = re.sub(r"/+", "/", text)
    stripped = re.sub(r"(/\*|/\.\*|/)+$", "", text)
    if stripped in ("", "/*") and text.startswith("/"):
        return True  # `/`, `//`, `/*`
    if stripped in _home_forms(ctx) or re.fullmatch(r"~[\w.-]*", stripped) or re.fullmatch(
            r"\$\{HOME:?[-=?+][^}]*\}", stripped):
        return True  # `~`, `~/`, `$HOME/*`, `~user`, `${HOME:?}`
    if word.value is None and re.fullmatch(r"\$\{?\w+\}?", stripped) and text != stripped:
        return True  # `$DIR/` or `${DIR}/*`: `/` itself when DIR is empty
    if stripped.startswith("/") and stripped.count("/") == 1 and stripped[1:] in SYSTEM_DIRS:
        return True
    # `*`, `.`, `..`, `./`, `../..`
    return relative and (stripped in ("*", ".*", "")
                         or re.fullmatch(r"\.{1,2}(/\.{1,2})*", stripped) is not None)


def _match(category: str, invocation: Invocation, **params: object) -> Match:
    command = " ".join(w.shown for w in invocation.argv)
    return Match(category, t(f"blacklist.{category}", command=command, **params), command)


# -- per-program matchers ----------------------------------------------------------------

def _rm(inv: Invocation, ctx: Context) -> Match | None:
    letters, longs, operands = _split_options(list(inv.argv[1:]))
    if not ({"r", "R"} & letters or "--recursive" in longs):
        return None
    if any(_critical(w, ctx, relative=True) for w in operands):
        return _match(RECURSIVE_DELETE, inv)
    return None


# Options that do not narrow what find selects (global options, depth, traversal).
_FIND_UNFILTERED = frozenset({"-depth", "-maxdepth", "-mindepth", "-xdev", "-mount",
                              "-follow", "-noleaf", "-ignore_readdir_race", "-d", "-print",
                              "-print0", "-daystart", "-regextype", "-warn", "-nowarn"})


def _find(inv: Invocation, ctx: Context) -> Match | None:
    """`find / -delete`, `find ~ -exec rm -rf {} +`: everything under a critical start
    path. A test that narrows the selection (`-name`, `-type`, `-mtime`, …) makes it an
    ordinary scoped delete."""
    words = [w.shown for w in inv.argv[1:]]
    while (words and words[0] in ("-L", "-H", "-P")) or (words and words[0].startswith("-O")):
        words.pop(0)
    starts = []
    while words and not words[0].startswith(("-", "(", "!")):
        starts.append(Word(words[0], words[0]))
        words.pop(0)
    action = next((i for i, w in enumerate(words)
                   if w == "-delete" or (w in ("-exec", "-execdir", "-ok", "-okdir")
                                         and i + 1 < len(words)
                                         and words[i + 1].rsplit("/", 1)[-1]
                                         in ("rm", "shred", "unlink"))), None)
    if action is None:
        return None
    tests = [w for w in words[:action] if w.startswith("-") and w not in _FIND_UNFILTERED]
    # A test narrows the selection (`find . -name '*.pyc' -delete`), but no predicate
    # makes `-delete` under `/`, the home or a system directory a scoped delete.
    narrowed = bool(tests) or any(w in ("(", "!", "-o", "-not") for w in words[:action])
    if narrowed and words[action] != "-delete":
        return None
    if any(_critical(w, ctx, relative=not narrowed) for w in starts or [Word(".", ".")]):
        return _match(RECURSIVE_DELETE, inv)
    return None


def _mkfs(inv: Invocation, ctx: Context) -> Match | None:
    """A disk image is not a disk: formatting an existing regular file that lies in a
    writable root is allowed; a device, a computed word or anything else is not."""
    operands = [w for w in inv.argv[1:] if not w.shown.startswith("-")]
    if not ctx.roots or any(w.value is None for w in inv.argv[1:]) or any(
            (w.value or "").startswith("/dev") for w in operands):
        return _match(MKFS, inv)
    for word in operands:
        value = word.value or ""
        if ctx.moves:
            break
        path = os.path.realpath(os.path.join(ctx.roots[0], value))
        if os.path.isfile(path) and not path.startswith("/dev/") and any(
                path == root or path.startswith(root.rstrip("/") + "/") for root in ctx.roots):
            return None
    return _match(MKFS, inv)


def _device_targets(inv: Invocation) -> list[str]:
    program = inv.program or ""
    args = list(inv.argv[1:])
    if program == "dd":
        return [w.shown[3:] for w in args if w.shown.startswith("of=")]
    _, _, operands = _split_options(args)
    if program in ("cp", "mv", "install", "rsync") and operands:
        return [operands[-1].shown]
    if program in ("tee", "shred", "wipefs", "blkdiscard", "badblocks", "pv"):
        return [w.shown for w in operands]
    return []


def _block_device(inv: Invocation, ctx: Context) -> Match | None:
    program = inv.program or ""
    for target in _device_targets(inv):
        if _BLOCK_DEVICE.match(target) or (program == "shred" and target.startswith("/dev/")):
            return _match(BLOCK_DEVICE, inv)
    return None


def _redirect_to_device(simple: Simple) -> str | None:
    for redirect in simple.redirects:
        if redirect.writes:
            target = redirect.target.shown if redirect.target else ""
            if _BLOCK_DEVICE.match(target):
                return target
    return None


def _chmod_chown(inv: Invocation, ctx: Context) -> Match | None:
    letters, longs, operands = _split_options(list(inv.argv[1:]))
    if not ("R" in letters or "--recursive" in longs):
        return None
    reference = any(o.startswith("--reference") for o in longs)
    targets = operands if reference else operands[1:]
    if any(_critical(w, ctx, relative=False) for w in targets):
        return _match(RECURSIVE_PERMISSIONS, inv)
    return None


def _git(inv: Invocation, ctx: Context) -> Match | None:
    program = inv.program or "git"
    args = [w.shown for w in inv.argv[1:]]
    if program.startswith("git-"):  # /usr/lib/git-core/git-push -f
        args.insert(0, program[4:])
    i = 0
    aliases: dict[str, list[str]] = {}
    while i < len(args) and args[i].startswith("-"):
        option = args[i]
        if option.startswith("-c"):  # `git -c alias.p='push -f' p`
            setting = option[2:] or (args[i + 1] if i + 1 < len(args) else "")
            m = _GIT_ALIAS.match(setting)
            if m is not None:
                aliases[m.group(1).lower()] = m.group(2).split()
        i += 2 if option in _GIT_VALUED_GLOBALS else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    if sub.lower() in aliases and aliases[sub.lower()]:
        expanded = aliases[sub.lower()]
        sub, rest = expanded[0], [*expanded[1:], *rest]
    words = [Word(a, a) for a in rest]
    letters, longs, operands = _split_options(words)
    values = [o.shown for o in operands]
    dangerous = False
    if sub == "push":
        dangerous = ("f" in letters or bool(longs & {"--force", "--force-with-lease",
                                                     "--force-if-includes"})
                     or any(v.startswith("+") for v in values))
    elif sub == "reset":
        dangerous = "--hard" in longs
    elif sub == "clean":
        dangerous = "f" in letters or "--force" in longs
    elif sub == "checkout":
        dangerous = any(v in (".", "./", ":/", "*") for v in values)
    elif sub == "restore":
        staged_only = bool({"S"} & letters or "--staged" in longs) and not (
            "W" in letters or "--worktree" in longs)
        dangerous = not staged_only and any(v in (".", "./", ":/", "*") for v in values)
    elif sub == "branch":
        dangerous = bool(operands) and ("D" in letters or (
            ("d" in letters or "--delete" in longs) and ("f" in letters or "--force" in longs)))
    return _match(GIT_DESTRUCTIVE, inv, sub=sub) if dangerous else None


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def sleep_seconds(args: list[Word]) -> float | None:
    """The total a `sleep` waits; None when it cannot be computed (or is infinite)."""
    total = 0.0
    operands = [w for w in args if w.shown != "--"]
    if not operands:
        return 0.0
    for word in operands:
        if word.value is None:
            return None
        m = _DURATION.fullmatch(word.value.strip())
        if m is None:
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
    return total


def _sleep(inv: Invocation, ctx: Context) -> Match | None:
    if any(w.shown in ("--help", "--version") for w in inv.argv[1:]):
        return None
    seconds = sleep_seconds(list(inv.argv[1:]))
    if seconds is None or seconds > MAX_SLEEP_SECONDS:
        shown = "?" if seconds is None else f"{seconds:g}"
        return _match(LONG_SLEEP, inv, seconds=shown, limit=f"{MAX_SLEEP_SECONDS:g}")
    return None


Matcher = Callable[[Invocation, Context], "Match | None"]
_BY_PROGRAM: dict[str, Matcher] = {
    "rm": _rm, "find": _find, "dd": _block_device, "cp": _block_device, "mv": _block_device,
    "install": _block_device, "rsync": _block_device, "tee": _block_device,
    "shred": _block_device, "wipefs": _block_device, "blkdiscard": _block_device,
    "badblocks": _block_device, "pv": _block_device, "chmod": _chmod_chown,
    "chown": _chmod_chown, "chgrp": _chmod_chown, "git": _git, "sleep": _sleep,
    "mke2fs": _mkfs, "mkswap": _mkfs, "newfs": _mkfs,
}
# A computed program is checked as each program whose arguments alone can be fatal.
_COMPUTED_AS = ("rm", "chmod", "chown", "dd", "shred")


def _program_matcher(program: str) -> Matcher | None:
    if program == "mkfs" or program.startswith("mkfs."):
        return _mkfs
    if program.startswith("git-"):
        return _git
    return _BY_PROGRAM.get(program)


def _as_program(inv: Invocation, program: str) -> Invocation:
    argv = (Word(program, program), *inv.argv[1:])
    return Invocation(argv, inv.forms, inv.simple, inv.script, inv.via)


# -- pipelines, substitutions, functions -----------------------------------------------------

def _is_source(simple: Simple) -> bool:
    """A command whose output is downloaded or decoded content (wrappers peeled off)."""
    words = innermost(simple.words)
    if not words:
        return False
    program = name(words[0])
    args = [w.shown for w in words[1:]]
    if program in _DOWNLOADERS:
        return True
    if program in ("base64", "base32", "basenc"):
        return any(a in ("-d", "--decode", "-D") or (a.startswith("-") and not a.startswith(
            "--") and "d" in a) for a in args)
    if program == "xxd":
        return any(a.startswith("-") and "r" in a for a in args)
    if program == "openssl":
        return "-d" in args or "-base64" in args or "base64" in args
    return program in ("uudecode", "gpg")


def _sources_in(words: Iterable[Word]) -> bool:
    return any(_is_source(s) for w in words for sub in w.subs for s in sub.walk())


def _pipe_to_interpreter(invocations: list[Invocation]) -> Invocation | None:
    positions: dict[tuple[int, int], Simple] = {}
    for inv in invocations:
        positions.setdefault((inv.simple.pipeline, inv.simple.stage), inv.simple)
    for inv in invocations:
        program = inv.program or ""
        simple = inv.simple
        interpreter = program in INTERPRETERS or program in ("eval", "source", ".")
        if not interpreter:
            continue
        # `curl … | sh`: an earlier stage of the same pipeline downloads or decodes.
        if reads_code_from_stdin(program, inv.args) and any(
                _is_source(s) for (pid, stage), s in positions.items()
                if pid == simple.pipeline and stage < simple.stage):
            return inv
        # `bash <(curl …)`, `sh -c "$(wget …)"`, `eval "$(curl …)"`, `sh <<< "$(curl …)"`.
        herestrings = [r.target for r in simple.redirects if r.op == "<<<" and r.target]
        if _sources_in((*inv.argv[1:], *herestrings)):
            return inv
    return None


def _fork_bomb(scripts: Iterable[Script]) -> str | None:
    """A function that calls itself — directly or through others (`a(){ b|b& };
    b(){ a|a& }`) — in the background or twice in one pipeline."""
    functions = {f.name: f for script in scripts for f in script.functions}
    calls = {fn: [s for s in f.body.walk() if s.words and s.words[0].value in functions]
             for fn, f in functions.items()}
    for fn in functions:
        if fn not in _reaches(calls, fn):
            continue  # not recursive
        cycle = [s for s in calls[fn]
                 if s.words[0].value == fn or fn in _reaches(calls, s.words[0].value)]
        piped = {s.pipeline for s in cycle}
        if any(s.background for s in cycle) or len(cycle) > len(piped):
            return fn
    return None


def _reaches(calls: dict[str, list[Simple]], start: str | None) -> set[str]:
    """The functions a call to `start` may go on to call."""
    reached: set[str] = set()
    stack = [start or ""]
    while stack:
        caller = stack.pop()
        for s in calls.get(caller, []):
            callee = s.words[0].value or ""
            if callee not in reached:
                reached.add(callee)
                stack.append(callee)
    return reached


# -- entry point ------------------------------------------------------------------------

def known_values(invocations: list[Invocation]) -> dict[str, list[str]]:
    """Variables with values the shell knows before it runs: literal assignments
    (`d=/`) and the words of `for d in / ~` loops, flow-insensitively."""
    known: dict[str, list[str]] = {}
    scripts = {id(s): s for inv in invocations for s in inv.script.scripts()}
    for script in scripts.values():
        for simple in script.commands:
            if simple.words:
                continue
            for word in simple.assignments:
                text = word.value if word.value is not None else word.text
                m = _LITERAL_ASSIGNMENT.fullmatch(text)
                if m is not None:
                    value = m.group(2)
                    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                        value = value[1:-1]
                    if not any(c in value for c in "$`\\"):
                        known.setdefault(m.group(1), []).append(value)
    return known


_LITERAL_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)
_EXPANSION = re.compile(r'"?\$(?:\{(\w+)\}|(\w+))"?([^$`"\'\\]*)')


def with_known(inv: Invocation, known: dict[str, list[str]]) -> Iterable[Invocation]:
    """The invocation with each known value put in for `$d`, `"${d}"/x`, … (at most 16)."""
    count = 0
    for variable, values in known.items():
        for value in values:
            argv, changed = [], False
            for word in inv.argv:
                m = _EXPANSION.fullmatch(word.text) if word.value is None else None
                if m is not None and (m.group(1) or m.group(2)) == variable:
                    text = value + m.group(3)
                    argv.append(Word(text, text))
                    changed = True
                else:
                    argv.append(word)
            if changed:
                yield Invocation(tuple(argv), inv.forms, inv.simple, inv.script, inv.via)
                count += 1
                if count >= 16:
                    return


_MOVERS = frozenset({"cd", "pushd", "popd", "ln", "mv", "cp", "install", "rm", "unlink",
                     "mount", "losetup", "rsync", "tar", "unzip"})


def check(invocations: list[Invocation], home: str, roots: tuple[str, ...] = ()
          ) -> Match | None:
    """The first blacklist match among the invocations of one request, if any.
    `roots` (the project first, then the other writable roots) lets `mkfs` format a
    regular file there."""
    moves = bool(roots) and any(inv.program in _MOVERS for inv in invocations)
    ctx = Context(home, roots, moves)
    known = known_values(invocations) if any(
        w.value is None for inv in invocations for w in inv.argv) else {}
    if known:
        invocations = [*invocations, *(v for inv in invocations
                                        for v in with_known(inv, known))]
    for inv in invocations:
        program = inv.program
        if program is None:
            for assumed in _COMPUTED_AS:
                matcher = _program_matcher(assumed)
                found = matcher(_as_program(inv, assumed), ctx) if matcher else None
                if found is not None:
                    return found
            continue
        matcher = _program_matcher(program)
        found = matcher(inv, ctx) if matcher else None
        if found is not None:
            return found
        device = _redirect_to_device(inv.simple)
        if device is not None:
            return _match(BLOCK_DEVICE, inv)
    piped = _pipe_to_interpreter(invocations)
    if piped is not None:
        return _match(PIPE_TO_INTERPRETER, piped)
    scripts = {id(s): s for inv in invocations for s in inv.script.scripts()}
    bomb = _fork_bomb(scripts.values())
    if bomb is not None:
        return Match(FORK_BOMB, t("blacklist.fork-bomb", command=bomb), bomb)
    return None
