"""Which hidden paths git tracks, read from a real index (versions 2 and 4)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.spec.gitindex import tracked

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_tracked_files_and_directories(project: Path, version: str) -> None:
    shutil.rmtree(project / ".git")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for name in (".env.example", "a/.env", "b/a/.env.local", "deep/er/x.key", "long/" +
                 "n" * 200 + "/f"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
    (project / ".env").write_text("untracked\n")
    subprocess.run(["git", "-C", str(project), "add", "-A", "--", ".", ":!.env"], check=True)
    subprocess.run(["git", "-C", str(project), "update-index", "--index-version", version],
                   check=True)
    p = str(project)
    files = [f"{p}/.env.example", f"{p}/.env", f"{p}/a/.env", f"{p}/a/.env.local",
             f"{p}/.env.local", f"{p}/long/{'n' * 200}/f", "/elsewhere/.env.example"]
    dirs = [f"{p}/deep", f"{p}/deep/e", f"{p}/b/a", f"{p}/nothing", f"{p}/a/.env"]
    assert tracked(p, files, dirs) == [
        f"{p}/.env.example", f"{p}/a/.env", f"{p}/long/{'n' * 200}/f",  # not `b/a/.env…`
        f"{p}/deep", f"{p}/b/a"]


def test_no_repository_or_no_index(project: Path) -> None:
    assert tracked(str(project), [f"{project}/x"], []) == []  # `.git` without an index
    shutil.rmtree(project / ".git")
    assert tracked(str(project), [f"{project}/x"], []) == []
