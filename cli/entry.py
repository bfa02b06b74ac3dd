"""The console script: hand `run`, `check`, `hook` and `compile` to a warm fork server
(`cli/warm.py`) when one serves this exact process context, else run the click CLI here
and start one for the next call.

Python's start-up and imports (click, PyYAML, pathspec, pyseccomp, tree-sitter, the
policy engine) cost several times what bwrap does; the work of a decision does not. The
server has everything imported and forks a worker per call, which runs the very code
`main` runs here — policy files read, the spec compiled and the project checked anew
on every call — so nothing but imported code is reused. This module imports only cheap
parts of the standard library: it is all a warm call pays for.

A server serves one process context: the same interpreter, flags, import path and
the variables its own process took from its environment before any call (`SERVER_VARS`:
imports, the C library, locale; the rest of the caller's environment comes with the
call, and the worker runs under it), and — read by the server from
/proc for each caller — the same uid and groups, capabilities, no_new_privs, no
seccomp filter at all (no server runs under one: /proc shows how many filters a
process has, not which), no tracer, namespaces, root, cgroup, limits, umask, nice, LSM
labels; its installed code must not have changed since it started. Anything else gets
another server or none. It listens in `~/.cache/swifty-sandbox/run/` (0700, protected
from sandboxed commands) and serves only peers of its own uid in its own namespaces,
judged through a pidfd (a recycled pid cannot pass); the caller checks the server the
same way (its uid, namespaces and whole context) before it hands over anything. A
Landlock domain shows nowhere in /proc, so each side proves it is not confined more
than the other (`handshake`): it names a descriptor of the other's that only a process
allowed to read the other's /proc entry can see, which Landlock (and a confining LSM)
refuses towards a process outside the reader's domain.
A terminal on standard input stays here (job control, prompts). `SWIFTY_DAEMON=off`
disables it.
"""

from __future__ import annotations

import _socket  # `socket` imports `selectors` and more; the C module is all we use
import os
import sys

TYPE_CHECKING = False  # not `typing`'s: one more import
if TYPE_CHECKING:
    import signal as _signal  # the same functions, with types
else:
    import _signal  # `signal` imports `enum` and more: several ms of a warm call

FAST_COMMANDS = frozenset({"run", "check", "hook", "compile"})
# What a worker would resolve differently from this process (its own pid, fds and
# controlling terminal).
_PROCESS_RELATIVE = ("/proc/self", "/proc/thread-self", "/dev/fd/", "/dev/tty")
# What a server's own process took from its environment before its first call and a
# worker keeps: the import path and user site (PYTHON*, HOME), the C library and the
# shared objects it loaded (LD_*, GLIBC_TUNABLES, MALLOC_*), the locale, the standard
# streams' encoding and `time`'s zone (LC_*, LANG, LANGUAGE, TZ). Only callers that agree
# on these are served by it (and they name its socket); every other variable is the
# call's own, sent with it, and nothing the server computed ahead depends on one.
SERVER_VARS = frozenset({"HOME", "LANG", "LANGUAGE", "TZ", "GLIBC_TUNABLES"})
SERVER_PREFIXES = ("PYTHON", "LD_", "LC_", "MALLOC_", "OPENSSL_")
PROTOCOL = 2
MAX_HEADER = 4 << 20
ACCEPTED, REFUSED, EXITED, SIGNAL = b"A", b"R", b"X", b"S"
HELLO, CHALLENGE = b"H", b"C"
SO_PEERPIDFD = 77  # Linux 6.5; <asm-generic/socket.h>
# sys.flags but `safe_path`: the server runs with -P, the console script without it.
FLAGS = ("debug", "inspect", "interactive", "optimize", "dont_write_bytecode",
         "no_user_site", "no_site", "ignore_environment", "verbose", "bytes_warning",
         "quiet", "hash_randomization", "isolated", "dev_mode", "utf8_mode",
         "warn_default_encoding", "int_max_str_digits")


def main() -> None:
    """The `swifty-sandbox` console script."""
    args = sys.argv[1:]
    eligible = _eligible(args)
    if eligible and unfiltered():  # under a seccomp filter no server would serve us
        sock = _connect()
        if sock is not None:
            code = _call(sock, args)
            if code is not None:
                _exit(code)
    _slow(start_server=eligible)


