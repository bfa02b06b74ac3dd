"""`swifty-sandbox check`: options, output and exit codes (SPEC §4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox.cli.main import main


def run(*args: str, project: Path, env: dict[str, str] | None = None
        ) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--project", str(project), *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def rules(project: Path, text: str) -> None:
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text(text)


def test_exit_codes_allow_deny_ask(project: Path) -> None:
    rules(project, "- rule: Bash(git push *)\n  effect: deny\n"
                   "- rule: Bash(git status)\n  effect: allow\n")
    assert run("--", "git", "status", project=project)[0] == 0
    code, out, _ = run("--", "git", "push", "origin", project=project)
    assert code == 1
    assert out.startswith("deny [rule] Denied by rule `Bash(git push *)`")
    code, out, _ = run("--", "git", "push", "--force", project=project)
    assert code == 1 and out.startswith("deny [blacklist] Denied (git-destructive)")
    assert run("--sandbox", "manual", "-c", "npm test", project=project)[0] == 3


def test_json_output_shape(project: Path) -> None:
    rules(project, "- rule: ReadFile(*.env*)\n  effect: deny\n")
    code, out, _ = run("--json", "--tool", "ReadFile", "config/.env.prod", project=project)
    assert code == 1
    rule_file = project / ".swifty" / "permissions.yaml"
    assert json.loads(out) == {
        "effect": "deny", "layer": "rule", "category": None,
        "reason": f"Denied by rule `ReadFile(*.env*)` ({rule_file}:1).",
        "rule": {"file": str(rule_file), "line": 1, "text": "ReadFile(*.env*)"},
    }


def test_tool_alias_and_mode(project: Path) -> None:
    assert run("--mode", "acceptEdits", "--tool", "Edit", "src/a.py", project=project)[0] == 0
    assert run("--mode", "plan", "--tool", "Edit", "src/a.py", project=project)[0] == 3
    assert run("--tool", "Write", ".swifty/config.yaml", project=project)[0] == 1


def test_batch_one_object_per_line(project: Path) -> None:
    rules(project, "- rule: Bash(rm *)\n  effect: deny\n")
    batch = project / "batch.jsonl"
    batch.write_text('"git status"\n"rm -rf build"\n\n'
                     '{"tool": "ReadFile", "path": "a.txt"}\nnot json\n')
    code, out, _ = run("--sandbox", "manual", "--batch", str(batch), project=project)
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line.get("effect") for line in lines] == ["ask", "deny", "allow", None]
    assert f"{batch}:5:" in lines[3]["error"]["message"]
    assert code == 2


def test_batch_worst_effect_is_the_exit_code(project: Path) -> None:
    batch = project / "b.jsonl"
    batch.write_text('"ls"\n"make"\n')
    assert run("--sandbox", "manual", "--batch", str(batch), project=project)[0] == 3


def test_malformed_rule_file_is_exit_2_with_position_and_no_traceback(project: Path) -> None:
    rules(project, "- rule: Bash(git *)\n  effect: allow\n- rule: Bahs(x)\n  effect: deny\n")
    code, out, err = run("--", "ls", project=project)
    assert code == 2
    path = project / ".swifty" / "permissions.yaml"
    assert err.strip() == (f"error: {path}:3:9: unknown tool `Bahs` in `Bahs(x)` "
                           "(known: Bash, ReadFile, WriteFile, EditFile, Read, Write, Edit, *)")
    assert "Traceback" not in out + err


def test_malformed_file_json_error(project: Path) -> None:
    rules(project, "rule: x\n")
    code, out, _ = run("--json", "--", "ls", project=project)
    assert code == 2
    assert json.loads(out)["error"]["code"] == "policy-file"


@pytest.mark.parametrize("args", [[], ["-c", "ls", "--", "ls"], ["--tool", "ReadFile"],
                                  ["--tool", "ReadFile", "a", "b"]])
def test_usage_errors(project: Path, args: list[str]) -> None:
    code, _, err = run(*args, project=project)
    assert code == 2
    assert err.startswith("error: ")


def test_unknown_tool_is_a_click_usage_error(project: Path) -> None:
    code, _, err = run("--tool", "Shell", "x", project=project)
    assert code == 2
    assert "'Shell' is not one of" in err


def test_chinese_messages(project: Path) -> None:
    code, out, _ = run("--tool", "Write", "/opt/x", project=project, env={"LANG": "zh_CN.UTF-8"})
    assert code == 3
    assert "需要批准" in out


def test_project_defaults_to_git_toplevel(project: Path) -> None:
    (project / "src" / "deep").mkdir(parents=True)
    rules(project, "- rule: Bash(make)\n  effect: deny\n")
    result = subprocess.run(
        [sys.executable, "-m", "swifty_sandbox.cli", "check", "--json", "--", "make"],
        cwd=project / "src" / "deep", capture_output=True, text=True,
        env={**os.environ, "HOME": str(project.parent)}, check=False)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["rule"]["file"] == str(project / ".swifty" /
                                                           "permissions.yaml")


def test_argv_check_imports_no_shell_parser(project: Path) -> None:
    """An argv needs no shell parser: a cold `check -- git status` must not load one."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "swifty_sandbox.cli", "check", "--",
         "git", "status"], cwd=project, capture_output=True, text=True, check=False,
        env={**os.environ, "HOME": str(project.parent)})
    assert result.returncode == 0, result.stderr
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert "swifty_sandbox.policy.engine" in imported
    assert not {m for m in imported if m.startswith(("tree_sitter", "bashlex"))}
