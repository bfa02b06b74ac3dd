"""`PolicyFiles`: where every policy file of one project is, and which of them came
with the repository ("committed") — the one place the loader, the audit, the rule
writer and `serve` ask."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import assert_never

from .paths import SWIFTY_DIR, is_within, project_state_dir
from .types import Scope

RULE_FILES: dict[Scope, str] = {
    Scope.LOCAL: "permissions.local.yaml",
    Scope.PROJECT: "permissions.yaml",
    Scope.USER: "permissions.yaml",
}
CONFIG_FILE = "config.yaml"
PROGRAMS_FILE = "programs.yaml"


@dataclass(frozen=True, slots=True)
class PolicyFiles:
    """The policy files of `project` for the user whose home is `home` (both resolved)."""

    project: Path
    home: Path

    @property
    def user_dir(self) -> Path:
        """`~/.swifty`: the user's own files (the agent cannot write there)."""
        return self.home / SWIFTY_DIR

    @property
    def project_dir(self) -> Path:
        """`<project>/.swifty`: whatever the repository ships."""
        return self.project / SWIFTY_DIR

    @property
    def state_dir(self) -> Path:
        """`~/.swifty/projects/<name>-<hash>`: the user's own files for this project."""
        return project_state_dir(self.project, self.home)

    def rules(self, scope: Scope) -> Path:
        """Each layer's rule file. The local layer lives in the user's home, not in the
        project: a repository can commit anything under `.swifty/`, and a local file
        there would outrank the user's own rules."""
        if scope is Scope.LOCAL:
            return self.state_dir / RULE_FILES[scope]
        if scope is Scope.USER:
            return self.user_dir / RULE_FILES[scope]
        if scope is Scope.PROJECT:
            return self.project_dir / RULE_FILES[scope]
        assert_never(scope)

    def config(self, scope: Scope) -> Path:
        """The user's (`Scope.USER`) or the project's config file; there is no local one."""
        if scope is Scope.LOCAL:
            raise ValueError("there is no local config file")
        if scope is Scope.USER:
            return self.user_dir / CONFIG_FILE
        if scope is Scope.PROJECT:
            return self.project_dir / CONFIG_FILE
        assert_never(scope)

    @property
    def stray_local(self) -> Path:
        """Where the local file used to be: never read now (a repository could ship it)."""
        return self.project_dir / RULE_FILES[Scope.LOCAL]

    @property
    def programs(self) -> Path:
        """The user's additions to the program table."""
        return self.user_dir / PROGRAMS_FILE

    def layered(self) -> list[Path]:
        """The rule and config files, in the order `serve` watches and `audit` reads
        them: local rules, the project's, then the user's."""
        return list(dict.fromkeys([
            self.rules(Scope.LOCAL), self.rules(Scope.PROJECT), self.config(Scope.PROJECT),
            self.rules(Scope.USER), self.config(Scope.USER)]))

    def is_committed(self, path: Path) -> bool:
        """Whether the file can have come with the repository, so may only tighten: the
        project's `.swifty/` (unless the project is the home directory), and any file
        outside the user's `~/.swifty` (a path given to `audit`)."""
        written = os.path.abspath(path)
        if self.project != self.home and is_within(written, str(self.project_dir)):
            return True
        return not is_within(os.path.realpath(path), os.path.realpath(self.user_dir))

    def scope_of(self, path: Path) -> Scope:
        """A file's layer by where it is: a `permissions.local.yaml` counts as local only
        in the user's home (one in a project could have come with the repository)."""
        if self.is_committed(path):
            return Scope.PROJECT
        return Scope.LOCAL if path.name.endswith(".local.yaml") else Scope.USER
