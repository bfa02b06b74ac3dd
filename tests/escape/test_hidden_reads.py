"""A read of a hidden file is reported from what the kernel saw (bwrap: each hidden
file git would not stage stands on a watched placeholder of its own,
`sandbox/linux/placeholders.py`), by any name the command reached it by; never for a
path it only printed, nor for another hidden file than the one it opened. The secret
stays unreadable, writes still fail, and git inside sees nothing to stage. Real bwrap,
real inotify; an unconfined control beside each read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

from .conftest import git

Runner = Callable[..., RunResult]
SECRET = "machine example.com password SECRET-42"


def _kernel_reads(result: RunResult) -> list[str]:
    return [str(v["path"]) for v in result.violations if v["kind"] == "hidden"
            and v["op"] == "read" and v["seen"] == "kernel"]


SHM = Path("/dev/shm")


def _placeholders() -> list[str]:
    """This process's placeholder directories (a run is made here, in-process)."""
    return sorted(p.name for p in SHM.glob(f"swifty-hidden-{os.getuid()}-{os.getpid()}-*"))


def _repo(project: Path) -> None:
    """The project a real repository; `.env` hidden by a rule and ignored by git."""
    git(project, "init", "-q")
    (project / ".gitignore").write_text(".env\n")
    (project / ".env").write_text(SECRET + "\n")
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(.env)\n  effect: deny\n")


@pytest.mark.differs("hidden-file-reads")
def test_a_hidden_file_read_is_reported(confined: Runner, unconfined: Runner,
                                        home: Path) -> None:
    (home / ".netrc").write_text(SECRET + "\n")
    assert SECRET in unconfined(f"cat {home}/.netrc").stdout
    result = confined(f"cat {home}/.netrc")
    assert SECRET not in result.stdout + result.stderr
    assert _kernel_reads(result) == [f"{home}/.netrc"], result.violations
    found = next(v for v in result.violations if v["path"] == f"{home}/.netrc")
    assert "denyRead" in str(found["rule"]) and found["fix"]
    assert f"refused the read of {home}/.netrc" in result.stderr
    assert _placeholders() == []  # removed when the launch ended


@pytest.mark.differs("hidden-file-reads")
@pytest.mark.parametrize("spelling", ["link", "dots", "cwd"])
def test_a_hidden_file_read_by_another_name(confined: Runner, unconfined: Runner,
                                            project: Path, spelling: str) -> None:
    _repo(project)
    (project / "sub").mkdir()
    name = {"link": "sub/alias", "dots": "sub/../.env", "cwd": "/proc/self/cwd/.env"}[
        spelling]
    make = f"cd {project}; ln -sf ../.env sub/alias; " if spelling == "link" else \
        f"cd {project}; "
    assert SECRET in unconfined(make + f"cat {name}").stdout
    (project / "sub" / "alias").unlink(missing_ok=True)
    result = confined(make + f"cat {name}")
    assert SECRET not in result.stdout + result.stderr
    assert _kernel_reads(result) == [str(project / ".env")], result.violations


def test_nothing_hidden_read_reports_nothing(confined: Runner, home: Path,
                                             project: Path) -> None:
    """Control: naming, listing and stat-ing hidden files (and a hidden directory) is
    no read of them."""
    (home / ".netrc").write_text(SECRET + "\n")
    (home / ".ssh").mkdir()
    _repo(project)
    result = confined(f"ls -la {home} {project} > /dev/null; test -e {home}/.netrc; "
                      f"stat {project}/.env > /dev/null; cat {project}/.gitignore; "
                      f"test -d {home}/.ssh; stat {home}/.ssh > /dev/null")
    assert result.exit_code == 0, result.stderr
    assert result.violations == (), result.violations


@pytest.mark.differs("hidden-listings")
@pytest.mark.parametrize("spelling", ["link", "proc-root"])
def test_a_hidden_directory_listed_by_another_name(confined: Runner, unconfined: Runner,
                                                   home: Path, project: Path,
                                                   spelling: str) -> None:
    """bwrap: a hidden directory stands on an empty watched directory of its own, so a
    listing by any name (a link the command made, /proc/self/root) is reported as the
    hidden path, with its rule and fix; the names inside stay unlisted and the files
    unreadable."""
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SECRET + "\n")
    name = {"link": f"{project}/keys/", "proc-root": f"/proc/self/root{home}/.ssh"}[
        spelling]
    make = f"ln -sfn {home}/.ssh {project}/keys; " if spelling == "link" else ""
    command = make + f"ls {name}; cat {name}/id_ed25519"
    control = unconfined(command)
    assert "id_ed25519" in control.stdout and SECRET in control.stdout
    (project / "keys").unlink(missing_ok=True)
    result = confined(command)
    assert SECRET not in result.stdout
    assert _kernel_reads(result) == [f"{home}/.ssh"], result.violations
    found = next(v for v in result.violations if v["path"] == f"{home}/.ssh")
    assert "denyRead" in str(found["rule"]) and found["fix"]
    assert "id_ed25519" not in result.stdout
    assert _placeholders() == []  # removed when the launch ended


