"""Processes: no host process is visible or signalable, nothing survives the command,
the kernel surface is closed, limits hold."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from swifty_sandbox.sandbox.agents import RunResult

pytestmark = pytest.mark.linux  # namespaces, seccomp, cgroups, bwrap mounts

Attack = Callable[..., RunResult]
Runner = Callable[..., RunResult]


@pytest.fixture
def host_process() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "300"], env={**os.environ, "HOST_SECRET": "hs-4242"})
    yield proc
    proc.kill()
    proc.wait()


def test_signal_host_process(attack: Attack, host_process: subprocess.Popen[bytes],
                             project: Path) -> None:
    victims: list[subprocess.Popen[bytes]] = [host_process]
    pid_file = project / "victim.pid"
    pid_file.write_text(str(host_process.pid))

    def worked() -> bool:
        # A SIGKILLed process takes a moment to become reapable on a loaded machine.
        try:
            victims[-1].wait(timeout=1)
        except subprocess.TimeoutExpired:
            return False
        return True

    def reset() -> None:
        # The confined run aims at a fresh victim, whose pid only the file tells.
        victims.append(subprocess.Popen(["sleep", "300"]))
        pid_file.write_text(str(victims[-1].pid))

    attack(["bash", "-c", 'kill -9 "$(cat victim.pid)"'], worked, reset)
    victims[-1].kill()
    victims[-1].wait()


@pytest.mark.differs("host-processes")
def test_read_host_process_environ(confined: Runner, unconfined: Runner,
                                   host_process: subprocess.Popen[bytes]) -> None:
    command = f"cat /proc/{host_process.pid}/environ | tr '\\0' '\\n' | grep HOST_SECRET"
    assert "hs-4242" in unconfined(command).stdout
    result = confined(command)
    assert "hs-4242" not in result.stdout
    listing = confined("ls /proc | grep -c '^[0-9]'").stdout.strip()
    assert int(listing) < 10  # only the sandbox's own few processes are visible


def _alive(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def test_daemon_does_not_survive(attack: Attack) -> None:
    marker = f"31{uuid.uuid4().int % 10**6}"  # a unique sleep length as the marker

    def worked() -> bool:
        time.sleep(0.3)
        return bool(_alive(f"sleep {marker}"))

    def reset() -> None:
        for proc in _alive(f"sleep {marker}"):
            proc.kill()
        time.sleep(0.2)

    # The pause lets the daemon finish detaching before the command returns; without
    # it the control is racy (the executor kills the group before setsid() ran).
    attack(f"setsid nohup sleep {marker} >/dev/null 2>&1 & disown; sleep 0.5; echo started",
           worked, reset)


def test_tiocsti_into_the_terminal(confined: Runner, unconfined: Runner) -> None:
    """Pushing keystrokes into the user's terminal: seccomp fails the ioctl with EPERM
    even before the kernel's own checks, so the probe uses an fd that is not a tty:
    unconfined the kernel answers ENOTTY, confined seccomp answers EPERM — and on a
    real pty nothing is injected."""
    code = ("import fcntl,termios,errno,sys\n"
            "try: fcntl.ioctl(sys.stdin.fileno(), termios.TIOCSTI, b'x'); print('INJECTED')\n"
            "except OSError as e: print(errno.errorcode[e.errno])")
    command = [sys.executable, "-c", code]
    assert unconfined(command).stdout.strip() in ("ENOTTY", "INJECTED")
    assert confined(command).stdout.strip() == "EPERM"
    leader, follower = pty.openpty()
    try:
        result = confined(command, stdin=follower)
        assert result.stdout.strip() == "EPERM"
        os.set_blocking(follower, False)
        termios.tcflush(leader, termios.TCIOFLUSH)
    finally:
        os.close(leader)
        os.close(follower)


SYSCALL_PROBE = Path(__file__).with_name("syscall_probe.py")


@pytest.mark.parametrize("call", ["ptrace", "mount", "unshare", "setns", "bpf",
                                  "perf_event_open", "keyctl", "kexec_load",
                                  "init_module", "io_uring_setup", "userfaultfd",
                                  "process_vm_readv"])
def test_kernel_surface_fails_with_eperm(confined: Runner, unconfined: Runner,
                                         call: str) -> None:
    """Each call made with arguments the kernel rejects (EBADF, EFAULT, EINVAL…):
    unconfined that is the kernel's answer, confined the filter answers EPERM first."""
    command = [sys.executable, str(SYSCALL_PROBE), call]
    control = unconfined(command).stdout.strip()
    result = confined(command).stdout.strip()
    assert result == "EPERM", f"{call}: confined {result}, unconfined {control}"
    if control == "EPERM":
        pytest.skip(f"{call} is refused to this user even unconfined; the filter is "
                    "checked by the confined answer alone")


