"""Decision logic: rules, layers, settings and the decision. It reads policy files and
looks at paths, but spawns no process and confines nothing; `sandbox` and `cli` build
on this package, never the other way round."""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s: this package's import must stay cheap

# The names are imported on first use (PEP 562): importing one module of this package
# (`policy.errors` for the exit statuses, in the console script's fast path) must not
# load the engine, the shell parsers and the program table.
_PUBLIC = {
    "MODE_TABLE": "engine", "Policy": "engine", "decide": "engine",
    "load_policy": "engine", "suggest_rules": "engine",
    "PolicyFileError": "errors", "StoreError": "errors", "SwiftyError": "errors",
    "UsageError": "errors",
    "find_project": "project",
    "add_rules": "store", "local_rules_path": "store",
    "Category": "types", "Decision": "types", "Effect": "types", "Layer": "types",
    "Mode": "types", "Request": "types", "RuleRef": "types", "SandboxMode": "types",
    "Scope": "types", "Settings": "types", "Tool": "types",
}

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

if TYPE_CHECKING:
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


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # `__import__`, not `importlib.import_module`: the C import path, which
    # `-X importtime` (how start-up cost is measured here) reports.
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
