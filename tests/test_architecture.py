"""Dependencies flow one way: cli → sandbox → policy (SPEC §1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# What each subpackage may import from the project (besides itself and profiles data).
ALLOWED = {
    "policy": {"policy"},
    "profiles": set(),
    "sandbox": {"policy", "sandbox"},
    "cli": {"policy", "sandbox", "cli"},
}


def project_imports(path: Path, package: str) -> set[str]:
    """The swifty_sandbox subpackages a module imports (absolute or relative)."""
    found: set[str] = set()
    parents = list(path.relative_to(ROOT).parent.parts)  # e.g. ["sandbox", "linux"]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = parents[:len(parents) - (node.level - 1)]
                found.add(base[0] if base else "<beyond the package>")
            elif node.module and node.module.startswith("swifty_sandbox"):
                parts = node.module.split(".")
                names = [parts[1]] if len(parts) > 1 else [a.name for a in node.names]
                found.update(names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "swifty_sandbox":
                    found.add(parts[1] if len(parts) > 1 else "<package root>")
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_flow_one_way(package: str) -> None:
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules
    for module in modules:
        bad = project_imports(module, package) - ALLOWED[package]
        assert not bad, f"{module.relative_to(ROOT)} imports {sorted(bad)}"


def test_policy_spawns_nothing() -> None:
    for module in (ROOT / "policy").rglob("*.py"):
        tree = ast.parse(module.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "subprocess" not in names, module


def test_only_the_executor_spawns_processes() -> None:
    """Builders return argv and profiles; one module runs them (STYLE: build, then
    execute — in different places)."""
    spawners = []
    for module in sorted(ROOT.glob("*/**/*.py")):
        if module.parts[len(ROOT.parts)] not in ALLOWED:
            continue
        tree = ast.parse(module.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        if "subprocess" in names:
            spawners.append(str(module.relative_to(ROOT)))
    assert spawners == ["sandbox/executor.py"]