def test_nested_user_namespace(confined: Runner, unconfined: Runner) -> None:
    command = "unshare --user --map-root-user id -u"
    assert unconfined(command).stdout.strip() == "0", "control: no user namespaces here"
    result = confined(command)
    assert result.stdout.strip() != "0"
    assert "Operation not permitted" in result.stderr


def test_nested_namespaces_and_mount(confined: Runner, unconfined: Runner,
                                     project: Path) -> None:
    target = project / "mnt"
    target.mkdir()
    command = (f"unshare --user --map-root-user --mount sh -c "
               f"'mount -t tmpfs none {target} && echo MOUNTED'; "
               f"mount -t tmpfs none {target} && echo MOUNTED-DIRECT; true")
    assert "MOUNTED" in unconfined(command).stdout
    result = confined(command)
    assert "MOUNTED" not in result.stdout, result
    assert "Operation not permitted" in result.stderr


def test_ptrace_a_sibling(confined: Runner, unconfined: Runner) -> None:
    code = ("import ctypes,os,errno,time\n"
            "pid=os.fork()\n"
            "if pid==0: time.sleep(5); os._exit(0)\n"
            "libc=ctypes.CDLL(None, use_errno=True)\n"
            "r=libc.ptrace(16, pid, 0, 0)\n"
            "print('ATTACHED' if r==0 else errno.errorcode[ctypes.get_errno()])\n"
            "os.kill(pid, 9)")
    command = [sys.executable, "-c", code]
    assert unconfined(command).stdout.strip() == "ATTACHED"
    assert confined(command).stdout.strip() == "EPERM"


# -- limits -----------------------------------------------------------------------------

def test_timeout_kills_a_tree_that_ignores_sigterm(confined: Runner) -> None:
    marker = f"32{uuid.uuid4().int % 10**6}"
    start = time.monotonic()
    result = confined(f"trap '' TERM; (trap '' TERM; sleep {marker}) & sleep {marker}",
                      timeout=1)
    assert result.exit_code == 124 and result.timed_out and result.is_error
    assert time.monotonic() - start < 5
    time.sleep(0.3)
    assert _alive(f"sleep {marker}") == []


def test_timeout_unconfined_kills_the_tree_too(unconfined: Runner) -> None:
    marker = f"33{uuid.uuid4().int % 10**6}"
    result = unconfined(f"trap '' TERM; (trap '' TERM; sleep {marker}) & sleep {marker}",
                        timeout=1)
    assert result.exit_code == 124
    time.sleep(0.3)
    assert _alive(f"sleep {marker}") == []


def test_one_gigabyte_of_output_keeps_memory_bounded(project: Path, home: Path) -> None:
    code = ("from swifty_sandbox import Sandbox\n"
            f"r = Sandbox({str(project)!r}, home={str(home)!r}).run("
            "'head -c 1000000000 /dev/zero; echo END', output_bytes=1 << 20)\n"
            "print(r.exit_code, r.truncated, len(r.stdout), r.stdout.endswith('END\\n'))\n"
            # The executor's own peak: VmHWM belongs to this process's memory since its
            # exec (ru_maxrss would carry over the test process's peak through fork).
            "print([l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith('VmHWM:')][0])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    assert out[:2] == ["0", "True"] and out[3] == "True", out
    assert int(out[2]) < 2 << 20
    peak_mb = int(out[4]) / 1024
    assert peak_mb < 100, f"executor peak RSS {peak_mb:.0f} MB"


def test_memory_cap(confined: Runner) -> None:
    result = confined([sys.executable, "-c", "b = bytearray(400 << 20); print('GOT')"],
                      memory_bytes=200 << 20)
    assert "GOT" not in result.stdout
    assert "MemoryError" in result.stderr
