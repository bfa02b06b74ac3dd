"""`policy show` prints the effective settings; `audit` finds hidden files git tracks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox.cli.main import main


def show(project: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["policy", "show", "--project", str(project), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_policy_show_effective_settings(project: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(
        "sandbox:\n  writable: [~/out, ~/.ssh/x]\n  limits: {processes: 64}\n")
    found = json.loads(show(project, "--json"))["effective"]
    assert found["writable"] == [str(home / "out"), str(project)]  # outer first
    assert found["created_roots"] == [str(home / "out")]
    assert [r["path"] for r in found["refused_roots"]] == [str(home / ".ssh" / "x")]
    assert found["tmp"] == "project" and found["temp_mounts"] == ["/tmp", "/var/tmp"]
    assert found["toolchain_caches"] == "project"
    assert found["toolchain_dir"].startswith(str(home / ".cache" / "swifty-sandbox"))
    assert "CARGO_HOME" in found["toolchain_env"]
    assert str(home / ".ssh") in found["hidden"]
    assert str(project / ".swifty") in found["read_only"]  # missing: guarded empty
    assert found["limits"]["processes"] == 64 and found["limits"]["memory_bytes"] > 0
    assert found["network"] is None
    text = show(project)
    for heading in ("effective settings", "writable roots (2):", "created by the next run",
                    "not writable in this run", "toolchain caches: project",
                    "tmp: project", "hidden (", "network: none", "processes 64"):
        assert heading in text, text


def test_policy_show_when_the_sandbox_cannot_be_built(project: Path, home: Path) -> None:
    (project / "out").symlink_to(home)
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox:\n  writable: [{project}/out]\n")
    found = json.loads(show(project, "--json"))["effective"]
    assert "symbolic link" in found["error"] and "writable" not in found
    assert "cannot be built now" in show(project)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_audit_finds_a_hidden_tracked_file(project: Path, home: Path) -> None:
    shutil.rmtree(project / ".git")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".env.example").write_text("API_KEY=placeholder\n")
    subprocess.run(["git", "-C", str(project), "add", ".env.example"], check=True)
    rules = project / ".swifty" / "permissions.yaml"
    rules.parent.mkdir()
    rules.write_text("- rule: Bash(ls)\n  effect: allow\n- rule: ReadFile(*.env*)\n"
                     "  effect: deny\n")
    result = CliRunner().invoke(main, ["audit", "--json", "--project", str(project)])
    found = [f for f in json.loads(result.stdout)["findings"] if f["id"] == "hidden-tracked"]
    assert [(f["file"], f["line"], f["level"]) for f in found] == [(str(rules), 3, "warning")]
    assert "ReadFile(.env.example)" in found[0]["message"] and "allow" in found[0]["hint"]
    other = CliRunner().invoke(main, ["audit", "--json", "--project", str(project),
                                      str(home / "none.yaml")])
    assert "hidden-tracked" not in other.stdout  # only for the files audited
    rules.write_text(rules.read_text() + "- rule: ReadFile(.env.example)\n  effect: allow\n")
    result = CliRunner().invoke(main, ["audit", "--json", "--project", str(project)])
    assert "hidden-tracked" not in result.stdout
