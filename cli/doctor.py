"""`swifty-sandbox doctor`: what confinement this machine supports, and why not."""

from __future__ import annotations

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.sandbox.run.doctor import diagnose

from .common import backend_option, echo_json, json_option, reports_errors
from .texts import command, option


@command(help="help.doctor")
@json_option
@backend_option
@option("--fix", is_flag=True, help="help.doctor.fix")
@reports_errors
def doctor(as_json: bool, backend: str | None, fix: bool) -> None:
    """`doctor` (its help: `help.doctor`)."""
    import os
    from pathlib import Path

    # Here: every command loads this module (the click group) and only `doctor` needs them.
    from swifty_sandbox.policy import find_project
    from swifty_sandbox.policy.files import PolicyFiles
    from swifty_sandbox.policy.settings import load_settings
    from swifty_sandbox.sandbox.agents.doctor import agent_checks, confined_run
    from swifty_sandbox.sandbox.run.doctor import Report

    home = Path.home()
    settings = load_settings(PolicyFiles(home, home))  # the user's own config only
    if fix:
        _fix(settings.bwrap)
    choice = backend or settings.backend
    report = diagnose(settings.bwrap, lambda: confined_run(choice))
    report = Report((*report.checks,
                     *agent_checks(find_project(Path.cwd()), home, os.environ)))
    if as_json:
        echo_json(report.as_json())
    else:
        for check in report.checks:
            click.echo(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
            if check.fix:
                click.echo(f"     {t('doctor.fix_label')}: {check.fix}")
    raise SystemExit(ExitCode.OK if report.ok else ExitCode.DENY)


def _fix(bwrap: str | None) -> None:
    """Show the profile, write it atomically, load it (root only)."""
    import os

    # doctor's only: kept off the CLI's start-up path
    from swifty_sandbox.sandbox.run import apparmor
    from swifty_sandbox.sandbox.run.executor import execute
    from swifty_sandbox.sandbox.run.probe import find_bwrap, read_sysctl

    found = find_bwrap(bwrap)
    if read_sysctl(apparmor.SYSCTL) != "1" or found is None:
        click.echo(t("doctor.fix_nothing"), err=True)
        return
    text = apparmor.profile_text(found.path)
    click.echo(text)
    if os.geteuid() != 0:
        click.echo(t("doctor.fix_needs_root", path=apparmor.profile_path(),
                     command=" ".join(apparmor.load_command())), err=True)
        raise SystemExit(ExitCode.DENY)
    path = apparmor.install(found.path)
    done = execute(apparmor.load_command(), timeout=60)
    click.echo(t("doctor.fix_written", path=path, status=done.exit_code,
                 output=(done.stderr or done.stdout).decode(errors="replace").strip()),
               err=True)