def _exit(code: int) -> None:
    """End with the worker's status, skipping the interpreter's finalisation (module
    teardown, a collection: a millisecond or more of a warm call): nothing of ours is
    registered to run at exit, and what we wrote is flushed here."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105  (contextlib is one more import on the fast path)
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed or None: nothing held
            pass
    os._exit(code & 0xFF)


def _slow(*, start_server: bool) -> None:
    from .main import main as click_main  # click and the CLI: only when no server serves

    try:
        click_main(prog_name="swifty-sandbox")
    finally:
        if start_server:
            _start_server()


def _eligible(args: list[str]) -> bool:
    if not args or args[0] not in FAST_COMMANDS:
        return False
    if os.environ.get("SWIFTY_DAEMON", "").lower() in ("0", "off", "no", "false"):
        return False
    if not sys.platform.startswith("linux"):
        return False
    if any(marker in arg for arg in args for marker in _PROCESS_RELATIVE):
        return False
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        return not os.isatty(0)
    except OSError:  # a closed standard descriptor: nothing to hand over
        return False


def flags() -> list[int]:
    return [int(getattr(sys.flags, name)) for name in FLAGS]


def import_path() -> list[str]:
    """sys.path without the script's own folder (or the working directory), which the
    server, started with -P, does not have; nothing is imported from there anyway."""
    return sys.path if sys.flags.safe_path else sys.path[1:]


def server_env(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The part of `environ` a server is for (`SERVER_VARS`)."""
    return {k: v for k, v in environ.items()
            if k in SERVER_VARS or k.startswith(SERVER_PREFIXES)}


def socket_path(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """This interpreter's and environment's server: a name only (a collision would be
    refused by the server, which checks everything), in `~/.cache/swifty-sandbox/run`;
    None without a home. Reached through the directory's descriptor (`open_run_dir`):
    no length limit, and no link swapped in after the directory was checked."""
    home = environ.get("HOME")
    if not home or not home.startswith("/"):
        return None
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # no OpenSSL
    except ImportError:
        from hashlib import sha256
    # Everything a server checks names it: the interpreter's flags and import path too,
    # or a `python3 -E` caller (the hooks' rewrite) and a plain one (the console
    # script) shared a socket, and the server each refused was never started.
    text = "\0".join([sys.executable, *map(str, flags()), *import_path(),
                      *(f"{k}={v}" for k, v in sorted(server_env(environ).items()))])
    name = sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(home, ".cache", "swifty-sandbox", "run", name + ".sock")


def open_run_dir(folder: str, *, create: bool) -> int | None:
    """`folder` opened without following a link, when it is a directory of ours that
    no one else can enter; the caller closes it."""
    import stat

    if create:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & 0o077):
        return fd
    os.close(fd)
    return None


