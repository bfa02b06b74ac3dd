"""The warm fork server (cli/warm.py) and its client (cli/entry.py): a served call is
the slow path's call — same decisions, same confinement, same output and exit status —
with rule files read anew on every call; only its own callers get served."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox.cli import entry
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope
from swifty_sandbox.sandbox.run.probe import find_bwrap, try_namespaces

SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "agent.jsonl"
# A caller that must be served: no fallback to the slow path.
SERVED = ("import sys\n"
          "from swifty_sandbox.cli import entry\n"
          "sock = entry._connect()\n"
          "assert sock is not None, 'no server'\n"
          "code = entry._call(sock, sys.argv[1:])\n"
          "assert code is not None, 'refused'\n"
          "sys.exit(code)\n")

Call = Callable[..., subprocess.CompletedProcess[bytes]]

# The tests marked `unprivileged` are in the suite's unprivileged pass too (scripts/test):
# pidfds, /proc and namespaces are what the server's checks read, and root reads more of
# them; the policy comparisons and the cache's mechanics are the same for any user.
pytestmark = pytest.mark.bwrap


def env() -> dict[str, str]:
    """The tests' environment without pytest's per-phase variable (a server started
    while a fixture is set up would otherwise not be the test's own)."""
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


def _bwrap_works() -> bool:
    found = find_bwrap()
    return found is not None and try_namespaces(found)[0]


needs_bwrap = pytest.mark.skipif(not _bwrap_works() and os.environ.get("CI") != "true",
                                 reason="needs a working bwrap")


@pytest.fixture
def server(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    """A server for this test's context (its HOME, this interpreter)."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    proc = _start_server()
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


def child_socket_path(python: str = sys.executable) -> str:
    """The socket a child of ours uses (Python coerces a C locale by setting LC_CTYPE
    in its own environment at start-up, so ask a child)."""
    return subprocess.run(
        [python, "-P", "-c",
         "from swifty_sandbox.cli import entry; print(entry.socket_path())"],
        env=env(), capture_output=True, text=True, check=True).stdout.strip()


def _start_server() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-P", "-m", "swifty_sandbox.cli.warm"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, env=env())
    path = child_socket_path()
    assert path is not None
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        assert proc.poll() is None, "the server ended"
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    return proc


def served(*args: str, cwd: Path, stdin: bytes | None = None,
           extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", SERVED, *args], cwd=cwd,
                          input=stdin if stdin is not None else b"",
                          capture_output=True, timeout=120, check=False,
                          env={**env(), **(extra or {})})


def slow(*args: str, cwd: Path, stdin: bytes | None = None,
         extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([SCRIPT, *args], cwd=cwd, input=stdin if stdin is not None else b"",
                          capture_output=True, timeout=120, check=False,
                          env={**env(), **(extra or {}), "SWIFTY_DAEMON": "off"})


def same(args: list[str], cwd: Path, stdin: bytes | None = None,
         normalise: Callable[[bytes], bytes] = lambda b: b,
         extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    fast = served(*args, cwd=cwd, stdin=stdin, extra=extra)
    assert b"no server" not in fast.stderr and b"refused" not in fast.stderr, fast.stderr
    cold = slow(*args, cwd=cwd, stdin=stdin, extra=extra)
    assert (fast.returncode, normalise(fast.stdout), fast.stderr) == \
        (cold.returncode, normalise(cold.stdout), cold.stderr), args
    return fast


@pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpora are not beside this tree")
def test_agent_corpus_decides_the_same(server: object, project: Path, home: Path) -> None:
    batch = home / "agent.jsonl"
    shutil.copyfile(CORPUS, batch)
    for mode in ("default", "acceptEdits", "plan", "bypassPermissions"):
        result = same(["check", "--json", "--mode", mode, "--batch", str(batch)], project)
        assert len(result.stdout.splitlines()) >= 100


# The policies of the escape suite (tests/escape): profiles, writable roots, rule files.
POLICIES = {
    "default": ("", ""),
    "strict": ("sandbox: {profile: strict}\n", ""),
    "permissive": ("sandbox: {profile: permissive}\n", ""),
    "auto": ("sandbox: {mode: auto}\n", "- rule: Bash(git *)\n  effect: allow\n"),
    "writable": ("sandbox: {writable: [HOME/w]}\n", ""),
    "env-deny": ("", "- rule: ReadFile(*.env*)\n  effect: deny\n"),
    "bash-deny": ("", "- rule: Bash(cat *)\n  effect: deny\n"),
}


def _no_duration(out: bytes) -> bytes:
    value = json.loads(out)
    value.pop("duration_ms", None)
    return json.dumps(value).encode()


@needs_bwrap
@pytest.mark.parametrize("policy", [
    pytest.param(name, marks=[pytest.mark.unprivileged] if name == "default" else [])
    for name in sorted(POLICIES)])
def test_escape_policies_confine_the_same(server: object, project: Path, home: Path,
                                          policy: str) -> None:
    config, rules = POLICIES[policy]
    (home / "w").mkdir()
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(config.replace("HOME", str(home)))
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(rules)
    (project / ".env.local").write_text("SECRET=1\n")
    (project / "sub" / ".git").mkdir(parents=True)
    (project / "evil").symlink_to(home)
    for target in ("bwrap", "seccomp-bpf", "seccomp-pfc"):
        same(["compile", "--json", "--target", target], project)
    for mode in ("default", "acceptEdits", "plan"):
        same(["check", "--json", "--mode", mode, "--", "cat", ".env.local"], project)
        same(["check", "--json", "--mode", mode, "--tool", "ReadFile", ".env.local"], project)
    same(["run", "--json", "--sandbox", "auto", "--", "sh", "-c",
          "ls -a; cat .env.local; echo err >&2; touch made && ls made && rm made; exit 7"],
         project, normalise=_no_duration)
    same(["run", "--sandbox", "auto", "--", "sh", "-c", "echo out; echo err >&2; exit 7"],
         project)
    hook = json.dumps({"tool_name": "Bash", "tool_input": {"command": "git status"},
                       "cwd": str(project), "hook_event_name": "PreToolUse"}).encode()
    same(["hook", "claude-code"], project, stdin=hook)


def test_a_caller_with_other_interpreter_flags_gets_a_server_of_its_own(
        server: object, project: Path, home: Path) -> None:
    """The hooks' rewrite runs `python3 -E …/swifty-sandbox run`, the hook itself the
    console script: both are served, each by a server of its flags (they shared one
    socket name, so whichever started second was refused and never served)."""
    code = "from swifty_sandbox.cli import entry; print(entry.socket_path())"
    flagged_path = subprocess.run([sys.executable, "-E", "-P", "-c", code], env=env(),
                                  capture_output=True, text=True, check=True).stdout.strip()
    assert flagged_path != child_socket_path()
    assert served("check", "--", "ls", cwd=project).returncode == 0  # the plain one
    slow_call = [sys.executable, "-E", SCRIPT, "check", "--", "ls"]
    first = subprocess.run(slow_call, cwd=project, env=env(), capture_output=True,
                           input=b"", timeout=120, check=False)
    assert first.returncode == 0, first.stderr
    deadline = time.monotonic() + 60
    while not os.path.exists(flagged_path):
        assert time.monotonic() < deadline, "no server was started for the -E caller"
        time.sleep(0.05)
    fast = subprocess.run([sys.executable, "-E", "-c", SERVED, "check", "--", "ls"],
                          cwd=project, env=env(), capture_output=True, input=b"",
                          timeout=120, check=False)
    assert fast.returncode == 0, fast.stderr  # served: no "no server", no "refused"
    import psutil

    for proc in psutil.process_iter(["cmdline"]):  # the -E server of this test's home
        with contextlib.suppress(psutil.Error):
            if "-E" in (proc.info["cmdline"] or []) and \
                    proc.environ().get("HOME") == str(home) and \
                    "swifty_sandbox.cli.warm" in proc.info["cmdline"]:
                proc.terminate()


def test_a_rule_file_edited_between_two_calls_is_in_force(server: object, project: Path,
                                                          home: Path) -> None:
    ask = served("check", "--sandbox", "manual", "--", "npm", "test", cwd=project)
    assert ask.returncode == 3, ask.stderr
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(npm test)\n  effect: deny\n")
    denied = served("check", "--sandbox", "manual", "--", "npm", "test", cwd=project)
    assert denied.returncode == 1, denied.stderr
    (project / ".swifty" / "permissions.yaml").write_text("")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(npm test)\n  effect: allow\n")
    allowed = served("check", "--sandbox", "manual", "--", "npm", "test", cwd=project)
    assert allowed.returncode == 0, allowed.stderr


@needs_bwrap
def test_what_changed_since_the_server_learned_a_file_is_seen_on_the_next_call(
        server: object, project: Path, home: Path) -> None:
    """The server keeps the rule files its workers parsed (`rulefiles.learn`): after
    a few calls it has this project's, and every change since is in force on the very
    next call, served as unserved — an edit of the same size, a file planted in a layer
    that had none, a hidden file made since, another working directory, mode and
    variable."""
    rules = project / ".swifty" / "permissions.yaml"
    rules.parent.mkdir()
    rules.write_text("- rule: Bash(npm test)\n  effect: deny\n"
                     "- rule: ReadFile(*.key)\n  effect: deny\n")
    check = ["check", "--sandbox", "manual", "--", "npm", "test"]
    for _ in range(3):  # learnt by the server, inherited by its next workers
        assert same(check, project).returncode == 1
    rules.write_text(rules.read_text().replace("npm test", "npm tesx"))  # same size
    assert same(check, project).returncode == 3
    local = PolicyFiles(project, home).rules(Scope.LOCAL)  # a layer that had no file
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text("- rule: Bash(npm test)\n  effect: deny\n")
    assert same(check, project).returncode == 1
    local.unlink()
    cat = ["run", "--sandbox", "auto", "--", "sh", "-c", "cat sub/new.key || echo hidden"]
    (project / "sub").mkdir()
    assert same(cat, project).stdout == b"hidden\n"  # nothing to read yet
    (project / "sub" / "new.key").write_text("SECRET")
    out = same(cat, project)
    assert b"SECRET" not in out.stdout and b"hidden" in out.stdout, out
    pwd = ["run", "--sandbox", "auto", "--", "sh", "-c", 'pwd; echo "$SOME_VARIABLE"']
    assert same(pwd, project / "sub", extra={"SOME_VARIABLE": "one"}).stdout == \
        f"{project / 'sub'}\none\n".encode()
    assert same(pwd, project, extra={"SOME_VARIABLE": "two"}).stdout == \
        f"{project}\ntwo\n".encode()
    modes = {mode: same(["check", "--sandbox", "manual", "--mode", mode, "--", "touch", "x"],
                        project).returncode for mode in ("plan", "bypassPermissions")}
    assert modes["plan"] != 0 and modes["bypassPermissions"] == 0, modes


ATTACK = """
import json, os, socket, struct, sys
path, header = sys.argv[1], json.load(open(sys.argv[2]))
cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
os.chdir(os.path.dirname(path))  # a socket's path is short
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.path.basename(path))
mine = os.memfd_create("attack")  # the handshake, as our own client does it
s.sendall(b"H" + struct.pack("!i", mine))
kind = s.recv(1)
size = struct.unpack("!H", s.recv(2))[0] if kind == b"C" else 0
where = s.recv(size).partition(b"\\0")[2].split() if size else []
try:
    header["proof"] = os.readlink(f"/proc/{int(where[0])}/fd/{int(where[1])}")
except (OSError, IndexError) as e:
    print("no proof:", kind, e)
data = json.dumps(header).encode()
s.sendmsg([struct.pack("!I", len(data)), data],
          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("4i", 0, 1, 2, cwd))])
