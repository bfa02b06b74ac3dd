"""Fail closed: when confinement cannot be set up, the command never runs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main


@pytest.fixture
def broken_bwrap(outside_temp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `bwrap` first on PATH that fails as it does where user namespaces are off."""
    bin_dir = outside_temp / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace, "
                    "likely because the kernel does not allow non-privileged user "
                    "namespaces.' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return fake


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
