"""A deny holds through every wrapper and runner that runs its arguments (`setarch`,
`uv run`, …), and an allow of a runner's command as written still holds."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("wrapper", [
    "setarch x86_64 -R", "linux64", "numactl -C 0", "prlimit --nofile=64", "catchsegv",
    "eatmydata", "dbus-run-session", "xvfb-run -a", "torsocks", "proxychains4 -f /dev/null",
    "firejail --quiet", "valgrind --tool=none", "systemd-run --user -p Nice=5",
    # runners: a subcommand runs the command
    "uv run", "uv run --with rich", "poetry run", "pipenv run", "conda run -n base",
    "bundle exec", "yarn exec", "pnpm exec", "npm exec --", "mise exec node@20 --",
    "direnv exec .", "aws-vault exec work --", "doppler run --", "op run --",
    "perf record -o out --", "swifty-sandbox run --sandbox off --",
])
def test_the_blacklist_sees_through_more_wrappers(project: Path, home: Path,
                                                  wrapper: str) -> None:
    """README: "a deny or ask rule matches every spelling of its command: any wrapper";
    these ran their arguments unseen (`setarch x86_64 rm -rf ~` allowed in
    bypassPermissions, where the blacklist is all that holds)."""
    import shutil
    import subprocess

    from swifty_sandbox import Sandbox

    program = wrapper.split()[0]
    if program in ("setarch", "linux64") and shutil.which(program):
        marker = project / "ran"  # control: the wrapper really runs its arguments
        subprocess.run([*wrapper.split(), "touch", str(marker)], check=True)
        assert marker.exists()
    box = Sandbox(project, home=home, mode="bypassPermissions", sandbox_mode="off")
    decision = box.check(f"{wrapper} rm -rf ~")
    assert decision.effect.value == "deny", decision


def test_a_runner_allow_still_matches_as_written(project: Path, home: Path) -> None:
    """What `uv run` runs meets deny rules and the blacklist; an allow of the command
    as written still holds (`Bash(uv run pytest *)`)."""
    from swifty_sandbox import Sandbox
    from tests.conftest import write_rules

    write_rules(home / ".swifty" / "permissions.yaml", [("Bash(uv run pytest *)", "allow"),
                                                        ("Bash(git push *)", "deny")])
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check("uv run pytest -x tests").effect.value == "allow"
    assert box.check("uv run git push origin main").effect.value == "deny"
    assert box.check("poetry run git push").effect.value == "deny"


@pytest.mark.parametrize("command", [
    "swifty-sandbox run -c 'echo ok; rm -rf ~'",  # the hooks' own rewrite, by the model
    "swifty-sandbox run --approved --project . -c'ls && rm -rf ~'",  # attached value
    "swifty-sandbox run --backend bwrap rm -rf ~",  # an option with a value, no `--`
    "swifty-sandbox run --allow-net example.com --json rm -rf ~",
    "/opt/tools/swifty-sandbox run --mode plan --sandbox off -c 'cd src && rm -rf ~'",
])
def test_our_own_run_is_read_as_it_runs(project: Path, home: Path, command: str) -> None:
    """`run -c STRING` runs STRING with bash: it was read as one program named STRING
    (a single command matched by luck), so `run -c 'echo ok; rm -rf ~'` was allowed, as
    was `run --backend bwrap rm -rf ~` (its program read as `bwrap`). The control: the
    same command without our prefix is denied."""
    from swifty_sandbox import Sandbox

    box = Sandbox(project, home=home, mode="bypassPermissions", sandbox_mode="off")
    assert box.check("rm -rf ~").effect.value == "deny"
    decision = box.check(command)
    assert decision.effect.value == "deny" and "recursive-delete" in decision.reason, decision
    assert box.check("swifty-sandbox run -c 'git status; ls'").effect.value == "allow"
