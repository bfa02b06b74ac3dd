"""Failures: a plain message and a clear exit code, never a traceback, never a silent
fallback to allow. (Ctrl-C → 130: tests/cli/test_signals.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SWIFTY = Path(sys.executable).with_name("swifty-sandbox")


def swifty(*args: str, cwd: Path | None = None, stdout: object = subprocess.PIPE,
           env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run([str(SWIFTY), *args], cwd=cwd, stdout=stdout,  # type: ignore[call-overload]
                          stderr=subprocess.PIPE, timeout=120, check=False,
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


# -- run: every failure its own exit code (127, 126, 2, 130), never a traceback ----------

UNCAPPED = ("--max-memory", "unlimited", "--max-processes", "unlimited")
# How the command is started: through prlimit (the caps), by bwrap itself (no caps to
# set), unconfined. Each reports a failed exec its own way.
STARTS = {"prlimit": (), "bwrap": UNCAPPED,
          "off": ("--sandbox", "off", "--mode", "bypassPermissions")}


def run_json(project: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run([str(SWIFTY), "run", "--project", str(project), "--json", *args],
                          capture_output=True, timeout=180, check=False, cwd=project)
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["exit_code"] == done.returncode
    return done.returncode, data, err


@pytest.mark.bwrap
@pytest.mark.parametrize("start", STARTS)
def test_run_a_command_that_does_not_exist_is_127(project: Path, start: str) -> None:
    code, data, _ = run_json(project, *STARTS[start], "--", "no-such-program-x")
    assert code == 127 and data["decision"]["effect"] == "allow", data
    assert data["stderr"] == "swifty-sandbox: no-such-program-x: command not found\n"
    code, data, _ = run_json(project, *STARTS[start], "--", "./no/such/file")
    assert code == 127 and "command not found" in data["stderr"], data


@pytest.mark.bwrap
@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("target", ["plain-file", "directory", "plain-file/below"])
def test_run_a_command_that_cannot_be_executed_is_126(project: Path, start: str,
                                                     target: str) -> None:
    """126 like a denial, told apart by the decision: "allow", and the reason."""
    (project / "plain-file").write_text("#!/bin/sh\necho ran\n")
    (project / "directory").mkdir()
    code, data, _ = run_json(project, *STARTS[start], "--", f"./{target}")
    assert code == 126 and data["decision"]["effect"] == "allow", data
    assert data["stderr"].startswith(f"swifty-sandbox: ./{target}: cannot execute: "), data
    assert "ran" not in data["stdout"] and not data["is_error"]


@pytest.mark.bwrap
@pytest.mark.parametrize("start", STARTS)
def test_run_keeps_a_commands_own_1_126_and_127(project: Path, start: str) -> None:
    """The control: a command that ran and chose these statuses is not rewritten."""
    for status in (1, 126, 127):
        code, data, _ = run_json(project, *STARTS[start], "--", "sh", "-c",
                                 f"echo own >&2; exit {status}")
        assert (code, data["stderr"]) == (status, "own\n"), data


@pytest.mark.bwrap
def test_run_not_found_in_a_terminal_says_so_too(project: Path) -> None:
    done = subprocess.run([str(SWIFTY), "run", "--project", str(project), *UNCAPPED, "--",
                           "no-such-program-x"], capture_output=True, timeout=180, check=False)
    err = done.stderr.decode()
    assert done.returncode == 127 and "no-such-program-x: command not found" in err, err


def _landlock_or_skip() -> None:
    from swifty_sandbox.sandbox.landlock.backend import kernel_abi

    abi, why = kernel_abi()
    if not abi:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no Landlock: {why}")
        pytest.skip(f"no Landlock: {why}")


# Each launcher that can be the one to exec the command, on a terminal (text mode: its
# stderr is not captured, so nothing can be taken out of it afterwards).
LAUNCHERS = {"prlimit": ("--backend", "bwrap"), "bwrap": ("--backend", "bwrap", *UNCAPPED),
             "landlock": ("--backend", "landlock"),
             "landlock-uncapped": ("--backend", "landlock", *UNCAPPED)}


def run_text(project: Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run([str(SWIFTY), "run", "--project", str(project), *args],
                          capture_output=True, timeout=180, check=False, cwd=project)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.bwrap
@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_run_a_mistyped_command_on_a_terminal_is_the_shells_message(
        project: Path, launcher: str) -> None:
    """Only "command not found" and 127, as a shell says it: once the launcher's own
    report reached the terminal (`prlimit: failed to execute nosuchcmd: No such file
    or directory`, `bwrap: execvp …`)."""
    if launcher.startswith("landlock"):
        _landlock_or_skip()
    for program in ("no-such-program-x", "./no/such/file"):
        code, _, err = run_text(project, *LAUNCHERS[launcher], "--", program)
        assert (code, err) == (127, f"swifty-sandbox: {program}: command not found\n")
    (project / "plain-file").write_text("echo ran\n")
    code, _, err = run_text(project, *LAUNCHERS[launcher], "--", "./plain-file")
    assert code == 126 and err.startswith("swifty-sandbox: ./plain-file: cannot execute: ")
    assert "prlimit" not in err and "bwrap" not in err and "launcher" not in err, err
    # The forms agents send (the hooks' rewrite is `run -c`): the shell's own message.
    for args in (("-c", "no-such-program-x --flag"),
                 ("--", "bash", "-c", "no-such-program-x")):
        code, _, err = run_text(project, *LAUNCHERS[launcher], *args)
        assert code == 127 and err.endswith("no-such-program-x: command not found\n"), err
        assert "prlimit" not in err and "execvp" not in err, err


@pytest.mark.bwrap
@pytest.mark.parametrize("launcher", ["prlimit", "bwrap"])
def test_run_a_program_only_the_sandbox_sees_still_runs(project: Path, launcher: str
                                                        ) -> None:
    """The control: not found from outside is not "not found" inside. /tmp inside is
    the project's own, so a program an earlier command put there is missing on the
    host and runs in the sandbox."""
    made = "mkdir -p /tmp/own-bin && printf '#!/bin/sh\\necho inside\\n' > " \
           "/tmp/own-bin/prog && chmod +x /tmp/own-bin/prog"
    assert run_text(project, *LAUNCHERS[launcher], "-c", made)[0] == 0
    assert not os.path.exists("/tmp/own-bin/prog")  # the host's /tmp has none
    code, out, err = run_text(project, *LAUNCHERS[launcher], "--", "/tmp/own-bin/prog")
    assert (code, out, err) == (0, "inside\n", ""), err
    code, data, _ = run_json(project, *LAUNCHERS[launcher], "--", "/tmp/own-bin/prog")
    assert (code, data["stdout"]) == (0, "inside\n"), data


def test_run_in_a_project_that_does_not_exist_is_2(tmp_path: Path) -> None:
    code, err = swifty("run", "--project", str(tmp_path / "missing"), "--", "true")
    assert code == 2 and str(tmp_path / "missing") in err and "Traceback" not in err, err


@pytest.mark.parametrize("text", ["- rule: Bash(ls\n  effect: allow\n", "[unclosed\n"])
def test_run_with_a_broken_rule_file_is_2(project: Path, text: str) -> None:
    rules = project / ".swifty" / "permissions.yaml"
    rules.parent.mkdir()
    rules.write_text(text)
    code, err = swifty("run", "--project", str(project), "--", "true")
    assert code == 2 and f"{rules}:" in err and "Traceback" not in err, err


@pytest.mark.parametrize("args", [("--no-such-flag", "x", "--", "true"),
                                  ("-x", "true"), ("--json", "--nope", "--", "true")])
def test_run_an_unknown_option_is_a_usage_error(project: Path, args: tuple[str, ...]) -> None:
    """It once ran the option as the program (`--no-such-flag: not found`)."""
    code, err = swifty("run", "--project", str(project), *args)
    assert code == 2 and "No such option" in err, err


@pytest.mark.bwrap
def test_run_options_end_at_the_program(project: Path) -> None:
    """The documented forms: `run -- cmd --flag` and `run cmd --flag`."""
    for args in (("--", "echo", "--json", "-x"), ("echo", "--json", "-x")):
        done = subprocess.run([str(SWIFTY), "run", "--project", str(project), *args],
                              capture_output=True, timeout=180, check=False)
        assert (done.returncode, done.stdout) == (0, b"--json -x\n"), done.stderr


@pytest.mark.bwrap
@pytest.mark.unprivileged  # the only user it runs as: root has no RLIMIT_NPROC
@pytest.mark.skipif(os.geteuid() == 0, reason="root has no RLIMIT_NPROC to run out of")
@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_no_process_left_to_start_says_which_cap_and_how_to_lift_it(
        project: Path, sandbox: str) -> None:
    """Inside a sandbox at its cap (or at the user's own limit) swifty-sandbox cannot
    fork: the message says a cap on processes was reached and how to lift it, not only
    that the system refused an operation."""
    args = ("run", "--project", str(project), "--sandbox", sandbox,
            "--mode", "bypassPermissions", "--", "true")
    done = subprocess.run(["prlimit", "--nproc=1:1", str(SWIFTY), *args],
                          capture_output=True, timeout=120, check=False,
                          env={**os.environ, "SWIFTY_DAEMON": "off"})
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err, err
    assert "cap on processes" in err and "--max-processes" in err and "ulimit -u" in err
    control = subprocess.run([str(SWIFTY), *args], capture_output=True, timeout=120,
                             check=False, env={**os.environ, "SWIFTY_DAEMON": "off"})
    assert control.returncode == 0, control.stderr.decode()
