"""`swifty-sandbox doctor`: what confinement this machine supports, and why not."""

from __future__ import annotations

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.sandbox.run.doctor import diagnose

from .common import echo_json, json_option, reports_errors


@click.command()
@json_option
@reports_errors
def doctor(as_json: bool) -> None:
    """Check this platform's sandbox (bubblewrap, namespaces and seccomp on Linux;
    sandbox-exec on macOS) and every agent hook installed for this project or user
    (it runs, it is on every event, the agent runs it: Codex's trust); exit 0 when
    `run` can confine and every installed hook works."""
    import os
    from pathlib import Path

    # Here: every command loads this module (the click group) and only `doctor` needs them.
    from swifty_sandbox.policy import find_project
    from swifty_sandbox.policy.files import PolicyFiles
    from swifty_sandbox.policy.settings import load_settings
    from swifty_sandbox.sandbox.agents.doctor import agent_checks
    from swifty_sandbox.sandbox.run.doctor import Report

    home = Path.home()
    report = diagnose(load_settings(PolicyFiles(home, home)).bwrap)  # the user's own config only
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
