"""`SandboxSpec → bwrap argv` is pure: the exact argv is pinned here."""

from __future__ import annotations

from swifty_sandbox.policy.profile import SeccompProfile
from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv
from swifty_sandbox.sandbox.spec.compiler import SandboxSpec

SECCOMP = SeccompProfile((), (), True, ("AF_INET",), ("TIOCSTI",))


def spec(**changes: object) -> SandboxSpec:
    base: dict[str, object] = dict(
        project="/p", cwd="/p/src", read_roots=None, writable=("/p", "/tmp"),
        private_dirs=(), pinned=("/p/.git",), read_only=("/p/.git/config", "/p/.swifty"),
        guard_dirs=("/p/.git/hooks",), unreadable_dirs=("/h/.ssh",),
        unreadable_files=("/p/.env",), env_drop=(), env_keep=(), seccomp=SECCOMP,
        nested_namespaces=False)
    base.update(changes)
    return SandboxSpec(**base)  # type: ignore[arg-type]


def test_exact_argv_in_security_order() -> None:
    assert bwrap_argv(spec(), ["make", "-j2"], bwrap="/usr/bin/bwrap", seccomp_fd=7,
                      status_fd=9) == [
        "/usr/bin/bwrap",
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
        "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--disable-userns",
        "--ro-bind", "/", "/",                                   # 1. all read-only
        "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",  # 2.
        "--tmpfs", "/dev/shm",
        "--bind", "/p", "/p", "--bind", "/tmp", "/tmp",          # 3.-4. writable
        "--bind", "/p/.git", "/p/.git",                          # 5. pinned
        "--ro-bind", "/p/.git/config", "/p/.git/config",         # 6. read-only
        "--ro-bind", "/p/.swifty", "/p/.swifty",
        "--perms", "0555", "--tmpfs", "/p/.git/hooks", "--remount-ro", "/p/.git/hooks",
        "--perms", "0000", "--tmpfs", "/h/.ssh", "--remount-ro", "/h/.ssh",  # 7. hidden
        "--ro-bind", "/dev/null", "/p/.env",
        "--chdir", "/p/src", "--seccomp", "7", "--json-status-fd", "9",
        "--", "make", "-j2",
    ]


def test_strict_binds_only_read_roots_and_private_tmp() -> None:
    argv = bwrap_argv(spec(read_roots=("/usr", "/etc", "/p"), writable=("/p",),
                           private_dirs=("/tmp",)), ["true"])
    assert "/" not in argv[argv.index("--ro-bind") + 1:argv.index("--ro-bind") + 2]
    joined = " ".join(argv)
    assert "--ro-bind /usr /usr --ro-bind /etc /etc --ro-bind /p /p" in joined
    assert "--tmpfs /tmp --bind /p /p" in joined
    assert "--ro-bind / /" not in joined


def test_permissive_allows_nested_namespaces() -> None:
    assert "--disable-userns" not in bwrap_argv(spec(nested_namespaces=True), ["gdb"])


def test_unreadable_comes_after_every_writable_bind() -> None:
    argv = bwrap_argv(spec(writable=("/p", "/h")), ["true"])
    last_bind = max(i for i, a in enumerate(argv) if a == "--bind")
    first_hidden = argv.index("/dev/null") - 1
    assert last_bind < first_hidden


def test_command_that_looks_like_an_option_is_not_parsed_by_bwrap() -> None:
    argv = bwrap_argv(spec(), ["--help"])
    assert argv[-2:] == ["--", "--help"]


def test_read_write_binds_from_descriptors() -> None:
    argv = bwrap_argv(spec(temp_dir="/h/.cache/t", temp_mounts=("/tmp", "/var/tmp"),
                           writable=("/p",)), ["true"],
                      dir_fds={"/p": 11, "/p/.git": 12, "/tmp": 13, "/var/tmp": 14})
    joined = " ".join(argv)
    assert ("--bind-fd 13 /tmp --bind-fd 14 /var/tmp --bind-fd 11 /p "
            "--bind-fd 12 /p/.git") in joined
    assert "--bind " not in joined
