"""`audit`: one planted problem per finding id, SARIF, schemas, pre-commit, `policy show`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from swifty_sandbox.cli.main import main
from swifty_sandbox.policy.audit import FINDINGS
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

FIXTURES = Path(__file__).with_name("fixtures")
ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"

# fixture → (finding id, line, column). Each fixture plants exactly one problem.
PLANTED = {
    "yaml-syntax.yaml": ("yaml-syntax", 5, 3),
    "schema.yaml": ("schema", 4, 11),
    "unknown-tool.yaml": ("unknown-tool", 3, 9),
    "malformed-rule.yaml": ("malformed-rule", 3, 9),
    "invalid-glob.yaml": ("invalid-glob", 3, 9),
    "shadowed.yaml": ("shadowed", 1, 9),
    "duplicate.yaml": ("duplicate", 5, 9),
    "blacklisted.yaml": ("blacklisted", 3, 9),
    "risky-grant.yaml": ("risky-grant", 3, 9),
    "protected-lift.yaml": ("protected-lift", 3, 9),
}


def audit(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(project: Path) -> Path:
    (project / ".swifty").mkdir()
    return project


def plant(repo: Path, fixture: str) -> Path:
    name = "config.yaml" if "config" in fixture else "permissions.yaml"
    target = repo / ".swifty" / name
    shutil.copy(FIXTURES / fixture, target)
    return target


def test_every_finding_id_has_a_fixture() -> None:
    # hidden-tracked needs a git repository: tests/audit/test_effective.py; risky-network
    # is found in the user's own config only (tests/policy/test_network.py).
    assert {v[0] for v in PLANTED.values()} | {"project-loosens", "hidden-tracked",
                                              "risky-network"} == set(FINDINGS)


@pytest.mark.parametrize(("fixture", "expected"), sorted(PLANTED.items()))
def test_planted_problem_is_found_at_its_line(repo: Path, fixture: str,
                                             expected: tuple[str, int, int]) -> None:
    path = plant(repo, fixture)
    code, out, _ = audit("--format", "json", "--project", str(repo), str(path))
    findings = json.loads(out)["findings"]
    assert [(f["id"], f["line"], f["column"]) for f in findings] == [expected], findings
    assert findings[0]["file"] == str(path) and findings[0]["hint"]
    assert code == (1 if FINDINGS[expected[0]] == "error" or expected[0] in (
        "risky-grant", "protected-lift") else 0)


def test_project_config_loosening(repo: Path) -> None:
    path = plant(repo, "project-loosens-config.yaml")
    code, out, _ = audit("--format", "json", "--strict", "--project", str(repo), str(path))
    assert [f["id"] for f in json.loads(out)["findings"]] == ["project-loosens"]
    assert code == 1


def test_text_format_and_exit_codes(repo: Path) -> None:
    path = plant(repo, "shadowed.yaml")
    code, out, err = audit("--project", str(repo), str(path))
    assert out.splitlines()[0].startswith(f"{path}:1:9: warning[shadowed]: `Bash(npm test)`")
    assert code == 0  # warnings fail only with --strict
    assert audit("--strict", "--project", str(repo), str(path))[0] == 1
    assert "1 warning(s)" in err


def test_clean_file(repo: Path) -> None:
    path = plant(repo, "clean.yaml")
    code, out, err = audit("--strict", "--project", str(repo), str(path))
    assert (code, out) == (0, "") and "no findings" in err


def test_risky_grants_are_errors_only_in_the_committed_file(repo: Path, home: Path) -> None:
    user = home / ".swifty" / "permissions.yaml"
    user.parent.mkdir()
    shutil.copy(FIXTURES / "risky-grant.yaml", user)
    code, out, _ = audit("--format", "json", "--project", str(repo), str(user))
    assert [f["level"] for f in json.loads(out)["findings"]] == ["warning"] and code == 0


def test_default_paths_are_the_project_and_user_files(repo: Path, home: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    plant(repo, "duplicate.yaml")
    monkeypatch.chdir(repo)
    code, out, _ = audit("--format", "json")
    assert [f["id"] for f in json.loads(out)["findings"]] == ["duplicate"]
    assert code == 0


def test_missing_file_is_exit_2(repo: Path) -> None:
    assert audit(str(repo / "nope.yaml"))[0] == 2


def test_sarif_validates_against_the_shared_schema(repo: Path, home: Path) -> None:
    if not SARIF_SCHEMA.exists():
        pytest.fail(f"missing {SARIF_SCHEMA}") if os.environ.get("CI") else pytest.skip(
            "no shared schemas")
    paths = [str(plant(repo, f)) for f in ("shadowed.yaml",)]
    risky = PolicyFiles(repo, home).rules(Scope.LOCAL)
    risky.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "risky-grant.yaml", risky)
    code, out, _ = audit("--format", "sarif", "--project", str(repo), *paths, str(risky))
    assert code == 0  # a warning each (risky grants in a local file are warnings)
    sarif = json.loads(out)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [("shadowed", 1), ("risky-grant", 3)]
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(FINDINGS)
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


def _schema(which: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["schema", which])
    assert result.exit_code == 0
    schema: dict[str, object] = json.loads(result.stdout)
    jsonschema.Draft7Validator.check_schema(schema)
    return schema


def test_permissions_schema_accepts_good_and_rejects_bad_files() -> None:
    schema = _schema("permissions")
    jsonschema.validate(yaml.safe_load((FIXTURES / "clean.yaml").read_text()), schema)
    for bad in ("schema.yaml", "unknown-tool.yaml"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load((FIXTURES / bad).read_text()), schema)


def test_config_schema() -> None:
    schema = _schema("config")
    jsonschema.validate({"permissions": {"defaultMode": "plan"},
                         "sandbox": {"mode": "auto", "writable": ["/tmp/x"],
                                     "env": {"keep": ["A"]}}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"sandbox": {"netwrok": True}}, schema)
    for caches in ("project", "off", False):
        jsonschema.validate({"sandbox": {"toolchainCaches": caches}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"sandbox": {"toolchainCaches": "shared"}}, schema)
    for limits in ({"processes": 512, "memory": "4G"}, {"processes": "unlimited"},
                   {"memory": "50%"}, {"memory": "1.5GiB"}, {"memory": 1 << 30}):
        jsonschema.validate({"sandbox": {"limits": limits}}, schema)
    for limits in ({"processes": 0}, {"processes": "lots"}, {"memory": "4X"},
                   {"cpu": 2}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"sandbox": {"limits": limits}}, schema)


def test_policy_show(repo: Path, home: Path) -> None:
    plant(repo, "shadowed.yaml")
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text("- rule: Bash(ls)\n  effect: allow\n")
    result = CliRunner().invoke(main, ["policy", "show", "--json", "--project", str(repo)])
    rows = json.loads(result.stdout)["rules"]
    assert [(r["layer"], r["line"], r["rule"], r["shadowed_by"]) for r in rows] == [
        ("project", 3, "Bash(npm *)", None),
        ("project", 1, "Bash(npm test)", "Bash(npm *) (line 3)"),
        ("user", 1, "Bash(ls)", None),
    ]
    text = CliRunner().invoke(main, ["policy", "show", "--project", str(repo)]).stdout
    assert "shadowed by Bash(npm *) (line 3)" in text


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_hook_with_try_repo(outside_temp: Path) -> None:
    """The hook definition works through pre-commit itself, on a fixture repository."""
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.fail("pre-commit is not installed (it is in the [test] extra)")
    fixture = outside_temp / "team-repo"
    (fixture / ".swifty").mkdir(parents=True)
    shutil.copy(FIXTURES / "blacklisted.yaml", fixture / ".swifty" / "permissions.yaml")
    env = {**os.environ, "PRE_COMMIT_HOME": str(outside_temp / "pre-commit-cache"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(argv, cwd=fixture, check=True, env=env)
    result = subprocess.run([str(pre_commit), "try-repo", str(ROOT), "swifty-sandbox-audit",
                             "--all-files"], cwd=fixture, capture_output=True, text=True,
                            env=env, timeout=600, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "warning[blacklisted]" in result.stdout
    assert ".swifty/permissions.yaml:3:9" in result.stdout


@pytest.mark.parametrize(("earlier", "later", "covered"), [
    ("Bash(git push *)", "Bash(git *)", True),
    ("Bash(git *)", "Bash(git push *)", False),
    ("Bash(git *)", "Bash(git)", False),
    ("Bash(git status)", "Bash(git *)", True),
    ("Bash(ls *)", "Bash(ls \\*)", False),
    ("Bash(npm test:*)", "Bash(npm *)", True),
    ("Bash(make)", "Bash", True),
    ("ReadFile(src/a.py)", "ReadFile(src/**)", True),
    ("ReadFile(src/**)", "ReadFile(src/a.py)", False),
    ("ReadFile(x)", "WriteFile(**)", False),
    ("ReadFile(x)", "*", True),
])
def test_covers(project: Path, home: Path, earlier: str, later: str, covered: bool) -> None:
    from swifty_sandbox.policy.audit import covers
    from swifty_sandbox.policy.rules import Rule, parse_rule
    from swifty_sandbox.policy.types import Effect

    def rule(text: str) -> Rule:
        return parse_rule(text, Effect.ALLOW, file="f", line=1, column=1, project=project,
                          home=home)

    assert covers(rule(later), rule(earlier)) is covered


def test_project_rule_outside_the_project(repo: Path) -> None:
    """A committed rule naming a path outside the project is ignored when loaded; the
    audit says so at its line."""
    path = repo / ".swifty" / "permissions.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("- rule: Bash(npm test)\n  effect: allow\n"
                    "- rule: WriteFile(~/.local/bin/*)\n  effect: allow\n")
    code, out, _ = audit("--format", "json", "--strict", "--project", str(repo), str(path))
    found = [(f["id"], f["line"]) for f in json.loads(out)["findings"]]
    assert ("project-loosens", 3) in found
    assert code == 1


def test_runners_whose_ordinary_behaviour_runs_code_are_warned_about(repo: Path) -> None:
    """`Bash(make *)` or `Bash(npm run *)` is in effect `Bash(*)`: the Makefile and the
    package scripts are code the agent can write."""
    path = repo / ".swifty" / "permissions.yaml"
    rules = ["Bash(make *)", "Bash(npm run *)", "Bash(yarn *)", "Bash(pytest *)",
             "Bash(cargo build *)", "Bash(go test *)", "Bash(docker run *)",
             "Bash(git *)", "Bash(npm ls *)", "Bash(make)", "Bash(cargo fmt *)"]
    path.write_text("".join(f"- rule: {r}\n  effect: allow\n" for r in rules))
    code, out, _ = audit("--format", "json", "--project", str(repo), str(path))
    findings = json.loads(out)["findings"]
    assert [(f["id"], f["level"], f["line"]) for f in findings] == [
        ("risky-grant", "warning", 1 + 2 * i) for i in range(7)]
    assert "in effect `Bash(*)`" in findings[0]["message"]
    assert code == 0


def test_a_rule_for_a_tool_claude_code_no_longer_has(repo: Path) -> None:
    # Claude Code 2.1 dropped Grep and Glob: a rule for them could never apply.
    target = repo / ".swifty" / "permissions.yaml"
    target.write_text("- rule: Grep(src/**)\n  effect: deny\n")
    code, out, _ = audit(str(target))
    assert code != 0 and "error[unknown-tool]" in out
    assert "no longer has a `Grep` tool" in out and "never apply" in out
