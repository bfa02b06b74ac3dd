"""The escape suite: real bwrap, real seccomp, outcomes judged from outside.

Every attack runs twice: unconfined (`--sandbox off`, the control that proves the
attack works on this machine) and confined (where it must fail).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox import EXIT_SETUP, RunResult
from swifty_sandbox.sandbox.probe import find_bwrap, try_namespaces


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/escape/" in str(item.fspath):
            item.add_marker(pytest.mark.bwrap)


@pytest.fixture(autouse=True)
def _needs_bwrap() -> None:
    """Under CI=true a machine that cannot confine is a failure, never a skip."""
    bwrap = find_bwrap()
    problem = "bwrap not found" if bwrap is None else None
    if bwrap is not None:
        works, error = try_namespaces(bwrap)
        problem = None if works else f"bwrap cannot create namespaces: {error}"
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)


Runner = Callable[..., RunResult]


def as_argv(command: str | list[str]) -> list[str]:
    """Attacks are sent as argv (`bash -c …`): these tests are about confinement, so
    the policy's command analysis must not be what stops them."""
    return ["bash", "-c", command] if isinstance(command, str) else command


@pytest.fixture
def confined(project: Path, home: Path) -> Runner:
    def run(command: str | list[str], **kwargs: object) -> RunResult:
        result = Sandbox(project, home=home).run(as_argv(command),
                                                 **kwargs)  # type: ignore[arg-type]
        assert result.exit_code != EXIT_SETUP, result.stderr  # it really ran confined
        assert result.decision.effect.value == "allow"
        return result

    return run


@pytest.fixture
def unconfined(project: Path, home: Path) -> Runner:
    def run(command: str | list[str], **kwargs: object) -> RunResult:
        return Sandbox(project, home=home, sandbox_mode="off",
                       mode="bypassPermissions").run(as_argv(command),
                                                     **kwargs)  # type: ignore[arg-type]

    return run


@pytest.fixture
def attack(confined: Runner, unconfined: Runner) -> Iterator[Callable[..., RunResult]]:
    """`attack(command, worked, reset)`: the control must make `worked()` true, the
    confined run must leave it false. Returns the confined result."""

    def run(command: str | list[str], worked: Callable[[], bool],
            reset: Callable[[], None], **kwargs: object) -> RunResult:
        control = unconfined(command, **kwargs)
        assert worked(), f"control: the attack does not work unconfined: {control}"
        reset()
        assert not worked(), "reset did not undo the attack"
        result = confined(command, **kwargs)
        assert not worked(), f"ESCAPE: {command!r} worked confined: {result}"
        return result

    yield run