def namespaces(pid: int | str) -> tuple[str, ...]:
    return tuple(os.readlink(f"/proc/{pid}/ns/{ns}")
                 for ns in ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup"))


# Seccomp: the server runs only without a filter (`serve`), so equal fields mean the
# caller has none either: /proc shows how many filters a process has, never which.
# TracerPid: a tracer may confine what its tracee does (ptrace sandboxes).
_STATUS_FIELDS = (b"Uid:", b"Gid:", b"Groups:", b"Umask:", b"SigBlk:", b"SigIgn:",
                  b"CapInh:", b"CapPrm:",
                  b"CapEff:", b"CapBnd:", b"CapAmb:", b"NoNewPrivs:", b"Seccomp:",
                  b"Seccomp_filters:", b"Speculation_Store_Bypass:", b"Cpus_allowed_list:",
                  b"Mems_allowed_list:", b"TracerPid:")
# The LSM labels: the first major LSM's (`current`, `exec`: the label of its next
# exec) and each stacked one's own directory.
_ATTRS = ("attr/current", "attr/exec", "attr/apparmor/current", "attr/apparmor/exec",
          "attr/smack/current", "attr/selinux/current", "attr/selinux/exec")


def _proc(pid: int | str, name: str) -> bytes:
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read(1 << 16)
    except OSError:
        return b"?"


def context(pid: int | str) -> tuple[object, ...]:
    """What a worker inherits from the server rather than from its caller, as /proc
    shows it for `pid`: the server compares each caller's with its own, and the caller
    the server's with its own. Not a Landlock domain, which /proc does not show: the
    handshake proves that."""
    status = tuple(line for line in _proc(pid, "status").splitlines()
                   if line.startswith(_STATUS_FIELDS))
    stat_fields = _proc(pid, "stat").rsplit(b")", 1)[-1].split()
    root = os.stat(f"/proc/{pid}/root")
    return (status, namespaces(pid), (root.st_dev, root.st_ino),
            os.readlink(f"/proc/{pid}/exe"), _proc(pid, "cgroup"), _proc(pid, "limits"),
            tuple(_proc(pid, name) for name in _ATTRS), _proc(pid, "oom_score_adj"),
            stat_fields[15:17])  # priority, nice


def peer(sock: _socket.socket) -> tuple[int, int] | None:
    """The other end's pid and a pidfd for it, when it is a process of our uid in our
    namespaces — never a sandboxed command, which always has namespaces of its own.
    The caller closes the pidfd after checking `alive` once it has read what it needs
    from /proc/<pid>: an entry read while the process lives is its own, not a recycled
    pid's."""
    try:
        cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        pid, uid = _native(cred[:4]), _native(cred[4:8])  # struct ucred: pid, uid, gid
        if uid != os.getuid() or pid <= 0:
            return None
        pidfd = sock.getsockopt(_socket.SOL_SOCKET, SO_PEERPIDFD)
    except OSError:  # a kernel without SO_PEERPIDFD: no server
        return None
    try:
        with open(f"/proc/self/fdinfo/{pidfd}", "rb") as f:
            if f"\nPid:\t{pid}\n".encode() in b"\n" + f.read() \
                    and namespaces(pid) == namespaces("self"):
                return pid, pidfd
    except OSError:
        pass
    os.close(pidfd)
    return None


def unfiltered(pid: int | str = "self") -> bool:
    """Whether `pid` has no seccomp filter (nor strict mode)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            return b"\nSeccomp:\t0\n" in f.read()
    except OSError:
        return False


def nonce() -> tuple[int, str]:
    """A descriptor of ours with a name no one can guess, and that name as
    /proc/<pid>/fd shows it: reading that link takes ptrace read access to us, which
    Landlock refuses to a process in a domain we are not in (an LSM may too)."""
    fd = os.memfd_create("swifty-" + os.urandom(16).hex())  # close-on-exec
    return fd, os.readlink(f"/proc/self/fd/{fd}")


def named(pid: int, fd: int) -> str:
    """What /proc/<pid>/fd/<fd> links to, or "" when we may not read it."""
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return ""


def _native(data: bytes) -> int:
    """A C int as the kernel wrote it (without `struct`, one import fewer per call)."""
    return int.from_bytes(data, sys.byteorder, signed=True)


def alive(pidfd: int) -> bool:
    try:
        _signal.pidfd_send_signal(pidfd, 0)
        return True
    except OSError:
        return False


def _connect() -> _socket.socket | None:
    path = socket_path()
    folder = None if path is None else open_run_dir(os.path.dirname(path), create=False)
    if path is None or folder is None:
        return None
    try:  # a seccomp filter around us may refuse the socket (ours does, inside)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    except OSError:
        os.close(folder)
        return None
    try:
        sock.connect(f"/proc/self/fd/{folder}/{os.path.basename(path)}")
        found = peer(sock)  # never hand our descriptors and environment elsewhere
        if found is None:
            raise OSError("not our server")
        try:  # a listener confined otherwise than we are (planted there) gets nothing
            ok = context(found[0]) == context("self") and alive(found[1])
        finally:
            os.close(found[1])
        if not ok:
            raise OSError("not our server")
    except OSError:
        sock.close()
        return None
    finally:
        os.close(folder)
    return sock


def header(args: list[str], proof: str) -> bytes:
    """The call as JSON (the `json` package costs more to import than this)."""
    from _json import encode_basestring_ascii as text

    def strings(values: list[str]) -> str:
        return "[" + ", ".join(text(v) for v in values) + "]"

    env = ", ".join(f"{text(k)}: {text(v)}" for k, v in os.environ.items())
    flag_values = ", ".join(str(f) for f in flags())
    return (f'{{"protocol": {PROTOCOL}, "argv": {strings(args)}, "env": {{{env}}}, '
            f'"flags": [{flag_values}], "path": {strings(import_path())}, '
            f'"proof": {text(proof)}}}').encode()


def handshake(sock: _socket.socket) -> str | None:
    """Before anything of ours is sent: the server names a descriptor of ours (so it is
    confined no more than we are: a listener planted by a process in a Landlock domain
    gets nothing), and tells us one of its worker's, whose name we return for the
    header (so the worker knows we are confined no more than it). None when either
    side cannot: the call then runs here."""
    fd, expected = nonce()
    try:
        sock.sendall(HELLO + fd.to_bytes(4, "big", signed=True))
        if recv_exact(sock, 1) != CHALLENGE:
            return None
        size = recv_exact(sock, 2)
        payload = recv_exact(sock, int.from_bytes(size, "big")) if len(size) == 2 else b""
    finally:
        os.close(fd)
    seen, _, where = payload.partition(b"\0")
    if seen != os.fsencode(expected):
        return None
    try:
        pid, number = (int(part) for part in where.split(b" "))
    except ValueError:
        return None
    return named(pid, number) or None


def _call(sock: _socket.socket, args: list[str]) -> int | None:
    """Hand the call to a worker; its exit status, or None when it refused before
    doing anything (the call then runs here)."""
    forwarded: list[int] = []

    def forward(signum: int, frame: object) -> None:
        forwarded.append(signum)
        try:
            sock.sendall(SIGNAL + bytes([signum]))
        except OSError:
            return  # the worker is gone: the recv below says so

    for signum in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        if _signal.getsignal(signum) != _signal.SIG_IGN:  # nohup stays nohup
            _signal.signal(signum, forward)
    try:
        proof = handshake(sock)
        if proof is None:
            raise OSError("not proven")
        # O_PATH: a working directory we may not read is still one to work in.
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            data = header(args, proof)
            fds = [0, 1, 2, cwd]
            if len(data) <= MAX_HEADER:
                sock.sendmsg([len(data).to_bytes(4, "big"), data],
                             [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS,
                               b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))])
        finally:
            os.close(cwd)
        accepted = len(data) <= MAX_HEADER and recv_exact(sock, 1) == ACCEPTED
        answer = recv_exact(sock, 5) if accepted else b""
    except OSError:
        accepted, answer = False, b""
    sock.close()
    if len(answer) == 5 and answer[:1] == EXITED:
        return int.from_bytes(answer[1:], "big", signed=True)
    if forwarded:  # interrupted, before the call or while the worker ran it: as the
        _signal.signal(forwarded[-1], _signal.SIG_DFL)  # call would have been, we end
        os.kill(os.getpid(), forwarded[-1])
    if not accepted:
        for signum in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
            if _signal.getsignal(signum) is forward:
                _signal.signal(signum, _signal.default_int_handler
                               if signum == _signal.SIGINT else _signal.SIG_DFL)
        return None
    # Only when the server was lost mid-call: the fast path loads nothing of ours.
    from swifty_sandbox.messages import t
    from swifty_sandbox.policy.errors import ExitCode

    os.write(2, (t("cli.error", message=t("warm.lost")) + "\n").encode("utf-8", "replace"))
    return ExitCode.SETUP


def recv_exact(sock: _socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _interpreter_options() -> list[str]:
    """Our interpreter's options, for the server's: UTF-8 mode is one we may have
    switched on ourselves (a C locale at start-up), which the server, inheriting the
    coerced locale, would not."""
    options = ["-X", f"utf8={sys.flags.utf8_mode}", *["-O"] * sys.flags.optimize]
    if sys.flags.isolated:
        options.append("-I")
    options += [flag for on, flag in ((sys.flags.ignore_environment, "-E"),
                                      (sys.flags.no_user_site, "-s"),
                                      (sys.flags.dont_write_bytecode, "-B")) if on]
    return options + (["-X", "dev"] if sys.flags.dev_mode else [])


def _start_server() -> None:
    """Start this context's server in the background, detached from our descriptors
    and session (a caller reading our output to its end must not wait for it)."""
    try:
        if socket_path() is None or not unfiltered():
            return  # under a seccomp filter no server would serve
        pid = os.fork()
    except OSError:
        return
    if pid == 0:  # the child: a new session, then exec in a grandchild at once
        try:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.closerange(3, 1 << 16)
                os.chdir("/")
                os.execv(sys.executable, [sys.executable, *_interpreter_options(), "-P",
                                          "-m", "swifty_sandbox.cli.warm"])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)  # the child exits at once; the server is nobody's child of ours
