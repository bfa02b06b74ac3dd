"""`Sandbox`: the one public entry point; the CLI and the agent protocol are thin
shells over it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from swifty_sandbox.policy import (
    Decision,
    Effect,
    Mode,
    Policy,
    Request,
    SandboxMode,
    add_rules,
    decide,
    find_project,
    load_policy,
    local_rules_path,
    suggest_rules,
)

RequestLike = Request | str | Sequence[str]


def as_request(request: RequestLike) -> Request:
    """A shell string is a Bash command; a sequence of strings is an argv."""
    if isinstance(request, Request):
        return request
    if isinstance(request, str):
        return Request.bash(request)
    return Request.bash_argv(tuple(request))


class Sandbox:
    """The policy of one project, loaded once, deciding many requests.

    `project` defaults to the git top-level of the current directory, else the
    current directory; `home` to the user's home. `mode` and `sandbox_mode`
    override the settings files, as the command-line options do.
    """

    def __init__(
        self,
        project: str | Path | None = None,
        *,
        home: str | Path | None = None,
        mode: Mode | str | None = None,
        sandbox_mode: SandboxMode | str | None = None,
    ) -> None:
        self.project = find_project(Path(project) if project is not None else Path.cwd())
        self._home = Path(home) if home is not None else None
        self.mode = Mode(mode) if mode is not None else None
        self.sandbox_mode = SandboxMode(sandbox_mode) if sandbox_mode is not None else None
        self.policy: Policy = load_policy(self.project, self._home)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Settings that were ignored because a committed file tried to loosen them."""
        return self.policy.settings.warnings

    def check(self, request: RequestLike) -> Decision:
        """The decision for one request; nothing runs."""
        return decide(self.policy, as_request(request), self.mode, self.sandbox_mode)

    def always_allow(self, request: RequestLike) -> list[str]:
        """Record "always allow" for the request in the local rule file; returns the
        rules added. The policy is reloaded, so the next check sees them."""
        rules = suggest_rules(self.policy, as_request(request))
        added = add_rules(local_rules_path(self.project), rules, Effect.ALLOW,
                          project=self.policy.project, home=self.policy.home)
        self.policy = load_policy(self.project, self._home)
        return added
