"""No function in `sandbox/` is longer than 80 lines (issue 21): a long function there
is several concerns in one, and the one that is security is then hard to review."""

from __future__ import annotations

import ast
from pathlib import Path

SANDBOX = Path(__file__).resolve().parent.parent / "sandbox"
LIMIT = 80  # lines from `def` to the function's last line, docstring and comments too


def long_functions(root: Path, limit: int = LIMIT) -> list[str]:
    """`path:line name (n lines)` of every function or method under `root` (nested
    ones too) longer than `limit`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} "
                                 f"{node.name} ({length} lines)")
    return found


def test_no_function_in_sandbox_is_longer_than_80_lines() -> None:
    assert SANDBOX.is_dir() and any(SANDBOX.rglob("*.py"))
    assert long_functions(SANDBOX) == []


def test_the_walk_finds_a_long_function(tmp_path: Path) -> None:
    """The check can fail: a method and a nested function over the limit (and the
    function holding it) are found; one of exactly the limit is not."""
    def lines(indent: int, count: int) -> str:
        return "".join(f"{' ' * indent}x{i} = {i}\n" for i in range(count))

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        f"def at_limit():\n{lines(4, LIMIT - 1)}\n"
        f"class C:\n    def method(self):\n{lines(8, LIMIT)}\n"
        f"def outer():\n    def inner():\n{lines(8, LIMIT)}    return inner\n")
    found = sorted(f.split()[1] for f in long_functions(tmp_path / "pkg"))
    assert found == ["inner", "method", "outer"]
