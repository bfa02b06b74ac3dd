"""The tree watcher (sandbox/spec/treewatch.py) under real confined commands: with it on
(in the process, as `serve` and MCP run it; through the warm server, whose workers ask it
at call time), off, its state deliberately stale (older memory, as a worker forked
early has), its watches used up and its queue overflowed — every file a deny glob
names stays hidden and everything a command plants for git or swifty to trust is found.

Each test has the unconfined control (the secret is readable, the plant stays), and
the `blind` state shows the tests can fail: a state that claims to be newer than the
changes (what a watcher that missed their events would hand out) leaks them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.spec import treewatch, walkcache

from . import walktrees

pytestmark = pytest.mark.linux

Runner = Callable[..., RunResult]
SECRET = "tree-watch-secret"
MODES = ("off", "on", "stale", "served")


@pytest.fixture
def watching(monkeypatch: pytest.MonkeyPatch) -> Iterator[treewatch.Watcher]:
    """A watcher of this process's own, as `serve` and MCP have (`watch_here`)."""
    local = treewatch._Local()
    monkeypatch.setattr(treewatch, "_asker", local)
    monkeypatch.setattr(walkcache, "_RECENT", {})
    yield local.watcher
    local.watcher.close()


def _state() -> walkcache.Cache:
    [cache] = [c for c in walkcache._RECENT.values() if c.trees]
    return cache


class Way:
    """How the test's commands run: `mode` (see MODES), or `blind`."""

    def __init__(self, mode: str, confined: Runner, project: Path,
                 request: pytest.FixtureRequest | _Request) -> None:
        self.mode, self.confined, self.project = mode, confined, project
        self.old: walkcache.Cache | None = None
        if mode == "served":
            self.as_argv = request.getfixturevalue("as_argv")
        if mode in ("on", "stale", "blind"):
            self.watcher = request.getfixturevalue("watching")
        if mode == "served":
            assert isinstance(request, pytest.FixtureRequest)
            request.getfixturevalue("monkeypatch").delenv("SWIFTY_DAEMON")
            from tests.cli.test_warm import _start_server

            self.server = _start_server()
            request.addfinalizer(self._stop)

    def _stop(self) -> None:
        self.server.terminate()
        self.server.wait(timeout=10)

    def run(self, command: str) -> tuple[str, int]:
        """The command's output and status (stdout and stderr together)."""
        if self.mode != "served":
            result = self.confined(command)
            return result.stdout + result.stderr, result.exit_code
        from tests.cli.test_warm import served

        done = served("run", "--", *self.as_argv(command), cwd=self.project)
        assert b"AssertionError: no server" not in done.stderr, done
        assert b"AssertionError: refused" not in done.stderr, done
        return (done.stdout + done.stderr).decode(errors="replace"), done.returncode

    def warm(self) -> None:
        """Runs enough for a vouched state (served: its workers hand theirs back)."""
        for _ in range(3 if self.mode == "served" else 2):
            self.run("true")
        if self.mode in ("on", "stale", "blind"):
            assert _state().incremental, "the watched walk was not incremental"
            self.old = _state()

    def changed(self) -> None:
        """The changes are made: `stale` puts the older state back (its generation
        is older: more to look at, nothing missed); `blind` claims the state is
        newer than them."""
        if self.mode == "stale":
            assert self.old is not None
            walkcache._RECENT[self.old.name] = self.old
        elif self.mode == "blind":
            state = _state()
            state.gen = self.watcher.changes((), None, None).now


def _between_runs(project: Path, outside: Path) -> str:
    """Made between runs, from outside: in an old directory, in a subtree renamed
    within the tree and in one moved in from outside it, in a directory replaced by
    another of the same name, behind a new link to a directory outside. The command
    that reads them all."""
    walktrees.make_between_runs(project, outside, SECRET)
    (outside / "tree" / "x").mkdir(parents=True)
    (outside / "tree" / "x" / ".env").write_text(f"{SECRET}-5\n")
    (outside / "tree").rename(project / "src" / "in")
    return ("cat lib/b/d/e/.env moved/d/.env.local node_modules/pkg/b/c/x.env "
            "lib/a/link/deep/.env.prod src/in/x/.env; grep -rh tree-watch- . ")


