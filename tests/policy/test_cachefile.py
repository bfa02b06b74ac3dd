"""The one cache store (`policy/cachefile.py`): what every cache reads through it."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

from swifty_sandbox.policy import cachefile


def test_an_entry_is_read_by_its_size_not_by_the_bound(tmp_path: Path) -> None:
    """`read(n)` allocates n bytes before it reads: a 1 GiB bound must not cost 1 GiB
    for a small entry (the walk cache once spent 256 MB a run on exactly that)."""
    folder = str(tmp_path / "kind")
    assert cachefile.store(folder, b"k", b"data", max_size=1 << 30) is not None
    tracemalloc.start()
    try:
        found = cachefile.load(folder, b"k", max_size=1 << 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found is not None and found[0] == b"data"
    assert peak < 1 << 20, f"{peak} bytes allocated to read a 4-byte entry"


def test_a_hard_linked_entry_is_not_read(tmp_path: Path) -> None:
    """A second name could be a file another process keeps open for writing.
    Control: the same entry with one name is read."""
    folder = tmp_path / "kind"
    cachefile.store(str(folder), b"k", b"data", max_size=64)
    assert cachefile.load(str(folder), b"k", max_size=64) is not None
    os.link(folder / cachefile.entry_name(b"k"), tmp_path / "second-name")
    assert cachefile.load(str(folder), b"k", max_size=64) is None


def test_an_entry_over_the_bound_is_not_read_nor_kept(tmp_path: Path) -> None:
    folder = str(tmp_path / "kind")
    cachefile.store(folder, b"k", b"x" * 65, max_size=128)
    assert cachefile.load(folder, b"k", max_size=128) is not None  # control
    assert cachefile.load(folder, b"k", max_size=64) is None
    assert cachefile.store(folder, b"k", b"x" * 65, max_size=64) is None
    assert not os.path.exists(os.path.join(folder, cachefile.entry_name(b"k")))
