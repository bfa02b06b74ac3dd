"""This distribution's own packages and where they lie, asked of the import system.

The one list of the package's parts: what `run` mounts read-only when it lies in a
writable root (`sandbox.spec.pathguard.trusted_paths`), what the warm server imports ahead and
stamps (`cli/warm.py`), the mypy link tree (`scripts/test`) and the architecture test.
It is derived, never written down, so a subpackage added later is covered by all of
them — a hand-kept list that missed one would leave that code writable by the command
that the next `run` trusts.

Installed, every subpackage lies inside `swifty_sandbox/`; from a checkout (`pip
install -e .`) the top-level ones lie beside it (`pyproject.toml` maps `policy/` to
`swifty_sandbox.policy`, …), so the folders beside it are candidates too, and only
those the import system itself resolves as `swifty_sandbox.NAME` count. Located, never
imported: the profiles are data, and `scripts/test` lists the parts without loading them.
"""

from __future__ import annotations

import functools
import os
import pkgutil
from importlib.machinery import PathFinder
from importlib.util import find_spec

TYPE_CHECKING = False  # not `typing`'s: the import is all that is needed
if TYPE_CHECKING:
    from collections.abc import Iterable

ROOT = "swifty_sandbox"


@functools.cache  # this process's own code does not move
def packages() -> dict[str, tuple[str, ...]]:
    """Every package of swifty_sandbox, the root and nested ones, by dotted name → its
    directories (real paths), parents before children."""
    root = find_spec(ROOT)
    assert root is not None and root.submodule_search_locations is not None
    found: dict[str, tuple[str, ...]] = {ROOT: _real(root.submodule_search_locations)}
    beside = [os.path.dirname(location) for location in found[ROOT]]
    for name in sorted(_subpackages([*found[ROOT], *beside])):
        spec = find_spec(f"{ROOT}.{name}")  # the import system's answer (the editable
        if spec is not None and spec.submodule_search_locations is not None:  # finder's)
            found[f"{ROOT}.{name}"] = _real(spec.submodule_search_locations)
    queue = [name for name in found if name != ROOT]
    while queue:
        parent = queue.pop(0)
        for name in sorted(_subpackages(found[parent])):
            spec = PathFinder.find_spec(f"{parent}.{name}", list(found[parent]))
            if spec is not None and spec.submodule_search_locations is not None:
                found[f"{parent}.{name}"] = _real(spec.submodule_search_locations)
                queue.append(f"{parent}.{name}")
    return found


def modules() -> dict[str, str]:
    """Every module of swifty_sandbox (packages as their `__init__.py`), by dotted name →
    its file."""
    found: dict[str, str] = {}
    for package, locations in packages().items():
        for location in locations:
            init = os.path.join(location, "__init__.py")
            if os.path.isfile(init):
                found.setdefault(package, init)
            for info in pkgutil.iter_modules([location]):
                path = os.path.join(location, f"{info.name}.py")
                if not info.ispkg and os.path.isfile(path):
                    found.setdefault(f"{package}.{info.name}", path)
    return found


def directories() -> tuple[str, ...]:
    """The directories that hold all of swifty_sandbox's code and data: each package's,
    but those inside another's."""
    found: list[str] = []
    for locations in packages().values():
        for location in locations:
            if not any(location == d or location.startswith(d + os.sep) for d in found):
                found.append(location)
    return tuple(found)


def _subpackages(locations: list[str] | tuple[str, ...]) -> set[str]:
    return {info.name for info in pkgutil.iter_modules(locations) if info.ispkg}


def _real(locations: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.realpath(p) for p in locations))
