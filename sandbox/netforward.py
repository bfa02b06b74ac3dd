"""The forwarder: the first process inside a sandbox with network by allowlist.

Run as `python -I -S -c <this file's text> FD PORT -- COMMAND...` (standard library
only, nothing imported from the user's environment or this package). It listens on
127.0.0.1:PORT in the sandbox's own network namespace, starts the command, and hands
every accepted connection to the host-side proxy as a descriptor (SCM_RIGHTS) over the
AF_UNIX socket FD that it inherited: the proxy then reads and writes that socket
itself, nothing is copied in here, and the command can neither create a unix socket
(seccomp) nor inherit FD (close-on-exec). It ends with the command's exit status.
It runs under the same seccomp filter as the command: it needs AF_INET and sendmsg
only.
"""

from __future__ import annotations

import array
import os
import signal
import socket
import sys


def main(argv: list[str]) -> int:
    fd, port, dashes, *command = argv
    if dashes != "--" or not command:
        sys.stderr.write("swifty-sandbox forwarder: usage: FD PORT -- COMMAND...\n")
        return 125
    host = socket.socket(fileno=int(fd))
    host.set_inheritable(False)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(128)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(number, signal.SIG_DFL)  # as the command would get them
        try:
            os.execvp(command[0], command)
        except OSError as e:
            sys.stderr.write(f"swifty-sandbox: {command[0]}: {e.strerror}\n")
            os._exit(126 if isinstance(e, PermissionError) else 127)
    import select

    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code
        try:
            ready, _, _ = select.select([listener.fileno(), wake_read], [], [])
        except InterruptedError:
            continue
        if wake_read in ready:
            os.read(wake_read, 512)
        if listener.fileno() in ready:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            try:  # noqa: SIM105 (contextlib: one more import at every start)
                host.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                       array.array("i", [conn.fileno()]))])
            except OSError:
                pass  # the proxy is gone: the connection closes, the command goes on
            conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
