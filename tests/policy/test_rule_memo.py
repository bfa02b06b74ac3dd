"""Parsed rule files kept per process (`rulefiles.parsed_rules`), and what a warm server
learns from its workers' reports (`rulefiles.learn`): keyed by the whole input, so an
edit is other text, and a report can only make us parse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox.policy import rulefiles, rules
from swifty_sandbox.policy.engine import load_policy
from swifty_sandbox.policy.errors import PolicyFileError
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.rulefiles import fresh_sources, learn, parsed_rules
from swifty_sandbox.policy.rules import Rule
from swifty_sandbox.policy.types import Scope
from swifty_sandbox.policy.yamlnodes import Source

DENY = "- rule: ReadFile(secrets/**)\n  effect: deny\n"


@pytest.fixture(autouse=True)
def empty_memo() -> Iterator[None]:
    kept, fresh = dict(rulefiles._PARSED), list(rulefiles._FRESH)
    rulefiles._PARSED.clear()
    rulefiles._FRESH.clear()
    yield
    rulefiles._PARSED.clear()
    rulefiles._PARSED.update(kept)
    rulefiles._FRESH[:] = fresh


def test_the_same_text_is_parsed_once_and_other_text_anew(project: Path, home: Path) -> None:
    first = parsed_rules(Source("p.yaml", DENY), project, home)
    assert parsed_rules(Source("p.yaml", DENY), project, home) is first
    edited = parsed_rules(Source("p.yaml", DENY.replace("deny", "allow")), project, home)
    assert edited is not first and edited[0].effect.value == "allow"
    # anchored where it is loaded: another project is another key
    other = parsed_rules(Source("p.yaml", DENY), project / "sub", home)
    assert other[0].path is not None and first[0].path is not None
    assert other[0].path.anchored != first[0].path.anchored
    assert len(fresh_sources()) == 3


def test_an_edited_file_is_in_force_on_the_next_load(project: Path, home: Path) -> None:
    path = PolicyFiles(project, home).rules(Scope.PROJECT)
    path.parent.mkdir(parents=True)
    path.write_text(DENY)
    assert load_policy(project, home).layers[1].rules[0].effect.value == "deny"
    path.write_text(DENY.replace("deny", "allow"))  # same size, likely the same tick
    assert load_policy(project, home).layers[1].rules[0].effect.value == "allow"
    path.write_text("- rule: ReadFile(secrets/**\n  effect: deny\n")
    with pytest.raises(PolicyFileError):  # a broken file fails every load, never kept
        load_policy(project, home)
    with pytest.raises(PolicyFileError):
        load_policy(project, home)


def test_a_report_only_makes_us_parse(project: Path, home: Path) -> None:
    assert learn("junk") == 0
    assert learn([["a", 1, "b", "c"], ["only", "three", "strings"], None]) == 0
    assert learn([["p.yaml", "- rule: Bash(\n  effect: allow\n", str(project), str(home)]]) == 0
    assert rulefiles._PARSED == {}  # what does not parse is not kept
    assert learn([["p.yaml", DENY, str(project), str(home)]] * 2) == 1
    assert fresh_sources() == []  # learnt, not parsed by this process's own loads
    learnt = parsed_rules(Source("p.yaml", DENY), project, home)
    assert fresh_sources() == []  # found kept: not parsed again

    def shown(rules: tuple[Rule, ...]) -> list[tuple[object, ...]]:
        return [(r.text, r.effect, r.file, r.line, r.path and r.path.anchored) for r in rules]

    assert shown(learnt) == shown(rulefiles.parse_rules(Source("p.yaml", DENY), project, home))


@pytest.fixture
def trusted_memo() -> Iterator[None]:
    kept, late = dict(rules._TRUSTED), list(rules._LATE)
    rules._TRUSTED.clear()
    rules._LATE.clear()
    yield
    rules._TRUSTED.clear()
    rules._TRUSTED.update(kept)
    rules._LATE[:] = late


@pytest.mark.usefixtures("trusted_memo")
def test_a_pattern_report_only_makes_us_compile(project: Path) -> None:
    anchored = f"{project}/**/.git/hooks"
    pattern = rules.trusted_pattern("**/.git/hooks", anchored)
    assert pattern.matches(f"{project}/sub/.git/hooks/pre-commit")  # compiled on use
    assert rules.late_patterns() == [("**/.git/hooks", anchored)]
    rules._TRUSTED.clear()
    rules._LATE.clear()
    assert rules.learn_patterns("junk") == 0
    assert rules.learn_patterns([["one"], [1, 2], ["x", "y" * 5000], None]) == 0
    assert rules._TRUSTED == {}
    assert rules.learn_patterns([["**/.git/hooks", anchored]] * 2) == 1
    learnt = rules._TRUSTED[("**/.git/hooks", anchored)]
    assert learnt._regex is not None  # compiled ahead, by the report
    assert rules.late_patterns() == []  # not this process's own use
    # the same answers as a pattern compiled on use
    for path in (f"{project}/a/.git/hooks", f"{project}/a/.git/hooks/x",
                 f"{project}/.git/hooksx", "/elsewhere/.git/hooks"):
        assert learnt.matches(path) == rules.PathPattern(
            "**/.git/hooks", anchored, validate=True).matches(path)


@pytest.mark.usefixtures("trusted_memo")
def test_priming_keeps_what_each_pattern_matches() -> None:
    cases = {"~/.docker/*.pem": "/h/.docker/*.pem", "**/.env*": "/p/**/.env*",
             "/etc/shadow": "/etc/shadow"}
    made = {text: rules.trusted_pattern(text, anchored) for text, anchored in cases.items()}
    rules.prime_trusted()
    assert made["**/.env*"]._regex is not None
    assert made["~/.docker/*.pem"]._regex is None  # simple: still matched by component
    for path in ("/h/.docker/key.pem", "/h/.docker/sub/key.pem", "/p/a/.env.local",
                 "/p/.envrc", "/etc/shadow", "/etc/shadow-"):
        for text, anchored in cases.items():
            assert made[text].matches(path) == rules.PathPattern(
                text, anchored, validate=True).matches(path), (text, path)