answer = b""
while chunk := s.recv(16):  # until the worker reports its exit status and closes
    answer += chunk
print(answer)
"""


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@needs_bwrap
def test_a_sandboxed_command_cannot_use_the_server(server: object, project: Path,
                                                   home: Path) -> None:
    """A confined command that reaches the socket (it is on a read-only mount, which
    does not stop connect) and sends a well-formed call to run unconfined gets nothing;
    the same bytes from outside the sandbox are served (the control)."""
    target = home / "escaped"
    script = home / "attack.py"
    script.write_text(ATTACK)
    header = home / "call.json"  # what our own client would send (made by a child of
    header.write_text(subprocess.run(  # ours: Python adjusts its environment at start-up)
        [sys.executable, "-c",
         "import json, os, sys\n"
         "from swifty_sandbox.cli import entry\n"
         "print(json.dumps({'protocol': entry.PROTOCOL, 'flags': entry.flags(),\n"
         "                  'path': entry.import_path(), 'env': dict(os.environ),\n"
         "                  'argv': ['run', '--sandbox', 'off', '--mode', 'bypassPermissions',\n"
         "                           '--', 'touch', sys.argv[1]]}))",
         str(target)], env=env(), capture_output=True, text=True, check=True).stdout)
    path = child_socket_path()
    assert path is not None
    control = subprocess.run([sys.executable, str(script), path, str(header)], cwd=project,
                             capture_output=True, timeout=60, check=False, env=env())
    assert control.returncode == 0, control.stderr
    deadline = time.monotonic() + 30
    while not target.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert target.exists(), f"control: the server did not run the call: {control}"
    target.unlink()
    confined = slow("run", "--sandbox", "auto", "--", sys.executable, str(script), path,
                    str(header), cwd=project)
    time.sleep(1.0)
    assert not target.exists(), f"ESCAPE through the server: {confined}"
    assert b"b'A'" not in confined.stdout


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
def test_no_server_behind_a_foreign_or_unsafe_socket(home: Path, project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A run directory that others can enter, that is a symlink, or a socket whose
    listener is not us: the caller hands nothing over and runs the call itself."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    path = entry.socket_path()
    assert path is not None
    folder = Path(path).parent
    folder.mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    _bind(listener, path)
    listener.listen(1)
    try:
        assert entry._connect() is None  # a directory others can enter
        folder.chmod(0o700)
        real = folder.with_name("elsewhere")
        folder.rename(real)
        folder.symlink_to(real)
        assert entry._connect() is None  # a symlinked directory
        folder.unlink()
        real.rename(folder)
        ours = entry._connect()  # the control: our own listener in a private directory
        assert ours is not None
        ours.close()
    finally:
        listener.close()
    os.unlink(path)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    _bind(stale, path)
    stale.close()  # a stale socket: nobody listens
    assert entry._connect() is None
    result = subprocess.run([SCRIPT, "check", "--", "ls"], cwd=project, capture_output=True,
                            stdin=subprocess.DEVNULL, timeout=120, check=False,
                            env={**os.environ, "SWIFTY_DAEMON": "off"})
    assert result.returncode == 0, result.stderr


def _bind(sock: socket.socket, path: str) -> None:
    """Bind through the directory's descriptor: test homes make long paths."""
    folder = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
    try:
        sock.bind(f"/proc/self/fd/{folder}/{os.path.basename(path)}")
    finally:
        os.close(folder)


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@needs_bwrap
def test_a_listener_in_another_user_namespace_gets_nothing(home: Path, project: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """A socket planted by a process in other namespaces (as a sandboxed command would
    be): the caller does not send it its environment or descriptors."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    path = entry.socket_path()
    bwrap = find_bwrap()
    assert path is not None and bwrap is not None
    Path(path).parent.mkdir(parents=True, mode=0o700)
    got = home / "got"
    listening = home / "listening"  # the socket exists at bind(), takes calls at listen()
    listener = subprocess.Popen(
        [bwrap.path, "--bind", "/", "/", "--unshare-user", "--unshare-pid", "--",
         sys.executable, "-c",
         "import os, socket, sys\n"
         "os.chdir(os.path.dirname(sys.argv[1]))\n"
         "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
         "s.bind(os.path.basename(sys.argv[1]))\n"
         "s.listen(1); open(sys.argv[3], 'w').close()\n"
         "c, _ = s.accept(); c.settimeout(5)\n"
         "data = b''\n"
         "try:\n"
         "    while chunk := c.recv(65536): data += chunk\n"
         "except OSError: pass\n"
         "open(sys.argv[2], 'wb').write(data)\n", path, str(got), str(listening)])
    try:
        deadline = time.monotonic() + 30
        while not listening.exists():
            assert time.monotonic() < deadline and listener.poll() is None
            time.sleep(0.05)
        assert entry._connect() is None
        listener.wait(timeout=30)
        assert got.read_bytes() == b""
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.wait()


@pytest.mark.unprivileged  # pidfds and /proc as the caller's own user
@needs_bwrap
@pytest.mark.parametrize("how", ["interrupt", "kill"])
def test_the_callers_end_ends_the_command(server: object, project: Path, how: str) -> None:
    """Ctrl-C at the caller is 130 with the command's tree gone, as on the slow path;
    a caller killed outright takes the command with it too."""
    marker = f"swifty-warm-{how}-{os.getpid()}"
    script = project.parent / f"{marker}.sh"
    script.write_text("touch started\nsleep 60\n")
    proc = subprocess.Popen([sys.executable, "-c", SERVED, "run", "--", "sh", str(script)],
                            cwd=project, stdin=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env())
    try:
        deadline = time.monotonic() + 60
        while not (project / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        assert _running(marker)
        proc.send_signal(signal.SIGINT if how == "interrupt" else signal.SIGKILL)
        code = proc.wait(timeout=30)
        assert code == (130 if how == "interrupt" else -signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _running(marker):
            assert time.monotonic() < deadline, "the command outlived its caller"
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _running(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        return True
            except OSError:
                continue
    return False


def test_changed_code_is_never_served(home: Path, project: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A dependency installed (here: a module added to the import path) after the
    server started: it refuses the call (which runs here) and leaves."""
    extra = home / "site"
    extra.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(extra))
    monkeypatch.delenv("SWIFTY_DAEMON")
    proc = _start_server()
    try:
        assert served("check", "--", "ls", cwd=project).returncode == 0
        (extra / "newmodule.py").write_text("")
        refused = served("check", "--", "ls", cwd=project)
        assert b"refused" in refused.stderr or b"no server" in refused.stderr
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.unprivileged  # pidfds and /proc as the caller's own user
def test_the_first_call_starts_a_server_that_serves_the_next(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SWIFTY_DAEMON")
    first = subprocess.run([SCRIPT, "check", "--", "ls"], cwd=project, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=120, check=False, env=env())
    assert first.returncode == 0, first.stderr
    python = script_python()
    path = child_socket_path(python)
    assert path is not None
    deadline = time.monotonic() + 60
    try:
        while not os.path.exists(path):
            assert time.monotonic() < deadline, "no server started"
            time.sleep(0.05)
        again = subprocess.run([python, "-c", SERVED, "check", "--", "ls"], cwd=project,
                               capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
                               check=False, env=env())
        assert again.returncode == 0, again.stderr
    finally:
        stop_server(path)


def script_python() -> str:
    """The console script's own interpreter (its #! line): it names the script's server."""
    return Path(SCRIPT).read_text().splitlines()[0][2:].strip()


def stop_server(path: str) -> None:
    """The server at `path` sees its socket gone and leaves; wait until it has (its lock
    is free again)."""
    os.unlink(path)
    lock = Path(path).with_suffix(".lock")
    deadline = time.monotonic() + 30
    while _locked(lock):
        assert time.monotonic() < deadline, "the server did not leave"
        time.sleep(0.2)


def _locked(lock: Path) -> bool:
    import fcntl

    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


@pytest.mark.unprivileged  # pidfds and /proc as the caller's own user
def test_a_caller_that_ignores_hangups_is_not_served(server: object, project: Path) -> None:
    """`nohup swifty-sandbox run …`: the command must inherit the ignored SIGHUP, which a
    worker of a server that does not ignore it would not pass on; the call runs here."""
    result = subprocess.run([sys.executable, "-c", SERVED, "check", "--", "ls"], cwd=project,
                            capture_output=True, timeout=120, check=False, env=env(),
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    assert b"refused" in result.stderr or b"no server" in result.stderr
    assert served("check", "--", "ls", cwd=project).returncode == 0  # the control


def _alive_children(pid: int) -> set[int]:
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != b"Z":
                found.add(int(name))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.unprivileged  # pidfds and /proc as the caller's own user
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_no_waiting_worker_outlives_its_server(home: Path, monkeypatch: pytest.MonkeyPatch,
                                               signum: int) -> None:
    monkeypatch.delenv("SWIFTY_DAEMON")
    proc = _start_server()
    deadline = time.monotonic() + 30
    while not (spares := _alive_children(proc.pid)):
        assert time.monotonic() < deadline, "no worker waits for a call"
        time.sleep(0.05)
    proc.send_signal(signum)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in spares):
        assert time.monotonic() < deadline, "a waiting worker outlived its server"
        time.sleep(0.05)


def test_a_terminal_or_a_process_relative_path_stays_here() -> None:
    assert not entry._eligible(["run", "--", "cat", "/proc/self/status"])
    assert not entry._eligible(["check", "--batch", "/dev/fd/3"])
    assert not entry._eligible(["check", "--batch", "/dev/tty"])
    assert not entry._eligible(["doctor"])
    assert not entry._eligible([])


# -- callers confined in ways /proc does not tell apart (issue 19, class 4) ----------------

# A caller of our uid confined in its own way, then calling like our client does:
# `served` (no fallback: it must be served, else it says why) or `main` (the console
# script: refused, it runs the call itself, confined as it is).
CONFINED = r"""
import ctypes, errno, os, sys
how, nnp, way, *args = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
if nnp == "nnp":
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
if how.startswith("landlock"):
    class Attr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64)]
    # MAKE_REG: no regular file may be created anywhere; MAKE_BLOCK: a domain that
    # forbids nothing this process does
    attr = Attr(1 << 8 if how == "landlock" else 1 << 11)
    ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    assert ruleset >= 0 and libc.syscall(446, ruleset, 0) == 0, ctypes.get_errno()
elif how == "seccomp":
    import pyseccomp as sc
    f = sc.SyscallFilter(sc.ALLOW)  # no file may be created
    f.add_rule(sc.ERRNO(errno.EPERM), "openat", sc.Arg(2, sc.MASKED_EQ, os.O_CREAT, os.O_CREAT))
    f.add_rule(sc.ERRNO(errno.EPERM), "open", sc.Arg(1, sc.MASKED_EQ, os.O_CREAT, os.O_CREAT))
    f.add_rule(sc.ERRNO(errno.EPERM), "creat")
    f.add_rule(sc.ERRNO(errno.ENOSYS), "openat2")
    f.load()
elif how == "filtered":
    import pyseccomp as sc
    f = sc.SyscallFilter(sc.ALLOW)  # a filter that forbids nothing this process does
    f.add_rule(sc.ERRNO(errno.EPERM), "kexec_load")
    f.load()
if way in ("served", "forced"):  # straight to the socket: a hostile caller skips the
    import json, socket, struct  # client's own checks of the server
    from swifty_sandbox.cli import entry
    path = os.environ.get("TEST_SOCKET") or entry.socket_path()  # another context's
    folder = entry.open_run_dir(os.path.dirname(path), create=False)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(f"/proc/self/fd/{folder}/{os.path.basename(path)}")
    except OSError:
        sys.exit("no server")
    if way == "served":
        code = entry._call(sock, args)
        assert code is not None, "refused"
        sys.exit(code)
    # forced: the handshake as far as it goes, then the call whatever it proved
    mine, _ = entry.nonce()
    cwd = os.open(".", os.O_PATH | os.O_DIRECTORY)
    try:
        sock.sendall(b"H" + struct.pack("!i", mine))
        kind = sock.recv(1)
        size = struct.unpack("!H", sock.recv(2))[0] if kind == b"C" else 0
        where = sock.recv(size).partition(b"\0")[2].split() if size else [b"0", b"0"]
        data = entry.header(args, entry.named(int(where[0]), int(where[1])))
        sock.sendmsg([struct.pack("!I", len(data)), data],
                     [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("4i", 0, 1, 2, cwd))])
        answer = sock.recv(1)
    except OSError:
        answer = b""
    sys.exit("served" if answer == b"A" else f"refused: {answer!r}")
elif way == "client":  # our own client, its checks of the server included
    from swifty_sandbox.cli import entry
    sock = entry._connect()
    sys.exit("no server" if sock is None else f"answer: {entry._call(sock, args)}")
elif way == "main":
    from swifty_sandbox.cli.entry import main
    sys.argv = ["swifty-sandbox", *args]
    main()
elif way == "server":  # started as our client starts one (its interpreter options)
    from swifty_sandbox.cli import entry
    os.execv(sys.executable, [sys.executable, *entry._interpreter_options(), "-P", "-m",
                              "swifty_sandbox.cli.warm"])
else:  # a process that only needs to be confined: a planted listener
    os.execv(sys.executable, [sys.executable, *args])
"""

_ROOT = os.geteuid() == 0
_NNP = ["nnp", *(["root"] if _ROOT else [])]  # as root, no no_new_privs is needed


def confined(how: str, nnp: str, way: str, *args: str, cwd: Path) -> \
        subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", CONFINED, how, nnp, way, *args], cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                          check=False, env=env())


def _confined_server(how: str, nnp: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CONFINED, how, nnp, "server"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env=env())


def _wait_for_socket(proc: subprocess.Popen[bytes]) -> None:
    path = child_socket_path()
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        assert proc.poll() is None, "the server ended"
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)


