"""Dependencies flow one way: cli → sandbox.agents → sandbox → policy (SPEC §1), with the
message table and the list of the package's parts as leaves everyone may use; the
package's parts are one derived list that the build configuration agrees with."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from swifty_sandbox import parts

ROOT = Path(__file__).resolve().parent.parent
MODULES = parts.modules()
LEAVES = {"messages", "parts", "profiles"}
# What each layer may import from the project (besides itself and the leaves).
ALLOWED = {
    "policy": {"policy"},
    "profiles": set(),
    "sandbox": {"policy", "sandbox"},
    "sandbox.agents": {"policy", "sandbox", "sandbox.agents"},
    "cli": {"policy", "sandbox", "sandbox.agents", "cli"},
    "messages": {"messages"},
    "parts": set(),
    "": {"policy", "sandbox.agents"},  # the package root: its public names, imported lazily
}


def layer(module: str) -> str:
    """`swifty_sandbox.sandbox.linux.bwrap` → `sandbox`, `swifty_sandbox.sandbox.agents.hooks`
    → `sandbox.agents`; the root itself → ``."""
    parts_ = module.split(".")
    if parts_[1:3] == ["sandbox", "agents"]:
        return "sandbox.agents"
    return parts_[1] if len(parts_) > 1 else ""


def imported(module: str) -> list[tuple[str, int]]:
    """The project modules `module` imports (at any depth: in functions too), each with
    its line; `from pkg import name` counts `pkg.name` when that is a module, else
    `pkg` (whose `__init__` then runs)."""
    path = MODULES[module]
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(Path(path).read_text(), path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if not source.startswith(parts.ROOT):
                continue
            for alias in node.names:
                name = f"{source}.{alias.name}"
                found.append((name if name in MODULES else source, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names
                      if alias.name.split(".")[0] == parts.ROOT]
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_flow_one_way(package: str) -> None:
    modules = [m for m in MODULES if layer(m) == package]
    assert modules or package == "profiles"
    # A leaf imports nothing else of the project; every other layer may use the leaves.
    allowed = {package} | ALLOWED[package] | (set() if package in LEAVES else LEAVES)
    for module in modules:
        bad = {f"{name} (line {line})" for name, line in imported(module)
               if layer(name) not in allowed}
        assert not bad, f"{module} imports {sorted(bad)}"


def test_no_import_circles() -> None:
    """No module reaches itself through imports, counting those inside functions and
    under TYPE_CHECKING too: an import moved into a function to dodge a circle hides a
    design knot (each side needs the other), it does not remove it."""
    graph = {m: {name for name, _ in imported(m) if name in MODULES and name != m}
             for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while (top := stack.pop()) != module:
                component.append(top)
            if component:
                circles.append(sorted([module, *component]))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert circles == []


def test_imports_in_functions_say_why() -> None:
    """An import of our own code inside a function is there for start-up time only
    (a module one command needs, the optional MCP SDK, what the warm server imports after
    its code stamp), and says so in a comment on it or above its group; with no circle
    left to hide, any other one belongs at the top of its module."""
    silent = []
    for module, path in sorted(MODULES.items()):
        lines = Path(path).read_text().splitlines()
        tree = ast.parse("\n".join(lines), path)
        guarded = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.ImportFrom) or id(node) in guarded or not (
                        node.level or (node.module or "").startswith(parts.ROOT)):
                    continue
                said = any("#" in line for line in lines[node.lineno - 1:node.end_lineno])
                above = node.lineno - 2
                while not said and above >= 0 and (
                        lines[above].strip().startswith(("from ", "import ", "#", ")"))
                        or lines[above].strip().endswith(",") or not lines[above].strip()):
                    said = lines[above].strip().startswith("#")
                    above -= 1
                if not said:
                    silent.append(f"{module}:{node.lineno}")
    assert silent == []


def test_every_module_is_found() -> None:
    """The derived list misses no file: every .py in the package folders is a module of
    it (a folder without `__init__.py` would be left out of `trusted_paths`)."""
    files = {str(p) for top in ("policy", "sandbox", "cli", "profiles", "swifty_sandbox")
             for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}
    assert files - set(MODULES.values()) == set()


def test_the_build_installs_every_package() -> None:
    """pyproject's package list is the derived one (setuptools' `find` cannot follow
    the `package-dir` mapping of the top-level folders, so the list is written there
    and checked here): a package missing from it would be absent from a wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert sorted(config["packages"]) == sorted(parts.packages())
    for name, folder in config["package-dir"].items():
        assert parts.packages()[name] == (str((ROOT / folder).resolve()),)


def test_policy_spawns_nothing() -> None:
    for module in (m for m in MODULES if layer(m) == "policy"):
        tree = ast.parse(Path(MODULES[module]).read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "subprocess" not in names, module


def test_only_the_executor_spawns_processes() -> None:
    """Builders return argv and profiles; one module runs them (STYLE: build, then
    execute — in different places)."""
    spawners = []
    for module, path in sorted(MODULES.items()):
        tree = ast.parse(Path(path).read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        if "subprocess" in names:
            spawners.append(module)
    assert spawners == ["swifty_sandbox.sandbox.run.executor"]


def test_architecture_lists_every_module() -> None:
    """ARCHITECTURE.md's module table names every module of the package (an `__init__`
    only when it holds more than re-exports: the root's) and no file that is not there.
    A cell names files as `dir/file.py`, later ones in it as `file.py` beside it, or a
    folder as `dir/` for all it holds."""
    table = (ROOT / "ARCHITECTURE.md").read_text().split("## Conventions")[0]
    named: set[str] = set()
    for row in table.splitlines():
        if not row.startswith("| `"):
            continue
        folder = ""
        for name in re.findall(r"`([^`]+)`", row.split("|")[1]):
            if "/" in name:
                folder = name.rpartition("/")[0]
                named.add(name)
            else:
                named.add(f"{folder}/{name}")
    files = {str(Path(path).relative_to(ROOT)) for path in MODULES.values()}
    folders = {name for name in named if name.endswith("/")}
    unlisted = {f for f in files
                if f not in named and not any(f.startswith(d) for d in folders)
                and (not f.endswith("/__init__.py") or f == "swifty_sandbox/__init__.py")}
    assert unlisted == set(), "modules ARCHITECTURE.md does not list"
    gone = {n for n in named if "*" not in n and not (ROOT / n).exists()}
    assert gone == set(), "ARCHITECTURE.md lists what does not exist"
