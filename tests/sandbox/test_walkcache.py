"""The walk cache (sandbox/spec/walkcache.py): a warm walk finds what a cold one finds,
after every kind of change between runs, and a cache that cannot be trusted is cold.

The records of a directory changed within `RACY_NS` of its listing are not kept, so
each test ages its tree first (`_aged`): without that, nothing would be warm.
The confined counterparts (real commands, both backends) are in
tests/escape/test_walk_cache.py.
"""

from __future__ import annotations

import marshal
import os
import shutil
import time
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy import cachefile
from swifty_sandbox.sandbox.run import aftercare
from swifty_sandbox.sandbox.spec import walkcache
from swifty_sandbox.sandbox.spec.compiler import SandboxSpec

pytestmark = pytest.mark.linux


def _tree(project: Path) -> None:
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env*)\n  effect: deny\n")
    for top in ("src", "lib", "node_modules/pkg"):
        for sub in ("a", "b/c", "b/d/e"):
            folder = project / top / sub
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "f.py").touch()
    (project / "src" / "a" / ".env").write_text("KEY=1\n")


def _aged() -> None:
    """Past the racy window: the tree's directories are now old enough to be kept."""
    time.sleep(walkcache.RACY_NS / 1e9 + 0.2)


def _spec(project: Path, home: Path) -> SandboxSpec:
    return Sandbox(project, home=home).spec()


def _walk_dir(home: Path) -> Path:
    return home / ".cache" / "swifty-sandbox" / "walk"


def _cold(project: Path, home: Path) -> SandboxSpec:
    shutil.rmtree(_walk_dir(home), ignore_errors=True)
    spec = _spec(project, home)
    cache = walkcache.recall(spec.walk_cache)
    assert cache is not None and not cache.valid  # really cold: nothing reused
    return spec


def _warm(project: Path, home: Path) -> tuple[SandboxSpec, int]:
    """A spec and how many directories came from the cache."""
    spec = _spec(project, home)
    cache = walkcache.recall(spec.walk_cache)
    assert cache is not None
    return spec, len(cache.valid)


def _hidden(spec: SandboxSpec) -> set[str]:
    return {*spec.unreadable_files, *spec.unreadable_dirs}


def test_a_warm_walk_finds_what_a_cold_one_finds_after_changes(project: Path,
                                                               home: Path) -> None:
    _tree(project)
    outside = home / "elsewhere"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / ".env.prod").write_text("KEY=2\n")
    _aged()
    _spec(project, home)  # writes the cache
    reused = _warm(project, home)[1]
    assert reused > 10, "the warm walk reused nothing: this test would prove nothing"
    # Between runs: every way a directory's entries change.
    (project / "lib" / "b" / "d" / "e" / ".env.local").write_text("KEY=3\n")  # created
    (project / "src" / "b").rename(project / "moved")  # a subtree renamed
    (project / "moved" / "d" / "e" / ".env").write_text("KEY=4\n")
    shutil.rmtree(project / "node_modules" / "pkg" / "b")  # replaced by another
    (project / "node_modules" / "pkg" / "b" / "c").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "b" / "c" / "x.env").write_text("KEY=5\n")
    (project / "lib" / "a" / "link").symlink_to(outside)  # a link to a dir outside
    (project / "lib" / "b" / "c" / "sub" / ".git").mkdir(parents=True)  # a marker
    warm, reused = _warm(project, home)
    assert reused > 5  # the unchanged directories still came from the cache
    cold = _cold(project, home)
    assert _hidden(warm) == _hidden(cold)
    assert set(warm.markers) == set(cold.markers)
    expected = {project / "lib" / "b" / "d" / "e" / ".env.local",
                project / "moved" / "d" / "e" / ".env",
                project / "node_modules" / "pkg" / "b" / "c" / "x.env",
                project / "src" / "a" / ".env", outside / "deep" / ".env.prod"}
    assert {str(p) for p in expected} <= _hidden(warm)
    assert str(project / "lib" / "b" / "c" / "sub" / ".git") in warm.markers


def test_a_mtime_set_back_does_not_hide_a_change(project: Path, home: Path) -> None:
    """`touch -d` can give a directory its old mtime, not its old ctime."""
    _tree(project)
    folder = project / "lib" / "b" / "d" / "e"
    _aged()
    _spec(project, home)
    before = os.lstat(folder)
    (folder / ".env").write_text("KEY=1\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.lstat(folder).st_mtime_ns == before.st_mtime_ns
    warm, reused = _warm(project, home)
    assert reused > 5
    assert str(folder / ".env") in warm.unreadable_files


def test_a_directory_listed_in_its_racy_window_is_not_kept(project: Path,
                                                          home: Path) -> None:
    """Changed within the same timestamp tick as its listing, a directory could change
    again unseen: it is listed again next time."""
    _tree(project)
    _aged()
    fresh = project / "src" / "b" / "d" / "e"
    (fresh / "new.txt").touch()  # now within the window
    spec = _spec(project, home)
    cache = walkcache.recall(spec.walk_cache)
    assert cache is not None
    assert str(fresh) not in cache.records
    assert str(project / "lib" / "b" / "d" / "e") in cache.records  # the old ones are


def _forge(home: Path, folder: Path, *, valid_mac: bool) -> bytes:
    """The cache file with `folder`'s record made to claim it holds no match, with the
    directory's current identity (what a forger would write): signed with the real
    key when `valid_mac`, else with the old signature."""
    walk = _walk_dir(home)
    [name] = [n for n in os.listdir(walk) if n != "key"]
    data = (walk / name).read_bytes()
    head = len(cachefile.MAGIC) + 32
    fmt, params, records = marshal.loads(data[head:])
    info = os.lstat(folder)
    old = records[str(folder)]
    records[str(folder)] = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns,
                            old[4], old[5], (), old[7])
    body = marshal.dumps((fmt, params, records))
    mac = data[len(cachefile.MAGIC):head]
    if valid_mac:
        secret = (walk / "key").read_bytes()
        mac = cachefile.digest(params.encode() + body, secret)
    return cachefile.MAGIC + mac + body


