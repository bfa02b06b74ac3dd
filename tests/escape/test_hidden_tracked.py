"""A hidden file git tracks: git inside must not record it empty or deleted, the run
says which tracked files are hidden, and an allow below the deny (the README's
example) lets git see the real file."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

from .conftest import git

Runner = Callable[..., RunResult]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def repo(project: Path) -> Path:
    shutil.rmtree(project / ".git")
    git(project, "init", "-q")
    git(project, "config", "user.email", "a@b.c")
    git(project, "config", "user.name", "A")
    (project / ".env.example").write_text("API_KEY=placeholder\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "db.txt").write_text("tracked secret dir\n")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    return project


def deny(home: Path, *rules: tuple[str, str]) -> None:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "permissions.yaml").write_text("".join(
        f"- rule: {rule}\n  effect: {effect}\n" for rule, effect in rules))


def test_git_inside_never_records_a_hidden_tracked_file(confined: Runner, repo: Path,
                                                        home: Path) -> None:
    """`commit -a` and `add -A` stop with an error rather than record the hidden file
    as empty (or the hidden directory's files as deleted); the run names them."""
    deny(home, ("ReadFile(*.env*)", "deny"), ("ReadFile(secrets)", "deny"))
    (repo / "a.txt").write_text("changed\n")
    head = git(repo, "rev-parse", "HEAD")
    result = confined("git commit -qam wip; git add -A; git commit -qm all; "
                      "git status --short")
    assert "2 path(s) git tracks are hidden" in result.stderr, result
    assert ".env.example, secrets" in result.stderr
    tree = git(repo, "ls-tree", "-r", "HEAD")
    assert ".env.example" in tree and "secrets/db.txt" in tree
    assert git(repo, "show", "HEAD:.env.example") == "API_KEY=placeholder\n"
    if git(repo, "rev-parse", "HEAD") != head:  # `git commit -qm all` of a.txt alone
        assert git(repo, "diff", "--stat", "HEAD~1", "HEAD").count("|") == 1
    assert (repo / ".env.example").read_text() == "API_KEY=placeholder\n"
    assert git(repo, "status", "--short").strip() in ("M a.txt", "")


def test_an_allow_below_the_deny_shows_git_the_real_file(confined: Runner, repo: Path,
                                                         home: Path) -> None:
    """The README's example: `ReadFile(*.env*)` denied, `ReadFile(*.env.example)`
    allowed below it. `.env` stays hidden; `.env.example` is readable, git sees no
    change and `git diff` works."""
    deny(home, ("ReadFile(*.env*)", "deny"), ("ReadFile(*.env.example)", "allow"))
    (repo / ".env").write_text("API_KEY=real-SECRET\n")
    result = confined("cat .env.example; cat .env; git status --short; git diff --stat")
    assert "API_KEY=placeholder" in result.stdout and "SECRET" not in result.stdout
    assert ".env.example" not in result.stdout.replace("API_KEY", ""), result
    assert "git tracks are hidden" not in result.stderr
    assert result.exit_code == 0, result


def test_an_allow_in_another_file_does_not_lift_the_deny(confined: Runner, repo: Path,
                                                         home: Path) -> None:
    """A deny in any file wins: the project's allow does not unhide the user's deny."""
    deny(home, ("ReadFile(*.env*)", "deny"))
    (repo / ".swifty").mkdir()
    (repo / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env.example)\n  effect: allow\n")
    result = confined("cat .env.example")
    assert "placeholder" not in result.stdout, result
