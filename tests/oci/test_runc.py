"""The OCI bundle under a real runtime: runc (Debian's), as root or rootless.

Each attack runs twice, as in the escape suite: unconfined (the control that proves it
works on this machine) and in the bundle, judged from outside (a file that must not
exist, a listener that must get nothing, a secret that must not be printed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.oci.bundle import write_bundle

from ..conftest import write_rules
from ..listener import tcp_listener

RUNC = shutil.which("runc") or next(
    (p for p in ("/usr/sbin/runc", "/usr/bin/runc") if os.access(p, os.X_OK)), None)
pytestmark = [pytest.mark.runc, pytest.mark.unprivileged,
              pytest.mark.skipif(RUNC is None, reason="runc is not installed "
                                                      "(apt-get install runc)")]
PROBE = str(Path(__file__).parents[1] / "escape" / "syscall_probe.py")
SECRET = "AKIA-runc-secret-4242"
# getpid through the i386 ABI (`int 0x80`) from a 64-bit process.
I386_GETPID = ("import ctypes, mmap\n"
               "buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ|mmap.PROT_WRITE|mmap.PROT_EXEC)\n"
               "buf.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')\n"
               "f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof("
               "ctypes.c_char.from_buffer(buf)))\n"
               "print('pid', f())\n")
Run = Callable[[list[str]], "subprocess.CompletedProcess[str]"]


@pytest.fixture
def in_runc(project: Path, home: Path, outside_temp: Path) -> Iterator[Run]:
    root = outside_temp / "runc-state"
    made: list[str] = []

    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        assert RUNC is not None
        spec = Sandbox(project, home=home).spec()
        bundle = outside_temp / f"bundle-{len(made)}"
        write_bundle(bundle, spec, command)
        name = "swifty-test-" + uuid.uuid4().hex[:12]
        made.append(name)
        return subprocess.run([RUNC, "--root", str(root), "run", "--bundle", str(bundle),
                               name], cwd=bundle, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)

    yield run
    assert RUNC is not None
    for name in made:
        subprocess.run([RUNC, "--root", str(root), "delete", "--force", name],
                       capture_output=True, timeout=60)


@pytest.fixture
def unconfined(project: Path) -> Run:
    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=project, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)

    return run


def test_ordinary_commands_work(in_runc: Run, project: Path) -> None:
    result = in_runc(["sh", "-c", "echo hello; ls / > /dev/null && echo listed; "
                      "sh -c 'echo nested'; echo made > made.txt; cat made.txt; "
                      f"{sys.executable} -c 'print(6 * 7)'"])
    assert result.returncode == 0, result
    assert result.stdout.split() == ["hello", "listed", "nested", "made", "42"]
    assert (project / "made.txt").read_text() == "made\n"  # the project is writable


@pytest.mark.parametrize("call", ["ptrace", "mount", "unshare", "setns", "bpf", "keyctl"])
def test_kernel_surface_fails(in_runc: Run, unconfined: Run, call: str) -> None:
    control = unconfined([sys.executable, PROBE, call]).stdout.strip()
    assert control and control != "EPERM", control
    result = in_runc([sys.executable, PROBE, call])
    assert result.stdout.strip() == "EPERM", result


def test_unshare_command_fails(in_runc: Run) -> None:
    result = in_runc(["unshare", "--user", "--map-root-user", "true"])
    assert result.returncode != 0 and "Operation not permitted" in result.stderr, result


def test_no_network(in_runc: Run, unconfined: Run) -> None:
    server = tcp_listener()
    try:
        port = server.sock.getsockname()[1]
        code = ("import socket; s = socket.socket(socket.AF_INET); s.settimeout(2); "
                f"s.connect(('127.0.0.1', {port})); s.send(b'secret')")
        unconfined([sys.executable, "-c", code])
        threading.Event().wait(0.3)
        assert server.received, "control: the connection does not work unconfined"
        server.reset()
        result = in_runc([sys.executable, "-c", code])
        threading.Event().wait(0.5)
        assert not server.received, f"ESCAPE: the host listener got {server.received}: {result}"
        assert result.returncode != 0 and "refused" in result.stderr, result
    finally:
        server.close()


def test_host_unix_sockets_cannot_be_made(in_runc: Run, unconfined: Run) -> None:
    code = ("import socket, errno\ntry:\n  socket.socket(socket.AF_UNIX); print('made')\n"
            "except OSError as e: print(errno.errorcode[e.errno])")
    assert unconfined([sys.executable, "-c", code]).stdout.strip() == "made"
    assert in_runc([sys.executable, "-c", code]).stdout.strip() == "EPERM"


def test_writes_outside_the_project_fail(in_runc: Run, unconfined: Run, home: Path,
                                         project: Path) -> None:
    target = home / "planted.txt"
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    command = ["sh", "-c", f"echo x > {target}; echo x > {hook}; echo x > /etc/planted"
               if os.getuid() else f"echo x > {target}; echo x > {hook}"]
    unconfined(command)
    assert target.exists() and hook.exists(), "control: the writes do not work unconfined"
    target.unlink()
    hook.unlink()
    result = in_runc(command)
    assert not target.exists() and not hook.exists(), f"ESCAPE: {result}"
    assert not os.path.exists("/etc/planted")
    assert "Read-only file system" in result.stderr, result


def test_hidden_files_are_unreadable(in_runc: Run, unconfined: Run, home: Path,
                                     project: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SECRET + "\n")
    (project / ".env").write_text(SECRET + "\n")
    write_rules(home / ".swifty" / "permissions.yaml", [("ReadFile(.env)", "deny")])
    command = ["sh", "-c", f"cat {home}/.ssh/id_ed25519; grep -r {SECRET} {home}/.ssh; "
               "cat .env"]
    control = unconfined(command)
    assert control.stdout.count(SECRET) == 3, control
    result = in_runc(command)
    assert SECRET not in result.stdout + result.stderr, f"ESCAPE: {result}"


def test_secrets_are_not_in_the_environment(in_runc: Run,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    result = in_runc(["sh", "-c", "env"])
    assert result.returncode == 0 and "PATH=" in result.stdout, result
    assert SECRET not in result.stdout


def test_foreign_syscall_abis_are_killed_as_under_bwrap(in_runc: Run, unconfined: Run,
                                                        project: Path) -> None:
    """What the OCI profile's architectures list is for: an i386 syscall from an x86_64
    process is killed (SIGSYS) under runc as it is under our own filter."""
    if os.uname().machine != "x86_64":
        pytest.skip("the i386 ABI exists on x86_64 only")
    control = unconfined([sys.executable, "-c", I386_GETPID])
    if control.returncode != 0:
        pytest.skip(f"this kernel has no i386 emulation: {control.stderr}")
    assert control.stdout.startswith("pid ")
    result = in_runc([sys.executable, "-c", I386_GETPID])
    assert result.returncode in (-31, 128 + 31) and "pid" not in result.stdout, result
    bwrap = Sandbox(project).run([sys.executable, "-c", I386_GETPID])
    assert bwrap.exit_code == 128 + 31 and "pid" not in bwrap.stdout, bwrap


def test_proc_sys_is_read_only(in_runc: Run) -> None:
    """As root the container's uid 0 is the host's, and sysctl files check the uid, not a
    capability: /proc/sys must be read-only (kernel.core_pattern runs a program as root
    outside). Checked from the mount table, not by writing a host sysctl."""
    result = in_runc(["sh", "-c", "awk '$2 == \"/proc/sys\" {print $4}' /proc/self/mounts; "
                      # its own value back: harmless should the write ever succeed
                      "v=$(cat /proc/sys/kernel/core_uses_pid); "
                      "echo $v > /proc/sys/kernel/core_uses_pid || echo refused"])
    options = result.stdout.split()
    assert options and options[0].split(",")[0] == "ro" and options[-1] == "refused", result