@pytest.fixture
def nnp_server(home: Path, monkeypatch: pytest.MonkeyPatch,
               request: pytest.FixtureRequest) -> Iterator[str]:
    """A server started with no_new_privs (as a caller in an agent that sets it would
    start it), or without as root; yields which, for the callers to match."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    nnp: str = request.param
    proc = _confined_server("none", nnp)
    try:
        _wait_for_socket(proc)
        yield nnp
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _touch(target: Path) -> list[str]:
    return ["run", "--sandbox", "off", "--mode", "bypassPermissions", "--", "touch",
            str(target)]


def _absent(target: Path) -> bool:
    time.sleep(1.0)  # a worker that took the call would have run it by now
    return not target.exists()


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@pytest.mark.parametrize("nnp_server", _NNP, indirect=True)
def test_a_landlocked_caller_is_not_served(nnp_server: str, project: Path,
                                           home: Path) -> None:
    """A caller in a Landlock domain that forbids creating files: the server (in no
    domain) ran its call outside it, and the file appeared. Now the handshake fails
    (the caller may not read the worker's /proc entry), the call runs in the caller,
    and the file is not made. The control: the same caller without the domain is
    served and the file appears."""
    target = home / "escaped"
    control = confined("none", nnp_server, "served", *_touch(target), cwd=project)
    assert control.returncode == 0, control.stderr
    assert target.exists(), "control: the server did not run the call"
    target.unlink()
    for way in ("served", "forced"):
        attack = confined("landlock", nnp_server, way, *_touch(target), cwd=project)
        assert b"refused" in attack.stderr, attack.stderr
        assert _absent(target), f"ESCAPE: a landlocked caller was served ({way})"
    fallback = confined("landlock", nnp_server, "main", *_touch(target), cwd=project)
    assert fallback.returncode != 0
    assert _absent(target), f"ESCAPE through the console script: {fallback.stderr!r}"


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@pytest.mark.parametrize("nnp_server", _NNP, indirect=True)
def test_a_caller_with_its_own_seccomp_filter_is_not_served(nnp_server: str, project: Path,
                                                            home: Path) -> None:
    target = home / "escaped"
    control = confined("none", nnp_server, "served", *_touch(target), cwd=project)
    assert control.returncode == 0 and target.exists(), control.stderr
    target.unlink()
    attack = confined("seccomp", nnp_server, "forced", *_touch(target), cwd=project)
    assert b"refused" in attack.stderr, attack.stderr
    fallback = confined("seccomp", nnp_server, "main", *_touch(target), cwd=project)
    assert fallback.returncode != 0
    assert _absent(target), "ESCAPE: a filtered caller was served outside its filter"


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@pytest.mark.parametrize("nnp", _NNP)
def test_no_server_serves_under_a_seccomp_filter(home: Path, project: Path, nnp: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal filter counts were taken for equal filters: a server under one filter (a
    service manager's) served a caller under another of its own, which forbids what the
    call then did. /proc never says which filters a process has, so no server runs
    under one, and a filtered caller starts none. The control: the same call, served by
    a server without a filter, makes the file."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    target = home / "escaped"
    proc = _confined_server("filtered", nnp)
    assert proc.wait(timeout=60) == 1  # it leaves before it binds
    assert not os.path.exists(child_socket_path())
    fallback = confined("seccomp", nnp, "main", *_touch(target), cwd=project)
    assert fallback.returncode != 0
    assert _absent(target), "the filtered caller's call made the file"
    time.sleep(1.0)
    assert not os.path.exists(child_socket_path()), "a filtered caller started a server"
    server = _confined_server("none", nnp)
    try:
        _wait_for_socket(server)
        control = confined("none", nnp, "served", *_touch(target), cwd=project)
        assert control.returncode == 0 and target.exists(), control.stderr
    finally:
        server.terminate()
        server.wait(timeout=10)


# A listener planted on the server's socket by a process of our uid: it answers the
# handshake honestly (it names the caller's descriptor if it can) and records what the
# caller sends after it.
PLANTED = r"""
import os, socket, struct, sys
path, out = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
os.chdir(os.path.dirname(path))
name = os.path.basename(path)
if os.path.exists(name):
    os.unlink(name)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(name)
s.listen(1)
open(out + ".ready", "w").close()
c, _ = s.accept()
c.settimeout(10)
pid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
hello = c.recv(5)
if len(hello) != 5:  # the caller said nothing at all
    open(out, "wb").write(hello)
    sys.exit(0)
try:
    seen = os.readlink(f"/proc/{pid}/fd/{struct.unpack('!i', hello[1:])[0]}").encode()
except OSError:
    seen = b"?"
mine = os.memfd_create("planted")
payload = seen + b"\0" + f"{os.getpid()} {mine}".encode()
c.sendall(b"C" + struct.pack("!H", len(payload)) + payload)
data = b""
try:
    while chunk := c.recv(65536):
        data += chunk
        if b'"argv"' in data:
            break
except OSError:
    pass
open(out, "wb").write(data)
"""


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@pytest.mark.parametrize("nnp", _NNP)
def test_a_listener_planted_from_a_landlock_domain_gets_nothing(
        home: Path, project: Path, outside_temp: Path, nnp: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The next variant: a landlocked process of ours that may write the run directory
    plants its own listener there. Our client checked only uid and namespaces, which it
    shares, so it would send it its environment and descriptors (and take its answer
    for a decision). It must name our descriptor first, which it may not read; and
    one under a seccomp filter of its own (which /proc shows) is not even greeted. The
    control: the same listener unconfined gets the call."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    path = child_socket_path()
    script = outside_temp / "planted.py"
    script.write_text(PLANTED)
    for how in ("none", "landlock-nothing", "filtered"):
        out = outside_temp / f"got-{how}"
        listener = subprocess.Popen(
            [sys.executable, "-c", CONFINED, how, nnp, "exec", str(script), path, str(out)],
            stdin=subprocess.DEVNULL, env=env())
        try:
            deadline = time.monotonic() + 30
            while not Path(str(out) + ".ready").exists():
                assert listener.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            confined("none", nnp, "client", "check", "--", "ls", cwd=project)
            listener.wait(timeout=30)
        finally:
            if listener.poll() is None:
                listener.kill()
                listener.wait()
        got = out.read_bytes()
        if how == "none":
            assert b'"env"' in got, got  # the control: an unconfined listener is trusted
        elif how == "filtered":  # /proc shows its filter: not even the handshake
            assert got == b"", f"the filtered listener got {got!r}"
        else:
            assert b'"env"' not in got and len(got) <= 5, f"the planted listener got {got!r}"


# -- a bounded number of servers (issue 22, item 4) ------------------------------------------

@needs_bwrap
def test_an_ordinary_variable_is_the_call_s_own(server: object, project: Path,
                                                home: Path) -> None:
    """A variable the server is not for (`entry.SERVER_VARS`) no longer needs a server
    of its own: calls that differ in it are served by one, each under its own value,
    as the cold call would be — the command sees it, a secret-looking one is scrubbed
    alike, TMPDIR is the caller's."""
    for value in ("one", "two"):
        extra = {"SOME_VARIABLE": value, "GITHUB_TOKEN": f"ghp_{value}",
                 "TMPDIR": str(home)}
        out = same(["run", "--sandbox", "auto", "--", "sh", "-c",
                    'echo "$SOME_VARIABLE ${GITHUB_TOKEN:-scrubbed}"'], project, extra=extra)
        assert out.stdout == f"{value} scrubbed\n".encode(), out
        same(["run", "--sandbox", "off", "--mode", "bypassPermissions", "--",
              sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
             project, extra=extra)
        same(["check", "--json", "--", "git", "status"], project,
             extra={**extra, "SWIFTY_LANG": "zh" if value == "two" else "en"})


def test_a_variable_the_server_is_for_is_refused(server: object, project: Path) -> None:
    """A caller whose import path or locale differs names another socket; one that
    connects to this server's anyway is refused (the call runs in the caller)."""
    assert served("check", "--", "ls", cwd=project).returncode == 0  # the control
    path = child_socket_path()
    for extra in ({}, {"PYTHONPATH": str(project)}, {"LC_ALL": "C"}, {"LD_PRELOAD": ""},
                  {"TZ": "UTC0"}, {"PYTHONWARNINGS": "ignore"}):
        assert (entry.socket_path({**env(), **extra}) == entry.socket_path(env())) == \
            (not extra)
        result = subprocess.run(
            [sys.executable, "-c", CONFINED, "none", "-", "forced", "check", "--", "ls"],
            cwd=project, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
            check=False, env={**env(), **extra, "TEST_SOCKET": path})
        if extra:
            assert b"refused" in result.stderr, (extra, result)
        else:  # the control: the same caller with the server's own variables
            assert b"served" in result.stderr, result


def _servers(home: Path) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    cmdline = f.read()
                with open(f"/proc/{name}/environ", "rb") as f:
                    environ = f.read().split(b"\0")
            except OSError:
                continue
            if b"swifty_sandbox.cli.warm" in cmdline and \
                    f"HOME={home}".encode() in environ and _alive(int(name)):
                found.append(int(name))
    return found


def _pss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return sum(int(line.split()[1]) for line in f if line.startswith("Pss:"))


def test_calls_that_differ_in_one_variable_leave_one_server(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten calls that differed in one exported variable left ten servers (20 processes,
    209 MB, for five minutes). Now: one server and its waiting worker, ≤ 60 MB."""
    monkeypatch.delenv("SWIFTY_DAEMON")
    try:
        for i in range(10):
            result = subprocess.run([SCRIPT, "check", "--", "ls"], cwd=project,
                                    stdin=subprocess.DEVNULL, capture_output=True,
                                    timeout=120, check=False,
                                    env={**env(), "SOME_VARIABLE": str(i)})
            assert result.returncode == 0, result.stderr
            deadline = time.monotonic() + 30
            while i == 0 and len(_servers(home)) < 2:
                assert time.monotonic() < deadline, "no server started"
                time.sleep(0.1)
        time.sleep(2)
        servers = _servers(home)
        pss = sum(_pss_kib(pid) for pid in servers) / 1024
        assert len(servers) <= 2, servers
        assert pss <= 60, f"{pss:.1f} MB"
    finally:
        shutil.rmtree(home / ".cache" / "swifty-sandbox" / "run", ignore_errors=True)


def test_at_most_a_few_servers_the_least_recently_used_leave(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers for five contexts (here: five languages, a variable a server is for):
    each new one removes the sockets of the least recently used beyond MAX_SERVERS,
    which leave; the most recent are kept, and serve."""
    from swifty_sandbox.cli.warm import MAX_SERVERS

    monkeypatch.delenv("SWIFTY_DAEMON")
    procs = []
    try:
        for i in range(5):
            monkeypatch.setenv("LANGUAGE", f"x{i}")
            procs.append(_start_server())
            time.sleep(0.2)  # a socket's time is its last use: apart
        deadline = time.monotonic() + 30
        while sum(p.poll() is None for p in procs) > MAX_SERVERS:
            assert time.monotonic() < deadline, [p.poll() for p in procs]
            time.sleep(0.2)
        assert [p.poll() is None for p in procs] == [False, False, True, True, True]
        run = home / ".cache" / "swifty-sandbox" / "run"
        assert len(list(run.glob("*.sock"))) == MAX_SERVERS
        assert served("check", "--", "ls", cwd=project).returncode == 0  # LANGUAGE=x4
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)


# Runs its arguments with socket() refused (EPERM), as inside the sandbox, where our own
# filter refuses it, or under another tool's filter.
NO_SOCKETS = ("import os, sys, pyseccomp as sc\n"
              "f = sc.SyscallFilter(sc.ALLOW)\n"
              "f.add_rule(sc.ERRNO(1), 'socket')\n"
              "f.load()\n"
              "os.execv(sys.argv[1], sys.argv[1:])\n")


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
def test_a_caller_that_may_not_make_a_socket_runs_its_call_itself(
        server: object, project: Path) -> None:
    """The client made its socket before anything that could fail quietly: refused
    (a nested `run` inside the sandbox), it died with a traceback instead of running
    the call. Filtered, it now asks no server; and a socket refused anyway is no
    server either. The control: the filter really refuses a socket."""
    control = subprocess.run([sys.executable, "-c", NO_SOCKETS, sys.executable, "-c",
                              "import socket; socket.socket(socket.AF_UNIX)"],
                             capture_output=True, text=True, check=False, env=env())
    assert control.returncode != 0 and "PermissionError" in control.stderr
    done = subprocess.run([sys.executable, "-c", NO_SOCKETS, SCRIPT, "check", "-c", "ls"],
                          cwd=project, capture_output=True, text=True, check=False,
                          env=env())
    assert done.returncode == 0 and done.stdout.startswith("allow"), done
    assert "Traceback" not in done.stderr
    direct = subprocess.run([sys.executable, "-c", NO_SOCKETS, sys.executable, "-c",
                             "from swifty_sandbox.cli import entry; "
                             "assert entry._connect() is None"],
                            cwd=project, capture_output=True, text=True, check=False,
                            env=env())
    assert direct.returncode == 0, direct.stderr


def _home_writable(home: Path) -> Path:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  writable: ['~']\n")
    return home / ".cache" / "swifty-sandbox"


@pytest.mark.unprivileged  # the server trusts callers by uid and namespace
@needs_bwrap
@pytest.mark.parametrize("how", ["served", "slow"])
def test_a_writable_home_keeps_our_own_cache_in_place(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """With the whole home writable and no `~/.cache/swifty-sandbox` yet, what the run
    makes there itself before the command (the temp dir, the caches) is not a file the
    command planted: it stays, and nothing is reported moved, run after run."""
    ours = _home_writable(home)
    proc = None
    if how == "served":
        monkeypatch.delenv("SWIFTY_DAEMON")
        proc = _start_server()
    call = served if how == "served" else slow
    try:
        for _ in range(2):
            result = call("run", "--", "true", cwd=project)
            assert result.returncode == 0, result.stderr
            assert b"swifty-blocked" not in result.stderr, result.stderr
            assert ours.is_dir() and (ours / "tmp").is_dir()
            assert not [p for p in (home / ".cache").iterdir() if "blocked" in p.name]
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
