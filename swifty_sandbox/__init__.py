"""swifty-sandbox: confine the shell commands and file operations of an AI coding agent.

    from swifty_sandbox import Sandbox
    box = Sandbox("path/to/project")
    box.check("git push --force")      # -> Decision(effect=..., reason=..., layer=...)
"""

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
from swifty_sandbox.sandbox import Sandbox

__version__ = "0.1.0"

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
