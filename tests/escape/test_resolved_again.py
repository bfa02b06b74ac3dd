"""What a confined command leaves for git outside to trust, where the after-run check
(sandbox/run/aftercare.py, expand.find_named) must judge things by what they resolve
to and where git will look — not by a link's text, nor only by what is new, nor only
where the tree watcher vouches for a subtree.

Each attack runs unconfined first (the control: host git runs the planted code, judged
by a marker it makes), then confined in each of the ways the after-run check can run:
the walk cache cold, warm or forged, the tree watcher on (in the process), stale,
through the warm server, with the `.git` directories unwatched (what a watcher out of
watches, or on a file system it cannot watch, names), and with its queue overflowed
(all of them under bwrap, three under Landlock: CASES). Confined, host git must not
run it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.spec import treewatch, walkcache

from . import walktrees
from .conftest import BACKENDS, git
from .test_tree_watch import Way, overflow, watching  # noqa: F401 (the fixture, shared)
from .test_walk_cache import _spoil

pytestmark = pytest.mark.linux

Runner = Callable[..., RunResult]
WAYS = ("cold", "warm", "forged", "on", "stale", "served", "unwatched", "overflow")
# Every way under bwrap; under Landlock those that differ in where the check runs (in
# this process, cold or with the watcher on, and in the warm server). The check runs on
# the host after either backend, so the cache's and the watcher's mechanics are no more a
# backend's than it is: the bwrap runs try each of them, the Landlock runs what it wrote.
CASES = [(backend, way) for backend in BACKENDS
         for way in (("cold", "on", "served") if backend == "landlock" else WAYS)]
_RACY_HERE_NS = 100_000_000
_WATCHED = {"on": "on", "stale": "stale", "served": "served", "unwatched": "on",
            "overflow": "on"}


class Ways:
    """The confined runs of one test, the after-run check in the way `way` names."""

    def __init__(self, way: str, confined: Runner, project: Path, home: Path,
                 request: pytest.FixtureRequest) -> None:
        self.way, self.home, self.project = way, home, project
        if way != "served":
            # The walk cache's racy window is FAT's 2 s; these trees are on ext4 or
            # tmpfs, whose timestamps tick in milliseconds. Narrowed where the check
            # runs in this process (not in the warm server: `served` waits it out), so
            # that a tree is old enough for its records after a short wait.
            request.getfixturevalue("monkeypatch").setattr(walkcache, "RACY_NS",
                                                           _RACY_HERE_NS)
        if way == "unwatched":
            self._unwatch_git_dirs(request)
        self.inner = Way(_WATCHED.get(way, "off"), confined, project, request)

    @staticmethod
    def _unwatch_git_dirs(request: pytest.FixtureRequest) -> None:
        """The watcher cannot watch any `.git` directory (as when the user's watches
        are used up there, or it lies on NFS): each is named an unwatched subtree."""
        watcher: treewatch.Watcher = request.getfixturevalue("watching")
        add = treewatch.Watcher._add

        def refusing(self: treewatch.Watcher, directory: str, state: treewatch._Root
                     ) -> bool:
            if directory.endswith("/.git"):
                self._unwatched(directory, state)
                return False
            return add(self, directory, state)

        request.getfixturevalue("monkeypatch").setattr(treewatch.Watcher, "_add", refusing)
        assert watcher is not None

    def run(self, command: str) -> str:
        output, _code = self.inner.run(command)
        return output

    def warm(self) -> None:
        time.sleep(walkcache.RACY_NS / 1e9 + 0.2)  # old enough for its records to be kept
        self.inner.warm()
        if self.way == "unwatched":
            state = next(c for c in walkcache._RECENT.values() if c.trees)
            assert state.answer is not None and any(
                u.endswith("/.git") for u in state.answer.unwatched), "`.git` watched"

    def before_attack(self) -> None:
        """Between the command that prepares and the one that attacks."""
        if self.way == "cold":
            shutil.rmtree(self.home / ".cache" / "swifty-sandbox" / "walk",
                          ignore_errors=True)
        elif self.way == "forged":
            _spoil(self.home, "forged")
        elif self.way == "stale":
            self.inner.changed()
        elif self.way == "overflow":
            watcher = self.inner.watcher
            floor = watcher.floor
            overflow(self.project / "lib" / "a")
            self.run("true")
            assert watcher.floor > floor, "the queue did not overflow"


@pytest.fixture
def repo(project: Path, home: Path) -> Path:
    shutil.rmtree(project / ".git")
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n"
                                     "[protocol \"file\"]\n\tallow = always\n")
    git(project, "init", "-q")
    walktrees.layout(project)
    return project


@pytest.fixture
def marker(outside_temp: Path) -> Iterator[Path]:
    path = outside_temp / f"ran-{uuid.uuid4().hex}"
    yield path


def _git_runs(marker: Path, directory: Path, *args: str) -> bool:
    """Whether host git, run as the user would in `directory`, makes `marker`."""
    marker.unlink(missing_ok=True)
    if not directory.is_dir():
        return False
    subprocess.run(["git", *args], cwd=directory, capture_output=True, check=False,
                   timeout=60)
    return marker.exists()


def _fsmonitor(marker: Path) -> str:
    return f"fsmonitor = \"touch {marker}; false\""


def _attempt(way: Ways, unconfined: Runner, steps: tuple[str, ...],
             worked: Callable[[], bool], reset: Callable[[], None]) -> str:
    """The control (every step unconfined: the attack works), then each step confined
    (the last one in the way under test): it must not. The last confined output."""
    for step in steps:
        unconfined(step)
    assert worked(), "control: the attack does not work unconfined"
    reset()
    assert not worked(), "reset did not undo the attack"
    way.warm()
    for step in steps[:-1]:
        way.run(step)
    way.before_attack()
    output = way.run(steps[-1])
    assert not worked(), f"ESCAPE ({way.way}): {output}"
    return output


def _host_tmp(project: Path, home: Path) -> str:
    """The host directory behind the command's /tmp (made, so that the control, which
    runs unconfined, writes where the confined command's /tmp lies)."""
    temp = Sandbox(project, home=home).spec().temp_dir
    assert temp is not None
    Path(temp).mkdir(parents=True, exist_ok=True)
    return temp


