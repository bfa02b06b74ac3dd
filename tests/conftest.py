"""Shared fixtures: a real project directory (a git top-level) and a real HOME."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

RuleList = list[tuple[str, str]]

# The CLI's warm server (cli/warm.py) would start one background process per test home
# (each HOME is a context of its own); its own tests start and stop it explicitly.
os.environ["SWIFTY_DAEMON"] = "off"

# Run as a background job (`cmd &` in a script), this suite inherits an ignored SIGINT,
# and so would every process it starts: the Ctrl-C tests would test nothing a person
# sees. Python's own handler here is reset to the default in each child at exec.
signal.signal(signal.SIGINT, signal.default_int_handler)

# The system temp dirs are allowed roots of the path sandbox, so a test home under
# pytest's tmp_path (in /tmp) would make every "outside" path inside. Test homes live
# under the real user's cache directory instead (read before any test changes HOME).
OUTSIDE_TEMP_BASE = Path(os.path.expanduser("~")) / ".cache" / "swifty-sandbox-tests"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--serial", choices=("run", "skip", "only"), default=None,
        help="tests marked `serial` (they must run with no other test at the same time): "
             "run them (the default without -n), skip them (the default under -n) or run "
             "only them; scripts/test runs the rest under -n, then these alone")


def _serial_choice(config: pytest.Config) -> str:
    choice: str | None = config.getoption("--serial")
    if choice is None:  # under xdist (-n, or one of its workers) they cannot run alone
        parallel = hasattr(config, "workerinput") or config.getoption("numprocesses", None)
        choice = "skip" if parallel else "run"
    return choice


def pytest_report_header(config: pytest.Config) -> str:
    return f"serial tests: {_serial_choice(config)} (--serial)"


@pytest.hookimpl(trylast=True)  # after the directories' conftests have marked theirs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On macOS the suites run through the seatbelt backend; what tests Linux
    mechanics (`@pytest.mark.linux`) is skipped there. `serial` tests are kept or
    deselected as `--serial` says (see pytest_addoption)."""
    if not sys.platform.startswith("linux"):
        skip = pytest.mark.skip(reason="tests a Linux mechanism")
        for item in items:
            if item.get_closest_marker("linux"):
                item.add_marker(skip)
    choice = _serial_choice(config)
    if choice != "run":
        keep = choice == "only"
        chosen = [item for item in items if bool(item.get_closest_marker("serial")) == keep]
        dropped = [item for item in items if bool(item.get_closest_marker("serial")) != keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = chosen


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages in English unless a test asks otherwise."""
    for var in ("SWIFTY_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _signal_handlers() -> Iterator[None]:
    """Each test starts and leaves with the ending signals' handlers it found: a command
    run in-process installs the CLI's (which, once fired, ignores the others), and a
    later test in the same worker would meet them."""
    ending = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved = {signum: signal.getsignal(signum) for signum in ending}
    yield
    for signum, handler in saved.items():
        if handler is not None:
            signal.signal(signum, handler)


@pytest.fixture
def outside_temp() -> Iterator[Path]:
    """A fresh directory that is not under any system temp dir."""
    OUTSIDE_TEMP_BASE.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=OUTSIDE_TEMP_BASE))
    real = os.path.realpath(path)
    assert not real.startswith(("/tmp/", "/var/tmp/", os.path.realpath(tempfile.gettempdir()))), \
        f"test homes must be outside the temp dirs, got {real}"
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(outside_temp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = outside_temp / "home" / "user"
    path.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)  # the session log in this home
    return path


@pytest.fixture
def project(home: Path) -> Path:
    path = home / "code" / "app"
    (path / ".git").mkdir(parents=True)
    return path


def write_rules(path: Path, rules: RuleList) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump([{"rule": r, "effect": e} for r, e in rules],
                                   sort_keys=False))
    return path


@pytest.fixture
def layers(project: Path, home: Path) -> Callable[..., Path]:
    """`layers(user=[...], project=[...], local=[...])` writes the three rule files."""

    def write(*, user: RuleList | None = None, project_rules: RuleList | None = None,
              local: RuleList | None = None) -> Path:
        if user is not None:
            write_rules(home / ".swifty" / "permissions.yaml", user)
        if project_rules is not None:
            write_rules(project / ".swifty" / "permissions.yaml", project_rules)
        if local is not None:
            write_rules(PolicyFiles(project, home).rules(Scope.LOCAL), local)
        return project

    return write


@pytest.fixture
def box_for(project: Path, home: Path) -> Iterator[Callable[..., Sandbox]]:
    def make(**kwargs: Any) -> Sandbox:
        return Sandbox(project, home=home, **kwargs)

    yield make
