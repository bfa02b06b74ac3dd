"""The seam: `Backend.compile → Launch` is the only way to an argv, and `run_confined`
the one lifecycle around it.

Golden files: `tests/sandbox/golden/bwrap-<profile>-<mode>[-net].json`, the argv of
each golden policy's launch (the test tree shown as `{BASE}`, the project's digest as
`{DIGEST}`, descriptors as `{FD<n>}` in order of appearance, this machine's bwrap and
interpreter named), first recorded from the argv that `LinuxBackend.run` executed
before the seam held; `golden/seccomp-<arch>-libseccomp-<version>.json`, the sha256 of
the BPF in each launch's memfd. After an intended change, regenerate and review:
    SWIFTY_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/sandbox/test_launch.py
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import re
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main
from swifty_sandbox.policy.network import NetworkPolicy, build
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.sandbox import SandboxSpec, SetupError
from swifty_sandbox.sandbox.backend import Host, Launch
from swifty_sandbox.sandbox.linux.backend import LinuxBackend
from swifty_sandbox.sandbox.net.netproxy import forwarder_source, interpreter_roots
from swifty_sandbox.sandbox.run.executor import Completed
from swifty_sandbox.sandbox.run.launch import prepare, run_confined
from swifty_sandbox.sandbox.run.probe import find_bwrap
from swifty_sandbox.sandbox.spec.compiler import Limits

GOLDEN = Path(__file__).parent / "golden"
CASES = [(p, m, ()) for p in ("default", "strict", "permissive")
         for m in ("default", "acceptEdits", "plan", "bypassPermissions")] + [
    ("default", "default", ("example.com",)), ("strict", "default", ("pypi.org", "@pypi"))]
FD_OPTIONS = ("--bind-fd", "--ro-bind-fd", "--seccomp", "--json-status-fd")


def golden_layout(project: Path, home: Path, profile: str) -> None:
    """A project and a home with something of each kind the profiles name."""
    (project / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".env").write_text("KEY=1\n")
    (project / "src").mkdir(exist_ok=True)
    nested = project / "vendor" / "lib" / ".git"
    (nested / "hooks").mkdir(parents=True, exist_ok=True)
    (nested / "config").write_text("")
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    (home / ".netrc").write_text("machine x\n")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(f"sandbox:\n  profile: {profile}\n")


def golden_spec(project: Path, home: Path, profile: str, mode: str) -> SandboxSpec:
    """The policy's spec without what this host has outside the test tree (its
    /etc/shadow, read roots that exist here) and without caps (root gets a cgroup, a
    user prlimit: `test_caps_wrap_the_same_argv` covers them)."""
    golden_layout(project, home, profile)
    spec = Sandbox(project, home=home, mode=mode).spec(str(project), Limits(timeout=30))
    base = os.path.realpath(home.parent.parent)

    def keep(paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p for p in paths if is_within(p, base))

    return dataclasses.replace(
        spec, read_only=keep(spec.read_only), unreadable_dirs=keep(spec.unreadable_dirs),
        unreadable_files=keep(spec.unreadable_files), writable=keep(spec.writable),
        guard_files=keep(spec.guard_files), guard_dirs=keep(spec.guard_dirs),
        read_roots=None if spec.read_roots is None else keep(spec.read_roots))


def normalised(argv: list[str], base: str) -> list[str]:
    """`argv` with this machine's and this run's values named (see the module's doc)."""
    python, roots = os.path.realpath(sys.executable), set(interpreter_roots())
    bwrap = find_bwrap()
    names: dict[str, str] = {}
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if (argv[i - 1:i] and argv[i - 1] in FD_OPTIONS) or argv[i + 1:i + 2] == ["3128"]:
            arg = names.setdefault(arg, f"{{FD{len(names)}}}")
        elif arg == "--ro-bind" and argv[i + 1] in roots and argv[i + 1] == argv[i + 2]:
            if "{PYTHON_ROOTS}" not in out:
                out.append("{PYTHON_ROOTS}")
            i += 3
            continue
        elif arg == forwarder_source():
            arg = "{FORWARDER}"
        elif arg == python:
            arg = "{PYTHON}"
        elif i == 0 and bwrap is not None and arg == bwrap.path:
            arg = "{BWRAP}"
        arg = re.sub(r"-[0-9a-f]{16}\b", "-{DIGEST}", arg)
        out.append("{BASE}" + arg[len(base):] if is_within(arg, base) else arg)
        i += 1
    return out


def _name(profile: str, mode: str, allow: tuple[str, ...]) -> str:
    return f"{profile}-{mode}" + ("-net" if allow else "")


def _network(allow: tuple[str, ...]) -> NetworkPolicy | None:
    return build(allow, ()) if allow else None


def _check_golden(path: Path, got: object) -> None:
    text = json.dumps(got, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get("SWIFTY_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), \
        f"regenerate: SWIFTY_UPDATE_GOLDEN=1 ({path.name})"


# -- the argv and the filter of every golden policy, unchanged ------------------------

@pytest.mark.parametrize(("profile", "mode", "allow"), CASES)
def test_golden_bwrap_argv(project: Path, home: Path, profile: str, mode: str,
                           allow: tuple[str, ...]) -> None:
    spec = golden_spec(project, home, profile, mode)
    host = Host(network=_network(allow), dry=True)
    with LinuxBackend().compile(spec, ["make", "test"], host) as launch:
        argv = launch.argv
    got = normalised(argv, os.path.realpath(home.parent.parent))
    _check_golden(GOLDEN / f"bwrap-{_name(profile, mode, allow)}.json", got)


def _libseccomp() -> str:
    import ctypes

    lib = ctypes.CDLL("libseccomp.so.2")
    lib.seccomp_version.restype = ctypes.POINTER(ctypes.c_uint * 3)
    return ".".join(str(n) for n in lib.seccomp_version().contents)


@pytest.mark.linux
def test_golden_seccomp_bpf_in_the_launch(project: Path, home: Path) -> None:
    """The filter bwrap reads (the launch's memfd), byte for byte, per profile. BPF is
    libseccomp's output: recorded per architecture and libseccomp version."""
    if find_bwrap() is None:
        pytest.skip("bwrap not found")
    got = {}
    for profile in ("default", "strict", "permissive"):
        spec, _ = prepare(golden_spec(project, home, profile, "default"), "")
        with LinuxBackend().compile(spec, ["true"], Host()) as launch:
            fd = int(launch.argv[launch.argv.index("--seccomp") + 1])
            got[profile] = hashlib.sha256(os.pread(fd, 1 << 20, 0)).hexdigest()
    path = GOLDEN / f"seccomp-{platform.machine()}-libseccomp-{_libseccomp()}.json"
    if not path.exists() and os.environ.get("SWIFTY_UPDATE_GOLDEN") != "1":
        pytest.skip(f"no golden filter for this libseccomp ({path.name})")
    _check_golden(path, got)


# -- render is what runs ---------------------------------------------------------------

def _observed_argv(marker: str, bwrap: str, timeout: float = 20) -> list[str]:
    """The argv of the bwrap process whose command carries `marker`, read from /proc
    while it runs (after the cgroup join's exec, if any), then that process killed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"] or []
            if cmdline[:1] == [bwrap] and marker in cmdline and proc.ppid() == os.getpid():
                os.kill(proc.pid, signal.SIGKILL)
                return list(cmdline)
        time.sleep(0.02)
    raise AssertionError("the confined command was never seen running")


def _same_up_to_descriptors(rendered: list[str], ran: list[str]) -> None:
    assert len(rendered) == len(ran), (rendered, ran)
    mapping: dict[str, str] = {}
    for i, (a, b) in enumerate(zip(rendered, ran, strict=True)):
        if a != b:
            is_fd = rendered[i - 1] in FD_OPTIONS or rendered[i + 1:i + 2] == ["3128"]
            assert is_fd and a.isdigit() and b.isdigit(), (i, a, b)
        if rendered[i - 1] in FD_OPTIONS or rendered[i + 1:i + 2] == ["3128"]:
            assert mapping.setdefault(a, b) == b, (i, a, b)  # one number, one descriptor
    assert len(set(mapping.values())) == len(mapping)


@pytest.mark.bwrap
@pytest.mark.unprivileged
@pytest.mark.linux
@pytest.mark.parametrize(("profile", "allow"), [("default", ()), ("strict", ()),
                                                ("default", ("example.com",))])
def test_render_is_the_argv_that_runs(project: Path, home: Path, profile: str,
                                      allow: tuple[str, ...],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile --target bwrap` prints what `run` executes, up to descriptor numbers
    (the cgroup join a root run execs first is the one part not seen in /proc)."""
    bwrap = find_bwrap()
    if bwrap is None:
        pytest.skip("bwrap not found")
    golden_layout(project, home, profile)
    if allow:  # in the user's config: `compile` and `run` both read it
        config = home / ".swifty" / "config.yaml"
        config.write_text(config.read_text() + f"network:\n  allow: {list(allow)}\n")
    monkeypatch.chdir(project)
    marker = f"seam-{uuid.uuid4().hex}"
    command = ["/bin/sh", "-c", "sleep 20", marker]
    shown = CliRunner().invoke(main, ["compile", "--target", "bwrap", "--json", "--project",
                                      str(project), "--", *command])
    assert shown.exit_code == 0, shown.stderr
    rendered: list[str] = json.loads(shown.stdout)["argv"]
    box = Sandbox(project, home=home)
    done: list[object] = []
    runner = threading.Thread(target=lambda: done.append(box.run(command)))
    runner.start()
    try:
        ran = _observed_argv(marker, bwrap.path)
    finally:
        runner.join(30)
    _same_up_to_descriptors(rendered[rendered.index(bwrap.path):], ran)
    assert ran[-4:] == command
    if allow:
        assert forwarder_source() in ran


def test_the_cli_renders_the_run_spec(project: Path, home: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """What `compile --target bwrap` prints is the launch of the spec `run` uses: its
    working directory and caps (before the seam: neither)."""
    golden_layout(project, home, "default")
    (project / "src").mkdir(exist_ok=True)
    monkeypatch.chdir(project / "src")
    shown = CliRunner().invoke(main, ["compile", "--target", "bwrap", "--json", "--project",
                                      str(project), "--", "make"])
    assert shown.exit_code == 0, shown.stderr
    argv = json.loads(shown.stdout)["argv"]
    box = Sandbox(project, home=home)
    with LinuxBackend().compile(box.run_spec(), ["make"], Host(dry=True)) as launch:
        assert argv == launch.argv
    assert argv[argv.index("--chdir") + 1] == os.path.realpath(project / "src")
    assert "--json-status-fd" in argv and "--seccomp" in argv


# -- the launch owns what it holds ------------------------------------------------------

def _open_fds() -> set[int]:
    """Without opening one (a listing of /proc/self/fd would show its own)."""
    def is_open(fd: int) -> bool:
        try:
            os.fstat(fd)
        except OSError:
            return False
        return True

    _closes_done()
    return {fd for fd in range(1024) if is_open(fd)}


def _closes_done() -> None:
    """Wait for the closes a launch handed to a thread (the placeholders' inotify
    descriptor, placeholders.py: the kernel's wait for its watches is not the result's)."""
    for thread in threading.enumerate():
        if thread.name == "swifty-inotify-close":
            thread.join(5)


@pytest.mark.linux
def test_a_launch_closes_every_descriptor_it_holds(project: Path, home: Path) -> None:
    if find_bwrap() is None:
        pytest.skip("bwrap not found")
    spec, _ = prepare(golden_spec(project, home, "default", "default"), "")
    before = _open_fds()
    with LinuxBackend().compile(spec, ["true"], Host(network=build(("example.com",), ()))
                                ) as launch:
        held = set(launch.pass_fds) | {launch.status_fd}
        assert held <= _open_fds() - before and len(held) >= 4  # binds, filter, status, proxy
    assert _open_fds() == before


@pytest.mark.linux
def test_runs_free_their_descriptors_without_a_gc_pass(project: Path, home: Path) -> None:
    """A spec holds descriptors on the files git trusts (`compiler.Held`) until it is
    freed: a cycle through the observer's callbacks kept every run's spec until the
    next GC pass (16 descriptors a run in a git project, a long-lived `serve`'s limit
    in sight). With the collector off, three runs leave none behind."""
    import gc

    if find_bwrap() is None:
        pytest.skip("bwrap not found")
    box = Sandbox(project=project)
    assert box.run(["true"]).exit_code == 0  # the session log's descriptors, once
    gc.disable()
    try:
        before = _open_fds()
        for _ in range(3):
            assert box.run(["true"]).exit_code == 0
        assert _open_fds() == before
    finally:
        gc.enable()


@pytest.mark.linux
def test_a_launch_that_fails_half_way_closes_what_it_opened(
        project: Path, home: Path) -> None:
    """A root swapped for a link after the spec was made: the compile refuses (125)
    and leaves no descriptor open."""
    if find_bwrap() is None:
        pytest.skip("bwrap not found")
    spec, _ = prepare(golden_spec(project, home, "default", "default"), "")
    (project / "vendor").rename(project / "vendor.old")
    (project / "vendor").symlink_to(home)
    spec = dataclasses.replace(spec, pinned=(*spec.pinned, str(project / "vendor")))
    before = _open_fds()
    with pytest.raises(SetupError):
        LinuxBackend().compile(spec, ["true"], Host())
    assert _open_fds() == before


def test_a_dry_launch_makes_nothing(project: Path, home: Path) -> None:
    spec = golden_spec(project, home, "default", "default")
    assert spec.temp_dir is not None and not os.path.exists(spec.temp_dir)
    before = _open_fds()
    with LinuxBackend().compile(spec, ["true"], Host(dry=True)) as launch:
        assert _open_fds() == before
        assert launch.status_fd is not None and launch.argv[0].endswith("bwrap")
    assert not os.path.exists(spec.temp_dir)


class _Translator:
    """A backend that only translates: what the lifecycle does around it is shared."""

    name, targets = "echo", ()

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def compile(self, spec: SandboxSpec, command: list[str], host: Host) -> Launch:
        launch = Launch(spec)
        launch.argv = ["/bin/sh", "-c", 'printf %s "$SEAM"; exit 3']
        launch.edit_env(lambda env: {**env, "SEAM": "edited"})

        def judge(result: Completed, env: object) -> Completed:
            self.calls.append(f"judged {result.exit_code}")
            return result

        launch.judge_with(judge)
        def close() -> str:
            self.calls.append("closed")
            return "closing note\n"

        launch.on_close(close)
        return launch


def test_the_lifecycle_is_one_for_every_backend(project: Path, home: Path) -> None:
    calls: list[str] = []
    spec = golden_spec(project, home, "default", "default")
    result = run_confined(spec, ["ignored"], environ={"PATH": "/usr/bin:/bin",
                                                      "GITHUB_TOKEN": "secret"},
                          backend=_Translator(calls))  # type: ignore[arg-type]
    assert result.exit_code == 3 and result.stdout == b"edited"
    assert calls == ["closed", "judged 3"]  # closed before the after-run step, then judged
    assert result.stderr.endswith(b"closing note\n")


def test_caps_wrap_the_same_argv(project: Path, home: Path) -> None:
    """The caps only wrap the launch: their cgroup join before bwrap, prlimit inside
    before the command; described, no cgroup is made."""
    from swifty_sandbox.sandbox.linux import cgroups
    from swifty_sandbox.sandbox.linux.caps import prepare as caps_for

    spec = golden_spec(project, home, "default", "default")
    capped = dataclasses.replace(spec, limits=Limits(timeout=30, memory_bytes=1 << 30,
                                                     processes=64))
    caps = caps_for(capped.limits, dry=True)
    with LinuxBackend().compile(spec, ["make"], Host(dry=True)) as plain, \
            LinuxBackend().compile(capped, ["make"], Host(dry=True)) as wrapped:
        bare, argv = plain.argv, wrapped.argv
    assert caps.outer or caps.prefix or caps.rlimits  # some way to cap, as root or not
    assert argv[:len(caps.outer)] == caps.outer
    dash = bare.index("--")
    assert argv[len(caps.outer):] == [*bare[:dash + 1], *caps.prefix, *bare[dash + 1:]]
    for directory in cgroups.plan(64, 1 << 30)[0]:
        assert os.path.basename(directory) == cgroups.PLACEHOLDER
        assert not os.path.exists(directory)
