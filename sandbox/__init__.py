"""OS confinement and execution, built on `policy`."""

from .api import EXIT_DENIED, Answer, Asker, RunResult, Sandbox, as_request
from .spec import EXIT_SETUP, Limits, SandboxSpec, SetupError

__all__ = ["EXIT_DENIED", "EXIT_SETUP", "Answer", "Asker", "Limits", "RunResult", "Sandbox",
           "SandboxSpec", "SetupError", "as_request"]
