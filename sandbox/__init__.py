"""OS confinement and execution, built on `policy`: what must hold (`spec`), the run
lifecycle (`run`), the network (`net`), the backends (`linux`, `macos`, `oci`) behind
one seam (`backend`); the surfaces agents and the CLI use are in `agents`, above it."""

from __future__ import annotations

from typing import TYPE_CHECKING

# Imported on first use (PEP 562): every module below imports this package first, and
# a `check` or `hook` call, which compiles no spec, must not pay for the compiler's
# imports (~20 ms of a cold start).
_PUBLIC = ("EXIT_SETUP", "Limits", "SandboxSpec", "SetupError")

__all__ = ["EXIT_SETUP", "Limits", "SandboxSpec", "SetupError"]

if TYPE_CHECKING:
    from .spec.compiler import EXIT_SETUP, Limits, SandboxSpec, SetupError


def __getattr__(name: str) -> object:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .spec import compiler  # start-up: on first use only (above)

    value = getattr(compiler, name)
    globals()[name] = value
    return value
