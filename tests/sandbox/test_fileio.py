"""The file tools' I/O (`sandbox/agents/fileio.py`) on real files: nothing but the decided
path is opened, whichever way the kernel offers (openat2, or the no-follow walk)."""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents.fileio import FileToolError, read_file, write_file
from swifty_sandbox.sandbox.fsafe import open_dir, openat2

pytestmark = pytest.mark.linux


def nothing_hidden() -> frozenset[tuple[int, int]]:
    return frozenset()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key").write_text("SECRET\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "key").write_text("decoy\n")
    return tmp_path


def swap_to_link(tree: Path) -> None:
    os.rename(tree / "dir", tree / "dir.old")
    (tree / "dir").symlink_to(tree / "secret")


def test_a_link_swapped_in_after_the_decision_is_not_followed(tree: Path) -> None:
    decided = str(tree / "dir" / "key")  # decided while `dir` was a directory
    swap_to_link(tree)
    assert Path(decided).read_text() == "SECRET\n"  # the control: open() follows it
    with pytest.raises(FileToolError, match="symbolic link"):
        read_file(decided, 100, nothing_hidden)
    with pytest.raises(FileToolError, match="symbolic link"):
        write_file(decided, b"planted", nothing_hidden)
    assert (tree / "secret" / "key").read_text() == "SECRET\n"


def test_the_walk_refuses_links_as_openat2_does(tree: Path) -> None:
    """The fallback (old kernels, a filter refusing openat2), called directly."""
    swap_to_link(tree)
    with pytest.raises(OSError) as caught:
        open_dir(str(tree / "dir"))
    assert caught.value.errno in (errno.ENOTDIR, errno.ELOOP)
    (tree / "dir.old" / "last").symlink_to(tree / "secret" / "key")
    parent = open_dir(str(tree / "dir.old"))
    try:
        with pytest.raises(OSError) as final:
            os.open("last", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=parent)
        assert final.value.errno == errno.ELOOP
    finally:
        os.close(parent)
    try:  # openat2, where the kernel has it, refuses the same link
        assert openat2(str(tree / "dir.old" / "last"), os.O_RDONLY) is None
    except OSError as e:
        assert e.errno == errno.ELOOP


def test_a_dangling_link_is_not_created_through(tree: Path) -> None:
    """Decided as a new file; a dangling link planted there since is refused."""
    (tree / "dir" / "new").symlink_to(tree / "secret" / "made")
    with pytest.raises(FileToolError, match="symbolic link"):
        write_file(str(tree / "dir" / "new"), b"data", nothing_hidden)
    assert not (tree / "secret" / "made").exists()
    with open(tree / "dir" / "new", "w"):  # the control: open(O_CREAT) creates it there
        pass
    assert (tree / "secret" / "made").exists()


def test_a_fifo_swapped_in_does_not_hang(tree: Path) -> None:
    os.mkfifo(tree / "dir" / "pipe")
    done: list[BaseException] = []

    def read() -> None:
        try:
            read_file(str(tree / "dir" / "pipe"), 100, nothing_hidden)
        except BaseException as e:  # handed to the test thread
            done.append(e)

    worker = threading.Thread(target=read, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - started < 5
    assert isinstance(done[0], FileToolError) and "FIFO" in str(done[0])
    with pytest.raises(FileToolError, match="FIFO"):
        write_file(str(tree / "dir" / "pipe"), b"x", nothing_hidden)


def test_writes_keep_the_mode_make_directories_and_refuse_hard_links(tree: Path) -> None:
    target = tree / "dir" / "key"
    target.chmod(0o600)
    write_file(str(target), b"new", nothing_hidden)
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o600
    write_file(str(tree / "dir" / "a" / "b" / "c.txt"), b"deep", nothing_hidden)
    assert (tree / "dir" / "a" / "b" / "c.txt").read_bytes() == b"deep"
    os.link(tree / "secret" / "key", tree / "dir" / "other")
    with pytest.raises(FileToolError, match="hard links"):
        write_file(str(tree / "dir" / "other"), b"planted", nothing_hidden)
    assert (tree / "secret" / "key").read_text() == "SECRET\n"
    info = (tree / "secret" / "key").stat()
    with pytest.raises(FileToolError, match="hard link"):
        read_file(str(tree / "dir" / "other"), 100,
                  lambda: frozenset({(info.st_dev, info.st_ino)}))
    with pytest.raises(FileToolError, match="hard link"):
        read_file(str(tree / "dir" / "other"), 100, lambda: None)  # unknown: refused
    assert read_file(str(tree / "dir" / "other"), 100, nothing_hidden) == b"SECRET\n"
    assert not [n for n in os.listdir(tree / "dir") if ".swifty-" in n]  # no temp left


def test_a_name_of_many_bytes_is_written(tree: Path) -> None:
    """63 four-byte characters (252 bytes, a legal name): the temporary file beside it
    takes 64 bytes of it, not 64 characters, which were past NAME_MAX."""
    target = tree / "dir" / ("\U0001d54f" * 63)
    write_file(str(target), b"new", nothing_hidden)
    assert target.read_bytes() == b"new"
    assert not [n for n in os.listdir(tree / "dir") if ".swifty-" in n]