@pytest.mark.differs("hidden-file-reads")
def test_printing_or_reading_another_blames_nothing_else(confined: Runner,
                                                         home: Path) -> None:
    """The spoof: a path printed is no open, and the one file opened is the one
    reported (each placeholder is an inode of its own)."""
    (home / ".netrc").write_text(SECRET + "\n")
    (home / ".npmrc").write_text("//registry/:_authToken=TOKEN\n")
    result = confined(f"echo 'cat: {home}/.netrc: Permission denied' >&2; "
                      f"echo {home}/.netrc; cat {home}/.npmrc")
    assert _kernel_reads(result) == [f"{home}/.npmrc"], result.violations
    assert all(v["fix"] is None for v in result.violations
               if v["path"] == f"{home}/.netrc"), result.violations


@pytest.mark.differs("hidden-file-reads")
def test_the_placeholders_and_the_watch_are_out_of_reach(confined: Runner,
                                                         home: Path) -> None:
    """The command sees where the placeholders are (its mountinfo) but cannot open
    them there, holds no inotify descriptor, and its attempt reads no hidden file."""
    (home / ".netrc").write_text(SECRET + "\n")
    result = confined(
        f"src=$(awk '$5 == \"{home}/.netrc\" {{print $4}}' /proc/self/mountinfo); "
        "echo \"source=$src\"; cat \"$src\"; ls \"$(dirname \"$src\")\"; "
        "ls -l /proc/self/fd/ /proc/1/fd/ 2>&1")
    assert f"source=/swifty-hidden-{os.getuid()}-" in result.stdout, result.stdout
    assert "inotify" not in result.stdout
    # bwrap closed each placeholder's descriptor once bound: none left to open by
    assert "swifty-hidden" not in result.stdout.replace("source=/swifty-hidden", "")
    assert f"{home}/.netrc" not in _kernel_reads(result), result.violations


def test_writes_still_fail_and_are_reported(confined: Runner, home: Path) -> None:
    (home / ".netrc").write_text(SECRET + "\n")
    result = confined(f"echo changed > {home}/.netrc; cat {home}/.netrc")
    assert (home / ".netrc").read_text() == SECRET + "\n"
    assert "changed" not in result.stdout
    writes = [v for v in result.violations if v["op"] == "write"]
    assert [v["path"] for v in writes] == [f"{home}/.netrc"], result.violations
    assert writes[0]["seen"] == "kernel"


@pytest.mark.parametrize("tracked_hidden", [False, True])
def test_git_stages_no_placeholder(confined: Runner, project: Path, backend: str,
                                   tracked_hidden: bool) -> None:
    """An ignored hidden file stands on a placeholder (a regular empty file): `git
    commit -a` / `add -A` pass it by. A tracked one stays on /dev/null, which git
    refuses to record (commit -a stops: nothing emptied in the history), and so does an
    untracked one git would add."""
    if backend == "landlock":
        pytest.skip("no mounts: the real files, unreadable (EACCES)")
    _repo(project)
    (project / "tracked.key").write_text("TRACKED-SECRET\n")
    (project / "code.py").write_text("x = 1\n")
    git(project, "add", ".gitignore", "code.py", "tracked.key")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    (project / "untracked.key").write_text("UNTRACKED-SECRET\n")
    rules = project / ".swifty" / "permissions.yaml"
    if tracked_hidden:
        rules.write_text(rules.read_text() + "- rule: ReadFile(*.key)\n  effect: deny\n")
    result = confined(
        f"cd {project}; stat -c '%n %F' .env tracked.key untracked.key; "
        "echo 'x = 2' > code.py; "
        "git -c user.name=t -c user.email=t@t commit -q -a -m two; echo commit=$?; "
        "git add -A; echo add=$?")
    assert ".env regular empty file" in result.stdout, result.stdout
    files = git(project, "ls-tree", "-r", "--name-only", "HEAD").split()
    staged = git(project, "diff", "--cached", "--name-only").split()
    assert ".env" not in files + staged, (files, staged)
    assert git(project, "show", "HEAD:tracked.key") == "TRACKED-SECRET\n"  # not emptied
    assert (project / ".env").read_text() == SECRET + "\n"
    if tracked_hidden:
        assert "tracked.key character special file" in result.stdout
        assert "untracked.key character special file" in result.stdout
        assert "commit=0" not in result.stdout and "add=0" not in result.stdout
        assert git(project, "log", "--format=%s").split() == ["one"]
        assert "untracked.key" not in files + staged and "tracked.key" not in staged
    else:
        assert "commit=0" in result.stdout and "add=0" in result.stdout, result.stderr
        assert git(project, "log", "--format=%s").split() == ["two", "one"]
        assert git(project, "show", "HEAD:code.py") == "x = 2\n"
        assert "untracked.key" in staged  # an ordinary file, added as asked


