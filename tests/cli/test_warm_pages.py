"""What a warm worker copies of its server's memory: the pages the last calls wrote are
copied by the spare before it accepts (`warm._prefault`), not one fault at a time on
the caller's path; the contents stay what they were."""

from __future__ import annotations

import ctypes
import json
import os
import resource
from collections.abc import Callable

import pytest

from swifty_sandbox.cli import warm

PAGE = os.sysconf("SC_PAGE_SIZE")
PAGES = 64


def _in_child(work: Callable[[], object]) -> object:
    """`work()` in a forked child (its memory shared with ours, copied on write)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _buffer() -> tuple[bytearray, int, int]:
    """A buffer of ours, its pages present (written here), and the whole pages in it."""
    buffer = bytearray(b"\x01" * ((PAGES + 2) * PAGE))
    address = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
    first = -(-address // PAGE) * PAGE
    return buffer, first, first + PAGES * PAGE


def _faults_writing(buffer: bytearray, start: int, end: int, address: int) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for at in range(start - address, end - address, PAGE):
        buffer[at] = 2
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.fixture
def pages(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[tuple[int, int], ...]]:
    learned: dict[str, tuple[tuple[int, int], ...]] = {}
    monkeypatch.setattr(warm, "_PAGES", learned)
    return learned


def test_a_spare_copies_what_the_last_call_wrote(
        pages: dict[str, tuple[tuple[int, int], ...]]) -> None:
    buffer, start, end = _buffer()
    address = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))

    def call() -> object:  # a worker: writes the pages, then reports them
        _faults_writing(buffer, start, end, address)
        return warm._written()

    written = _in_child(call)
    assert isinstance(written, list)
    covered = sum(max(0, min(high, end) - max(low, start)) for low, high in written)
    assert covered == end - start  # every page it wrote, reported
    warm._learn_pages(["run", written])
    assert pages["run"]

    def spare(prefault: bool) -> object:
        if prefault:
            warm._prefault()
        faults = _faults_writing(buffer, start, end, address)
        return [faults, bytes(buffer[start - address:end - address:PAGE]) == b"\x02" * PAGES]

    control = _in_child(lambda: spare(False))
    assert isinstance(control, list) and control[0] >= PAGES  # one copy per page on use
    primed = _in_child(lambda: spare(True))
    assert isinstance(primed, list) and primed[0] < PAGES // 8 and primed[1]


def test_the_pages_are_copied_with_their_contents(
        pages: dict[str, tuple[tuple[int, int], ...]]) -> None:
    buffer, start, end = _buffer()
    address = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
    buffer[start - address:end - address] = bytes(range(256)) * (PAGES * PAGE // 256)
    pages["run"] = ((start, end),)

    def spare() -> object:
        warm._prefault()
        return bytes(buffer[start - address:end - address]).hex()

    assert _in_child(spare) == bytes(buffer[start - address:end - address]).hex()


@pytest.mark.parametrize("report", [
    None, "run", ["run"], ["run", "x"], [1, [[0, 4096]]], ["run", [[4096, 4096]]],
    ["run", [[-4096, 0]]], ["run", [[0, 4096.0]]], ["run", [[0, True]]],
    ["run", [[0, 4096, 8192]]], ["run", [[0, 4096]] * (warm._MAX_RANGES + 1)]])
def test_a_report_of_pages_not_in_its_shape_is_dropped(
        pages: dict[str, tuple[tuple[int, int], ...]], report: object) -> None:
    warm._learn_pages(report)
    assert pages == {}
    warm._learn_pages(["run", [[0, 4096], [8192, 16384]]])
    assert pages == {"run": ((0, 4096), (8192, 16384))}


def test_the_pages_are_kept_for_a_few_commands(
        pages: dict[str, tuple[tuple[int, int], ...]]) -> None:
    for index in range(20):
        warm._learn_pages([f"command{index}", [[0, 4096]]])
    assert len(pages) == 8
    warm._learn_pages(["command0", [[8192, 12288]]])
    assert pages["command0"] == ((8192, 12288),)


def test_a_call_that_comes_stops_the_copy(
        pages: dict[str, tuple[tuple[int, int], ...]]) -> None:
    """The spare looks for a call between chunks: one that has come is served at once,
    its pages copied on use as before."""
    buffer, start, end = _buffer()
    address = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
    pages["run"] = ((start, end),)

    def spare() -> object:
        warm._prefault(lambda: True)
        return _faults_writing(buffer, start, end, address)

    faults = _in_child(spare)
    assert isinstance(faults, int) and faults >= PAGES


def test_a_worker_reads_its_pages_when_the_server_has_none_then_now_and_then(
        pages: dict[str, tuple[tuple[int, int], ...]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def reported(calls: int) -> object:
        monkeypatch.setattr(warm, "_CALLS", calls)
        mine, server = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        with mine, server:
            server.setblocking(False)
            warm._report(mine, "run")
            try:
                return json.loads(server.recv(warm._MAX_REPORT)).get("pages")
            except BlockingIOError:  # nothing to tell
                return None

    first = reported(3)
    assert isinstance(first, list) and first[0] == "run" and first[1]
    pages["run"] = ((0, PAGE),)
    assert reported(3) is None  # known: not read again on this call
    again = reported(warm._PAGES_EVERY * 2)
    assert isinstance(again, list) and again[1]
