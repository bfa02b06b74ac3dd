"""What the agents' settings will execute on the host: the scripts their hooks, status
line, helpers and MCP servers name, and the environment files an agent loads (Gemini
CLI's `.env`: its variables reach every process it starts).

The settings files themselves are read-only inside the sandbox (`AGENT_SETTINGS`), but
a script they name (`.claude/hooks/guard.sh`, the documented layout) is an ordinary
project file: a confined command could rewrite it, and the agent runs it unconfined at
its next tool call. So, as with git hooks, each such file that lies in a writable root
is kept read-only during the run (and checked after it), or watched while missing.

Read from each file, as its agent does (JSON; Gemini's with comments; Codex's TOML):
- every object with a `command` (a shell string: each program position and each word
  that names a path; a list: an argv) and its `args` (MCP servers, Codex hooks);
- the string helpers that run a command (`apiKeyHelper`, `awsAuthRefresh`,
  `awsCredentialExport`, `otelHeadersHelper`, Gemini's `discoveryCommand` and
  `callCommand`, Codex's `notify` argv).
A word is resolved as the agent's shell would: `$CLAUDE_PROJECT_DIR` (and the other
agents' project variables) and `~` expanded, relative to the project (where hooks run)
and to the settings file's folder (Cursor's `./hooks/x.sh`); a program named without a
slash is looked up on PATH (`pathguard.lookups`). A file we cannot parse still has
every string in it that names an existing file kept read-only.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path

from swifty_sandbox.policy.agents import (
    AGENTS,
    Agent,
    env_files,
    upward_env_files,
    user_settings,
)
from swifty_sandbox.policy.protected import AGENT_SETTINGS
from swifty_sandbox.policy.yamlnodes import NotRegular, TooLarge, read_regular

from .pathguard import lookups

# Besides the agent table's user settings (`policy/agents.py`, where each agent finds
# them): Claude Code's state file, which holds the user's and each project's MCP
# servers. What they name runs too, and may lie in a writable root.
USER_STATE: tuple[str, ...] = ("~/.claude.json",)
_HELPERS = frozenset({"apiKeyHelper", "awsAuthRefresh", "awsCredentialExport",
                      "otelHeadersHelper", "discoveryCommand", "callCommand", "notify"})
_PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR",
                 "CODEX_PROJECT_DIR", "PWD")
_SCRIPT = re.compile(r"\.(sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl|php|ps1|lua)$")
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})
# Programs that run the program after them (their options and a duration skipped),
# and the shells whose `-c` takes a command string.
_WRAPPERS = frozenset({"env", "exec", "command", "nohup", "nice", "time", "timeout",
                       "setsid", "stdbuf", "ionice", "chrt", "builtin"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
_DURATION = re.compile(r"^[0-9]+(\.[0-9]+)?[smhd]?$")
_LIMIT = 1 << 20  # `~/.claude.json` holds every project's history: a cap, not a parse
_JSON_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def settings_files(project: str, home: str) -> list[str]:
    return [os.path.join(project, p[2:]) for p in AGENT_SETTINGS] + \
        [str(p) for p in user_settings(os.environ, Path(home))] + \
        [os.path.join(home, p[2:]) for p in USER_STATE]


def programs(project: str, home: str, path_var: str | None,
             roots: Iterable[str] = ()) -> list[str]:
    """Every file the agents' settings in `project` and `home` would execute or hand
    to an interpreter, as absolute paths (existing or not), and the directory of each
    script they name by its path: a script loads what lies beside it (Python puts its
    directory first on `sys.path`, so a planted `json.py` there runs at its `import
    json`; node's `./` requires; a shell's `source "$(dirname "$0")/lib.sh"`), unless
    that directory is the project, home or one of `roots` (where every file would be)."""
    # The environment an agent loads from the project: code for every process it starts.
    # Gemini CLI looks for them from where it starts up to `/`: those above the project
    # too (writable where a writable root holds the project's parent).
    out: dict[str, None] = dict.fromkeys((
        *(os.path.join(project, name)
          for name in env_files(os.environ, Path(home), Path(project))),
        *upward_env_files(os.environ, Path(home), Path(project))))
    scripts: dict[str, None] = {}
    for settings in settings_files(project, home):
        try:
            data = read_regular(settings, _LIMIT)
        except (NotRegular, TooLarge, OSError, ValueError):
            continue
        if data is None:
            continue
        text = data.decode("utf-8", errors="surrogateescape")
        bases = (project, os.path.dirname(settings))
        parsed = _parse(settings, text)
        if parsed is None:  # not what we read: every string naming a file, kept
            for value in _JSON_STRING.findall(text):
                for word in _words(value, project, home):
                    for path in _paths(word, bases, None, program=False):
                        if os.path.isfile(path):
                            out[path] = scripts[path] = None
            continue
        for word, program in _commands(parsed, project, home):
            for path in _paths(word, bases, path_var, program=program):
                out[path] = None
                if "/" in word or not program:  # named by its path, not looked up
                    scripts[path] = None
    kept = {project, home, "/", *roots}
    for script in scripts:
        directory = os.path.dirname(script)
        if directory not in kept:
            out[directory] = None
    return list(out)


def _parse(path: str, text: str) -> object | None:
    try:
        if path.endswith(".toml"):
            import tomllib

            return tomllib.loads(text)
        try:
            value: object = json.loads(text)
        except ValueError:
            value = json.loads(_without_comments(text))  # Gemini strips them
        return value
    except ValueError:
        return None


def _without_comments(text: str) -> str:
    """JSON text with `//` and `/* */` comments outside strings removed."""
    return re.sub(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/',
                  lambda m: m.group(1) or "", text, flags=re.S)


def _commands(value: object, project: str, home: str) -> Iterator[tuple[str, bool]]:
    """(word, whether it is in a program position) for every command in the tree."""
    if isinstance(value, list):
        for item in value:
            yield from _commands(item, project, home)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key == "command" or key in _HELPERS:
            if isinstance(item, str):
                yield from _shell(item, project, home)
            elif isinstance(item, list):
                yield from _argv([str(a) for a in item], project, home)
        elif key == "args" and isinstance(item, list) and "command" in value:
            yield from _argv([str(a) for a in item], project, home, first=False)
        else:
            yield from _commands(item, project, home)


def _shell(command: str, project: str, home: str, directory: str = "", depth: int = 0
           ) -> Iterator[tuple[str, bool]]:
    """A shell command string: the word at each program position, and each other word
    that names a file (a script handed to an interpreter). A program run through a
    wrapper (`env VAR=1 node`, `exec`, `timeout 5`) is still at a program position, and
    the string after a shell's `-c` is a command of its own (`bash -c 'cd tools &&
    ./lint.sh'`), not one path with spaces in it."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an open quote: the agent's shell fails; be generous anyway
        tokens = command.split()
    at_program = True
    after_cd = False
    wrapped = False  # after a wrapper: its options and arguments, then the program
    inline = False  # after a shell's `-c`: the next word is a command string
    shell_program = False
    for token in tokens:
        if token in _OPERATORS:
            at_program, wrapped, inline, shell_program = True, False, False, False
            continue
        if inline and not token.startswith("-"):
            inline = False
            if depth < 4:
                yield from _shell(token, project, home, directory, depth + 1)
            continue
        if at_program and "=" in token and not token.startswith(("=", "/", ".")):
            continue  # `VAR=value cmd`
        if wrapped and (token.startswith("-") or _DURATION.match(token)):
            continue  # `env -i`, `nice -n 5`, `timeout 5`
        if not at_program and token.startswith("-") and not token.startswith("--") \
                and "c" in token and shell_program:
            inline = True  # `bash -c`, `sh -ec`, `bash -lc`
        for word in _words(token, project, home):
            if after_cd:
                directory = os.path.join(directory, word)
                continue
            yield (os.path.join(directory, word) if directory and "/" in word
                   else word), at_program
        after_cd = at_program and token == "cd"
        if at_program:
            name = os.path.basename(token)
            shell_program = name in _SHELLS
            wrapped = name in _WRAPPERS
            at_program = wrapped
        else:
            wrapped = False


