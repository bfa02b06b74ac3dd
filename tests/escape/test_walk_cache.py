"""The walk cache under real confined commands: with the cache cold, warm or corrupted,
every file a deny glob names stays hidden and everything a command plants for git or
swifty to trust is still found after it — files made, renamed and replaced between
runs and during one, directories with their mtime set back.

Each test ages its tree past the racy window first (records of directories changed
within it are not kept), so that "warm" really is warm; it asserts so. Each attack has
its unconfined control (the secret is readable, the planted repository stays).
"""

from __future__ import annotations

import marshal
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.policy import cachefile
from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.spec import walkcache

from . import walktrees

pytestmark = pytest.mark.linux

Runner = Callable[..., RunResult]
SECRET = "walk-cache-secret"
STATES = ("cold", "warm", "garbage", "truncated", "forged")


def _layout(project: Path) -> None:
    walktrees.layout(project)
    time.sleep(walkcache.RACY_NS / 1e9 + 0.2)  # old enough to be kept


def _cache_file(home: Path) -> Path:
    walk = home / ".cache" / "swifty-sandbox" / "walk"
    [name] = [n for n in os.listdir(walk) if n != "key"]
    return walk / name


def _warmed(confined: Runner, home: Path) -> None:
    """A confined run whose walk writes the cache; the cache holds the tree."""
    confined("true")
    head = len(cachefile.MAGIC) + 32
    records = marshal.loads(_cache_file(home).read_bytes()[head:])[2]
    assert len(records) > 10, "nothing kept: the warm runs would be cold"


def _spoil(home: Path, state: str, empty: tuple[Path, ...] = ()) -> None:
    """Make the cache `state`. `forged`: each record of `empty` (every record when none
    is named) claims its directory holds nothing, with the directory's identity as it
    is now — what would make a trusting walk skip it — under the old signature."""
    if state == "warm":
        return
    if state == "cold":
        shutil.rmtree(home / ".cache" / "swifty-sandbox" / "walk")
        return
    target = _cache_file(home)
    data = target.read_bytes()
    if state == "garbage":
        target.write_bytes(os.urandom(len(data)))
    elif state == "truncated":
        target.write_bytes(data[:len(data) // 2])
    else:
        head = len(cachefile.MAGIC) + 32
        fmt, params, records = marshal.loads(data[head:])
        active = max((r[4] for r in records.values()), key=len)  # every group
        for path in [str(p) for p in empty] or list(records):
            info = os.lstat(path)
            records[path] = (info.st_dev, info.st_ino, info.st_mtime_ns,
                             info.st_ctime_ns, active, (), (), ())
        target.write_bytes(data[:head] + marshal.dumps((fmt, params, records)))


@pytest.mark.parametrize("state", STATES)
def test_env_files_made_between_runs_stay_hidden(
        state: str, confined: Runner, unconfined: Runner, project: Path, home: Path,
        outside_temp: Path) -> None:
    """Made in an old directory, in a subtree renamed in, in a directory replaced by
    another of the same name, behind a new link to a directory outside: each hidden
    in the next run. Control: each readable unconfined."""
    _layout(project)
    outside = outside_temp / "elsewhere"
    (outside / "deep").mkdir(parents=True)
    _warmed(confined, home)
    walktrees.make_between_runs(project, outside, SECRET)
    _spoil(home, state, (project / "lib" / "b" / "d" / "e", project / "moved" / "d",
                         project / "node_modules" / "pkg" / "b" / "c"))
    command = ("cat lib/b/d/e/.env moved/d/.env.local node_modules/pkg/b/c/x.env "
               "lib/a/link/deep/.env.prod; grep -rh walk-cache- . ")
    control = unconfined(command)
    assert all(f"{SECRET}-{n}" in control.stdout for n in range(1, 5)), control
    result = confined(command)
    assert SECRET not in result.stdout + result.stderr, f"ESCAPE ({state}): {result}"


def test_a_hard_link_made_between_runs_still_refuses(confined: Runner, project: Path,
                                                      home: Path) -> None:
    """A second name of a hidden file would be readable: the warm walk still finds the
    file, so the run is refused as a cold one is (the link is in an old directory)."""
    _layout(project)
    (project / "lib" / "a" / ".env").write_text(f"{SECRET}\n")
    time.sleep(walkcache.RACY_NS / 1e9 + 0.2)
    _warmed(confined, home)
    os.link(project / "lib" / "a" / ".env", project / "src" / "b" / "d" / "e" / "notes")
    from swifty_sandbox import Sandbox
    from swifty_sandbox.sandbox import EXIT_SETUP

    result = Sandbox(project, home=home).run(["cat", "src/b/d/e/notes"])
    assert result.exit_code == EXIT_SETUP and SECRET not in result.stdout, result


def _plant(project: Path) -> str:
    return walktrees.plant(SECRET)


@pytest.mark.parametrize("state", STATES)
def test_what_a_command_plants_while_renaming_is_found(
        state: str, confined: Runner, unconfined: Runner, project: Path,
        home: Path) -> None:
    """During one run: the after-run check (reusing the walk's records) finds the
    planted repository and policy directory and moves them aside; the next run hides
    the `.env` files the command made. Control: unconfined, all of it stays."""
    _layout(project)
    _warmed(confined, home)
    _spoil(home, state)
    repository = project / "lib" / "z" / "d" / "e" / ".git"
    policy = project / "node_modules" / "pkg" / "b" / "d" / "e" / ".swifty"
    confined(_plant(project))
    assert not repository.exists() and not policy.exists(), f"ESCAPE ({state})"
    for folder in (repository.parent, policy.parent):
        assert any(p.name.startswith(".swifty-blocked-") for p in folder.iterdir())
    read = "cat lib/z/d/e/.env src/b/d/e/.env"
    result = confined(read)
    assert SECRET not in result.stdout + result.stderr, f"ESCAPE ({state}): {result}"
    # The control, on the tree as it was.
    (project / "lib" / "z").rename(project / "lib" / "b")
    for folder in (project / "lib" / "b" / "d" / "e", policy.parent):
        for entry in folder.iterdir():
            if entry.name.startswith(".swifty-blocked-") or entry.name == ".env":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    (project / "src" / "b" / "d" / "e" / ".env").unlink()
    unconfined(_plant(project))
    assert repository.is_dir() and policy.is_dir()
    assert f"{SECRET}-1" in unconfined(read).stdout