# -- 1. a chain of links into the command's own /tmp ------------------------------------

@pytest.mark.parametrize(("backend", "way"), CASES, indirect=["backend"])
def test_a_chain_of_links_into_the_commands_tmp(
        way: str, confined: Runner, unconfined: Runner, repo: Path, home: Path,
        marker: Path, request: pytest.FixtureRequest) -> None:
    """`tools -> .git/hop/x`, `.git/hop -> <the command's /tmp on the host>` (made in
    the run before, inside `.git`, where the check does not list): only the hop's text
    names swifty-sandbox. Behind it, a repository made in /tmp whose fsmonitor the
    user's `git status` in `tools` runs."""
    temp = _host_tmp(repo, home)
    tools = repo / "tools"
    # Confined, the host path of /tmp is hidden (bwrap) or it is $TMPDIR (Landlock).
    where = f"T={temp}; [ -w \"$T\" ] || T=${{TMPDIR:-/tmp}}"
    steps = (f"ln -s {temp} .git/hop",
             f"set -e; {where}; git init -q \"$T/x\"; "
             f"printf '[core]\\n\\t{_fsmonitor(marker)}\\n' >> \"$T/x/.git/config\"; "
             "ln -s .git/hop/x tools")

    def reset() -> None:
        for path in (tools, repo / ".git" / "hop"):
            path.unlink(missing_ok=True)
        shutil.rmtree(Path(temp) / "x")

    _attempt(Ways(way, confined, repo, home, request), unconfined, steps,
             lambda: _git_runs(marker, tools, "status"), reset)
    assert not tools.is_symlink(), "the link stayed (nothing behind it any more)"


