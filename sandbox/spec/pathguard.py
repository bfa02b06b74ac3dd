"""What the agents' hooks run by name: `swifty-sandbox hook AGENT`, as `init` installs
it in a project's settings, is looked up on the agent's PATH, outside any sandbox. A
PATH directory inside a writable root (an activated project `.venv/bin`, a `bin` put
there by direnv, a relative entry) would let a command plant its own `swifty-sandbox`
there, which the next hook call runs unconfined. Those names are kept read-only, or
guarded while missing, or moved aside when a command creates them. And what else the
next run executes outside (`trusted_paths`): mounted read-only where it lies in a
writable root."""

from __future__ import annotations

import functools
import os
import sys

LAUNCHER = "swifty-sandbox"


def launcher_paths(path_var: str | None, project: str) -> list[str]:
    """Where a lookup of `swifty-sandbox` on `path_var` may land (`lookups`)."""
    return lookups(LAUNCHER, path_var, project)


def lookups(name: str, path_var: str | None, project: str) -> list[str]:
    """Where a lookup of the program `name` on `path_var` may land: each entry
    (relative ones from the project, where the agents run their hooks) as written and
    resolved."""
    out: list[str] = []
    for entry in (path_var if path_var is not None else os.defpath).split(os.pathsep):
        directory = os.path.normpath(os.path.join(project, entry))
        out += [os.path.join(directory, name),
                os.path.join(os.path.realpath(directory), name)]
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
