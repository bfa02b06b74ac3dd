"""swifty-sandbox: confine the shell commands and file operations of an AI coding agent.

    from swifty_sandbox import Sandbox
    box = Sandbox("path/to/project")
    box.check("git push --force")      # -> Decision(effect=..., reason=..., layer=...)
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s: importing typing costs the console script ~4 ms

__version__ = "0.1.0"

# The names are imported on first use (PEP 562): the console script imports this
# package first, and `run`'s start-up must not pay for the policy engine before it
# knows it needs it (cli/entry.py).
_PUBLIC = {
    "Decision": "swifty_sandbox.policy",
    "Effect": "swifty_sandbox.policy",
    "Layer": "swifty_sandbox.policy",
    "Mode": "swifty_sandbox.policy",
    "PolicyFileError": "swifty_sandbox.policy",
    "Request": "swifty_sandbox.policy",
    "RuleRef": "swifty_sandbox.policy",
    "SandboxMode": "swifty_sandbox.policy",
    "SwiftyError": "swifty_sandbox.policy",
    "Tool": "swifty_sandbox.policy",
    "Sandbox": "swifty_sandbox.sandbox.agents",
}

__all__ = [
    "Decision",
    "Effect",
    "Layer",
    "Mode",
    "PolicyFileError",
    "Request",
    "RuleRef",
    "Sandbox",
    "SandboxMode",
    "SwiftyError",
    "Tool",
    "__version__",
]

if TYPE_CHECKING:
    from swifty_sandbox.policy import (
        Decision,
        Effect,
        Layer,
        Mode,
        PolicyFileError,
        Request,
        RuleRef,
        SandboxMode,
        SwiftyError,
        Tool,
    )
    from swifty_sandbox.sandbox.agents import Sandbox


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
