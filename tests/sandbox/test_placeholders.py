"""The placeholders a Linux launch binds hidden files from: where `compile` shows them,
that the launch owns them (made when compiled, gone when closed, whether or not the
command ran), and that a tracked hidden file keeps /dev/null."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.backend import Host
from swifty_sandbox.sandbox.linux.backend import LinuxBackend
from swifty_sandbox.sandbox.run.launch import prepare

pytestmark = pytest.mark.linux


def _mine() -> set[str]:
    return {p.name for p in Path("/dev/shm").glob(
        f"swifty-hidden-{os.getuid()}-{os.getpid()}-*")}


def _binds(argv: list[str]) -> dict[str, str]:
    """Hidden file → its source: "fd" (a placeholder) or "/dev/null"."""
    out = {}
    for i, arg in enumerate(argv):
        if arg == "--ro-bind-fd":
            out[argv[i + 2]] = "fd"
        elif arg == "--ro-bind" and argv[i + 1] == "/dev/null":
            out[argv[i + 2]] = "/dev/null"
    return out


def test_placeholders_where_git_stages_nothing(project: Path, home: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("ignored.key\n")
    for name in ("ignored.key", "tracked.key", "added.key"):
        (project / name).write_text("secret\n")
    subprocess.run(["git", "-C", str(project), "add", "tracked.key"], check=True)
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.key)\n  effect: deny\n")
    (home / ".netrc").write_text("machine x\n")
    spec = Sandbox(project, home=home).run_spec()
    with LinuxBackend().compile(spec, ["true"], Host(dry=True)) as launch:
        binds = _binds(launch.argv)
    assert binds[str(project / "ignored.key")] == "fd"
    assert binds[str(home / ".netrc")] == "fd"  # outside every work tree
    assert binds[str(project / "tracked.key")] == "/dev/null"
    assert binds[str(project / "added.key")] == "/dev/null"  # `git add -A` would add it


@pytest.mark.bwrap
@pytest.mark.unprivileged
def test_the_launch_owns_them(project: Path, home: Path) -> None:
    (home / ".netrc").write_text("machine x\n")
    (home / ".ssh").mkdir()
    spec, _ = prepare(Sandbox(project, home=home).run_spec(), "")  # its temp dir made
    before = _mine()
    with LinuxBackend().compile(spec, ["true"], Host(dry=True)):
        assert _mine() == before  # described only: nothing made
    launch = LinuxBackend().compile(spec, ["true"], Host())
    made = _mine() - before
    assert len(made) == 1
    folder = Path("/dev/shm") / made.pop()
    assert oct(folder.stat().st_mode & 0o777) == "0o300"  # listable by root alone
    if os.getuid() != 0:
        with pytest.raises(PermissionError):
            os.listdir(folder)
    folder.chmod(0o700)  # ours: to look inside
    # a file per hidden file git stages nowhere, a directory per hidden directory
    files = [p for p in folder.iterdir() if not p.is_dir()]
    dirs = [p for p in folder.iterdir() if p.is_dir()]
    assert len(files) == len(spec.placeholders) and len(dirs) == len(spec.unreadable_dirs)
    assert str(home / ".ssh") in spec.unreadable_dirs
    assert {oct(p.stat().st_mode & 0o777) for p in (*files, *dirs)} == {"0o400"}
    assert all(p.stat().st_size == 0 for p in files)
    assert all(not os.listdir(p) for p in dirs)
    launch.close()  # never ran
    assert _mine() == before
