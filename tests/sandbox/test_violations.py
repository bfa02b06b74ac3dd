"""`sandbox/run/violations.py`: observed calls judged against a spec's mounts (pure but
for the host's `lexists`/`realpath`, which may only drop a report)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


def load_default_seccomp() -> SeccompProfile:
    from swifty_sandbox.policy.profile import load_profile

    return load_profile("default", Path.cwd()).seccomp


def test_an_observer_that_cannot_load_still_starts_the_command() -> None:
    """Observing is no part of confinement: a filter the kernel refuses (here an
    invalid program) leaves the launcher started as without it, nothing reported."""
    import subprocess

    from swifty_sandbox.sandbox.linux import observe

    profile = os.memfd_create("profile")
    os.write(profile, b"the profile's whole filter")
    observer = observe.Observer(b"\0" * 8, swap=(profile, b"without the refused rows"))
    proc = observer.spawn(lambda: subprocess.Popen(["/bin/sh", "-c", "echo x > /dev/null"]))
    assert proc.wait() == 0
    observer.stop()
    assert observer.unavailable and observer.seen == {}
    # the profile's filter keeps its refused rows: nobody else would refuse those calls
    assert os.pread(profile, 100, 0) == b"the profile's whole filter"
    os.close(profile)


_KCMP = ("import ctypes, os, platform, sys\n"
         "libc = ctypes.CDLL(None, use_errno=True)\n"
         "nr = {'x86_64': 312, 'aarch64': 272}[platform.machine()]\n"
         "print('ready', flush=True)\n"
         "sys.stdin.readline()\n"  # until told
         "r = libc.syscall(nr, os.getpid(), os.getpid(), 1, 0, 0)\n"  # kcmp KCMP_VM
         "print(r, ctypes.get_errno(), flush=True)\n")


def _kcmp(observer: object | None) -> str:
    import subprocess

    from swifty_sandbox.sandbox.linux import observe

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(["/usr/bin/python3", "-I", "-c", _KCMP], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    if observer is None:
        proc = start()
    else:
        assert isinstance(observer, observe.Observer)
        proc = observer.spawn(start)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc.communicate("go\n", timeout=60)[0].strip()


def test_a_refused_row_is_answered_with_its_errno_and_reported() -> None:
    """A row of the profile's moved into the observer's filter: the call fails with
    the profile's EPERM (never CONTINUE), and is reported with the profile's key."""
    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.spec.syscalls import syscall_rules

    rows = observe.refused_rows(syscall_rules(load_default_seccomp()), bwrap=False)
    assert "kcmp" in {r.syscall for r in rows}
    assert _kcmp(None) == "0 0"  # the control: kcmp works without the filter
    observer = observe.Observer(observe.filter_bpf(reads=False, refused=rows),
                                refused=rows)
    assert _kcmp(observer) == "-1 1"  # EPERM
    observer.stop()
    assert observer.refusals() == [{"kind": "syscall", "op": "kcmp",
                                    "key": "seccomp.deny", "value": "debug"}]


def test_a_refused_row_stays_refused_when_the_observer_is_gone() -> None:
    """The listener closed while the command runs (our side died): the kernel fails
    the call with ENOSYS — a refusal, never an allow."""
    import subprocess

    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.spec.syscalls import syscall_rules

    rows = observe.refused_rows(syscall_rules(load_default_seccomp()), bwrap=False)
    observer = observe.Observer(observe.filter_bpf(reads=False, refused=rows),
                                refused=rows)
    proc = observer.spawn(lambda: subprocess.Popen(
        ["/usr/bin/python3", "-I", "-c", _KCMP], text=True, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE))
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    observer.stop()  # the server leaves and the listener is closed
    assert proc.communicate("go\n", timeout=60)[0].strip() == "-1 38"  # ENOSYS
    assert observer.refusals() == []


def test_bwrap_keeps_the_rows_its_set_up_needs() -> None:
    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.spec.syscalls import syscall_rules

    rows = syscall_rules(load_default_seccomp())
    under_bwrap = {r.syscall for r in observe.refused_rows(rows, bwrap=True)}
    assert not under_bwrap & {"clone", "unshare", "mount", "umount2", "pivot_root"}
    assert {"kcmp", "keyctl", "ptrace", "ioctl", "socket"} <= under_bwrap
    socket_rows = [r for r in observe.refused_rows(rows, bwrap=True) if r.syscall == "socket"]
    assert not [r for r in socket_rows if r.args[0].op == "EQ" and r.args[0].value in (1, 16)]
    everything = {r.syscall for r in observe.refused_rows(rows, bwrap=False)}
    assert {"unshare", "mount", "clone"} <= everything
    # libc's nscd lookups (`ls -l`): refused, never reported
    assert not [r for r in observe.refused_rows(rows, bwrap=False)
                if r.syscall == "socket" and r.args[0].op == "EQ" and r.args[0].value == 1]
    assert not everything & set(observe._CALLS)  # none is ever answered CONTINUE


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


def test_without_listings_directory_opens_are_not_notified() -> None:
    """`listings=False` (every hidden directory watched by its placeholder instead): a
    listing is not even notified, a write still is, and `stop` still wakes the server
    (its wake-up is a call every filter notifies) and leaves no thread."""
    import subprocess
    import threading

    from swifty_sandbox.sandbox.linux import observe

    observer = observe.Observer(observe.filter_bpf(reads=False, listings=False))
    script = ("import os\n"
              "os.listdir('/usr')\n"
              "try: open('/proc/1/nonexistent-x', 'w')\n"
              "except OSError: pass\n")
    proc = observer.spawn(lambda: subprocess.Popen(["/usr/bin/python3", "-I", "-c", script]))
    assert proc.wait() == 0
    observer.stop()
    seen = {(s.op, s.path) for s in observer.seen.values()}
    assert ("create-write", "/proc/1/nonexistent-x") in seen
    assert not any(op == "read" for op, _ in seen), seen
    assert not [t for t in threading.enumerate() if t.name.startswith("swifty-")]


@pytest.mark.bwrap
@pytest.mark.unprivileged
def test_a_bwrap_launch_leaves_listings_to_the_placeholders(project: Path,
                                                            home: Path) -> None:
    """Under bwrap every hidden directory stands on a watched placeholder, so the
    observer's filter is the one without directory opens."""
    from swifty_sandbox import Sandbox
    from swifty_sandbox.sandbox.backend import Host
    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.linux.backend import LinuxBackend
    from swifty_sandbox.sandbox.run.launch import prepare

    (home / ".ssh").mkdir()
    spec, _ = prepare(Sandbox(project, home=home).run_spec(), "")
    with LinuxBackend().compile(spec, ["true"], Host()) as launch:
        assert launch.argv.count("--ro-bind-fd") >= len(spec.unreadable_dirs) > 0
        if launch.spawn is None:
            pytest.skip("no observer here")
        observer = launch.spawn.__self__  # type: ignore[attr-defined]
        assert observer.bpf == observe._bpf(observer.refused, False)
        assert observer.bpf != observe._bpf(observer.refused, True)


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


def test_the_split_of_a_profiles_rows_is_the_refused_rows_and_the_rest() -> None:
    """`observe.split` (cached per process, made ahead by the warm server): the rows the
    observer reports and the profile's filter without exactly those, in their order."""
    from swifty_sandbox.policy.profile import load_profile
    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.linux.seccomp import export_rows
    from swifty_sandbox.sandbox.spec.syscalls import syscall_rules

    for name in ("default", "strict", "permissive"):
        rows = syscall_rules(load_profile(name, Path("/")).seccomp)
        for bwrap in (True, False):
            refused, bpf, kept = observe.split(rows, bwrap=bwrap)
            assert refused == observe.refused_rows(rows, bwrap=bwrap)
            assert bpf == observe._bpf(refused)
            rest = tuple(row for row in rows if row not in refused)
            assert kept == (export_rows(rest) if refused else None)
            assert observe.split(rows, bwrap=bwrap)[2] is kept  # made once