@pytest.mark.parametrize("mode", (*MODES, "blind"))
def test_files_made_between_runs_stay_hidden(mode: str, confined: Runner,
                                             unconfined: Runner, project: Path,
                                             outside_temp: Path,
                                             request: pytest.FixtureRequest) -> None:
    walktrees.layout(project)
    outside = outside_temp / "elsewhere"
    (outside / "deep").mkdir(parents=True)
    way = Way(mode, confined, project, request)
    way.warm()
    command = _between_runs(project, outside)
    way.changed()
    control = unconfined(command)
    assert all(f"{SECRET}-{n}" in control.stdout for n in range(1, 6)), control
    output, _code = way.run(command)
    if mode == "blind":  # the tests can fail: a watcher that missed the changes
        assert SECRET in output, "the blind state hid them anyway: this test proves nothing"
    else:
        assert SECRET not in output, f"ESCAPE ({mode}): {output}"


def _plant() -> str:
    """From inside, during the run: rename a directory, make `.env` files, plant a
    repository whose config runs code and a policy directory, and give a directory its
    mtime back."""
    return (
        walktrees.plant(SECRET) + "; "
        # the host's plant (below) lands while this waits
        "i=0; while [ ! -e src/a/.host-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done")


def _host_plant(project: Path) -> threading.Thread:
    """From outside, during the run: a repository moved into the tree."""

    def plant() -> None:
        deadline = time.monotonic() + 30
        while not (project / "lib" / "z").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        staging = project.parent / f"staging-{os.getpid()}"
        subprocess.run(["git", "init", "-q", str(staging / "r")], check=True)
        with open(staging / "r" / ".git" / "config", "a") as config:
            config.write("[core]\n\tfsmonitor = touch pwned\n")
        (staging / "r").rename(project / "src" / "a" / "r")
        (project / "src" / "a" / ".host-done").touch()

    thread = threading.Thread(target=plant)
    thread.start()
    return thread


@pytest.mark.parametrize("mode", (*MODES, "blind"))
def test_what_is_planted_during_a_run_is_found(mode: str, confined: Runner,
                                               unconfined: Runner, project: Path,
                                               request: pytest.FixtureRequest) -> None:
    walktrees.layout(project)
    way = Way(mode, confined, project, request)
    way.warm()
    repository = project / "lib" / "z" / "d" / "e" / ".git"
    policy = project / "node_modules" / "pkg" / "b" / "d" / "e" / ".swifty"
    hosts = project / "src" / "a" / "r" / ".git"
    if mode == "blind":
        # The walk before the command sees the tree as it is; the after-run check is
        # told that nothing changed during the run (what a watcher that missed the
        # events would say).
        original, asked = treewatch.ask, [0]

        def blind_after_the_walk(roots: tuple[str, ...], since: int | None,
                                 token: str | None) -> treewatch.Answer | None:
            asked[0] += 1
            answer = original(roots, since, token)
            if asked[0] == 1 or answer is None:
                return answer
            return treewatch.Answer(answer.token, answer.now, frozenset(), frozenset())

        request.getfixturevalue("monkeypatch").setattr(treewatch, "ask",
                                                       blind_after_the_walk)
    thread = _host_plant(project)
    output, _code = way.run(_plant())
    thread.join()
    if mode == "blind":
        assert repository.is_dir() or policy.is_dir() or hosts.is_dir(), \
            "the blind after-run check found them anyway: this test proves nothing"
        return
    assert not repository.exists() and not policy.exists(), f"ESCAPE ({mode}): {output}"
    assert not hosts.exists(), f"ESCAPE ({mode}): the host's plant stayed"
    for folder in (repository.parent, policy.parent, hosts.parent):
        assert any(p.name.startswith(".swifty-blocked-") for p in folder.iterdir())
    read = "cat lib/z/d/e/.env src/b/d/e/.env"
    output, _code = way.run(read)
    assert SECRET not in output, f"ESCAPE ({mode}): {output}"
    # The control: unconfined, all of it stays.
    assert f"{SECRET}-1" in unconfined(read).stdout


