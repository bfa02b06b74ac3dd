"""The Landlock launcher: the first process of a confined command where bwrap cannot
make its namespaces.

Run as `python -I -S -c <this file's text> CONFIG_FD STATUS_FD -- COMMAND...`: an
isolated interpreter without site, the standard library only (`ctypes` for the three
Landlock calls, `prctl` and `capset`), nothing of this package or the user's
environment. CONFIG_FD (a memfd, read and closed) holds one dict in `marshal` form: the ruleset
rows, the seccomp filters' descriptors, the rlimits, the working directory.

The launcher itself stays outside the sandbox: it is the child subreaper of every
process the command starts (a double-forked daemon and a `setsid` escapee are
reparented to it, not to init), and the command, in a Landlock domain of its own, can
neither signal it (scope `signal`, ABI 6) nor ptrace it. It forks once; the child, in
this order: rlimits, every capability dropped (root keeps its uid, not its powers),
`no_new_privs`, the Landlock ruleset (each path opened component by component without
following a link: a path swapped for a link since it was checked fails the run, it does
not move a right), the seccomp filters, then exec. Anything failing before the exec is
reported on STATUS_FD as `{"setup-error": …}` with exit 125, never as the command's
failure; after a successful exec `{"child-pid": N}`, at the end `{"exit-code": N}`.
When the command ends, every descendant still running is killed and reaped.
"""

from __future__ import annotations

import ctypes
import marshal
import os
import sys

# Numbers from include/uapi/linux/{landlock,prctl,capability,seccomp}.h (the generic
# syscall table: the same on x86_64, arm64, riscv64). `abi.py` has the access rights.
_SYS_CREATE, _SYS_ADD, _SYS_RESTRICT = 444, 445, 446
_PR_SET_NO_NEW_PRIVS, _PR_SET_CHILD_SUBREAPER, _PR_CAPBSET_DROP = 38, 36, 24
_PR_CAPBSET_READ = 23
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_PR_SET_PDEATHSIG = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_FILE_ONLY = 1 | 2 | 4 | (1 << 14) | (1 << 15)
_DIR = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
_SETUP, _EXEC = b"S", b"E"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


class SetupFailed(Exception):
    pass


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise SetupFailed(f"{what}: {os.strerror(err)} (errno {err})")
    return result


def _prctl(option: int, arg: int, what: str) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), what)


class _Opener:
    """Paths opened from `/` one component at a time with O_NOFOLLOW (directories
    kept for the rules below them)."""

    def __init__(self) -> None:
        self.dirs = {"/": os.open("/", _DIR)}

    def dir(self, path: str) -> int:
        fd = self.dirs.get(path)
        if fd is None:
            parent, name = os.path.split(path)
            fd = os.open(name, _DIR, dir_fd=self.dir(parent))
            self.dirs[path] = fd
        return fd

    def open(self, path: str) -> int:
        if path == "/":
            return os.dup(self.dirs["/"])
        parent, name = os.path.split(path)
        return os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC,
                       dir_fd=self.dir(parent))

    def close(self) -> None:
        for fd in self.dirs.values():
            os.close(fd)


def _ruleset(config: dict[str, object]) -> int:
    """The ruleset's descriptor, every rule added."""
    abi = int(config["abi"])  # type: ignore[call-overload]
    attr = _RulesetAttr(int(config["handled_fs"]),  # type: ignore[call-overload]
                        int(config["handled_net"]),  # type: ignore[call-overload]
                        int(config["scoped"]))  # type: ignore[call-overload]
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _check(_libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size),
                                   ctypes.c_uint32(0)), "landlock_create_ruleset")
    opener = _Opener()
    try:
        for path, access in config["rules"]:  # type: ignore[attr-defined]
            try:
                fd = opener.open(path)
            except (FileNotFoundError, PermissionError):
                continue  # gone, or not ours to search: one right fewer, never one more
            except OSError as e:  # ELOOP / ENOTDIR: a component became a link
                raise SetupFailed(f"{path}: {e.strerror} (changed since it was checked)"
                                  ) from e
            try:
                mode = os.fstat(fd).st_mode
                if (mode & 0o170000) == 0o120000:
                    raise SetupFailed(f"{path}: a symbolic link now "
                                      "(changed since it was checked)")
                if (mode & 0o170000) != 0o040000:
                    access &= _FILE_ONLY
                if access:
                    rule = _PathBeneath(access, fd)
                    _check(_libc.syscall(_SYS_ADD, ctypes.c_int(ruleset),
                                         ctypes.c_int(_RULE_PATH_BENEATH),
                                         ctypes.byref(rule), ctypes.c_uint32(0)),
                           f"landlock_add_rule {path}")
            finally:
                os.close(fd)
    finally:
        opener.close()
    return ruleset


