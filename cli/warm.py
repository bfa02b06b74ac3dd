"""The warm fork server behind `cli/entry.py`: one per process context, started by the
first call that found none, gone after `IDLE_SECONDS` without calls (or when its socket
is replaced or removed). At most `MAX_SERVERS` per user: one that starts removes the
sockets of the least recently used beyond that, and those leave.

It imports everything a call needs, then forks a worker per connection. The worker
takes the caller's standard descriptors, working directory and environment, and runs
the click CLI exactly as the caller would have: every policy file is read, the spec
compiled and the project checked inside the call. The server itself never reads a
policy file; what it keeps from one call for the next is only the rule files' text the
workers parsed, parsed again by the server, and the trusted patterns they compiled
(the project-anchored ones), compiled again (`_learn`: pure functions of that text, so
a later call that reads other text parses it), and the walk states its workers hand
back, trusted only as far as its tree watcher saw nothing change (`_HUB`,
sandbox/spec/treewatch.py). Besides, which pages of its memory they wrote: a hint of
what to copy ahead into the next spares (`_prefault`), which changes no byte.

`python -m swifty_sandbox.cli.warm` (run with -P, in its own session, stdio on
/dev/null).
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import fcntl
import gc
import io
import json
import os
import select
import signal
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from swifty_sandbox import parts
from swifty_sandbox.sandbox.linux import cgroups
from swifty_sandbox.sandbox.spec import treewatch, walkcache

from .entry import (
    ACCEPTED,
    CHALLENGE,
    EXITED,
    HELLO,
    MAX_HEADER,
    PROTOCOL,
    REFUSED,
    SIGNAL,
    alive,
    context,
    flags,
    import_path,
    named,
    nonce,
    open_run_dir,
    peer,
    recv_exact,
    server_env,
    socket_path,
    unfiltered,
)

IDLE_SECONDS = 120.0
# A server holds ~20 MB of its own (its spare worker shares the rest but the ~5-10 MB
# it copies ahead, `_prefault`); a user's contexts are few (an agent's, a terminal's):
# the oldest beyond these leave.
MAX_SERVERS = 3
_FORWARDED = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
_MAX_REPORT = 1 << 20  # bytes of one worker's report (rule files are ≤ 256 KiB each)
# The pages the last worker of each command wrote of the memory it shares with the
# server (`_written`): a copy on write each, ~3 µs, about a thousand per call. Each
# spare copies them before it accepts (`_prefault`), off the caller's path.
_PAGES: dict[str, tuple[tuple[int, int], ...]] = {}
_MAX_RANGES = 4096  # runs of pages per command in a report
_CHUNK = 64 << 10  # bytes copied between two looks for a call (~50 µs)
_PAGES_EVERY = 8
_CALLS = 0  # calls taken by this server's workers, as its spare knew it at its fork
_MADV_POPULATE_WRITE = 23  # Linux 5.14: fault pages in writable, their contents unchanged
# A pagemap entry's top byte → 1 where the page is present (bit 63) and this process's
# alone (bit 56), else 0.
_ALONE = bytes(int(b & 0x81 == 0x81) for b in range(256))
# The tree watcher (sandbox/spec/treewatch.py), asked by each worker at call time over a
# socket pair made before its fork; it holds the walk states the workers hand back.
_HUB = treewatch.Hub(walkcache.adopt)


# Not imported ahead: what `run`, `check`, `hook` and `compile` never import (the MCP
# SDK), and what runs on import.
_SKIP = frozenset({"__main__", "mcp", "mcp_server", "warm"})


def warm_up() -> None:
    """Import every module of the package and what any served command imports on its
    way (the later imports in functions then find the module loaded)."""
    import _sha256  # type: ignore[import-not-found]  # noqa: F401
    import base64  # noqa: F401
    import hashlib  # noqa: F401
    import importlib
    import importlib.resources.readers
    import pwd  # noqa: F401
    import zipfile  # noqa: F401

    import bashlex  # noqa: F401  (the second shell parser, imported when the first errs)
    import pathspec
    import pathspec.patterns.gitignore  # noqa: F401
    import pyseccomp  # noqa: F401
    import yaml
    import yaml.cyaml  # noqa: F401

    for name in parts.modules():  # every module of every package, derived
        if name.rpartition(".")[2] not in _SKIP:
            importlib.import_module(name)


def prepare() -> None:
    """Compute ahead what depends on this package's own data only (which the server's
    code stamp fixes) and on the server's own variables (HOME): the built-in program
    table and syscall sets, the shell parser, the built-in profiles and their patterns
    anchored at HOME (`engine.prepare_builtin`), the BPF and variable globs of each
    built-in profile (caches keyed by the set itself, so a worker with another profile
    or settings builds its own); and where this process may make cgroups, which a
    long-lived `serve` also looks up once. Nothing that reads a user's or project's
    file."""
    from pathlib import Path

    # Named here, imported by warm_up: after the code stamp, which must see every import.
    from swifty_sandbox.policy.engine import prepare_builtin
    from swifty_sandbox.policy.profile import load_profile
    from swifty_sandbox.policy.programs import builtin_table
    from swifty_sandbox.policy.rules import compile_glob, prime_trusted
    from swifty_sandbox.policy.shell import parse
    from swifty_sandbox.sandbox.linux.cgroups import places
    from swifty_sandbox.sandbox.linux.observe import split
    from swifty_sandbox.sandbox.linux.seccomp import export
    from swifty_sandbox.sandbox.spec.compiler import prepare_env_globs
    from swifty_sandbox.sandbox.spec.syscalls import syscall_rules

    builtin_table()
    parse("true")
    # The first glob compiled in a process makes `re`'s composite flag (an enum
    # member, milliseconds) and loads pathspec's pattern code: once here.
    compile_glob("warm/**/*.up", "warm")
    prepare_builtin(Path(os.environ["HOME"]))  # HOME: one of the server's own variables
    prime_trusted()  # their regexes (and fnmatch's), compiled on a worker's first match
    with contextlib.suppress(OSError):
        places()
    for name in ("default", "strict", "permissive"):
        with contextlib.suppress(Exception):  # best effort: a worker builds what is missing
            profile = load_profile(name, Path("/"))
            export(profile.seccomp)
            # the observer's filters under either launcher (bwrap's hidden directories
            # watched by their placeholders, or not)
            for bwrap, listings in ((True, False), (True, True), (False, True)):
                split(syscall_rules(profile.seccomp), bwrap=bwrap, listings=listings)
            prepare_env_globs(profile)


def code_stamp() -> tuple[object, ...]:
    """This package's code and data files as they are now, and the folders of the
    import path (installing, upgrading or removing a dependency adds or renames files
    there). A server whose code changed refuses calls and leaves. Checked on every
    call, so it stays cheap: stat calls, no reading."""
    stamp: list[object] = []
    for folder in (f for folders in parts.packages().values() for f in folders):
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    # A directory too: a subpackage added since the server started.
                    if entry.name.endswith((".py", ".yaml", ".json", ".sbpl")) or (
                            entry.name != "__pycache__" and entry.is_dir()):
                        info = entry.stat()
                        stamp.append((entry.path, info.st_ino, info.st_size,
                                      info.st_mtime_ns, info.st_ctime_ns))
        except OSError:
            stamp.append((folder, None))
    for folder in import_path():
        try:
            info = os.stat(folder)
            stamp.append((folder, info.st_ino, info.st_mtime_ns, info.st_ctime_ns))
        except OSError:
            stamp.append((folder, None))
    return tuple(stamp)


def serve() -> int:
    path = socket_path()
    if path is None or not os.path.isdir(os.environ["HOME"]):
        return 1  # a home removed while we started (a test's): never made again
    if not unfiltered():  # no caller could be proven to have exactly our filters
        return 1
    folder = open_run_dir(os.path.dirname(path), create=True)
    if folder is None:
        return 1
    name = os.path.basename(path)
    try:
        lock = os.open(name[:-len(".sock")] + ".lock",
                       os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                       dir_fd=folder)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another server of this context runs or starts
        return 0
    stamp = code_stamp()
    warm_up()
    if code_stamp() != stamp:  # the code changed while it was imported
        return 1
    prepare()
    own = context("self")
    mine = {"flags": flags(), "path": import_path(), "env": server_env(os.environ)}
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    where = f"/proc/self/fd/{folder}/{name}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(where)  # a stale socket of a server that died (we hold the lock)
    old = os.umask(0o177)
    try:
        server.bind(where)
    finally:
        os.umask(old)
    server.listen(64)
    bound = os.stat(where, follow_symlinks=False).st_ino
    _evict(folder, name)
    gc.freeze()  # workers share the imported objects' pages instead of copying them
    # One worker waits in accept() ahead of each call, so no fork is on a call's path;
    # it tells us when it took a call (b"a": fork the next) or saw the code change
    # (b"q"). A connection it refuses is no call: it waits for the next one itself.
    notify_read, notify_write = os.pipe2(os.O_CLOEXEC)
    # Each worker tells us the rule files it parsed (`_report`), so that the next
    # workers inherit them parsed (`rulefiles.learn`).
    learned, report = socket.socketpair(socket.AF_UNIX,
                                        socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
    learned.setblocking(False)
    original: dict[int, Any] = {int(s): signal.getsignal(s) for s in _FORWARDED}
    for signum, handler in original.items():  # a signal ends the server cleanly (the
        if handler is not signal.SIG_IGN:  # spare with it); workers get the originals
            signal.signal(signum, _leave)
    try:
        _loop(server, where, bound, notify_read, (notify_write, report), learned,
              (lock, folder, notify_read, learned.fileno()), own, mine, stamp, original)
    except SystemExit:
        pass
    finally:
        with contextlib.suppress(OSError):  # the spare's accept() fails and it leaves;
            server.shutdown(socket.SHUT_RDWR)  # one that already took a call finishes it
        server.close()
        with contextlib.suppress(OSError):
            if os.stat(where, follow_symlinks=False).st_ino == bound:
                os.unlink(where)
    return 0


def _evict(folder: int, name: str) -> None:
    """Remove the sockets of all but the `MAX_SERVERS` - 1 most recently used other
    servers (a socket's time is its last call's): each sees its socket gone and leaves
    (a call it runs finishes). A stale socket goes the same way."""
    others = []
    with os.scandir(f"/proc/self/fd/{folder}") as entries:
        for entry in entries:
            if entry.name.endswith(".sock") and entry.name != name:
                with contextlib.suppress(OSError):
                    others.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    for _, old in sorted(others, reverse=True)[MAX_SERVERS - 1:]:
        with contextlib.suppress(OSError):
            os.unlink(old, dir_fd=folder)


def _leave(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _loop(server: socket.socket, where: str, bound: int, notify_read: int,
          notify: tuple[int, socket.socket], learned: socket.socket, close: tuple[int, ...],
          own: tuple[object, ...], mine: dict[str, object], stamp: tuple[object, ...],
          original: dict[int, Any]) -> None:
    global _CALLS
    workers: set[int] = set()
    spare = _spare(server, notify, close, own, mine, stamp, original, None)
    workers.add(spare)
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([notify_read, learned.fileno(), *_HUB.fds()], [], [],
                                    5.0)
        _reap(workers)
        if learned.fileno() in ready:
            _learn(learned)
        for fd in ready:
            if fd not in (notify_read, learned.fileno()):
                _HUB.ready(fd)
        if notify_read in ready:
            message = os.read(notify_read, 64)
            if b"q" in message:
                break
            _CALLS += message.count(b"a")
            last = time.monotonic()
            with contextlib.suppress(OSError):
                os.utime(where)  # used now: the last to be evicted
            # the new spare copies its pages once this call's worker is done
            spare = _spare(server, notify, close, own, mine, stamp, original, spare)
            workers.add(spare)
        try:
            if os.stat(where, follow_symlinks=False).st_ino != bound:
                break
        except OSError:
            break
        if workers == {spare} and time.monotonic() - last > IDLE_SECONDS:
            break



def _learn(learned: socket.socket) -> None:
    """Parse the rule files the workers reported (what they parsed themselves), and
    compile the trusted patterns they compiled on use (the project-anchored ones), so
    the workers forked from now on inherit them made. A report names the whole input of
    pure functions (`rulefiles.learn`, `rules.learn_patterns`): whatever it says, it can
    only cost us parsing and compiling."""
    # imported by warm_up, after the stamp
    from swifty_sandbox.policy.rulefiles import learn
    from swifty_sandbox.policy.rules import learn_patterns

    for _ in range(16):
        try:
            data = learned.recv(_MAX_REPORT)
        except OSError:  # none left
            return
        with contextlib.suppress(ValueError, RecursionError):
            report = json.loads(data)
            if isinstance(report, dict):
                learn(report.get("rules"))
                learn_patterns(report.get("patterns"))
                _learn_pages(report.get("pages"))


def _learn_pages(pages: object) -> None:
    """The runs of pages a worker reported writing, kept per command (the latest). A
    forged report can only make spares copy pages of their own memory sooner."""
    if not isinstance(pages, list) or len(pages) != 2 or not isinstance(pages[0], str):
        return
    runs = pages[1]
    if isinstance(runs, list) and len(runs) <= _MAX_RANGES and all(
            isinstance(r, list) and len(r) == 2 and all(type(n) is int for n in r)
            and 0 <= r[0] < r[1] for r in runs):
        command = pages[0][:16]
        if command in _PAGES or len(_PAGES) < 8:  # the served commands are four
            _PAGES[command] = tuple((start, end) for start, end in runs)


def _report(report: socket.socket, command: str) -> None:
    """Tell the server the rule files this call parsed and the trusted patterns it
    compiled (it had not), and the pages it wrote (`_written`); never waits."""
    # as in _learn
    from swifty_sandbox.policy.rulefiles import fresh_sources
    from swifty_sandbox.policy.rules import late_patterns

    # The pages (1.5-5 ms of reading /proc, while the agent starts its next call) when
    # the server has none for this command, then every `_PAGES_EVERY` calls: they are
    # about the same from one call to the next.
    fresh, late = fresh_sources(), late_patterns()
    pages = command not in _PAGES or _CALLS % _PAGES_EVERY == 0
    if fresh or late or pages:
        data = json.dumps({"rules": fresh, "patterns": late, "pages": [
            command, _written()[:_MAX_RANGES]] if pages else None}).encode()
        if len(data) <= _MAX_REPORT:
            with contextlib.suppress(OSError):
                report.send(data, socket.MSG_DONTWAIT)


def _mappings() -> list[tuple[int, int]]:
    """This process's private writable mappings (where a fork's pages are copied on
    write), but its stack."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/maps", "rb") as f:
        for line in f.read().splitlines():
            fields = line.split()
            if fields[1] == b"rw-p" and not (len(fields) > 5 and fields[5].startswith(b"[")
                                             and fields[5] != b"[heap]"):
                start, end = (int(n, 16) for n in fields[0].split(b"-"))
                if end - start <= 1 << 30:  # not a reservation of address space
                    found.append((start, end))
    return found


