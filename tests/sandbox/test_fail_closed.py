"""Fail closed: when confinement cannot be set up, the command never runs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main


def fake_bwrap(folder: Path, script: str) -> Path:
    folder.mkdir(exist_ok=True)
    fake = folder / "bwrap"
    fake.write_text(script)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake


def _broken(outside_temp: Path, home: Path, backend: str) -> Path:
    fake = fake_bwrap(outside_temp / "bin", (
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because "
        "the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"))
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(
        f"sandbox: {{bwrap: {fake}, backend: {backend}}}\n")
    return fake


@pytest.fixture
def broken_bwrap(outside_temp: Path, home: Path) -> Path:
    """The user's configured `bwrap`, failing as it does where user namespaces are off,
    and chosen as the only backend (no Landlock to fall back to)."""
    return _broken(outside_temp, home, "bwrap")


@pytest.fixture
def broken_bwrap_auto(outside_temp: Path, home: Path) -> Path:
    return _broken(outside_temp, home, "auto")


@pytest.mark.linux
def test_auto_falls_back_to_landlock_and_says_so_once(broken_bwrap_auto: Path,
                                                      project: Path, home: Path,
                                                      monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    from swifty_sandbox.sandbox.landlock.backend import kernel_abi

    if not kernel_abi()[0]:
        pytest.skip("no Landlock on this kernel")
    marker = project / "ran"
    result = Sandbox(project, home=home).run(["touch", str(marker)])
    assert result.exit_code == 0 and marker.exists(), result.stderr
    assert result.backend == "landlock" and result.as_json()["backend"] == "landlock"
    assert result.stderr.count("confined by Landlock") == 1
    assert "No permissions to create new namespace" in result.stderr  # the cause, named
    monkeypatch.chdir(project)  # doctor's confined run is in the current project
    doctor = CliRunner().invoke(main, ["doctor"])
    assert doctor.exit_code == 0, doctor.stdout
    assert "ok   run: a confined `true` ran (landlock)" in doctor.stdout
    pinned = CliRunner().invoke(main, ["doctor", "--backend", "bwrap"])
    assert pinned.exit_code == 1 and "FAIL run" in pinned.stdout


def test_a_bwrap_on_path_is_never_used(outside_temp: Path, project: Path, home: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`$PATH` is not trusted: a directory on it could be one a command wrote."""
    trap = outside_temp / "trap-ran"
    fake = fake_bwrap(outside_temp / "path-bin", f"#!/bin/sh\ntouch {trap}\nexit 0\n")
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    result = Sandbox(project, home=home).run(["true"])
    assert not trap.exists()
    assert result.exit_code == 0, result.stderr


def test_a_committed_config_cannot_choose_bwrap(outside_temp: Path, project: Path,
                                                home: Path) -> None:
    trap = outside_temp / "trap-ran"
    fake = fake_bwrap(outside_temp / "repo-bin", f"#!/bin/sh\ntouch {trap}\nexit 0\n")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "config.yaml").write_text(f"sandbox: {{bwrap: {fake}}}\n")
    box = Sandbox(project, home=home)
    assert any("sandbox.bwrap" in w for w in box.warnings)
    assert box.run(["true"]).exit_code == 0 and not trap.exists()


def test_setup_failure_is_125_and_the_command_does_not_run(
        broken_bwrap: Path, project: Path, home: Path) -> None:
    marker = project / "ran"
    result = Sandbox(project, home=home).run(["touch", str(marker)])
    assert result.exit_code == 125 and result.is_error
    assert not marker.exists()
    assert "No permissions to create new namespace" in result.stderr
    assert "swifty-sandbox doctor" in result.stderr


def test_cli_run_fails_closed(broken_bwrap: Path, project: Path) -> None:
    marker = project / "ran"
    result = CliRunner().invoke(main, ["run", "--project", str(project), "--",
                                       "touch", str(marker)])
    assert result.exit_code == 125
    assert not marker.exists()
    assert "did not run" in result.stderr


def test_only_sandbox_off_runs_unconfined(broken_bwrap: Path, project: Path) -> None:
    marker = project / "ran"
    for mode in ("auto", "manual"):
        CliRunner().invoke(main, ["run", "--project", str(project), "--sandbox", mode,
                                  "--mode", "bypassPermissions", "--", "touch", str(marker)])
        assert not marker.exists()
    result = CliRunner().invoke(main, ["run", "--project", str(project), "--sandbox", "off",
                                       "--mode", "bypassPermissions", "--",
                                       "touch", str(marker)])
    assert result.exit_code == 0
    assert marker.exists()
    assert "UNCONFINED" in result.stderr


def test_doctor_reports_the_failure_and_a_fix(broken_bwrap: Path) -> None:
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 1
    assert "FAIL namespaces" in result.stdout
    assert "fix:" in result.stdout


def test_the_file_system_root_is_never_a_writable_project(home: Path) -> None:
    result = Sandbox("/", home=home).run(["true"])
    assert result.exit_code == 125 and "refusing to make / writable" in result.stderr


def test_a_bwrap_too_old_for_bind_fd_is_named(outside_temp: Path, project: Path,
                                              home: Path) -> None:
    old = fake_bwrap(outside_temp / "old-bin", (
        "#!/bin/sh\necho 'bwrap: Unknown option --bind-fd' >&2\nexit 1\n"))
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{bwrap: {old}, backend: bwrap}}\n")
    result = Sandbox(project, home=home).run(["true"])
    assert result.exit_code == 125 and "too old" in result.stderr


@pytest.mark.linux
@pytest.mark.parametrize(("message", "says"), [
    ("bwrap: Can't mkdir /home/u/.ssh/keys: Read-only file system", "lay out the sandbox"),
    ("bwrap: Can't find source path /home/u/x: No such file or directory",
     "lay out the sandbox"),
    ("bwrap: Can't find source path /proc/self/fd/7: Permission denied",
     "lay out the sandbox"),
    ("bwrap: setting up uid map: Permission denied", "User namespaces may be disabled"),
    ("bwrap: Can't mkdir /newroot/x: Permission denied", "User namespaces may be disabled"),
])
def test_a_bwrap_failure_is_explained_by_its_cause(outside_temp: Path, project: Path,
                                                   home: Path, message: str, says: str
                                                   ) -> None:
    """A layout bwrap could not build is not blamed on user namespaces (it was, for a
    hidden folder inside another); a refusal of them still is."""
    (outside_temp / "says").write_text(message + "\n")
    fake = fake_bwrap(outside_temp / "bin",
                      f"#!/bin/sh\ncat '{outside_temp / 'says'}' >&2\nexit 1\n")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(
        f"sandbox: {{bwrap: {fake}, backend: bwrap}}\n")
    marker = project / "ran"
    result = Sandbox(project, home=home).run(["touch", str(marker)])
    assert result.exit_code == 125 and not marker.exists()
    assert says in result.stderr and message in result.stderr, result.stderr
