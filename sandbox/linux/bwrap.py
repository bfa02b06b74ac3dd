"""`SandboxSpec → bwrap argv`. Pure: it returns the list, the executor runs it.

Mount order matters — a later mount wins over an earlier one on the same path — so
the argv is built in these steps, and no step may move:
  1. The whole file system read-only (`--ro-bind / /`), or only the read roots (strict).
  2. A fresh /dev and a /proc of the new PID namespace (host processes are invisible).
  3. Temp dirs: the project's own temp directory bound at /tmp and /var/tmp, or
     private (empty tmpfs); with `tmp: host` they are writable roots (step 4).
  4. Writable roots, read-write.
  5. Pins: each ancestor of a read-only path inside a writable root is bound onto
     itself, so it is a mount point and cannot be renamed or removed (EBUSY) — this is
     what stops "replace `.git` by renaming it" and "mv .swifty away".
  6. Read-only paths inside writable roots (protected paths, write-deny rules), and
     empty read-only directories or files where a protected path is missing; then the
     project's toolchain cache: its parent (every project's caches) behind an empty
     tmpfs, the project's own bound read-write in it (after 6, so that a protected
     `~/.cache/swifty-sandbox` inside a writable home does not cover it).
  7. Unreadable paths last, so nothing above can uncover them: a directory behind an
     empty directory of its own (0400, `placeholders.py`) or else an empty 0000 tmpfs,
     a file behind a placeholder of its own or /dev/null.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..spec.compiler import SandboxSpec


def bwrap_argv(spec: SandboxSpec, command: Sequence[str], *, bwrap: str = "bwrap",
               seccomp_fd: int | None = None, status_fd: int | None = None,
               dir_fds: Mapping[str, int] | None = None,
               file_fds: Mapping[str, int] | None = None) -> list[str]:
    """`dir_fds`: by mount destination, descriptors of the read-write mount sources,
    opened without following any symlink (`backend.open_dirs`; bwrap closes each after
    use, so one per mount); with them bwrap binds what was checked, even if a
    concurrent command swapped a directory for a link since. `file_fds`: by hidden
    path, the O_PATH descriptor of the placeholder it is bound from (else /dev/null
    for a file, an empty 0000 tmpfs for a directory)."""
    fds = dir_fds or {}
    placeholders = file_fds or {}  # hidden path → its placeholder (`placeholders.py`)

    def bind(source: str, dest: str) -> list[str]:
        return ["--bind-fd", str(fds[dest]), dest] if dest in fds else \
            ["--bind", source, dest]

    argv = [bwrap]
    # Namespaces and process hygiene. --unshare-user always, also for root: root outside
    # must not mean capabilities inside.
    argv += ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
             "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
             "--cap-drop", "ALL"]
    if not spec.nested_namespaces:
        argv.append("--disable-userns")
    # 1.
    if spec.read_roots is None:
        argv += ["--ro-bind", "/", "/"]
    else:
        for root in spec.read_roots:
            argv += ["--ro-bind", root, root]
    # 2.
    # /proc/sys read-only: bwrap covers it only when it looks writable, and its
    # directory never does (0555), yet as root (uid 0 → 0) every sysctl file is
    # writable — kernel.core_pattern would run a program as root outside.
    argv += ["--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
             "--tmpfs", "/dev/shm"]
    # 3. and 4.
    if spec.temp_dir is not None:
        for path in spec.temp_mounts:
            argv += bind(spec.temp_dir, path)
    for path in spec.private_dirs:
        argv += ["--tmpfs", path]
    for path in spec.writable:
        argv += bind(path, path)
    # 5.
    for path in spec.pinned:
        argv += bind(path, path)
    # 6.
    for path in spec.read_only:
        argv += ["--ro-bind", path, path]
    for path in spec.guard_dirs:
        argv += ["--perms", "0555", "--tmpfs", path, "--remount-ro", path]
    for path in spec.guard_files:
        argv += ["--ro-bind", "/dev/null", path]
    for path in spec.worktree_locks:
        argv += ["--ro-bind", spec.lock_reason or "/dev/null", path]
    if spec.toolchain_dir is not None:
        parent = os.path.dirname(spec.toolchain_dir)
        argv += ["--perms", "0555", "--tmpfs", parent,
                 *bind(spec.toolchain_dir, spec.toolchain_dir), "--remount-ro", parent]
    # 7.
    for path in spec.unreadable_dirs:
        argv += ["--ro-bind-fd", str(placeholders[path]), path] if path in placeholders \
            else ["--perms", "0000", "--tmpfs", path, "--remount-ro", path]
    for path in spec.unreadable_files:
        argv += ["--ro-bind-fd", str(placeholders[path]), path] if path in placeholders \
            else ["--ro-bind", "/dev/null", path]
    argv += ["--chdir", spec.cwd]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if status_fd is not None:
        argv += ["--json-status-fd", str(status_fd)]
    argv += ["--", *command]
    return argv