@pytest.mark.parametrize(("backend", "way"), CASES, indirect=["backend"])
def test_a_relative_link_through_a_linked_parent(
        way: str, confined: Runner, unconfined: Runner, repo: Path, home: Path,
        marker: Path, request: pytest.FixtureRequest) -> None:
    """The same with no link text naming swifty-sandbox at all where the check lists:
    `lib/a/t -> ../../.git/up/x`, `.git/up -> ../../..` (the home, reached upwards),
    whose `.cache/swifty-sandbox/tmp/…` is spelt inside `.git` only."""
    temp = _host_tmp(repo, home)
    rest = Path(temp).relative_to(home)
    link = repo / "lib" / "a" / "t"
    where = f"T={temp}; [ -w \"$T\" ] || T=${{TMPDIR:-/tmp}}"
    steps = (f"ln -s ../../.. .git/up && ln -s up/{rest} .git/tmp",
             f"set -e; {where}; git init -q \"$T/x\"; "
             f"printf '[core]\\n\\t{_fsmonitor(marker)}\\n' >> \"$T/x/.git/config\"; "
             "ln -s ../../.git/tmp/x lib/a/t")

    def reset() -> None:
        for path in (link, repo / ".git" / "up", repo / ".git" / "tmp"):
            path.unlink(missing_ok=True)
        shutil.rmtree(Path(temp) / "x")

    _attempt(Ways(way, confined, repo, home, request), unconfined, steps,
             lambda: _git_runs(marker, link, "status"), reset)


# -- 2. a repository completed around what was there before -----------------------------

@pytest.mark.parametrize(("backend", "way"), CASES, indirect=["backend"])
def test_a_gitfile_left_for_a_later_run(
        way: str, confined: Runner, unconfined: Runner, repo: Path, marker: Path,
        home: Path, request: pytest.FixtureRequest) -> None:
    """Run 1 leaves `sub/.git` naming `../.git/foo`, which does not exist: no
    repository, nothing to object to, nothing kept read-only. Run 2 makes `.git/foo`
    a git directory whose config runs a program — inside `.git`, where the check does
    not look, and `sub/.git` is no new marker."""
    sub = repo / "sub"
    steps = ("mkdir sub && printf 'gitdir: ../.git/foo\\n' > sub/.git",
             "set -e; mkdir -p .git/foo/objects .git/foo/refs; "
             "echo 'ref: refs/heads/main' > .git/foo/HEAD; "
             "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n"
             f"\\t{_fsmonitor(marker)}\\n' > .git/foo/config")

    def reset() -> None:
        shutil.rmtree(repo / ".git" / "foo")

    def worked() -> bool:
        return (repo / ".git" / "foo" / "HEAD").exists() and _git_runs(marker, sub,
                                                                         "status")

    def reset_all() -> None:
        reset()
        shutil.rmtree(sub)

    _attempt(Ways(way, confined, repo, home, request), unconfined, steps, worked,
             reset_all)


@pytest.mark.parametrize(("backend", "way"), CASES, indirect=["backend"])
def test_an_old_head_completed_through_a_commondir(
        way: str, confined: Runner, unconfined: Runner, repo: Path, marker: Path,
        home: Path, request: pytest.FixtureRequest) -> None:
    """Run 1 leaves `.git/wt/HEAD` and `sub/.git` naming it (a HEAD alone: no
    repository). Run 2 gives `.git/wt` a `commondir` naming a repository it makes
    elsewhere in `.git`, whose config runs a program."""
    sub = repo / "sub"
    steps = ("mkdir -p sub .git/wt && echo 'ref: refs/heads/main' > .git/wt/HEAD && "
             "printf 'gitdir: ../.git/wt\\n' > sub/.git",
             "set -e; mkdir -p .git/c/objects .git/c/refs; echo ../c > .git/wt/commondir; "
             "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n"
             f"\\t{_fsmonitor(marker)}\\n' > .git/c/config")

    def reset() -> None:
        shutil.rmtree(repo / ".git" / "c")
        shutil.rmtree(repo / ".git" / "wt")
        shutil.rmtree(sub)

    _attempt(Ways(way, confined, repo, home, request), unconfined, steps,
             lambda: _git_runs(marker, sub, "status"), reset)


