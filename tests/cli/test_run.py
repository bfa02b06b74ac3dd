"""`swifty-sandbox run`, `compile` and `doctor` on this machine (real bwrap)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox.cli.main import main

pytestmark = [pytest.mark.bwrap, pytest.mark.unprivileged]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_run_json(project: Path) -> None:
    code, out, _ = invoke("run", "--project", str(project), "--json", "-c",
                          "echo out; echo err >&2; exit 3")
    assert code == 3
    data = json.loads(out)
    assert {k: data[k] for k in ("exit_code", "stdout", "stderr", "truncated", "timed_out",
                                 "is_error")} == {
        "exit_code": 3, "stdout": "out\n", "stderr": "err\n", "truncated": False,
        "timed_out": False, "is_error": False}
    assert data["decision"]["layer"] == "sandbox" and data["duration_ms"] >= 0


def test_run_denied_is_126_with_the_reason(project: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(git push *)\n  effect: deny\n")
    code, out, _ = invoke("run", "--project", str(project), "--json", "--",
                          "git", "push", "origin")
    data = json.loads(out)
    assert code == 126 and data["exit_code"] == 126 and data["is_error"]
    assert "Bash(git push *)" in data["stderr"]
    assert data["decision"]["rule"]["line"] == 1


def test_run_ask_without_a_person_is_denied(project: Path) -> None:
    code, _, err = invoke("run", "--project", str(project), "--sandbox", "manual", "--",
                          "true")
    assert code == 126
    assert "non-interactive" in err


def test_run_timeout_is_124(project: Path) -> None:
    code, out, _ = invoke("run", "--project", str(project), "--json", "--timeout", "0.5",
                          "--", "sleep", "20")
    assert code == 124 and json.loads(out)["timed_out"]


def test_run_streams_to_the_terminal_in_text_mode(project: Path) -> None:
    script = Path(sys.executable).with_name("swifty-sandbox")
    result = subprocess.run([str(script), "run", "--", "sh", "-c", "echo streamed; exit 4"],
                            cwd=project, capture_output=True, text=True, check=False,
                            env={**os.environ, "HOME": str(project.parent)})
    assert result.returncode == 4
    assert result.stdout == "streamed\n"


def test_run_needs_exactly_one_command(project: Path) -> None:
    assert invoke("run", "--project", str(project))[0] == 2
    assert invoke("run", "--project", str(project), "-c", "ls", "--", "ls")[0] == 2


def test_compile_bwrap_and_seccomp(project: Path) -> None:
    import shlex

    code, out, _ = invoke("compile", "--target", "bwrap", "--project", str(project))
    assert code == 0
    argv = shlex.split(out)  # what runs: bwrap after the caps' cgroup join, if any
    bwrap = next(i for i, a in enumerate(argv) if os.path.basename(a) == "bwrap")
    assert argv[bwrap + 1] == "--unshare-user" and "--unshare-net" in argv
    binds = [argv[i + 2] for i, a in enumerate(argv) if a == "--bind-fd"]
    assert str(project) in binds and "--bind" not in argv  # by descriptor, as it runs
    _, plan, _ = invoke("compile", "--target", "bwrap", "--project", str(project),
                        "--mode", "plan")
    plan_argv = shlex.split(plan)
    assert str(project) not in [plan_argv[i + 2] for i, a in enumerate(plan_argv)
                                if a in ("--bind-fd", "--bind")]
    code, pfc, _ = invoke("compile", "--target", "seccomp-pfc", "--project", str(project))
    assert code == 0 and 'filter for syscall "ptrace"' in pfc
    result = CliRunner().invoke(main, ["compile", "--target", "seccomp-bpf", "--project",
                                       str(project)])
    assert result.exit_code == 0 and len(result.stdout_bytes) % 8 == 0


def test_compile_says_what_a_committed_file_could_not_loosen(project: Path) -> None:
    """Like `run` and `check`: the settings a committed config tried to loosen are said
    on stderr, so what `compile` prints is not taken for what the file asked."""
    (project / ".swifty").mkdir()
    (project / ".swifty" / "config.yaml").write_text(
        "permissions:\n  defaultMode: bypassPermissions\n")
    for command in ("compile", "run"):
        args = ("--target", "seccomp-pfc") if command == "compile" else ("--", "true")
        code, _, err = invoke(command, "--project", str(project), *args)
        assert code == 0 and "permissions.defaultMode: bypassPermissions" in err, err


def test_doctor_on_this_machine() -> None:
    code, out, _ = invoke("doctor", "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"]
    assert [c["name"] for c in report["checks"]] == [
        "platform", "user", "bubblewrap", "namespaces", "self-protection", "seccomp", "caps",
        "landlock", "run"]
    caps = report["checks"][6]["detail"]
    assert "cgroup" in caps or "RLIMIT_NPROC" in caps, caps  # how, or why not


def test_compile_json(project: Path) -> None:
    code, out, _ = invoke("compile", "--target", "bwrap", "--json", "--project", str(project))
    data = json.loads(out)
    assert code == 0 and data["target"] == "bwrap" and data["argv"][-3:] == ["--", "CMD",
                                                                              "ARG..."]
    code, out, _ = invoke("compile", "--target", "seccomp-bpf", "--json", "--project",
                          str(project))
    import base64

    assert len(base64.b64decode(json.loads(out)["bpf_base64"])) % 8 == 0


def test_run_caps_from_the_command_line(project: Path) -> None:
    code, out, _ = invoke("run", "--project", str(project), "--json", "--max-memory",
                          "64M", "--max-processes", "200", "-c", "ulimit -d")
    assert code == 0 and json.loads(out)["stdout"] == f"{64 * 1024}\n"
    code, out, _ = invoke("run", "--project", str(project), "--json", "--max-memory",
                          "unlimited", "-c", "ulimit -d")
    assert json.loads(out)["stdout"] == "unlimited\n"
    code, _, err = invoke("run", "--project", str(project), "--max-processes", "lots",
                          "--", "true")
    assert code == 2 and "`lots`" in err
    code, _, err = invoke("run", "--project", str(project), "--max-memory", "4X",
                          "--", "true")
    assert code == 2 and "`4X`" in err


@pytest.mark.parametrize("where", ["root", "home"])
def test_compile_and_run_agree_on_an_unsafe_project(home: Path, where: str) -> None:
    """Both go through `compile_spec`'s check of the writable roots: `compile` once
    printed `--bind / /` for a project `run` refused."""
    project = "/" if where == "root" else str(home)
    compiled = invoke("compile", "--target", "bwrap", "--project", project)
    ran = invoke("run", "--project", project, "--", "true")
    assert compiled[0] == ran[0] == 125, (compiled, ran)
    assert f"refusing to make {project} writable" in compiled[2] and \
        f"refusing to make {project} writable" in ran[2]
    assert "--bind" not in compiled[1]
