"""Rule files (`policy/rulefiles.py`): every malformed case names file:line:col; nothing
is guessed; a local file in the project is never read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import PolicyFileError, Sandbox
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

Box = Callable[..., Sandbox]

MALFORMED = [
    # (file text, line, column, words the message must contain)
    ("- rule: Bsh(git *)\n  effect: allow\n", 1, 9, ["unknown tool `Bsh`", "Bash"]),
    ("- rule: Bash(git *\n  effect: allow\n", 1, 9, ["missing `)`"]),
    ("- rule: Bash(git *)\n  effect: allowed\n", 2, 11, ["`effect` must be one of",
                                                        "allowed"]),
    ("rule: Bash(git *)\neffect: allow\n", 1, 1, ["must be a YAML list", "a mapping"]),
    ("just text\n", 1, 1, ["must be a YAML list"]),
    ("- Bash(git *)\n", 1, 3, ["expected a mapping"]),
    ("- rule: Bash(git *)\n", 1, 3, ["missing key `effect`"]),
    ("- effect: allow\n", 1, 3, ["missing key `rule`"]),
    ("- rule: Bash(x)\n  effect: allow\n  note: hi\n", 3, 3, ["unknown key `note`"]),
    ("- rule: Bash(x)\n  rule: Bash(y)\n  effect: allow\n", 2, 3, ["duplicate key `rule`"]),
    ("- rule: Bash()\n  effect: allow\n", 1, 9, ["empty pattern"]),
    ("- rule: ReadFile(src/[a)\n  effect: deny\n", 1, 9, ["invalid glob"]),
    ("- rule: ReadFile(!secret)\n  effect: deny\n", 1, 9, ["negation"]),
    ("- rule: 42\n  effect: allow\n", 1, 9, ["`rule` must be a string"]),
    ("- rule: Bash(x)\n  effect: yes\n", 2, 11, ["`effect` must be a string"]),
    ("- rule: Bash(x)\n   effect: allow\n", 2, 10, ["invalid YAML"]),
    ("- rule: 'Bash(x)\n", 2, 1, ["invalid YAML"]),
    ("- rule: Bash(ok)\n  effect: allow\n- rule: Nope(x)\n  effect: deny\n", 3, 9,
     ["unknown tool `Nope`"]),
    ("- rule: '*(foo)'\n  effect: deny\n", 1, 9, ["malformed rule"]),
    ("---\n- rule: Bash(a)\n  effect: allow\n---\n- rule: Bash(b)\n  effect: allow\n", 4, 1,
     ["invalid YAML"]),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), MALFORMED)
@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_malformed_rule_file_names_file_line_column(
        project: Path, home: Path, text: str, line: int, column: int, words: list[str],
        where: str) -> None:
    base = home if where == "user" else project
    path = PolicyFiles(project, home).rules(Scope.LOCAL) if where == "local" else \
        base / ".swifty" / "permissions.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(PolicyFileError) as info:
        Sandbox(project, home=home)
    error = info.value
    assert (error.file, error.line, error.column) == (str(path), line, column)
    assert str(error).startswith(f"{path}:{line}:{column}: ")
    for word in words:
        assert word in error.message


@pytest.mark.parametrize("text", ["", "# only a comment\n", "[]\n", "~\n"])
def test_empty_files_are_empty(project: Path, home: Path, text: str) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(text)
    assert Sandbox(project, home=home).policy.layers[1].rules == ()


def test_unreadable_file_is_an_error(project: Path, home: Path) -> None:
    (project / ".swifty" / "permissions.yaml").mkdir(parents=True)  # a directory
    with pytest.raises(PolicyFileError, match="cannot read"):
        Sandbox(project, home=home)


def test_not_utf8_is_an_error(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_bytes(b"- rule: Bash(\xff)\n")
    with pytest.raises(PolicyFileError, match="cannot read"):
        Sandbox(project, home=home)


def test_aliases_and_effects_parse(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "# team rules\n"
        "- rule: Read(*.md)\n  effect: allow\n"
        "- rule: Write(docs/**)\n  effect: ask\n"
        "- rule: Edit\n  effect: deny\n"
        "- {rule: 'Bash(npm test:*)', effect: allow}\n")
    rules = Sandbox(project, home=home).policy.layers[1].rules
    assert [(r.tool and r.tool.value, r.effect.value, r.line, r.column) for r in rules] == [
        ("ReadFile", "allow", 2, 9), ("WriteFile", "ask", 4, 9), ("EditFile", "deny", 6, 9),
        ("Bash", "allow", 8, 10)]

def test_a_local_file_in_the_project_is_never_read(project: Path, home: Path) -> None:
    """A repository can commit `.swifty/permissions.local.yaml`: were it read, its
    allows would outrank the user's own rules. The local layer lives in the home."""
    from swifty_sandbox import Request, Tool

    shipped = project / ".swifty" / "permissions.local.yaml"
    shipped.parent.mkdir()
    shipped.write_text("- rule: WriteFile(~/**)\n  effect: allow\n"
                       "- rule: Bash(*)\n  effect: allow\n")
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(git push *)\n  effect: ask\n")
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check(Request.file(Tool.WRITE_FILE, str(home / ".ssh" / "authorized_keys"))
                     ).effect.value != "allow"
    assert box.check("git push origin main").effect.value == "ask"  # the user's ask
    assert any("local rules are not read from the project" in w for w in box.warnings)
    local = PolicyFiles(project, home).rules(Scope.LOCAL)
    assert local.parent.parent == home / ".swifty" / "projects"
    box.always_allow("npm test")
    assert "Bash(npm test)" in local.read_text()
    assert "npm test" not in shipped.read_text()
