"""Failures of the world around the command: a plain message and exit 2, never a
traceback, never a silent fallback to allow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWIFTY = Path(sys.executable).with_name("swifty-sandbox")


def swifty(*args: str, cwd: Path | None = None, stdout: object = subprocess.PIPE,
           env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run([str(SWIFTY), *args], cwd=cwd, stdout=stdout,  # type: ignore[call-overload]
                          stderr=subprocess.PIPE, timeout=30, check=False,
                          env={**os.environ, **(env or {})})
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize("kind", ["missing", "fifo", "file"])
def test_check_with_a_project_that_is_not_a_directory(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "project"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "file":
        target.write_text("")
    code, err = swifty("check", "--project", str(target), "-c", "ls")
    assert code == 2 and str(target) in err and "Traceback" not in err, err


def test_python_api_refuses_a_missing_project(tmp_path: Path) -> None:
    from swifty_sandbox import Sandbox
    from swifty_sandbox.policy import UsageError

    with pytest.raises(UsageError):
        Sandbox(tmp_path / "missing")


def test_deleted_working_directory(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    # The shell deletes its own working directory, then runs check from there.
    done = subprocess.run(["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" check '
                           f"-c ls", str(SWIFTY)], capture_output=True, timeout=30,
                          check=False)
    err = done.stderr.decode()
    assert done.returncode == 2 and "no longer exists" in err and "Traceback" not in err, err


@pytest.mark.parametrize("as_json", [False, True])
def test_stdout_on_a_full_device(project: Path, as_json: bool) -> None:
    with open("/dev/full", "w") as full:
        code, err = swifty("check", "--project", str(project), *(["--json"] if as_json else []),
                           "-c", "ls", stdout=full)
    assert code == 2 and "could not write the output" in err and "Traceback" not in err, err


def test_nul_in_a_settings_value(project: Path, home: Path) -> None:
    config = home / ".swifty" / "config.yaml"
    config.parent.mkdir()
    config.write_text('sandbox:\n  writable: ["/tmp/a\\0b"]\n')
    code, err = swifty("check", "--project", str(project), "-c", "ls",
                       env={"HOME": str(home)})
    assert code == 2 and f"{config}:2:" in err and "NUL" in err, err


def test_process_limit_is_not_reported_as_missing_libseccomp() -> None:
    """No process can be started (as under a process limit): libseccomp is still found,
    and the seccomp filter is built."""
    script = """
import errno, subprocess
def refuse(*args, **kwargs):
    raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
subprocess.Popen = refuse
from swifty_sandbox.policy.profile import load_profile
from swifty_sandbox.sandbox.linux.seccomp import export
from pathlib import Path
assert export(load_profile("default", Path("/")).seccomp)
print("built")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60,
                          check=False)
    assert done.stdout == b"built\n", done.stderr.decode()
