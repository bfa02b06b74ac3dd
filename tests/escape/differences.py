"""The rows of the README's backend table where Landlock holds less than bwrap (or
differently), by id. A test that fails under a backend names its row
(`@pytest.mark.differs("id")`, a strict xfail there); the README's table has each row
(tests/escape/test_backend_table.py)."""

from __future__ import annotations

ROWS: dict[str, str] = {
    "syscall-setup": "a refused call bwrap's own set-up makes (unshare, mount, clone with "
                     "namespace flags, pivot_root, netlink sockets): refused, "
                     "not reported (the observer's filter is loaded before bwrap)",
    "allowlist": "a network allowlist (the egress proxy) is refused (125): Landlock's "
                 "TCP rules are per port, not per address",
    "loopback-server": "a server on 127.0.0.1 inside: TCP bind and connect are refused "
                       "(no network namespace of its own)",
    "tmp-by-name": "/tmp by its name is the host's (out of sight, not writable): "
                   "TMPDIR points at the project's temp dir",
    "tmp-fallback": "no temp dir can be made (read-only home): 125, not a private /tmp",
    "shm": "/dev/shm (POSIX semaphores: Python multiprocessing pools) is refused: the "
           "host's is shared with every process",
    "erofs": "a refused write fails with EACCES (Permission denied), not EROFS",
    "self-code": "swifty-sandbox's own code inside a writable root: refused (125), "
                 "it cannot be kept read-only",
    "host-processes": "host processes are listed in /proc (names, command lines); "
                      "their environ, memory, ptrace and signals stay closed",
    "new-beside-hidden": "a file made during the run in a directory that holds a hidden "
                         "path (the project root beside a hidden .env) can be written, "
                         "not read back, until the next run",
    "user-edit-during-run": "a protected file you change yourself while a command runs "
                            "is put back too (your version kept aside, .swifty-blocked-…)",
    "worktree-lock": "a linked worktree is not locked inside: git worktree remove / move "
                     "from a command works (bwrap: a read-only `locked` stops them)",
    "hidden-names": "names inside hidden directories can be listed (contents cannot)",
    "hidden-file-reads": "a read of a hidden file (not a listing) is reported from the "
                         "command's output only (`seen: output`, no fix): no mounts, so "
                         "no watched placeholder",
    "hidden-listings": "a listing of a hidden directory is reported only by a name the "
                       "sandbox hides (the observer's directory opens), not through a "
                       "link the command made or /proc/self/root",
    "violations-dns": "a name lookup is refused at socket() by the seccomp filter, before "
                      "any connect the observer sees: not reported, and at a terminal no "
                      "network hint",
}
