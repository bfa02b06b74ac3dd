"""Decision logic: rules, layers, settings and the decision. It reads policy files and
looks at paths, but spawns no process and confines nothing; `sandbox` and `cli` build
on this package, never the other way round."""

from .engine import MODE_TABLE, Policy, decide, load_policy, suggest_rules
from .errors import PolicyFileError, StoreError, SwiftyError, UsageError
from .project import find_project
from .store import add_rules, local_rules_path
from .types import (
    Category,
    Decision,
    Effect,
    Layer,
    Mode,
    Request,
    RuleRef,
    SandboxMode,
    Scope,
    Settings,
    Tool,
)

__all__ = [
    "MODE_TABLE",
    "Category",
    "Decision",
    "Effect",
    "Layer",
    "Mode",
    "Policy",
    "PolicyFileError",
    "Request",
    "RuleRef",
    "SandboxMode",
    "Scope",
    "Settings",
    "StoreError",
    "SwiftyError",
    "Tool",
    "UsageError",
    "add_rules",
    "decide",
    "find_project",
    "load_policy",
    "local_rules_path",
    "suggest_rules",
]
