"""Which hidden files may stand on a placeholder (an empty regular file): those no git
would stage. Judged against real git: what it ignores (`check-ignore`) and tracks
(`ls-files`); anything unsure stays off the list."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.spec.gitstage import unstaged

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True,
                                               check=False).returncode != 0,
                                reason="git not found")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout


def _git_would_stage(repo: Path, paths: list[str]) -> set[str]:
    """What `git add -A` adds or `commit -a` records, asked of git itself."""
    tracked = set(_git(repo, "ls-files", "-z").split("\0"))
    ignored = set(subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--no-index", "--", *paths],
        capture_output=True, text=True, check=False).stdout.split())
    return {p for p in paths if os.path.relpath(p, repo) in tracked or p not in ignored}


def test_the_choice_is_what_git_leaves_alone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub" / "deep").mkdir(parents=True)
    (repo / "logs").mkdir()
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("*.pem\n!keep.pem\nlogs/\n# a comment\n\\#hash\n")
    (repo / "sub" / ".gitignore").write_text("x.key\n/only-here.key\n")
    (repo / ".git" / "info" / "exclude").write_text(".env\n")
    names = ["a.pem", "keep.pem", "sub/x.key", "sub/deep/x.key", "logs/y.env", ".env",
             "tracked.pem", "sub/only-here.key", "sub/deep/only-here.key", "#hash", "plain"]
    for name in names:
        (repo / name).write_text("secret\n")
    _git(repo, "add", "-f", "tracked.pem")
    paths = [str(repo / n) for n in names]
    chosen = unstaged(paths)
    assert set(chosen) == set(paths) - _git_would_stage(repo, paths), chosen
    assert chosen == [p for p in paths if p in chosen]  # in their order
    assert str(repo / "a.pem") in chosen and str(repo / "tracked.pem") not in chosen


def test_outside_any_work_tree_and_in_a_nested_one(tmp_path: Path) -> None:
    loose = tmp_path / "loose" / "secret.txt"
    loose.parent.mkdir()
    loose.write_text("x")
    outer = tmp_path / "outer"
    inner = outer / "vendor" / "inner"
    inner.mkdir(parents=True)
    _git(outer, "init", "-q")
    _git(inner, "init", "-q")
    (outer / ".gitignore").write_text("*.key\n")  # the outer repository's, not inner's
    (inner / "a.key").write_text("x")
    (outer / "b.key").write_text("x")
    got = unstaged([str(loose), str(inner / "a.key"), str(outer / "b.key")])
    assert got == [str(loose), str(outer / "b.key")]


def test_unsure_stays_on_dev_null(tmp_path: Path) -> None:
    """A `.git` that is no repository, an ignore file that is a link (git does not
    follow it either), an index git cannot read: not chosen."""
    fake = tmp_path / "fake"
    (fake / ".git").mkdir(parents=True)
    (fake / "a.key").write_text("x")
    linked = tmp_path / "linked"
    linked.mkdir()
    _git(linked, "init", "-q")
    (tmp_path / "ignore").write_text("*.key\n")
    (linked / ".gitignore").symlink_to(tmp_path / "ignore")
    (linked / "a.key").write_text("x")
    broken = tmp_path / "broken"
    broken.mkdir()
    _git(broken, "init", "-q")
    (broken / ".gitignore").write_text("*.key\n")
    (broken / "a.key").write_text("x")
    (broken / ".git" / "index").write_bytes(b"not an index")
    assert unstaged([str(fake / "a.key"), str(linked / "a.key"), str(broken / "a.key")]) \
        == []
