"""What a confined command asked for and was refused, seen by the kernel: a seccomp
user-notification filter that only *observes* (every notification is answered
`CONTINUE`, so the kernel then decides as if the filter were not there: it never changes
what is allowed).

The filter is installed on a thread of ours that exists only to spawn the launcher
(`spawn`): the thread sets `no_new_privs`, loads the filter with
`SECCOMP_FILTER_FLAG_NEW_LISTENER` and starts the launcher, which inherits it (seccomp
filters are per task and copied on fork), and with it bwrap or the Landlock launcher and
every process of the command. No Python runs in the child (vfork stays) and no process
is added. The listener is served by one thread (`Observer`) until the run ends; every
notified call waits for it, so it does the least it can per call (read the path, reply,
keep the raw bytes) and judges later, in batches.

What it notifies: opens for writing (masked compares on the flags), the calls that
create, remove or rename a name, and `connect`; and opens of a directory (`O_DIRECTORY`:
a listing, `ls ~/.ssh`) only where the hidden directories are not watched another way
(`listings`: under bwrap each is bound from a placeholder whose open inotify sees,
`placeholders.py`, and Python's imports and pytest open directories by the hundred).
Not every open: the filter cannot tell reads apart by path, and notifying each one cost
50 % on a C build (`benchmarks/violations.py`); a hidden file read by name is seen by
its placeholder, or else found in what the command printed, labelled so and given no
fix (`violations.from_output`).

What the supervisor reads (the path, the address) comes from the process's memory
while the call waits; another thread of the command could change it before the kernel
reads it. So a report names what the call named when it was seen: an attempt the
command made (a call, never a text it printed), judged against the spec
(`violations.classify`).

A syscall the profile refuses (its EPERM rows) is refused by the kernel before any
notification (ERRNO takes precedence over USER_NOTIF). To report those, the rows this
launch's set-up never makes (`refused_rows`) move from the profile's filter into this
one as notifications, and a call this filter notifies but does not observe has one
answer: the same EPERM, from a separate branch that never sends CONTINUE (no row's
call is an observed one: `refused_rows` leaves those in the profile). If this process
dies or stops serving, the kernel fails every notified call with ENOSYS: a refusal
too. The profile's filter loses those rows only once this one is loaded
(`Observer.spawn` rewrites its memfd then); an observer that is off, or that could not
load, leaves the profile's filter as it was. bwrap's own set-up makes some of the
refused calls (`clone` with namespace flags, `unshare`, `mount`, `umount2`,
`pivot_root`, AF_UNIX and AF_NETLINK sockets) under this filter, so those rows stay in
its kernel filter, refused and unreported; under the Landlock launcher every EPERM row
is reported but AF_UNIX sockets' (`_QUIET_FAMILIES`).

Otherwise this filter cannot loosen the profile's: KILL and ERRNO win over USER_NOTIF,
which wins over ALLOW.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import platform
import stat
import struct
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from swifty_sandbox.policy.profile import _builtin_syscall_sets

from ..run.violations import Areas, Seen, Violation, classify, considered
from ..spec.syscalls import EPERM, FAMILIES, IOCTLS, SOCK_TYPES, SyscallRule
from .seccomp import SeccompUnavailable, _import_pyseccomp, export_rows, filter_of

if TYPE_CHECKING:
    from ..backend import Launch

T = TypeVar("T")

_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
# ioctl numbers (include/uapi/linux/seccomp.h): RECV and SEND are _IOWR('!', 0|1, …)
_NOTIF = struct.Struct("=QIIiIQ6Q")  # id, pid, flags, nr, arch, ip, args[6]
_RESP = struct.Struct("=QqiI")  # id, val, error, flags
_IOCTL_RECV = 0xC0000000 | (_NOTIF.size << 16) | (ord("!") << 8) | 0
_IOCTL_SEND = 0xC0000000 | (_RESP.size << 16) | (ord("!") << 8) | 1
_IOCTL_ID_VALID = 0x40000000 | (8 << 16) | (ord("!") << 8) | 2
_IOCTL_SET_FLAGS = 0x40000000 | (8 << 16) | (ord("!") << 8) | 4
_SYNC_WAKE_UP = 1  # SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6)
_CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE
_AT_FDCWD = -100
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC
_PATH_MAX = 4096
_PAGE = 4096
_FIRST = 256  # bytes of a path read first
_NO_FLAGS, _HOW_FLAGS = -1, -2  # no flags argument; openat2's, in its struct

# syscall → (operation, (index of the directory descriptor or None, index of the path))
# per path argument. "open" is decided by its flags (read or write).
_CALLS: dict[str, tuple[str, tuple[tuple[int | None, int], ...]]] = {
    "open": ("open", ((None, 0),)), "openat": ("open", ((0, 1),)),
    "openat2": ("open", ((0, 1),)), "creat": ("create", ((None, 0),)),
    "mkdir": ("create", ((None, 0),)), "mkdirat": ("create", ((0, 1),)),
    "mknod": ("create", ((None, 0),)), "mknodat": ("create", ((0, 1),)),
    "symlink": ("create", ((None, 1),)), "symlinkat": ("create", ((1, 2),)),
    "link": ("create", ((None, 1),)), "linkat": ("create", ((2, 3),)),
    "unlink": ("remove", ((None, 0),)), "unlinkat": ("remove", ((0, 1),)),
    "rmdir": ("remove", ((None, 0),)),
    "rename": ("rename", ((None, 0), (None, 1))),
    "renameat": ("rename", ((0, 1), (2, 3))), "renameat2": ("rename", ((0, 1), (2, 3))),
    "truncate": ("write", ((None, 0),)),
    "connect": ("connect", ()),
}
_FLAGS_ARG = {"open": 1, "openat": 2}
# The calls' numbers (Linux's ABI; a test holds them to libseccomp's), so that a run
# whose filter comes from the BPF cache never imports pyseccomp (start-up time).
_NUMBERS = {
    "x86_64": {"open": 2, "openat": 257, "openat2": 437, "creat": 85, "mkdir": 83,
               "mkdirat": 258, "mknod": 133, "mknodat": 259, "symlink": 88,
               "symlinkat": 266, "link": 86, "linkat": 265, "unlink": 87, "unlinkat": 263,
               "rmdir": 84, "rename": 82, "renameat": 264, "renameat2": 316,
               "truncate": 76, "connect": 42},
    "aarch64": {"openat": 56, "openat2": 437, "mknodat": 33, "mkdirat": 34,
                "unlinkat": 35, "symlinkat": 36, "linkat": 37, "renameat": 38,
                "renameat2": 276, "truncate": 45, "connect": 203},
}
# (mask, value) of the open flags notified, any one: a write, a truncation or a create
# — but not O_CREAT|O_EXCL, a fresh temporary file (mkstemp: two of a compiler's five
# notified calls per file, the most common create there is and almost always in /tmp);
# and, where hidden directories are not watched otherwise, O_DIRECTORY, a listing
# (`ls ~/.ssh`: `_LISTING`).
_OPEN_NOTIFIED = (
    *((bit | os.O_CREAT | os.O_EXCL, bit) for bit in (os.O_WRONLY, os.O_RDWR, os.O_TRUNC)),
    (os.O_CREAT | os.O_EXCL, os.O_CREAT))
_LISTING = (os.O_DIRECTORY, os.O_DIRECTORY)


# The refused calls bwrap's own set-up makes while this filter is already loaded (it
# builds the sandbox under it): their rows stay in the profile's kernel filter.
_BWRAP_SETUP = frozenset({"clone", "unshare", "setns", "mount", "umount2", "pivot_root",
                          "chroot"})
_BWRAP_FAMILIES = frozenset({FAMILIES["AF_UNIX"], FAMILIES["AF_NETLINK"]})
# Refused and not reported under any launcher: libc tries an AF_UNIX socket (nscd's,
# systemd-userdb's) on every user-name lookup (`ls -l`) and goes on without it; a report
# there would be noise, and its fix would open the host's sockets.
_QUIET_FAMILIES = frozenset({FAMILIES["AF_UNIX"]})


def refused_rows(rows: tuple[SyscallRule, ...], *, bwrap: bool) -> tuple[SyscallRule, ...]:
    """The profile's rows this observer reports: EPERM rows on a call it does not
    observe (so no CONTINUE can ever answer them) that the launcher's own set-up never
    makes (bwrap's: `_BWRAP_SETUP`, its sockets), but AF_UNIX sockets."""
    quiet = _BWRAP_FAMILIES | _QUIET_FAMILIES if bwrap else _QUIET_FAMILIES
    return tuple(row for row in rows if row.action == "errno" and row.errno == EPERM
                 and row.syscall not in _CALLS
                 and not (bwrap and row.syscall in _BWRAP_SETUP)
                 and not (row.syscall == "socket" and any(
                     _matches(row, (family, 0)) for family in quiet)))


def attach(launch: Launch, *, ignore: tuple[str, ...] = (), proxied: bool = False,
           profile: tuple[int, tuple[SyscallRule, ...]] | None = None,
           listings: bool = True) -> None:
    """Start `launch`'s process under an observer; when it closes, what was refused
    (`violations.classify`) joins `launch.violations`. Nothing where the observer
    cannot run (another kernel, no libseccomp): the run is as confined, only not
    explained. `profile`: the memfd holding the profile's filter and its rows (the
    refused ones are reported: the memfd loses them once this filter is loaded).
    `listings`: whether directory opens are notified (not where every hidden
    directory's listing is seen another way: `placeholders.py`)."""
    if launch.dry or not available() or any(_setuid(p) for p in ignore):
        return  # a setuid bwrap would lose its privilege under no_new_privs
    try:
        refused, bpf, kept = split(profile[1] if profile else (), bwrap=bool(ignore),
                                   listings=listings)
    except (SeccompUnavailable, ImportError, OSError, RuntimeError):
        return
    swap = (profile[0], kept) if kept is not None and profile is not None else None
    areas: list[Areas] = []

    def keep(one: Seen) -> bool:
        # Most of a build's calls are in writable places: dropped as the run goes, so
        # a refusal late in a long run still finds room (`limit`).
        if not areas:
            areas.append(Areas(launch.spec))
        return considered(areas[0], one)

    observer = Observer(bpf, ignore=tuple(i for p in ignore if (i := executable_id(p))),
                        keep=keep, refused=refused, swap=swap)
    launch.spawn = observer.spawn

    def close() -> str:
        observer.stop()
        launch.violations.extend(classify(areas[0] if areas else Areas(launch.spec),
                                          observer.seen.values(), proxied=proxied))
        launch.violations.extend(observer.refusals())
        return ""

    launch.on_close(close)


@functools.lru_cache(maxsize=16)
def split(rows: tuple[SyscallRule, ...], *, bwrap: bool, listings: bool = True
          ) -> tuple[tuple[SyscallRule, ...], bytes, bytes | None]:
    """For a profile's `rows`: the rows this observer reports (`refused_rows`), its
    filter (telling it of directory opens where `listings`), and the profile's filter
    without them (None when none moved). A pure function of the rows, cached per
    process: a warm server computes it for the built-in profiles ahead
    (`cli/warm.py`), so its workers find it made."""
    refused = refused_rows(rows, bwrap=bwrap)
    bpf = _bpf(refused, listings)
    if not refused:
        return refused, bpf, None
    moved = set(refused)
    return refused, bpf, export_rows(tuple(row for row in rows if row not in moved))


@functools.lru_cache(maxsize=16)
def _bpf(refused: tuple[SyscallRule, ...] = (), listings: bool = True) -> bytes:
    """The filter, from the BPF cache (`bpfcache`: a cold run does not import pyseccomp)
    when an entry for this very code checks, else built."""
    from .bpfcache import _identity, cached  # its imports only where a filter is made

    def build() -> bytes:
        return filter_bpf(reads=False, refused=refused, listings=listings)

    here = _identity(os.path.abspath(__file__))
    if here is None:
        return build()
    return cached(f"observe:{here}:{refused!r}:{listings}", build)


def available() -> bool:
    """Whether this kernel and architecture can run the observer."""
    return platform.machine() in _SYS_SECCOMP and hasattr(os, "pidfd_open")


def filter_bpf(reads: bool = True, refused: tuple[SyscallRule, ...] = (),
               listings: bool = True) -> bytes:
    """The observer's BPF: NOTIFY for the calls above (opens for writing, and of a
    directory where `listings`, only unless `reads`: every open costs 50 % on a C
    build, see `benchmarks/violations.py`) and for the `refused` rows (their conditions
    as the profile has them), ALLOW for everything else and for foreign ABIs (the
    profile's filter kills those)."""
    sc = _import_pyseccomp()
    assert not {row.syscall for row in refused} & set(_CALLS)  # answered EPERM only
    f = filter_of(refused, action=sc.NOTIFY) if refused else sc.SyscallFilter(sc.ALLOW)
    f.set_attr(sc.Attr.ACT_BADARCH, sc.ALLOW)
    f.set_attr(sc.Attr.CTL_NNP, 0)  # set by `spawn` on its own thread only
    for name in _CALLS:
        if sc.resolve_syscall(sc.Arch.NATIVE, name) < 0:
            continue
        if name in _FLAGS_ARG and not reads:
            for mask, value in (*_OPEN_NOTIFIED, *((_LISTING,) if listings else ())):
                f.add_rule(sc.NOTIFY, name, sc.Arg(_FLAGS_ARG[name], sc.MASKED_EQ, mask,
                                                   value))
        else:
            f.add_rule(sc.NOTIFY, name)
    fd = os.memfd_create("swifty-observe", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as memfile:
        f.export_bpf(memfile)
        memfile.seek(0)
        return memfile.read()


class _Prog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


class Observer:
    """Serves one run's listener: answers every notification CONTINUE, keeps what it
    saw. `ignore`: (device, inode) of executables whose own calls are not the
    command's (bwrap setting the sandbox up). `keep`: whether a call could be a
    refusal (the rest is dropped as it accumulates); at most `limit` of those kept.

    Each notified call waits for this thread, so serving one costs as little as it
    can: one blocking receive, one `process_vm_readv` for the path (a `readlink` of
    its directory when relative), the reply, and the raw (operation, directory, bytes)
    put in a dict; nothing is decoded, normalised or judged until a batch is full or
    the run ends (`_sift`). No poll: the receive blocks, and `stop` wakes it with a
    call of its own from the spawning thread (under the filter)."""

    _BATCH = 4096  # raw records sifted at once

    def __init__(self, bpf: bytes, *, ignore: tuple[tuple[int, int], ...] = (),
                 limit: int = 256, keep: Callable[[Seen], bool] | None = None,
                 refused: tuple[SyscallRule, ...] = (),
                 swap: tuple[int, bytes] | None = None) -> None:
        self.bpf, self.ignore, self.limit, self.keep = bpf, ignore, limit, keep
        self.refused, self._swap = refused, swap
        self._refusals: dict[tuple[int, int, int], None] = {}  # (nr, arg 0, arg 1)
        self.seen: dict[tuple[str, str, object], Seen] = {}
        self.overflow = 0
        self.errors = 0
        self._calls = _calls()
        self._raw: dict[tuple[str, str, bytes], None] = {}
        self._listener = -1
        self._thread: threading.Thread | None = None
        self._spawner: threading.Thread | None = None
        self._end = threading.Event()
        self._stopping = False
        self._waker = -1  # the spawning thread's id once it wakes the server (`stop`)
        self.unavailable = ""  # why the filter could not be loaded, if it could not
        self._command: set[int] = set()  # processes past bwrap's set-up (see _ignored)
        libc = ctypes.CDLL(None, use_errno=True)
        self._readv = libc.process_vm_readv
        self._readv.restype = ctypes.c_ssize_t
        self._readv.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong,
                                ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong)
        # Preallocated: the buffer and two iovecs (local, remote) as four words.
        self._buffer = ctypes.create_string_buffer(_PAGE)
        self._iov = (ctypes.c_size_t * 4)(ctypes.addressof(self._buffer), 0, 0, 0)
        self._iov_local = ctypes.addressof(self._iov)
        self._iov_remote = self._iov_local + 2 * ctypes.sizeof(ctypes.c_size_t)

    def spawn(self, start: Callable[[], T]) -> T:
        """`start()` (the launcher's Popen) on a thread of its own that loads the
        filter first (where it cannot, the launcher starts all the same)."""
        result: list[T] = []
        failure: list[BaseException] = []
        ready, started = threading.Event(), threading.Event()

        def run() -> None:
            try:
                self._listener = self._install()
            except (SeccompUnavailable, OSError) as e:
                # Not loaded (a kernel or container that refuses it): the run is as
                # confined, only not explained — observing is no part of confinement.
                self.unavailable = str(e)
            ready.set()  # the server starts serving (or leaves): then the launcher
            try:
                if self._listener >= 0 and self._swap is not None:
                    _rewrite(*self._swap)  # the refused rows are this filter's now
                result.append(start())
            except BaseException as e:  # handed to the caller's thread
                failure.append(e)
            started.set()
            # This thread is the launcher's parent: bwrap's --die-with-parent
            # (PR_SET_PDEATHSIG) fires when the parent *thread* ends, so it lives as
            # long as the run does (`stop`).
            self._end.wait()
            self._waker = threading.get_native_id()
            if self._listener >= 0:
                # The server's wake-up: a notified call of this thread's own, whatever
                # the filter's options (the server answers it and leaves; a server
                # already gone: ENOSYS). An empty name: ENOENT, nothing made.
                with contextlib.suppress(OSError):
                    os.mkdir("")

        # The server thread is made before the filter exists: a thread inherits its
        # maker's filter, and the server's own calls must not wait for themselves.
        server = threading.Thread(target=self._serve, args=(ready,), daemon=True,
                                  name="swifty-observe")
        spawner = threading.Thread(target=run, daemon=True, name="swifty-spawn")
        try:
            server.start()
            self._thread = server
            spawner.start()
            self._spawner = spawner
        except RuntimeError as e:
            # No thread left (the user's process cap: threads count as processes): the
            # run goes on unexplained, and its own start then meets the cap and says so.
            self.unavailable = str(e)
            ready.set()  # a server that did start leaves: there is no listener
            return start()
        started.wait()
        if failure:
            self.stop()
            raise failure[0]
        return result[0]

    def _install(self) -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise SeccompUnavailable(os.strerror(ctypes.get_errno()))
        buffer = ctypes.create_string_buffer(self.bpf, len(self.bpf))
        prog = _Prog(len(self.bpf) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        fd = libc.syscall(_SYS_SECCOMP[platform.machine()], _SECCOMP_SET_MODE_FILTER,
                          _SECCOMP_FILTER_FLAG_NEW_LISTENER, ctypes.byref(prog))
        if fd < 0:
            raise SeccompUnavailable(os.strerror(ctypes.get_errno()))
        os.set_inheritable(fd, False)
        import fcntl

        # The waiting task hands its CPU to the server (no wake-up on another, busy,
        # CPU): on a loaded machine that is most of a notification's cost.
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, _IOCTL_SET_FLAGS, struct.pack("=Q", _SYNC_WAKE_UP))
        return int(fd)

    def stop(self) -> None:
        """After the command's tree is gone: stop serving, close the listener, judge
        what is left (`seen`)."""
        self._stopping = True
        self._end.set()
        if self._spawner is not None:
            self._spawner.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._listener >= 0 and (self._thread is None or not self._thread.is_alive()):
            with contextlib.suppress(OSError):
                os.close(self._listener)
            self._listener = -1
        self._sift()

    def _serve(self, ready: threading.Event) -> None:
        import fcntl

        ready.wait()
        listener = self._listener
        if listener < 0:
            return
        ioctl, unpack, pack = fcntl.ioctl, _NOTIF.unpack_from, _RESP.pack
        buffer, zeros = bytearray(_NOTIF.size), bytes(_NOTIF.size)
        calls, raw, read = self._calls, self._raw, self._read
        while True:
            buffer[:] = zeros  # the kernel takes only a zeroed buffer
            try:
                ioctl(listener, _IOCTL_RECV, buffer, True)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.EINTR):  # the caller died meanwhile
                    continue
                # Not served any more: close it, so that the command's notified calls
                # fail (ENOSYS) rather than wait for ever; `stop` sees it closed.
                self._listener = -1
                os.close(listener)
                return
            ident, pid, _flags, nr, _arch, _ip, *args = unpack(buffer)
            call = calls.get(nr)
            if call is None:
                # Not an observed call: one of the profile's refused rows, whose only
                # answer is the profile's own EPERM (never CONTINUE, whatever the
                # rest of this loop does).
                try:
                    ioctl(listener, _IOCTL_SEND, pack(ident, 0, -EPERM, 0))
                except OSError:
                    continue  # the caller is gone: nothing to refuse or report
                if len(self._refusals) < _REFUSALS:
                    self._refusals[(nr, args[0], args[1])] = None
                continue
            found: tuple[tuple[str, str, bytes], ...] = ()
            if not self._stopping:
                try:
                    found = read(pid, call, args)
                except OSError:
                    found = ()
                except Exception:
                    self.errors += 1
                    found = ()
            try:
                ioctl(listener, _IOCTL_SEND, pack(ident, 0, 0, _CONTINUE))
            except OSError:
                # ENOENT: the caller died while it waited, so what was read may be
                # another process's (its pid reused): dropped. A reply that went
                # through shows the caller was still waiting when it was read.
                continue
            if pid == self._waker:
                return  # the wake-up (the command's tree is gone)
            for key in found:
                raw[key] = None
            if len(raw) >= self._BATCH:
                self._sift()

    def refusals(self) -> list[Violation]:
        """The refused calls, one per syscall (the row that refused it named by the
        profile's key: `seccomp.deny` and its set, `seccomp.sockets`, …)."""
        names = _numbers(self.refused) if self._refusals else {}
        out: dict[str, Violation] = {}
        for nr, first, second in self._refusals:
            name = names.get(nr)
            row = next((r for r in self.refused if r.syscall == name
                        and _matches(r, (first, second))), None)
            if name is None or row is None or name in out:
                continue
            key, value = _profile_key(row)
            out[name] = {"kind": "syscall", "op": name, "key": key, "value": value}
        return list(out.values())

    def _read(self, pid: int, call: tuple[str, int, tuple[tuple[int | None, int], ...]],
              args: list[int]) -> tuple[tuple[str, str, bytes], ...]:
        """The raw records of one call: (op, the directory a relative path is in or
        "", the path's bytes; for connect the address's bytes)."""
        op, flags_at, paths = call
        if self.ignore and pid not in self._command and self._ignored(pid):
            return ()
        if op == "connect":
            return (("connect", "", self._memory(pid, args[1], min(args[2], 28))),)
        if flags_at != _NO_FLAGS:
            flags = self._open_flags(pid, flags_at, args)
            if flags & os.O_PATH:
                return ()  # a reference, neither read nor written (the Landlock launcher's)
            writes = flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC)
            op = ("create-write" if writes else "create") if flags & os.O_CREAT else \
                "write" if writes else "read"
        out = []
        for i, (dir_index, path_index) in enumerate(paths):
            text = self._string(pid, args[path_index])
            if not text:
                continue
            base = ""
            if text[0] != 47:  # "/": relative to its directory, read while it waits
                dirfd = _AT_FDCWD if dir_index is None else _signed(args[dir_index])
                where = f"/proc/{pid}/cwd" if dirfd == _AT_FDCWD else \
                    f"/proc/{pid}/fd/{dirfd}"
                base = os.readlink(where)
                if not base.startswith("/"):
                    continue  # a socket, a pipe, a deleted directory: no path to name
            out.append(("remove" if op == "rename" and i == 0 else
                        "create" if op == "rename" else op, base, text))
        return tuple(out)

    def _sift(self) -> None:
        """The raw records as `Seen` (decoded, joined, normalised), those `keep`
        wants into `seen` (bounded); the raw batch emptied."""
        batch, self._raw = self._raw, {}
        for op, base, data in batch:
            one = _seen(op, base, data)
            if one is None or (self.keep is not None and not self.keep(one)):
                continue
            key = (one.op, one.path, one.address)
            if key in self.seen:
                continue
            if len(self.seen) >= self.limit:
                self.overflow += 1
                continue
            self.seen[key] = one

    def _ignored(self, pid: int) -> bool:
        """A call of bwrap's own (building the sandbox). A process seen past it stays
        the command's: bwrap's set-up comes first, and what execs bwrap later is the
        command (it cannot build another sandbox: `--disable-userns`)."""
        try:
            info = os.stat(f"/proc/{pid}/exe")
        except OSError:
            return True
        if (info.st_dev, info.st_ino) in self.ignore:
            return True
        self._command.add(pid)
        return False

    def _open_flags(self, pid: int, flags_at: int, args: list[int]) -> int:
        if flags_at == _HOW_FLAGS:  # openat2: struct open_how, flags first
            raw = self._memory(pid, args[2], 8)
            return int.from_bytes(raw, sys.byteorder) if len(raw) == 8 else _WRITE_FLAGS
        return args[flags_at] & 0xFFFFFFFF

    def _memory(self, pid: int, address: int, size: int) -> bytes:
        """`size` bytes of the process's memory (at most to the end of its page): one
        `process_vm_readv` (the access `/proc/PID/mem` needs too, looked up per call:
        a descriptor kept per pid would read the parent's memory after a vfork child's
        exec). Empty where it cannot be read."""
        size = min(size, _PAGE - address % _PAGE)
        iov = self._iov
        iov[1] = iov[3] = size
        iov[2] = address
        got = self._readv(pid, self._iov_local, 1, self._iov_remote, 1, 0)
        return ctypes.string_at(self._buffer, got) if got > 0 else b""  # `got` copied

    def _string(self, pid: int, address: int) -> bytes:
        """The NUL-terminated string at `address` (a short read first: almost every
        path fits, and is taken as it lies in the buffer, to its NUL, with no copy of
        the rest); b"" where unterminated or unreadable."""
        if not address:
            return b""
        iov = self._iov
        iov[1] = iov[3] = min(_FIRST, _PAGE - address % _PAGE)
        iov[2] = address
        got = self._readv(pid, self._iov_local, 1, self._iov_remote, 1, 0)
        if got <= 0:
            return b""
        # `value` ends at the buffer's first NUL: shorter than what was read, it is
        # the string's (the bytes past `got` are an earlier read's, never reached).
        text: bytes = self._buffer.value
        if len(text) < got:
            return text
        out = b""
        size = _FIRST
        while len(out) < _PATH_MAX:
            data = self._memory(pid, address + len(out), size)
            if not data:
                return b""
            end = data.find(b"\0")
            if end >= 0:
                return out + data[:end]
            out += data
            size = _PAGE
        return b""  # unterminated: nothing claimed