def _written() -> list[list[int]]:
    """The runs of pages of `_mappings` this process holds alone (PM_MMAP_EXCLUSIVE in
    /proc/self/pagemap: copied on write or new since the fork), as [start, end)."""
    page, runs = os.sysconf("SC_PAGE_SIZE"), []
    top = 7 if sys.byteorder == "little" else 0  # the byte of an entry's bits 56-63
    try:
        with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
            for start, end in _mappings():
                entries = os.pread(pagemap.fileno(), (end - start) // page * 8,
                                   start // page * 8)
                alone = entries[top::8].translate(_ALONE)
                index = alone.find(1)
                while index >= 0:
                    stop = alone.find(0, index)
                    stop = len(alone) if stop < 0 else stop
                    runs.append([start + index * page, start + stop * page])
                    index = alone.find(1, stop)
    except OSError:
        return []
    return runs


def _when_idle(server: socket.socket, busy: int | None) -> None:
    """`_prefault` once the worker that took the last call (`busy`) has ended, so that
    its CPU is not shared with the call; a call that comes first is taken at once."""
    if busy is not None:
        try:
            pidfd = os.pidfd_open(busy)
        except OSError:  # ended already
            pidfd = -1
        if pidfd >= 0:
            try:
                ready, _, _ = select.select([server.fileno(), pidfd], [], [])
            finally:
                os.close(pidfd)
            if server.fileno() in ready:
                return
    _prefault(lambda: bool(select.select([server], [], [], 0)[0]))


def _prefault(called: Callable[[], bool] = lambda: False) -> None:
    """Copy now, in a spare before it accepts, the pages the last calls wrote
    (`_PAGES`), where they lie in this process's private writable mappings; the
    contents stay as they are. A chunk at a time, until a call comes (`called`): the
    rest is copied on use, as it was. Best effort: a kernel without
    MADV_POPULATE_WRITE leaves them all to be copied on use."""
    import ctypes

    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    mappings = _mappings()
    for start, end in sorted({run for runs in _PAGES.values() for run in runs}):
        for low, high in mappings:
            for at in range(max(start, low), min(end, high), _CHUNK):
                if called():
                    return
                if madvise(at, min(at + _CHUNK, end, high) - at, _MADV_POPULATE_WRITE) != 0 \
                        and ctypes.get_errno() == errno.EINVAL:
                    return  # not this kernel's


def _spare(server: socket.socket, notifying: tuple[int, socket.socket],
           close: tuple[int, ...], own: tuple[object, ...], mine: dict[str, object],
           stamp: tuple[object, ...], original: dict[int, Any], busy: int | None) -> int:
    """Fork a worker that takes the next connection: only a process of our uid and
    context (see `context`), while the code is the server's own. Until it takes one it
    dies with the server (even a killed one)."""
    notify, report = notifying
    parent = os.getpid()
    channel = _HUB.channel()
    child = os.fork()
    if child:
        channel.close()
        return child
    try:
        _HUB.in_worker(channel)
        for signum, handler in original.items():
            signal.signal(signum, handler)
        _die_with_parent(signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(0)
        for fd in close:
            os.close(fd)
        _when_idle(server, busy)
        while True:
            conn, _ = server.accept()
            if code_stamp() != stamp:
                os.write(notify, b"q")  # the caller sees the connection closed and runs
                os._exit(0)  # the call itself
            found = peer(conn)
            if found is not None:
                pid, pidfd = found
                try:
                    same = context(pid) == own and alive(pidfd)
                except OSError:
                    same = False
                if same:
                    _die_with_parent(0)  # a call outlives a server that leaves
                    os.write(notify, b"a")
                    server.close()
                    os.close(notify)
                    _work(conn, mine, pid, pidfd, report)  # never returns
                os.close(pidfd)
            conn.close()  # not ours to serve: the next one
    finally:
        os._exit(0)


def _die_with_parent(signum: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signum, 0, 0, 0)  # PR_SET_PDEATHSIG


def _reap(workers: set[int]) -> None:
    for pid in list(workers):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            workers.discard(pid)


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    """The caller's header and its four descriptors (stdin, stdout, stderr, cwd)."""
    fds: list[int] = []
    data = b""
    size = struct.calcsize("4i")
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        if len(data) >= 4 and struct.unpack("!I", data[:4])[0] > MAX_HEADER:
            return None
        chunk, ancillary, _flags, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(size))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(struct.unpack(f"{len(payload) // 4}i", payload))
        if not chunk:
            break
        data += chunk
    try:
        length = struct.unpack("!I", data[:4])[0]
        header = json.loads(data[4:4 + length])
    except (struct.error, ValueError):
        header = None
    if not isinstance(header, dict) or len(fds) != 4:
        for fd in fds:
            os.close(fd)
        return None
    return header, fds


def _handshake(conn: socket.socket, pid: int, pidfd: int) -> tuple[int, str] | None:
    """Name the caller's descriptor it says (we may read its /proc entry: it is in
    our Landlock domain or one below it), then give it one of ours to name in its
    header (it may read ours: in our domain or above; so in exactly ours). Our
    descriptor and its name, or None."""
    hello = recv_exact(conn, 5)
    if len(hello) != 5 or hello[:1] != HELLO:
        return None
    seen = os.fsencode(named(pid, struct.unpack("!i", hello[1:])[0]))
    if not seen or not alive(pidfd):  # read while it lived: its own entry
        return None
    fd, name = nonce()
    payload = seen + b"\0" + f"{os.getpid()} {fd}".encode()
    conn.sendall(CHALLENGE + struct.pack("!H", len(payload)) + payload)
    return fd, name


def _valid(header: dict[str, object], mine: dict[str, object], proof: str) -> bool:
    """A call this server may take: its interpreter flags, import path and the
    variables the server is for (`entry.SERVER_VARS`) are the server's own, and it named
    our descriptor (`_handshake`)."""
    argv, env = header.get("argv"), header.get("env")
    return (header.get("protocol") == PROTOCOL and header.get("proof") == proof
            and header.get("flags") == mine["flags"]
            and header.get("path") == mine["path"]
            and isinstance(argv, list) and all(isinstance(a, str) for a in argv)
            and isinstance(env, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
            and server_env(env) == mine["env"])


def _work(conn: socket.socket, mine: dict[str, object], pid: int, pidfd: int,
          report: socket.socket) -> None:
    """The worker: prove each side to the other, become the caller, run the CLI,
    report its exit status."""
    code = 1
    try:
        conn.settimeout(10.0)
        proven = _handshake(conn, pid, pidfd)
        os.close(pidfd)
        if proven is None:
            conn.sendall(REFUSED)
            os._exit(0)
        received = _receive(conn)
        os.close(proven[0])
        if (received is None or not _valid(received[0], mine, proven[1])
                or not stat.S_ISDIR(os.fstat(received[1][3]).st_mode)):
            conn.sendall(REFUSED)
            os._exit(0)
        header, fds = received
        conn.sendall(ACCEPTED)
        conn.settimeout(None)
    except BaseException:
        os._exit(0)
    try:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.fchdir(fds[3])
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.environ.clear()
        env = header["env"]
        assert isinstance(env, dict)  # _valid: strings to strings
        os.environ.update(env)
        import tempfile

        tempfile.tempdir = None  # found again from this caller's TMPDIR, if ever asked
        argv: list[str] = header["argv"]  # type: ignore[assignment]
        sys.argv = ["swifty-sandbox", *argv]
        _reopen_stdio()
        finished = threading.Event()
        # Not `threading.Thread`, whose start waits for the thread to run: this one
        # needs no join (the worker ends with os._exit), only to be there.
        _thread.start_new_thread(_watch, (conn, finished))
        cgroups.remove_later()  # a root command's cgroup: removed once we answered
        code = _run_cli(argv)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        finished.set()
        conn.sendall(EXITED + struct.pack("!i", code))
        conn.close()  # the caller is done, and its outputs end here (a reader waits
        for fd in (0, 1, 2):  # for their EOF): what follows costs it nothing
            os.close(fd)
        cgroups.remove_pending()
        _report(report, argv[0] if argv else "")
        walkcache.hand_back()  # the caller has its answer: off its path
    finally:
        os._exit(0)


def _run_cli(argv: list[str]) -> int:
    """The click CLI's exit status, as the interpreter would make it of SystemExit."""
    from .main import main  # imported by warm_up, after the code stamp (see prepare)

    try:
        main(args=argv, prog_name="swifty-sandbox")
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code & 0xFF
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1
    return 0


def _reopen_stdio() -> None:
    """sys.std* on the caller's descriptors, buffered as the interpreter would have
    made them (stdout by line on a terminal only, stderr by line always)."""
    stdin, stdout, stderr = sys.stdin, sys.stdout, sys.stderr
    raw = [open(fd, mode, closefd=False)  # noqa: SIM115  (they live on as sys.std*)
           for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb"))]
    sys.stdin = io.TextIOWrapper(raw[0], encoding=stdin.encoding, errors=stdin.errors)
    sys.stdout = io.TextIOWrapper(raw[1], encoding=stdout.encoding, errors=stdout.errors,
                                  line_buffering=os.isatty(1))
    sys.stderr = io.TextIOWrapper(raw[2], encoding=stderr.encoding, errors=stderr.errors,
                                  line_buffering=True)


def _watch(conn: socket.socket, finished: threading.Event) -> None:
    """The caller's signals, forwarded to the main thread (where the CLI's handlers
    run); the caller gone (killed, its socket closed) is a hang-up."""
    main = threading.main_thread().ident
    assert main is not None
    pending = b""
    while True:
        try:
            chunk = conn.recv(64)
        except OSError:
            chunk = b""
        if finished.is_set():
            return
        if not chunk:
            signal.pthread_kill(main, signal.SIGHUP)
            return
        pending += chunk
        while len(pending) >= 2:
            kind, signum, pending = pending[:1], pending[1], pending[2:]
            if kind == SIGNAL and signum in _FORWARDED:
                signal.pthread_kill(main, signum)


if __name__ == "__main__":
    sys.exit(serve())