# -- 3. submodules' git dirs ------------------------------------------------------------

def _submodule(repo: Path, outside_temp: Path) -> Path:
    """A submodule `lib/sub` committed, then taken out of the work tree (`deinit`,
    as after a fresh clone's `submodule init`): its git dir stays in `.git/modules`."""
    upstream = outside_temp / "upstream"
    git(outside_temp, "init", "-q", str(upstream))
    (upstream / "README").write_text("up\n")
    git(upstream, "add", "README")
    git(upstream, "commit", "-q", "-m", "first")
    git(repo, "submodule", "add", "-q", str(upstream), "lib/sub")
    git(repo, "commit", "-q", "-m", "submodule")
    return upstream


def _hook(marker: Path, hooks: str) -> str:
    return (f"mkdir -p {hooks} && printf '#!/bin/sh\\ntouch {marker}\\n' > "
            f"{hooks}/post-checkout && chmod +x {hooks}/post-checkout")


@pytest.mark.parametrize(("backend", "way"), CASES, indirect=["backend"])
def test_a_hook_in_a_submodules_git_dir_without_hooks(
        way: str, confined: Runner, unconfined: Runner, repo: Path, marker: Path,
        home: Path, outside_temp: Path, request: pytest.FixtureRequest) -> None:
    """A submodule's git dir made without a hooks directory (a git without templates)
    and no work tree to name it: its `hooks/` can be made, and `git submodule update`
    runs the hook."""
    _submodule(repo, outside_temp)
    git(repo, "submodule", "deinit", "-q", "-f", "lib/sub")
    hooks = repo / ".git" / "modules" / "lib" / "sub" / "hooks"
    shutil.rmtree(hooks)
    steps = ("true", _hook(marker, ".git/modules/lib/sub/hooks"))

    def worked() -> bool:
        marker.unlink(missing_ok=True)
        git(repo, "submodule", "update", "--init", "-q")
        done = marker.exists()
        git(repo, "submodule", "deinit", "-q", "-f", "lib/sub")
        return done

    _attempt(Ways(way, confined, repo, home, request), unconfined, steps, worked,
             lambda: shutil.rmtree(hooks))


@pytest.mark.parametrize(("backend", "way"), CASES, indirect=["backend"])
def test_a_submodules_git_dir_planted_in_git_modules(
        way: str, confined: Runner, unconfined: Runner, repo: Path, marker: Path,
        home: Path, outside_temp: Path, request: pytest.FixtureRequest) -> None:
    """A submodule committed but never cloned here (a clone without
    `--recurse-submodules`): the command makes its git dir in `.git/modules` with a
    hook; `git submodule update --init` uses the git dir it finds and runs the hook."""
    upstream = _submodule(repo, outside_temp)
    git(repo, "submodule", "deinit", "-q", "-f", "lib/sub")
    modules = repo / ".git" / "modules" / "lib"
    shutil.rmtree(modules)
    where = "T=${TMPDIR:-/tmp}"
    steps = ("true", f"set -e; {where}; mkdir -p .git/modules/lib; "
             "git clone -q --no-checkout --separate-git-dir "
             f".git/modules/lib/sub {upstream} \"$T/w-$$\"; rm -rf \"$T/w-$$\"; "
             + _hook(marker, ".git/modules/lib/sub/hooks"))

    def worked() -> bool:
        marker.unlink(missing_ok=True)
        if not (modules / "sub" / "HEAD").exists():
            return False  # else git clones it afresh: nothing of the command's
        subprocess.run(["git", "submodule", "update", "--init", "-q"], cwd=repo,
                       capture_output=True, check=False, timeout=60)
        done = marker.exists()
        subprocess.run(["git", "submodule", "deinit", "-q", "-f", "lib/sub"], cwd=repo,
                       capture_output=True, check=False, timeout=60)
        return done

    _attempt(Ways(way, confined, repo, home, request), unconfined, steps, worked,
             lambda: shutil.rmtree(modules))