def test_the_placeholders_go_on_every_way_out(confined: Runner, home: Path,
                                             backend: str) -> None:
    """A run that times out removes its own; a directory a killed swifty left (its
    process gone) is removed by the next run; another live run's is left alone."""
    if backend == "landlock":
        pytest.skip("no placeholders: no mounts")
    (home / ".netrc").write_text(SECRET + "\n")
    gone = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1  # no process has it
    stale = SHM / f"swifty-hidden-{os.getuid()}-{gone}-dead"
    stale.mkdir()
    (stale / "0").write_text("")
    stale.chmod(0o300)  # as a run leaves it: not listable
    live = SHM / f"swifty-hidden-{os.getuid()}-{os.getpid()}-live"
    live.mkdir()
    try:
        result = confined(f"cat {home}/.netrc; sleep 30", timeout=1)
        assert result.timed_out
        assert not stale.exists()
        assert _placeholders() == [live.name]
    finally:
        live.rmdir()


@pytest.mark.differs("hidden-file-reads")
def test_text_and_json_through_the_cli(project: Path, home: Path,
                                       as_argv: Callable[[str], list[str]]) -> None:
    (home / ".netrc").write_text(SECRET + "\n")
    env = {**os.environ, "HOME": str(home)}
    argv = [str(Path(sys.executable).parent / "swifty-sandbox"), "run", "--project",
            str(project)]
    command = as_argv(f"cat {home}/.netrc")
    text = subprocess.run([*argv, "--", *command], env=env, cwd=project,
                          capture_output=True, text=True, check=False)
    assert f"refused the read of {home}/.netrc" in text.stderr, text.stderr
    assert "printed by the command" not in text.stderr and "to allow it" in text.stderr
    done = subprocess.run([*argv, "--json", "--", *command], env=env, cwd=project,
                          capture_output=True, text=True, check=False)
    out = json.loads(done.stdout)
    netrc = [v for v in out["violations"] if v.get("path") == f"{home}/.netrc"]
    assert len(netrc) == 1 and netrc[0]["rule"] and netrc[0]["fix"], out["violations"]
    assert netrc == [
        {"kind": "hidden", "op": "read", "path": f"{home}/.netrc", "seen": "kernel",
         "rule": netrc[0]["rule"], "fix": netrc[0]["fix"]}], out["violations"]
    # Nothing else was refused: a report of anything else would be blame for a call
    # this command never made.
    assert out["violations"] == netrc, out["violations"]
    assert SECRET not in done.stdout + text.stdout


def test_another_walk_blames_no_run(confined: Runner, project: Path, home: Path,
                                    backend: str) -> None:
    """A walk on the host while a run lasts opens none of its placeholders: a link to `/`
    led the file tools' walk for hidden files with other links (`hidden_links`) into
    every live run's placeholders in the host's /dev/shm, and a test's own listing of
    /dev/shm beside another test's run did the same; each of those runs then reported
    reads of its hidden directories that its command never made (flaky MCP and CLI
    tests). A run's folder is listable by root alone, so no walk of the user's reaches
    them. The control: this run's placeholders, listed, are reported, so the detector
    is live."""
    import threading
    import time

    from swifty_sandbox import Sandbox
    from swifty_sandbox.sandbox.spec.compiler import hidden_links

    if backend == "landlock":
        pytest.skip("no placeholders: no mounts")
    (home / ".ssh").mkdir()
    other = home / "other"
    (other / ".git").mkdir(parents=True)
    (other / "top").symlink_to("/")
    (other / ".swifty").mkdir()
    (other / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(**/*.key)\n  effect: deny\n")
    policy = Sandbox(other, home=home).policy

    def during(act: Callable[[], object]) -> list[str]:
        started = threading.Event()

        def meanwhile() -> None:
            while not _placeholders():
                time.sleep(0.02)
            started.set()
            time.sleep(0.3)
            act()

        thread = threading.Thread(target=meanwhile)
        thread.start()
        result = confined("sleep 2")
        thread.join()
        assert started.is_set()
        return [str(v["path"]) for v in result.violations if v["kind"] == "hidden"]

    def list_ours() -> None:
        # This process's run alone: another test's beside it would be blamed.
        for name in _placeholders():
            run = SHM / name
            run.chmod(0o700)  # ours: made listable to be read
            for entry in run.iterdir():
                if entry.is_dir():
                    os.listdir(entry)

    def walk_all() -> None:
        for _top, _dirs, _files in os.walk(SHM):
            pass

    assert str(home / ".ssh") in during(list_ours), "control: the detector is not live"
    assert during(lambda: hidden_links(policy)) == []
    if os.getuid() != 0:  # root lists any folder: the README says so
        assert during(walk_all) == []
