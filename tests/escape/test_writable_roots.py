"""Configured writable roots that do not exist: created in home when nothing forbids
it, otherwise named on stderr with the reason — never silently left out."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox import EXIT_SETUP
from swifty_sandbox.sandbox.agents import RunResult

Runner = Callable[..., RunResult]


def writable(home: Path, *roots: str) -> None:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(
        "sandbox:\n  writable:\n" + "".join(f"    - {r!r}\n" for r in roots))


def test_a_missing_root_in_home_is_created_and_writable(confined: Runner,
                                                        home: Path) -> None:
    writable(home, "~/build-out/deep")
    result = confined("echo made > ~/build-out/deep/f")
    assert result.exit_code == 0, result
    assert (home / "build-out" / "deep" / "f").read_text() == "made\n"
    assert "created the writable root" in result.stderr and "build-out/deep" in result.stderr
    again = confined("true")  # made once: no note the next time
    assert "writable root" not in again.stderr


def test_protected_hidden_or_outside_roots_are_reported_not_created(
        unconfined: Runner, confined: Runner, home: Path, outside_temp: Path) -> None:
    outside = outside_temp / "not-home" / "x"
    (home / "a-file").write_text("")
    writable(home, "~/.config/systemd/user/x", "~/.ssh/new", str(outside), "~/a-file")
    attack = ("mkdir -p ~/.config/systemd/user/x && echo pwn > "
              "~/.config/systemd/user/x/unit")
    control = unconfined(attack)
    assert (home / ".config" / "systemd" / "user" / "x" / "unit").exists(), control
    import shutil

    shutil.rmtree(home / ".config")
    result = confined(attack)
    assert result.exit_code != 0
    assert not (home / ".config" / "systemd").exists()  # nothing was made for it
    assert not (home / ".ssh").exists() and not outside.parent.exists()
    for root, why in ((".config/systemd/user/x", "~/.config/systemd"),
                      (".ssh/new", "~/.ssh"), (str(outside), "only missing roots inside"),
                      ("a-file", "not a directory")):
        line = next((ln for ln in result.stderr.splitlines() if root in ln), "")
        assert "not writable in this run" in line and why in line, result.stderr


def test_a_root_written_through_a_link_is_not_created(confined: Runner, home: Path,
                                                      project: Path) -> None:
    """A link in the project (a command can plant one) must not choose where a
    configured root is made: `out -> ~/.vim` would make `~/.vim/plugin` writable."""
    (home / ".vim").mkdir()
    (project / "out").symlink_to(home / ".vim")
    writable(home, str(project / "out" / "plugin"))
    result = Sandbox(project, home=home).run(["bash", "-c", "echo x > out/plugin/p.vim"])
    assert not (home / ".vim" / "plugin").exists(), result
    assert result.exit_code == EXIT_SETUP or "not writable in this run" in result.stderr


def test_an_existing_root_through_a_planted_link_refuses_the_run(home: Path,
                                                                 project: Path) -> None:
    """The same for a root that exists: resolved through a link inside a writable root,
    it would bind whatever the link names read-write."""
    (home / ".vim").mkdir()
    (project / "out").symlink_to(home / ".vim")
    writable(home, str(project / "out"))
    result = Sandbox(project, home=home).run(["bash", "-c", "echo x > out/evil.vim"])
    assert result.exit_code == EXIT_SETUP and "out" in result.stderr, result
    assert os.listdir(home / ".vim") == []


def test_a_repository_in_a_configured_root_keeps_its_hooks(
        unconfined: Runner, confined: Runner, home: Path) -> None:
    """A configured writable root is walked for repositories like the project, whatever
    glob rules there are: a hook planted in `~/w/.git/hooks` would run the next time
    the person uses git there, outside the sandbox (it was not walked when no rule
    had a basename glob, nor when the root lay below a glob's folder, `/tmp/...`)."""
    import subprocess

    work = home / "w"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    writable(home, str(work))
    hook = work / ".git" / "hooks" / "post-checkout"
    attack = f"printf '#!/bin/sh\\necho pwned\\n' > {hook}; chmod +x {hook}"
    unconfined(attack)
    assert hook.exists(), "control: the hook is planted unconfined"
    hook.unlink()
    result = confined(attack)
    assert not hook.exists(), f"ESCAPE: a hook planted in a writable root: {result}"
    # bwrap refuses the write; Landlock cannot, and puts the hooks back after the run.
    assert result.exit_code != 0 or "Landlock cannot keep it read-only" in result.stderr
    assert f"refused the write to {hook}" in result.stderr


@pytest.mark.parametrize("exists", [True, False], ids=["existing", "created-by-the-run"])
def test_what_an_agent_or_git_trusts_is_not_planted_in_a_configured_root(
        unconfined: Runner, confined: Runner, home: Path, exists: bool) -> None:
    """A configured root is where the person may run git or start an agent next, like
    the project: a new repository with a hook, an agent's settings file (`.mcp.json`,
    Cursor's hooks) and a policy planted there are moved aside — the after-run check
    looked in the project only, and never in a root this run creates. The control:
    unconfined, host git runs the hook."""
    import shutil
    import subprocess

    work = home / "w"
    if exists:
        work.mkdir()
    writable(home, str(work))
    repo, marker = work / "evil", home / "pwned"
    planted = [work / ".mcp.json", work / ".cursor" / "hooks.json",
               work / ".swifty" / "permissions.yaml"]
    attack = (f"mkdir -p {work} && git init -q {repo} && printf '#!/bin/sh\\necho pwned >"
              f" {marker}\\n' > {repo}/.git/hooks/post-commit && chmod +x "
              f"{repo}/.git/hooks/post-commit && mkdir -p {work}/.cursor {work}/.swifty && "
              + " && ".join(f"echo x > {p}" for p in planted))

    def host_git_runs_it() -> bool:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=u", "-c", "user.email=u@x",
                        "commit", "-q", "--allow-empty", "-m", "x"], capture_output=True,
                       check=False)
        return marker.exists()

    unconfined(attack)
    assert host_git_runs_it(), "control: host git runs the planted hook"
    assert all(p.exists() for p in planted), "control"
    marker.unlink()
    shutil.rmtree(work)
    if exists:
        work.mkdir()
    result = confined(attack)
    assert not host_git_runs_it(), f"ESCAPE: host git ran a hook planted in {work}: {result}"
    left = [p for p in planted if p.exists()]
    assert left == [], f"ESCAPE: planted in a writable root and left: {left}: {result}"
    assert f"the command left {repo}/.git" in result.stderr, result.stderr
