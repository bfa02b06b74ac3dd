"""`PolicyFiles` (`policy/files.py`): where each policy file is, and which of them came
with the repository (the loader and the audit ask the same object)."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox import Mode, Sandbox
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

from .test_settings import write_config


def test_policy_files_know_what_is_committed(project: Path, home: Path) -> None:
    files = PolicyFiles(project, home)
    assert [files.is_committed(files.rules(s)) for s in Scope] == [False, True, False]
    assert files.is_committed(files.config(Scope.PROJECT))
    assert not files.is_committed(files.config(Scope.USER))
    assert files.is_committed(files.stray_local)
    assert files.scope_of(files.rules(Scope.LOCAL)) is Scope.LOCAL
    assert files.scope_of(files.stray_local) is Scope.PROJECT
    # The home directory as the project: its `.swifty/` is the user's own.
    mine = PolicyFiles(home, home)
    assert not mine.is_committed(mine.config(Scope.PROJECT))
    assert mine.scope_of(mine.rules(Scope.PROJECT)) is Scope.USER


def test_a_linked_swifty_dir_in_the_project_is_still_committed(project: Path,
                                                               home: Path) -> None:
    """A repository's `.swifty -> ~/.swifty` does not make its files the user's."""
    (home / ".swifty").mkdir()
    (project / ".swifty").symlink_to(home / ".swifty")
    files = PolicyFiles(project, home)
    assert files.is_committed(files.config(Scope.PROJECT))
    assert not files.is_committed(files.config(Scope.USER))


def test_audit_and_loader_agree_on_what_a_committed_config_loosens(project: Path,
                                                                  home: Path) -> None:
    """`acceptEdits` in a committed file loosens the default: the loader ignores it,
    so the audit reports it (it once reported only bypassPermissions); with the same
    value in the user's own config, neither complains."""
    from swifty_sandbox.policy.audit import audit

    write_config(project, "permissions: {defaultMode: acceptEdits}\n")
    config = project / ".swifty" / "config.yaml"
    box = Sandbox(project, home=home)
    assert box.policy.settings.default_mode is Mode.DEFAULT and len(box.warnings) == 1
    assert [f.id for f in audit([config], project, home)] == ["project-loosens"]
    write_config(home, "permissions: {defaultMode: acceptEdits}\n")
    box = Sandbox(project, home=home)
    assert box.policy.settings.default_mode is Mode.ACCEPT_EDITS and box.warnings == ()
    assert audit([config], project, home) == []