def _argv(argv: list[str], project: str, home: str, *, first: bool = True
          ) -> Iterator[tuple[str, bool]]:
    for i, arg in enumerate(argv):
        for word in _words(arg, project, home):
            yield word, first and i == 0


def _words(token: str, project: str, home: str) -> Iterable[str]:
    """The token with the project's variables and `~` expanded; nothing when another
    variable is left in it (its value is not known here)."""
    for name in _PROJECT_VARS:
        token = token.replace("${" + name + "}", project).replace("$" + name, project)
    token = token.replace("${HOME}", home).replace("$HOME", home)
    if token == "~" or token.startswith("~/"):
        token = home + token[1:]
    if "$" in token or "`" in token or not token or token.startswith("-"):
        return ()
    return (token,)


def _paths(word: str, bases: tuple[str, ...], path_var: str | None, *,
           program: bool) -> list[str]:
    if os.path.isabs(word):
        return [os.path.normpath(word)]
    if "/" in word or (not program and _SCRIPT.search(word)):
        return [os.path.normpath(os.path.join(base, word)) for base in bases]
    if program:  # looked up on PATH by the agent's shell
        return lookups(word, path_var, bases[0])
    return []


def marketplaces(project: str, home: str) -> list[str]:
    """Claude Code's local plugin marketplaces, as absolute folders (existing or not):
    each `extraKnownMarketplaces` entry of a settings file whose source is a
    `directory` (its `path`) or a `file` (the folder holding the file's
    `.claude-plugin/`), and each folder `plugins/known_marketplaces.json` in the user's
    config dir recorded (`installLocation`: it stays after the declaration is gone).
    Claude Code reads such a marketplace's plugins in place at every start (2.1.332:
    "its plugins load in place from the declared path"): their hooks, MCP, LSP and
    monitor commands run on the host, so the whole folder is kept, not file by file."""
    out: dict[str, None] = {}
    config = AGENTS[Agent.CLAUDE_CODE].user_dir(os.environ, Path(home))
    known = os.path.join(config, "plugins", "known_marketplaces.json")
    for settings in (*settings_files(project, home), known):
        try:
            data = read_regular(settings, _LIMIT)
        except (NotRegular, TooLarge, OSError, ValueError):
            continue
        parsed = _parse(settings, data.decode("utf-8", errors="surrogateescape")) \
            if data is not None else None
        if not isinstance(parsed, dict):
            continue
        entries = parsed.get("extraKnownMarketplaces") if settings != known else parsed
        if not isinstance(entries, dict):
            continue
        for entry in entries.values():
            for folder in _marketplace_folders(entry, home):
                for base in (project, os.path.dirname(settings)):
                    out[os.path.normpath(os.path.join(base, folder))] = None
    return list(out)


def _marketplace_folders(entry: object, home: str) -> list[str]:
    if not isinstance(entry, dict):
        return []
    folders: list[str] = []
    location = entry.get("installLocation")
    source = entry.get("source")
    if isinstance(source, dict) and source.get("source") in ("directory", "file"):
        path = source.get("path")
        if isinstance(path, str) and path:
            if source.get("source") == "file":  # `…/.claude-plugin/marketplace.json`
                path = os.path.dirname(os.path.dirname(path.rstrip("/"))) or "."
            folders.append(path)
        if isinstance(location, str) and location:
            folders.append(location)
    expanded = []
    for folder in folders:
        if folder == "~" or folder.startswith("~/"):
            folder = home + folder[1:]
        expanded.append(folder)
    return expanded


__all__ = ["USER_STATE", "marketplaces", "programs", "settings_files"]