def _drop_capabilities() -> None:
    """Root keeps its uid but none of its capabilities (bwrap: `--cap-drop ALL`)."""
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, "clear ambient capabilities")
    if os.geteuid() == 0:
        # Only what the set holds: dropping takes CAP_SETPCAP even for a capability
        # already gone, and a sandbox around us (Codex's, where an approved command
        # runs) empties the set and CAP_SETPCAP with it. EINVAL: no such capability.
        for cap in range(64):
            held = _libc.prctl(_PR_CAPBSET_READ, ctypes.c_ulong(cap), 0, 0, 0)
            if held < 0 and ctypes.get_errno() != 22:
                _check(-1, "read the capability bounding set")
            if held > 0 and _libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) < 0:
                _check(-1, "drop capability from the bounding set")
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _seccomp(fds: list[int]) -> None:
    programs = []
    for fd in fds:
        with os.fdopen(fd, "rb") as f:
            programs.append(f.read())
    for bpf in programs:  # loaded last: the filters may refuse calls made above
        buffer = ctypes.create_string_buffer(bpf, len(bpf))
        prog = _Fprog(len(bpf) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        _check(_libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER),
                           ctypes.byref(prog), 0, 0), "seccomp filter")


def _child(config: dict[str, object], command: list[str], report: int) -> None:
    """Set up the confinement, exec the command; never returns."""
    import signal

    # Looked up now: after the ruleset the interpreter may read none of its own files
    # (os.get_exec_path imports `warnings`), so only calls are made from there on.
    search = [command[0]] if "/" in command[0] else \
        [os.path.join(d or ".", command[0]) for d in os.get_exec_path()]
    try:
        os.chdir(str(config["cwd"]))
        for which, value in config["rlimits"]:  # type: ignore[attr-defined]
            import resource

            resource.setrlimit(which, (value, value))
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, "parent-death signal")
        ruleset = _ruleset(config)  # paths opened while root may still search them
        _drop_capabilities()
        _prctl(_PR_SET_NO_NEW_PRIVS, 1, "no_new_privs")
        _check(_libc.syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
        os.close(ruleset)
        _seccomp(list(config["seccomp"]))  # type: ignore[call-overload]
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them
            signal.signal(sig, signal.SIG_DFL)
    except (SetupFailed, OSError, ValueError, KeyError, TypeError) as e:
        os.write(report, _SETUP + str(e).encode(errors="replace"))
        os._exit(125)
    first: OSError | None = None
    last: OSError = FileNotFoundError(2, "No such file or directory")
    for candidate in search:  # as execvp: the first error that is not "not there" wins
        try:
            os.execv(candidate, command)
        except (FileNotFoundError, NotADirectoryError) as e:
            last = e
        except OSError as e:
            first = first or e
    error = first or last  # said by the backend, as a shell says it (execfail)
    os.write(report, _EXEC + str(error.errno or 0).encode())
    os._exit(127 if isinstance(error, FileNotFoundError) else 126)


def _descendants_gone(main: int) -> None:
    """Kill every process still below this one (all are its children by now or will
    be: it is their subreaper) and reap them, until none is left. Never a blocking
    wait: a child not yet listed is found on the next round."""
    import signal
    import time

    me = os.getpid()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        for child in _children(me):
            try:  # noqa: SIM105 (contextlib: one more import at every start)
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.002)


def _children(pid: int) -> list[int]:
    """This process's children: the kernel's list per thread, or (without
    CONFIG_PROC_CHILDREN) every process whose parent it is."""
    out: list[int] = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        pass
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1] == str(pid):
                out.append(int(entry))
    return out


def _json(value: object) -> str:
    """JSON of ints and strings (`json` imports `re`: ~15 ms more at every start)."""
    if isinstance(value, int):
        return str(value)
    text = str(value)
    for char, escaped in (("\\", "\\\\"), ('"', '\\"')):
        text = text.replace(char, escaped)
    return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in text) + '"'


def _status(fd: int, doc: dict[str, object]) -> None:
    line = "{" + ", ".join(f"{_json(k)}: {_json(v)}" for k, v in doc.items()) + "}\n"
    try:  # noqa: SIM105
        os.write(fd, line.encode(errors="replace"))
    except OSError:
        pass


def main(argv: list[str]) -> int:
    config_fd, status_fd, dashes, *command = argv
    status = int(status_fd)
    if dashes != "--" or not command:
        _status(status, {"setup-error": "usage: CONFIG_FD STATUS_FD -- COMMAND..."})
        return 125
    try:
        with os.fdopen(int(config_fd), "rb") as f:
            config = marshal.loads(f.read())
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, "child subreaper")
    except (OSError, ValueError, SetupFailed) as e:
        _status(status, {"setup-error": str(e)})
        return 125
    os.set_inheritable(status, False)
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(config, command, write_end)
    os.close(write_end)
    for fd in config["seccomp"]:
        os.close(fd)
    with os.fdopen(read_end, "rb") as f:
        failure = f.read()
    code = 125
    if failure.startswith(_SETUP):
        _status(status, {"setup-error": failure[1:].decode(errors="replace")})
    else:
        _status(status, {"child-pid": pid, **({"exec-errno": int(failure[1:] or 0)}
                                              if failure.startswith(_EXEC) else {})})
    try:  # the command's own end: its status, 128 + N when signal N killed it
        while True:
            done, wait_status = os.waitpid(-1, 0)
            if done == pid:
                code = os.waitstatus_to_exitcode(wait_status)
                code = 128 - code if code < 0 else code
                break
    except ChildProcessError:
        pass
    _descendants_gone(pid)
    if not failure.startswith(_SETUP):
        _status(status, {"exit-code": code})
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
