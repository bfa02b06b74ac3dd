"""The escape suite: real bwrap, real seccomp (on macOS: real seatbelt), outcomes
judged from outside.

Every attack runs twice: unconfined (`--sandbox off`, the control that proves the
attack works on this machine) and confined (where it must fail).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox import EXIT_SETUP
from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.run.probe import find_bwrap, try_namespaces


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/escape/" in str(item.fspath):
            item.add_marker(pytest.mark.bwrap)
            item.add_marker(pytest.mark.unprivileged)


# Every escape and everyday test runs under each Linux backend (SWIFTY_BACKEND, as a
# user would choose it). Where Landlock holds less than bwrap, the test says so with
# `@differs("row")`, a row of the README's backend table (tests/escape/differences.py):
# under that backend the test must then fail (strict xfail), so a difference is never
# silent and a row that stopped being true is noticed.
BACKENDS = ("bwrap", "landlock") if sys.platform.startswith("linux") else ("native",)


@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name: str = request.param
    if name != "native":
        monkeypatch.setenv("SWIFTY_BACKEND", name)
    marker = request.node.get_closest_marker("differs")
    if marker is not None and name in marker.kwargs.get("backends", ("landlock",)):
        from .differences import ROWS

        row = marker.args[0]
        assert row in ROWS, f"@differs({row!r}) names no row of the backend table"
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{name}: {ROWS[row]}"))
    return name


@functools.cache
def _bwrap_problem() -> str | None:
    """Why bwrap cannot confine here, asked once per test process: a machine fact (a
    bwrap run of its own), not something a test changes."""
    bwrap = find_bwrap()
    if bwrap is None:
        return "bwrap not found"
    works, error = try_namespaces(bwrap)
    return None if works else f"bwrap cannot create namespaces: {error}"


@pytest.fixture(autouse=True)
def _needs_bwrap(backend: str) -> None:
    """Under CI=true a machine that cannot confine is a failure, never a skip."""
    if backend == "landlock":
        from swifty_sandbox.sandbox.landlock.backend import kernel_abi

        abi, why = kernel_abi()
        if not abi:
            if os.environ.get("CI") == "true":
                pytest.fail(f"no Landlock: {why}")
            pytest.skip(f"no Landlock: {why}")
        return
    if sys.platform == "darwin":
        if not os.access("/usr/bin/sandbox-exec", os.X_OK):
            if os.environ.get("CI") == "true":
                pytest.fail("sandbox-exec not found")
            pytest.skip("sandbox-exec not found")
        return
    problem = _bwrap_problem()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)


Runner = Callable[..., RunResult]


@pytest.fixture
def as_argv(outside_temp: Path) -> Callable[[str | list[str]], list[str]]:
    """Attacks run as a script file (`bash attack-N.sh`): these tests are about
    confinement, so the policy's command analysis — which sees through `bash -c` —
    must not be what stops them. Agents do the same when they write a script first."""
    folder = outside_temp / "attacks"
    folder.mkdir(exist_ok=True)

    def convert(command: str | list[str]) -> list[str]:
        if not isinstance(command, str):
            return command
        script = folder / f"attack-{len(list(folder.iterdir()))}.sh"
        script.write_text(command + "\n")
        return ["bash", str(script)]

    return convert


@pytest.fixture
def confined(project: Path, home: Path,
             as_argv: Callable[[str | list[str]], list[str]]) -> Runner:
    def run(command: str | list[str], **kwargs: object) -> RunResult:
        result = Sandbox(project, home=home).run(as_argv(command),
                                                 **kwargs)  # type: ignore[arg-type]
        assert result.exit_code != EXIT_SETUP, result.stderr  # it really ran confined
        assert result.decision.effect.value == "allow"
        return result

    return run


@pytest.fixture
def unconfined(project: Path, home: Path,
               as_argv: Callable[[str | list[str]], list[str]]) -> Runner:
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


def git(cwd: Path, *args: str) -> str:
    """Run git on the host (set-up and checks, never the attack): its output."""
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout
