"""What git executes or trusts, read from real repositories made by real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.spec import gitfiles


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.fixture
def fresh(outside_temp: Path) -> Path:
    repo = outside_temp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


def test_an_ordinary_new_repository_is_trusted(fresh: Path) -> None:
    git(fresh, "config", "user.name", "me")
    git(fresh, "remote", "add", "origin", "https://example.invalid/x.git")
    assert gitfiles.untrusted(str(fresh / ".git")) is None


@pytest.mark.parametrize("key", ["core.fsmonitor", "core.hooksPath", "core.pager",
                                 "core.sshCommand", "alias.st", "filter.x.clean",
                                 "diff.x.textconv", "include.path", "credential.helper",
                                 "remote.origin.uploadpack", "uploadpack.packObjectsHook"])
def test_a_key_that_runs_code_is_not(fresh: Path, key: str) -> None:
    git(fresh, "config", key, "!evil")
    reason = gitfiles.untrusted(str(fresh / ".git"))
    assert reason is not None and reason.split(".")[0] == key.split(".")[0].lower()


@pytest.mark.parametrize("text", [
    "[core] fsmonitor = evil\n",                    # the key on the section's line
    "[core]\n\tFsMonitor = evil\n",                 # any case
    "[CORE]\n\tfsmonitor = evil\n",
    '[includeIf "gitdir:/"]\n\tpath = x\n',
    "[core]\n\tpager = \\\nevil\n",                  # a continued value
    "[core]\n\tbare = false\n\tfsmonitor\n",        # a boolean without a value
    "\ufeff[core]\n\tfsmonitor = evil\n",           # a byte-order mark
    "[core]\r\n\tfsmonitor = evil\r\n",             # CRLF
    "[core \"x\"]\n\tfsmonitor = evil\n",
    "[weird\n",                                     # what the reader cannot follow
])
def test_config_tricks_are_not_trusted(fresh: Path, text: str) -> None:
    (fresh / ".git" / "config").write_text(text, encoding="utf-8")
    assert gitfiles.untrusted(str(fresh / ".git")) is not None


def test_a_live_hook_is_not_trusted(fresh: Path) -> None:
    (fresh / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    assert gitfiles.untrusted(str(fresh / ".git")) == "hooks/post-checkout"


def test_hooks_path_and_includes_are_found(fresh: Path) -> None:
    git(fresh, "config", "core.hooksPath", ".husky")
    git(fresh, "config", "include.path", "../team.gitconfig")
    (fresh / "team.gitconfig").write_text('[includeIf "onbranch:main"]\n\tpath = more.inc\n')
    found = gitfiles.protected(str(fresh), (str(fresh),))
    assert str(fresh / ".husky") in found.guard
    assert str(fresh / "team.gitconfig") in found.read_only
    assert str(fresh / "more.inc") in found.watch
