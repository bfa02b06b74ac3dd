"""The forwarder: the first process inside a sandbox with network by allowlist.

Run as `python -I -S -c <this file's text> FD PORT -- COMMAND...` (standard library
only, nothing imported from the user's environment or this package). It listens on
127.0.0.1:PORT in the sandbox's own network namespace, starts the command, and hands
every accepted connection to the host-side proxy as a descriptor (SCM_RIGHTS) over the
AF_UNIX socket FD that it inherited: the proxy then reads and writes that socket
itself, nothing is copied in here, and the command can neither create a unix socket
(seccomp) nor inherit FD (close-on-exec). It ends with the command's exit status.
It runs under the same seccomp filter as the command: it needs AF_INET and sendmsg
only. It makes itself non-dumpable before the command exists: the command runs as the
same user, and could otherwise open `/proc/<forwarder>/mem` (or ptrace it where the
profile allows) and run its own code here, with the channel to the host proxy. The
command's exec makes it dumpable again, for its own debuggers.
"""

from __future__ import annotations

# Built-in modules only where the interpreter has them (`socket`, `signal`, `select`
# build enums or load shared objects: ~10 ms more per run).
import _signal  # type: ignore[import-not-found]  # no stubs: the C half of `signal`
import _socket
import _thread
import os
import sys


def _wait(pid: int) -> None:
    """End with the command: its status, 128 + N when a signal N killed it."""
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


def _undumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0), confirmed by PR_GET_DUMPABLE. Through `_ctypes`, the
    C half of `ctypes` (which would cost ~3 ms more to import)."""
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")  # type: ignore[arg-type]
        return bool(_ctypes.call_function(prctl, (4, 0, 0, 0, 0)) == 0
                    and _ctypes.call_function(prctl, (3, 0, 0, 0, 0)) == 0)
    except (ImportError, OSError, AttributeError):
        return False


def main(argv: list[str]) -> int:
    fd, port, dashes, *command = argv
    if dashes != "--" or not command:
        sys.stderr.write("swifty-sandbox forwarder: usage: FD PORT -- COMMAND...\n")
        return 125
    if not _undumpable():  # fail closed: the command must not reach into us
        sys.stderr.write("swifty-sandbox forwarder: cannot make itself non-dumpable\n")
        return 125
    host = _socket.socket(fileno=int(fd))
    os.set_inheritable(int(fd), False)
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(128)
    try:  # Python ignores SIGPIPE and SIGXFSZ; the command gets the defaults back
        pid = os.posix_spawnp(command[0], command, os.environ,
                              setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ))
    except OSError as e:
        sys.stderr.write(f"swifty-sandbox: {command[0]}: {e.strerror}\n")
        return 126 if isinstance(e, PermissionError) else 127
    _thread.start_new_thread(_wait, (pid,))
    while True:
        try:
            conn, _ = listener._accept()  # type: ignore[attr-defined]  # fd, address
        except OSError:
            continue
        try:  # noqa: SIM105 (contextlib: one more import at every start)
            host.sendmsg([b"c"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS,
                                   conn.to_bytes(4, sys.byteorder, signed=True))])
        except OSError:
            pass  # the proxy is gone: the connection closes, the command goes on
        os.close(conn)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
