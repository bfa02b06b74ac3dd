"""What runs by name on the host, outside any sandbox, from the agent's PATH: the hooks'
`swifty-sandbox hook AGENT`, as `init` installs it, and the programs the agents
themselves start unconfined (`HOST_PROGRAMS`: `git status` at start and between turns,
their search, their own `node`, their shell). A PATH directory inside a writable root
(an activated project `.venv/bin`, a `bin` put there by direnv, a relative entry) would
let a command plant its own `git` there, which the agent's next `git status` runs
unconfined. Those names are kept read-only, or guarded while missing, or moved aside
when a command creates them (`host_paths`: the compiler, the after-run mover and the
file tools all read this one table). And what else the next run executes outside
(`trusted_paths`): mounted read-only where it lies in a writable root."""

from __future__ import annotations

import functools
import os
import sys

LAUNCHER = "swifty-sandbox"

# The programs run by name on the host, outside any sandbox, through the PATH the agent
# was started with (a shell started from an activated venv gives it `.venv/bin` first).
# Not here: what is started by its path (`/bin/sh` of node's `shell: true` and of the
# hooks, a `$SHELL` from passwd), and what the agents' settings name (`npx` of an MCP
# server, a hook's `python3`: `agentexec` looks those up on the same PATH).
HOST_PROGRAMS: tuple[str, ...] = (
    LAUNCHER,  # the hook `init` installs: `swifty-sandbox hook AGENT`
    "git",  # every agent: status, log, diff, rev-parse at start and between turns
    "rg",  # Claude Code's search with USE_BUILTIN_RIPGREP=0; Gemini CLI's search tool
    "grep",  # Gemini CLI's search where it finds no rg and no git repository
    "node",  # each agent's `#!/usr/bin/env node` at its next start; npx's servers
    "bash",  # Codex's and Gemini CLI's shell, spawned by name (it runs our rewrite)
    "claude", "codex", "gemini", "cursor-agent",  # the person's next start of the agent
)


def host_paths(path_var: str | None, project: str) -> list[str]:
    """Where a lookup of any of `HOST_PROGRAMS` on `path_var` may land (`lookups`)."""
    folders = _folders(path_var, project)  # resolved once, not once per name
    return list(dict.fromkeys(os.path.join(folder, name) for name in HOST_PROGRAMS
                              for folder in folders))


def lookups(name: str, path_var: str | None, project: str) -> list[str]:
    """Where a lookup of the program `name` on `path_var` may land: each entry
    (relative ones from the project, where the agents run their hooks) as written and
    resolved."""
    return [os.path.join(folder, name) for folder in _folders(path_var, project)]


def _folders(path_var: str | None, project: str) -> list[str]:
    out: list[str] = []
    for entry in (path_var if path_var is not None else os.defpath).split(os.pathsep):
        directory = os.path.normpath(os.path.join(project, entry))
        out += [directory, os.path.realpath(directory)]
    return list(dict.fromkeys(out))


@functools.lru_cache(maxsize=4)  # this process's own interpreter and code do not move
def trusted_paths(bwrap: str | None = None) -> tuple[str, ...]:
    """What the next `run` executes outside the sandbox: this interpreter, its
    environment (site-packages, `.pth` files run at start-up), this package's code
    and the bwrap it launches. Where they lie inside a writable root (a project
    `.venv`, an editable checkout) they are mounted read-only."""
    # Here, not at the top: `check` loads this module and never builds a sandbox (the
    # parts walk needs pkgutil; the bwrap lookup, the prober).
    from swifty_sandbox import parts

    from ..run.probe import find_bwrap

    paths = [sys.prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    paths += parts.directories()  # every package's, derived (a subpackage added later too)
    found = find_bwrap(bwrap)
    if found is not None:
        paths.append(found.path)
    return tuple(dict.fromkeys(os.path.realpath(p) for p in paths))
