"""OS confinement and execution, built on `policy`: what must hold (`spec`), the run
lifecycle (`run`), the network (`net`), the backends (`linux`, `macos`, `oci`) behind
one seam (`backend`); the surfaces agents and the CLI use are in `agents`, above it."""

from .spec.compiler import EXIT_SETUP, Limits, SandboxSpec, SetupError

__all__ = ["EXIT_SETUP", "Limits", "SandboxSpec", "SetupError"]