_REFUSALS = 64  # distinct (call, arguments) kept


def _rewrite(fd: int, data: bytes) -> None:
    """The memfd `fd` (read by the launcher from its start) holds `data` only: a
    failure leaves the run unstarted (`spawn` raises), never a half filter loaded."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    if os.pread(fd, len(data) + 1, 0) != data:
        raise OSError(errno.EIO, "the profile's filter could not be rewritten")


def _numbers(rows: tuple[SyscallRule, ...]) -> dict[int, str]:
    """The rows' syscall numbers here → names (libseccomp's: only a run that was
    refused something asks)."""
    sc = _import_pyseccomp()
    return {nr: row.syscall for row in rows
            if (nr := sc.resolve_syscall(sc.Arch.NATIVE, row.syscall)) >= 0}


def _matches(row: SyscallRule, args: tuple[int, int]) -> bool:
    """Whether `row`'s conditions (on the first two arguments, 64-bit as libseccomp
    compares) hold for `args`."""
    for a in row.args:
        value = args[a.index] if a.index < 2 else 0
        ok = {"NE": value != a.value, "LT": value < a.value, "LE": value <= a.value,
              "EQ": value == a.value, "GE": value >= a.value, "GT": value > a.value,
              "MASKED_EQ": value & a.mask == a.value}[a.op]
        if not ok:
            return False
    return True


def _profile_key(row: SyscallRule) -> tuple[str | None, str | None]:
    """The profile key whose value refused `row`, and the value; (None, None) for a
    row no profile can lift (a family no kernel knows, a socketpair of another family)."""
    first = row.args[0] if row.args else None
    if row.syscall == "socket":
        if first is not None and first.op == "EQ":
            name = next((n for n, v in FAMILIES.items() if v == first.value), None)
            return ("seccomp.sockets", name) if name else (None, None)
        return None, None
    if row.syscall == "socketpair":
        if first is not None and first.op == "MASKED_EQ":
            name = next((n for n, v in SOCK_TYPES.items() if v == first.value), None)
            return ("seccomp.socketpairs", name) if name else (None, None)
        return None, None
    if row.syscall == "ioctl" and first is not None:
        return "seccomp.ioctls", next((n for n, v in IOCTLS.items() if v == first.value),
                                      None)
    if row.syscall == "clone":
        return "seccomp.deny", "namespaces"
    sets = _builtin_syscall_sets()[0]
    return "seccomp.deny", next((n for n, calls in sets.items() if row.syscall in calls),
                                None)


def _seen(op: str, base: str, data: bytes) -> Seen | None:
    if op == "connect":
        address = _address(data)
        return Seen("connect", address=address) if address is not None else None
    text = data.decode(errors="surrogateescape")
    return Seen(op, os.path.normpath(os.path.join(base, text) if base else text))


def _address(raw: bytes) -> tuple[int, str, int] | None:
    import socket

    if len(raw) < 8:
        return None
    family = struct.unpack("=H", raw[:2])[0]
    port = struct.unpack(">H", raw[2:4])[0]
    if family == socket.AF_INET:
        return family, socket.inet_ntop(socket.AF_INET, raw[4:8]), port
    if family == socket.AF_INET6 and len(raw) >= 24:
        return family, socket.inet_ntop(socket.AF_INET6, raw[8:24]), port
    return None


def _calls() -> dict[int, tuple[str, int, tuple[tuple[int | None, int], ...]]]:
    """This architecture's notified numbers → (operation, where the open flags are,
    the path arguments)."""
    out = {}
    for name, nr in _NUMBERS.get(platform.machine(), {}).items():
        op, paths = _CALLS[name]
        flags_at = _HOW_FLAGS if name == "openat2" else _FLAGS_ARG.get(name, _NO_FLAGS)
        out[nr] = (op, flags_at, paths)
    return out


def _signed(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _setuid(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & stat.S_ISUID)
    except OSError:
        return False


def executable_id(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None
