"""`sandbox/run/violations.py`: observed calls judged against a spec's mounts (pure but
for the host's `lexists`/`realpath`, which may only drop a report)."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox.policy.profile import SeccompProfile
from swifty_sandbox.sandbox.agents import refusals
from swifty_sandbox.sandbox.run.violations import (
    LIMIT,
    PRINTED_FORK_FAILURE,
    Areas,
    Seen,
    classify,
    from_output,
    limits,
    merged,
)
from swifty_sandbox.sandbox.spec.compiler import SandboxSpec


def _spec(tmp_path: Path) -> SandboxSpec:
    project = tmp_path / "p"
    (project / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    return SandboxSpec(
        project=str(project), cwd=str(project), read_roots=None,
        writable=(str(project),), private_dirs=(), pinned=(),
        read_only=(str(project / ".git" / "hooks"),), guard_dirs=(),
        unreadable_dirs=(str(tmp_path / "home" / ".ssh"),),
        unreadable_files=(str(project / ".env"),), env_drop=(), env_keep=(),
        seccomp=SeccompProfile((), (), False, (), ()), nested_namespaces=False,
        temp_dir=str(tmp_path / "t"), temp_mounts=("/var/tmp",))


def _kinds(spec: SandboxSpec, *seen: Seen) -> list[tuple[object, object, object]]:
    return [(v["kind"], v["op"], v["path"]) for v in
            classify(Areas(spec), seen, proxied=False)]


def test_each_place_is_judged_by_the_deepest_mount(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    p, home = spec.project, str(tmp_path / "home")
    assert _kinds(spec, Seen("create-write", f"{p}/.git/hooks/pre-commit"),
                  Seen("create-write", f"{p}/ok.txt"), Seen("create-write", "/var/tmp/x"),
                  Seen("read", f"{home}/.ssh"), Seen("read", f"{p}/.env"),
                  Seen("read", f"{p}/README"), Seen("create-write", f"{home}/.bashrc"),
                  Seen("create-write", f"{home}/.ssh/new")) == [
        ("read-only", "write", f"{p}/.git/hooks/pre-commit"),
        ("hidden", "read", f"{home}/.ssh"), ("hidden", "read", f"{p}/.env"),
        ("outside", "write", f"{home}/.bashrc"), ("hidden", "write", f"{home}/.ssh/new")]


def test_what_the_kernel_refuses_first_is_not_ours(tmp_path: Path) -> None:
    """`mkdir -p` meets EEXIST before EROFS; `rm -f` of a missing file ENOENT; devices
    and /proc are not files of the spec."""
    spec = _spec(tmp_path)
    (tmp_path / "home" / "existing").mkdir()
    assert _kinds(spec, Seen("create", str(tmp_path / "home" / "existing")),
                  Seen("create", "/usr"), Seen("remove", str(tmp_path / "home" / "gone")),
                  Seen("write", str(tmp_path / "home" / "gone")),
                  Seen("create-write", "/dev/null"), Seen("write", "/proc/self/attr/x"),
                  Seen("read", "relative")) == []


def test_a_link_into_a_writable_root_drops_the_report_and_names_nothing_else(
        tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    link = tmp_path / "home" / "to-project"
    link.symlink_to(spec.project)
    assert _kinds(spec, Seen("create-write", f"{link}/x")) == []
    (Path(spec.project) / "to-ssh").symlink_to(tmp_path / "home" / ".ssh")
    # lexically in the project: the kernel followed the link (a miss, never a wrong path)
    assert _kinds(spec, Seen("create-write", f"{spec.project}/to-ssh/x")) == []


def test_bounded_and_deduplicated(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    many = [Seen("create-write", f"/etc/f{i}") for i in range(LIMIT + 10)]
    found = classify(Areas(spec), [*many, *many], proxied=False)
    assert len(found) == LIMIT and len({v["path"] for v in found}) == LIMIT


def test_connections(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    found = classify(Areas(spec), [Seen("connect", address=(2, "127.0.0.1", 8000)),
                                   Seen("connect", address=(2, "10.0.0.53", 53)),
                                   Seen("connect", address=(10, "2001:db8::1", 443)),
                                   Seen("connect", address=(2, "192.0.2.7", 443))],
                     proxied=False)
    assert [(v["op"], v["host"]) for v in found] == [
        ("resolve", None), ("connect", "[2001:db8::1]:443"), ("connect", "192.0.2.7:443")]


def test_printed_claims_are_labelled_and_only_for_hidden_paths(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    home = str(tmp_path / "home")
    out = from_output(Areas(spec), b"cat: ~/.ssh/id: Permission denied\n"
                      b"[Errno 13] Permission denied: '.env'\n"
                      b"/etc/shadow: Permission denied\n", home, spec.project)
    assert [(v["path"], v["seen"]) for v in out] == [(f"{home}/.ssh/id", "output"),
                                                     (f"{spec.project}/.env", "output")]
    kernel: dict[str, object] = {"kind": "hidden", "op": "read",
                                 "path": f"{spec.project}/.env"}
    assert merged([kernel], out) == (kernel, out[0])  # the kernel's own first


def test_every_op_has_its_words() -> None:
    ops = {str(v["op"]) for v in (*limits(True, True), PRINTED_FORK_FAILURE)}
    assert ops <= set(refusals.LIMITS) <= set(refusals.OPS)


def test_a_printed_claim_gets_no_fix(tmp_path: Path) -> None:
    from swifty_sandbox.policy.engine import load_policy

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    policy = load_policy(project, tmp_path)
    printed: dict[str, object] = {"kind": "hidden", "op": "read", "seen": "output",
                                  "path": str(tmp_path / ".ssh" / "id")}
    (explained,) = refusals.explain(policy, [printed])
    assert explained["fix"] is None and explained["seen"] == "output"
    assert "to allow it" not in refusals.lines([explained])


def test_an_observer_that_cannot_load_still_starts_the_command() -> None:
    """Observing is no part of confinement: a filter the kernel refuses (here an
    invalid program) leaves the launcher started as without it, nothing reported."""
    import subprocess

    from swifty_sandbox.sandbox.linux import observe

    observer = observe.Observer(b"\0" * 8)
    proc = observer.spawn(lambda: subprocess.Popen(["/bin/sh", "-c", "echo x > /dev/null"]))
    assert proc.wait() == 0
    observer.stop()
    assert observer.unavailable and observer.seen == {}


def test_the_observer_sees_what_a_process_names() -> None:
    """A real filter on a real process: a write outside, a listing and a connect,
    answered CONTINUE (the calls then fail or succeed as the kernel decides)."""
    import subprocess

    from swifty_sandbox.sandbox.linux import observe

    observer = observe.Observer(observe.filter_bpf(reads=False))
    script = ("import os, socket\n"
              "try: open('/proc/1/nonexistent-x', 'w')\n"
              "except OSError: pass\n"
              "os.listdir('/usr')\n"
              "s = socket.socket()\n"
              "try: s.connect(('127.0.0.1', 1))\n"
              "except OSError: pass\n"
              "open('/dev/null').read()\n")
    proc = observer.spawn(lambda: subprocess.Popen(["/usr/bin/python3", "-I", "-c", script]))
    assert proc.wait() == 0
    observer.stop()
    seen = {(s.op, s.path, s.address) for s in observer.seen.values()}
    assert ("create-write", "/proc/1/nonexistent-x", None) in seen
    assert ("read", "/usr", None) in seen
    assert ("connect", "", (2, "127.0.0.1", 1)) in seen
    assert not any(s.path == "/dev/null" for s in observer.seen.values())  # a plain read


def test_the_observer_reads_relative_and_long_paths_and_leaves_no_thread(
        tmp_path: Path) -> None:
    """A path relative to the working directory or to a directory descriptor, and one
    that crosses a page, are named whole; `stop` wakes the blocked server with a call
    of its own and no thread of the observer's is left."""
    import subprocess
    import threading

    from swifty_sandbox.sandbox.linux import observe

    deep = tmp_path / ("d" * 200) / ("e" * 200)
    deep.mkdir(parents=True)
    long_name = "x" * 250
    script = ("import mmap, os, ctypes\n"
              f"os.chdir({str(tmp_path)!r})\n"
              "open('rel.txt', 'w').close()\n"
              f"fd = os.open({str(deep)!r}, os.O_RDONLY | os.O_DIRECTORY)\n"
              "os.close(os.open('at.txt', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\n"
              # a path whose bytes cross a page boundary
              "page = mmap.mmap(-1, 8192)\n"
              f"text = {str(deep / long_name)!r}.encode() + b'\\0'\n"
              "page[4096 - 100:4096 - 100 + len(text)] = text\n"
              "addr = ctypes.addressof(ctypes.c_char.from_buffer(page)) + 4096 - 100\n"
              "libc = ctypes.CDLL(None)\n"
              "libc.open.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int)\n"
              "os.close(libc.open(addr, os.O_WRONLY | os.O_CREAT, 0o600))\n")
    observer = observe.Observer(observe.filter_bpf(reads=False))
    proc = observer.spawn(lambda: subprocess.Popen(["/usr/bin/python3", "-I", "-c", script]))
    assert proc.wait() == 0
    observer.stop()
    paths = {s.path for s in observer.seen.values()}
    assert str(tmp_path / "rel.txt") in paths
    assert str(deep / "at.txt") in paths
    assert str(deep / long_name) in paths
    assert not [t for t in threading.enumerate() if t.name.startswith("swifty-")]


def test_the_observers_numbers_are_libseccomps() -> None:
    import platform

    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.linux.seccomp import _import_pyseccomp

    sc = _import_pyseccomp()
    numbers = observe._NUMBERS[platform.machine()]
    assert numbers == {name: nr for name in observe._CALLS
                       if (nr := sc.resolve_syscall(sc.Arch.NATIVE, name)) >= 0}
