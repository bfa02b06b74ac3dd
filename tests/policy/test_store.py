"""The "always allow" writer: atomic, locked, comment-preserving, never corrupting."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
import yaml

from swifty_sandbox import Effect, Layer, PolicyFileError, Request, Sandbox, Tool
from swifty_sandbox.policy import add_rules, local_rules_path
from swifty_sandbox.sandbox.agents import Answer


def _add_one(args: tuple[str, str, str, int]) -> list[str]:
    path, project, home, index = args
    return add_rules(Path(path), [f"Bash(tool-{index} *)"], Effect.ALLOW,
                     project=Path(project), home=Path(home))


def test_eight_processes_at_once_all_rules_present(project: Path, home: Path) -> None:
    path = local_rules_path(project, home)
    path.parent.mkdir(parents=True)
    path.write_text("# my local rules\n- rule: Bash(ls *)\n  effect: allow\n")
    jobs = [(str(path), str(project), str(home), i) for i in range(8)]
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        results = pool.map(_add_one, jobs)
    assert all(len(r) == 1 for r in results)
    text = path.read_text()
    assert text.startswith("# my local rules\n- rule: Bash(ls *)\n")
    rules = [item["rule"] for item in yaml.safe_load(text)]
    assert sorted(rules) == sorted(["Bash(ls *)", *(f"Bash(tool-{i} *)" for i in range(8))])
    assert not list(path.parent.glob("*.tmp"))


def test_always_allow_from_the_api_then_allowed(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check("npm test").effect is Effect.ASK
    assert box.always_allow("npm test && npm run lint") == ["Bash(npm test)",
                                                            "Bash(npm run lint)"]
    decision = box.check("npm test && npm run lint")
    assert (decision.effect, decision.layer) == (Effect.ALLOW, Layer.RULE)
    assert box.check("npm test --watch").effect is Effect.ASK  # exact, never wider
    assert box.always_allow("npm test") == []  # not repeated


def test_always_allow_escapes_stars_and_anchors_paths(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.always_allow("ls *.py") == ["Bash(ls \\*.py)"]
    assert box.check("ls *.py").effect is Effect.ALLOW
    assert box.check("ls secret.py").effect is Effect.ASK
    assert box.always_allow(Request.file(Tool.WRITE_FILE, "notes.md")) == [
        f"WriteFile({project}/notes.md)"]
    assert box.always_allow(Request.file(Tool.WRITE_FILE, "docs/a.md")) == [
        "WriteFile(docs/a.md)"]
    assert box.check(Request.file(Tool.WRITE_FILE, "sub/notes.md")).effect is Effect.ASK


@pytest.mark.parametrize("existing", ["[]\n", "# c\n[] # trailing\n",
                                      "- {rule: 'Bash(a)', effect: deny}\n",
                                      "[{rule: 'Bash(a)', effect: deny}]", "", "# only\n"])
def test_appending_keeps_valid_yaml(project: Path, home: Path, existing: str) -> None:
    path = local_rules_path(project, home)
    path.parent.mkdir(parents=True)
    path.write_text(existing)
    add_rules(path, ["Bash(b)"], Effect.ALLOW, project=project, home=home)
    items = yaml.safe_load(path.read_text())
    assert items[-1] == {"rule": "Bash(b)", "effect": "allow"}
    if "#" in existing:
        assert "# " in path.read_text()


def test_invalid_existing_file_is_never_touched(project: Path, home: Path) -> None:
    path = local_rules_path(project, home)
    path.parent.mkdir(parents=True)
    broken = "- rule: Bash(ok\n  effect: allow\n"
    path.write_text(broken)
    with pytest.raises(PolicyFileError, match="refusing to add a rule"):
        add_rules(path, ["Bash(b)"], Effect.ALLOW, project=project, home=home)
    assert path.read_text() == broken


def test_malformed_new_rule_is_not_written(project: Path, home: Path) -> None:
    path = local_rules_path(project, home)
    with pytest.raises(PolicyFileError):
        add_rules(path, ["Bogus(x)"], Effect.ALLOW, project=project, home=home)
    assert not path.exists()


# "always" is offered only where the rule it writes allows the request (each case proved
# by writing that rule and deciding again, not by asking the function that offers it).
ALWAYS_CASES = [
    ("default", "make build", True),  # the mode table asks: a rule allows
    ("default", "make -C ../other", True),  # a feature the exact rule names
    ("default", "WriteFile:/etc/swifty-outside", True),  # the path sandbox asks
    ("default", 'eval "$x"', False),  # the analysis could not see it: no rule lifts it
    ("plan", "make build", False),  # plan mode caps commands at ask, rule or not
    ("plan", "WriteFile:notes.txt", False),  # … and writes
    ("default", "echo x > /etc/swifty-outside", False),  # a write beyond the roots
]


def _request(text: str) -> Request:
    if text.startswith("WriteFile:"):
        return Request.file(Tool.WRITE_FILE, text.split(":", 1)[1])
    return Request.bash(text)


@pytest.mark.parametrize(("mode", "text", "offered"), ALWAYS_CASES)
def test_always_is_offered_exactly_where_its_rule_allows(
        project: Path, home: Path, mode: str, text: str, offered: bool) -> None:
    box = Sandbox(project, home=home, mode=mode, sandbox_mode="manual")
    request = _request(text)
    assert box.check(request).effect is Effect.ASK
    assert box.can_always(request) is offered
    box.always_allow(request)  # what "always" writes, taken anyway
    assert (box.check(request).effect is Effect.ALLOW) is offered


def test_an_always_answer_to_an_ask_no_rule_lifts_is_yes_once(
        project: Path, home: Path) -> None:
    """A client may answer "always" where it was not offered: yes this once, and no rule
    written that would only ask again."""
    box = Sandbox(project, home=home, mode="plan", sandbox_mode="manual",
                  ask=lambda request, decision: Answer.ALWAYS)
    assert box.resolve("make build").effect is Effect.ALLOW
    assert not local_rules_path(project, home).exists()
    offered = Sandbox(project, home=home, sandbox_mode="manual",
                      ask=lambda request, decision: Answer.ALWAYS)
    assert offered.resolve("make build").effect is Effect.ALLOW
    assert "Bash(make build)" in local_rules_path(project, home).read_text()