@pytest.mark.parametrize("budget", ("subtrees", "root"))
def test_watches_used_up(budget: str, confined: Runner, unconfined: Runner, project: Path,
                         outside_temp: Path, watching: treewatch.Watcher,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Few watches to be had (this instance's budget, as a repository with more
    directories than the user's watches meets): the unwatched subtrees, or the whole
    root when they are too many, are checked the stat-based way; nothing is missed."""
    monkeypatch.setattr(treewatch, "MAX_WATCHES", 4)
    if budget == "root":
        monkeypatch.setattr(treewatch, "MAX_UNWATCHED", 2)
    walktrees.layout(project)
    outside = outside_temp / "elsewhere"
    (outside / "deep").mkdir(parents=True)
    way = Way("on", confined, project, _Request(watching))
    way.warm()
    state = _state()
    assert state.answer is not None and state.answer.unwatched, "every directory watched"
    command = _between_runs(project, outside)
    assert all(f"{SECRET}-{n}" in unconfined(command).stdout for n in range(1, 6))
    output, _code = way.run(command)
    assert SECRET not in output, f"ESCAPE ({budget}): {output}"
    for made in ("lib/b/d/e/.env", "node_modules/pkg/b/c/x.env", "lib/a/link"):
        (project / made).unlink()
    for made in ("moved", "src/in"):
        shutil.rmtree(project / made)
    walktrees.layout(project)  # what `_plant` renames, back
    thread = _host_plant(project)
    output, _code = way.run(_plant())
    thread.join()
    assert not (project / "lib" / "z" / "d" / "e" / ".git").exists(), f"ESCAPE: {output}"
    assert not (project / "src" / "a" / "r" / ".git").exists(), "ESCAPE: the host's plant"


def test_an_overflowed_queue_forgets_everything(confined: Runner, unconfined: Runner,
                                                 project: Path,
                                                 watching: treewatch.Watcher) -> None:
    """More events than the kernel queues between two runs (`max_queued_events`):
    the watcher forgets all it knew and the walk checks every directory."""
    walktrees.layout(project)
    way = Way("on", confined, project, _Request(watching))
    way.warm()
    overflow(project / "lib" / "a")  # watched already: its entries' events are queued
    (project / "src" / "b" / "d" / "e" / ".env").write_text(f"{SECRET}\n")
    floor = watching.floor
    read = "cat src/b/d/e/.env"
    assert SECRET in unconfined(read).stdout
    output, _code = way.run(read)
    assert SECRET not in output, f"ESCAPE: {output}"
    assert watching.floor > floor, "the queue did not overflow: this test proves nothing"


def overflow(directory: Path) -> None:
    """More events queued in `directory` than the kernel keeps (`max_queued_events`):
    one file renamed back and forth, two events a rename, each with its own cookie so
    that none merges with the one before (no tree of thousands of files for every
    later walk to list)."""
    queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    here, there = directory / "overflow-a", directory / "overflow-b"
    here.touch()
    for _ in range(queued // 2 + 100):
        os.rename(here, there)
        os.rename(there, here)
    here.unlink()


class _Request:
    """`Way` for a test that holds its watcher fixture already."""

    def __init__(self, watcher: treewatch.Watcher) -> None:
        self.watcher = watcher

    def getfixturevalue(self, name: str) -> Any:
        assert name == "watching"
        return self.watcher