CORRUPTIONS = ("garbage", "truncated", "forged", "mode", "hard-link", "symlink",
               "directory-mode", "key", "owner")


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_cache_that_cannot_be_trusted_is_cold(project: Path, home: Path, how: str
                                                ) -> None:
    """Each corruption of a cache whose forged record would hide the new `.env` (the
    `signed` control below proves the forgery works when trusted)."""
    if how == "owner" and os.geteuid() != 0:
        pytest.skip("only root can give a file away")
    _tree(project)
    folder = project / "lib" / "b" / "d" / "e"
    _aged()
    _spec(project, home)
    (folder / ".env").write_text("KEY=1\n")
    walk = _walk_dir(home)
    [name] = [n for n in os.listdir(walk) if n != "key"]
    target = walk / name
    signed = _forge(home, folder, valid_mac=True)
    if how == "garbage":
        target.write_bytes(os.urandom(4096))
    elif how == "truncated":
        target.write_bytes(signed[:len(signed) // 2])
    elif how == "forged":
        target.write_bytes(_forge(home, folder, valid_mac=False))
    else:
        target.write_bytes(signed)
    if how == "mode":
        target.chmod(0o644)
    elif how == "hard-link":
        os.link(target, home / "second-name")
    elif how == "symlink":
        elsewhere = home / "forged-cache"
        elsewhere.write_bytes(signed)
        elsewhere.chmod(0o600)
        target.unlink()
        target.symlink_to(elsewhere)
    elif how == "directory-mode":
        walk.chmod(0o755)
    elif how == "key":
        (walk / "key").write_bytes(b"k" * 33)
    elif how == "owner":
        os.chown(target, 65534, 65534)
    spec = _spec(project, home)
    assert str(folder / ".env") in spec.unreadable_files
    cache = walkcache.recall(spec.walk_cache)
    assert cache is not None and not cache.valid  # all of it cold, not only that record


def test_the_forgery_would_hide_the_file_if_it_were_trusted(project: Path,
                                                            home: Path) -> None:
    """The control of the test above: the same forged record, signed with the key,
    does make the walk miss the file — so it is the checks that keep it found."""
    _tree(project)
    folder = project / "lib" / "b" / "d" / "e"
    _aged()
    _spec(project, home)
    (folder / ".env").write_text("KEY=1\n")
    walk = _walk_dir(home)
    [name] = [n for n in os.listdir(walk) if n != "key"]
    (walk / name).write_bytes(_forge(home, folder, valid_mac=True))
    assert str(folder / ".env") not in _spec(project, home).unreadable_files


def test_the_after_run_check_reuses_the_records_and_sees_what_changed(
        project: Path, home: Path) -> None:
    """What a command plants in a directory the walk before took from the cache (its
    mtime set back too) is found after it, with the other directories reused."""
    _tree(project)
    folder = project / "node_modules" / "pkg" / "b" / "d" / "e"
    _aged()
    _spec(project, home)
    spec, reused = _warm(project, home)
    assert reused > 10
    before = os.lstat(folder)
    (folder / ".git").mkdir()
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    found = aftercare.suspects(spec)[1]
    assert {str(folder / ".git"), str(folder / "HEAD")} <= set(found.named)
    cache = walkcache.recall(spec.walk_cache)
    assert cache is not None and str(folder) not in cache.valid
    assert len(cache.valid) > 10  # the rest came from the cache


def test_no_cache_file_where_a_command_could_write_it(project: Path, home: Path) -> None:
    """Home a writable root (as a user may configure it): the cache directory would be
    writable by the command, so nothing is read from or written to it."""
    _tree(project)
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox:\n  writable:\n    - {home}\n")
    spec = _spec(project, home)
    assert str(home) in spec.writable
    assert not _walk_dir(home).exists()
    cache = walkcache.recall(spec.walk_cache)
    assert cache is not None and cache.directory is None


def test_the_cache_is_ours_alone_and_hidden_inside(project: Path, home: Path) -> None:
    """Its records name files inside hidden directories, and its key must stay ours."""
    _tree(project)
    _aged()
    _spec(project, home)
    walk = _walk_dir(home)
    assert str(walk) in _spec(project, home).unreadable_dirs
    assert walk.stat().st_mode & 0o777 == 0o700
    for entry in walk.iterdir():
        info = entry.lstat()
        assert info.st_mode & 0o777 == 0o600 and info.st_uid == os.geteuid()
