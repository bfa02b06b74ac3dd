"""The session log is out of a confined command's reach: it cannot append a forged
record, truncate or replace the log, nor read it (the other commands, and the exact
form a forgery would need). Each attack runs unconfined first (the control: it works),
then confined; judged by reading the log from outside. Both where the log lies by
default (home: readable, not writable) and under `$XDG_STATE_HOME` inside the project,
a writable root, where only the protected-path entry stops the writes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.agents import RunResult, sessionlog

Attack = Callable[..., RunResult]
GENUINE = "genuine-marker-7781"
FORGED = "FORGED-RECORD-4242"


@pytest.fixture(params=["home", "xdg-in-project"])
def log(request: pytest.FixtureRequest, project: Path, home: Path,
        monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project's log file, holding one genuine record."""
    if request.param == "xdg-in-project":
        monkeypatch.setenv("XDG_STATE_HOME", str(project / "state"))
    Sandbox(project, home=home).check(f"echo {GENUINE}")
    path = sessionlog.log_file(Path(os.path.realpath(project)),
                               Path(os.path.realpath(home)))
    assert GENUINE in path.read_text()
    return path


def _restore(path: Path, original: bytes) -> Callable[[], None]:
    """Put the log back as it was before the control's attack (as the host)."""
    def reset() -> None:
        directory, moved = path.parent, path.parent.parent / "moved"
        for gone in (directory, moved):
            if gone.is_symlink():
                gone.unlink()
            elif gone.exists():
                shutil.rmtree(gone)
        directory.mkdir(mode=0o700)
        path.write_bytes(original)
        os.chmod(path, 0o600)
    return reset


def test_cannot_append_a_forged_record(attack: Attack, log: Path) -> None:
    forged = ('{"v":1,"time":"2026-01-01T00:00:00.000Z","kind":"run","surface":"run",'
              f'"project":"x","request":{{"tool":"Bash","command":"{FORGED}"}}}}')
    attack(f"printf '%s\\n' '{forged}' >> '{log}'",
           worked=lambda: FORGED in log.read_text(),
           reset=_restore(log, log.read_bytes()))
    assert FORGED not in "".join(str(r) for r in sessionlog.read(log))


def test_cannot_truncate_or_remove_the_log(attack: Attack, log: Path) -> None:
    attack(f": > '{log}'; rm -f '{log}'",
           worked=lambda: not log.exists() or GENUINE not in log.read_text(),
           reset=_restore(log, log.read_bytes()))


def test_cannot_replace_the_log_directory(attack: Attack, log: Path) -> None:
    """A previous command preparing the next one's record: the directory moved aside
    and a new one (holding a forged file) put in its place."""
    directory = log.parent
    attack(f"mv '{directory}' '{directory.parent}/moved' && mkdir '{directory}' && "
           f"echo '{FORGED}' > '{log}'",
           worked=lambda: log.exists() and FORGED in log.read_text(),
           reset=_restore(log, log.read_bytes()))


def test_cannot_read_the_log(confined: Attack, unconfined: Attack, log: Path) -> None:
    control = unconfined(f"cat '{log}'")
    assert GENUINE in control.stdout, control
    result = confined(f"cat '{log}'; grep -r {GENUINE} '{log.parent}'")
    assert GENUINE not in result.stdout + result.stderr, f"ESCAPE: {result}"


@pytest.mark.differs("hidden-names")
def test_cannot_list_the_logs(confined: Attack, unconfined: Attack, log: Path) -> None:
    """Nor which projects have one (the file names)."""
    assert log.name in unconfined(f"ls -a '{log.parent}'").stdout
    result = confined(f"ls -a '{log.parent}'")
    assert log.name not in result.stdout, f"ESCAPE: {result}"


def test_a_missing_log_directory_cannot_be_planted(attack: Attack, project: Path,
                                                   home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`$XDG_STATE_HOME` in the project and no log yet: the command makes the directory
    and a log holding a forged record, for swifty to append to. The log is made before
    a command runs, so it is protected by then."""
    monkeypatch.setenv("XDG_STATE_HOME", str(project / "fresh"))
    log = sessionlog.log_file(Path(os.path.realpath(project)),
                              Path(os.path.realpath(home)))
    assert not log.parent.exists()

    def reset() -> None:
        shutil.rmtree(project / "fresh")

    attack(f"mkdir -p '{log.parent}' && echo '{FORGED}' >> '{log}'",
           worked=lambda: log.exists() and FORGED in log.read_text(), reset=reset)
