"""Attacks that a sandbox without namespaces (Landlock) must close by other means, run
under every backend: a socket that listens without bind, TCP Fast Open, a daemon
double-forked away from its parent, a host process's memory, a link swapped in
under a writable root after the check."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.agents import RunResult
from tests.deep import near_path_max
from tests.listener import Listener, tcp_listener

pytestmark = pytest.mark.linux

Attack = Callable[..., RunResult]
Runner = Callable[..., RunResult]


def test_listen_without_bind_accepts_nothing(confined: Runner, unconfined: Runner,
                                             project: Path) -> None:
    """`listen()` on an unbound TCP socket binds a free port itself, which Landlock's
    bind right never sees: from outside, nothing may connect to it."""
    code = ("import socket, time, sys\n"
            "s = socket.socket()\n"
            "s.listen()\n"
            "open('port', 'w').write(str(s.getsockname()[1]))\n"
            "s.settimeout(4)\n"
            "c, _ = s.accept(); c.sendall(b'in'); print('accepted')\n")
    (project / "srv.py").write_text(code)

    def attempt(run: Runner) -> bool:
        (project / "port").unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, "-c",
                                 "import time,sys,socket\n"
                                 f"p='{project}/port'\n"
                                 "for _ in range(60):\n"
                                 "  try: port=int(open(p).read()); break\n"
                                 "  except Exception: time.sleep(0.1)\n"
                                 "else: sys.exit(3)\n"
                                 "try: print(socket.create_connection(('127.0.0.1',port),2)"
                                 ".recv(2).decode())\n"
                                 "except OSError: sys.exit(4)\n"],
                                stdout=subprocess.PIPE, text=True)
        run([sys.executable, "srv.py"], timeout=10)
        out, _ = proc.communicate(timeout=20)
        return out.strip() == "in"

    assert attempt(unconfined), "control: an unbound listener is reachable unconfined"
    assert not attempt(confined), "ESCAPE: a listener without bind accepted a connection"


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = tcp_listener()
    yield server
    server.close()


def test_tcp_fast_open_reaches_no_host_listener(attack: Attack, listener: Listener) -> None:
    """sendto(MSG_FASTOPEN) connects inside the send, not through `connect()`."""
    code = ("import socket\n"
            "s = socket.socket()\n"
            f"s.sendto(b'tfo', socket.MSG_FASTOPEN, ('127.0.0.1', {listener.port}))\n")

    def worked() -> bool:
        time.sleep(0.5)
        return listener.got()

    attack([sys.executable, "-c", code], worked, listener.reset)


def _alive(marker: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if marker in " ".join(p.info["cmdline"] or [])]


def test_double_forked_daemon_is_gone(attack: Attack) -> None:
    """Forked twice (its parent gone at once): reparented to the launcher, which is
    their subreaper, and killed with the rest."""
    marker = f"32{uuid.uuid4().int % 10**6}"

    def worked() -> bool:
        time.sleep(0.3)
        return bool(_alive(f"sleep {marker}"))

    def reset() -> None:
        for proc in _alive(f"sleep {marker}"):
            proc.kill()

    daemon = ("import os\n"
              "if os.fork() == 0:\n"
              "    os.setpgid(0, 0)\n"  # out of the command's process group too
              "    if os.fork() == 0:\n"
              "        os.closerange(0, 3)\n"
              f"        os.execvp('sleep', ['sleep', '{marker}'])\n"
              "    os._exit(0)\n")
    attack([sys.executable, "-c", daemon + "import time; time.sleep(0.5)\n"], worked, reset)


@pytest.fixture
def host_secret() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c",
                             "import time; secret = 'hm-' + '5151'; print('ready', flush=True)"
                             "; time.sleep(300)"],
                            env={**os.environ, "HOST_SECRET": "he-7373"},
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    yield proc
    proc.kill()
    proc.wait()
    proc.stdout.close()


def test_host_process_memory_and_ptrace(confined: Runner, unconfined: Runner,
                                        host_secret: subprocess.Popen[bytes]) -> None:
    """A same-uid host process: its memory through /proc, and ptrace (gdb's way)."""
    pid = host_secret.pid
    read_mem = ("import re, sys\n"
                f"maps = open('/proc/{pid}/maps').read().splitlines()\n"
                f"mem = open('/proc/{pid}/mem', 'rb')\n"
                "for line in maps:\n"
                "    lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n"
                "    if 'rw' not in line.split()[1]: continue\n"
                "    try:\n"
                "        mem.seek(lo); data = mem.read(hi - lo)\n"
                "    except OSError: continue\n"
                "    if b'hm-5151' in data: print('FOUND'); break\n")
    assert "FOUND" in unconfined([sys.executable, "-c", read_mem]).stdout
    result = confined([sys.executable, "-c", read_mem])
    assert "FOUND" not in result.stdout, result
    attach = ("import ctypes, sys\n"
              "libc = ctypes.CDLL(None, use_errno=True)\n"
              f"print('ATTACHED' if libc.ptrace(16, {pid}, 0, 0) == 0 else 'refused')\n")
    assert "ATTACHED" in unconfined([sys.executable, "-c", attach]).stdout
    assert "ATTACHED" not in confined([sys.executable, "-c", attach]).stdout


def test_a_link_swapped_in_after_the_check_leads_nowhere(project: Path, home: Path,
                                                         backend: str) -> None:
    """A concurrent command swaps a directory of the project for a link to home between
    the compile and the run: bwrap refuses (its mounts are made from descriptors);
    Landlock's rules are on the directories checked, so the write through the link
    lands where no rule grants it."""
    from swifty_sandbox.sandbox.run.selection import run_selected
    from swifty_sandbox.sandbox.spec.compiler import SetupError

    (project / "pkg" / ".git" / "hooks").mkdir(parents=True)
    spec = Sandbox(project, home=home).spec()
    (project / "pkg").rename(project / "pkg.real")
    (project / "pkg").symlink_to(home)
    script = home.parent / "swap.sh"
    script.write_text(f"echo x > {project}/pkg/pwned\n")
    try:
        run_selected(spec, ["bash", str(script)])
    except SetupError:
        assert backend == "bwrap"
    assert not (home / "pwned").exists()


@pytest.mark.differs("new-beside-hidden")
def test_a_new_file_beside_a_hidden_one_reads_back(confined: Runner, project: Path,
                                                   home: Path) -> None:
    """Everyday work next to a hidden `.env`: a file made there is read back, the
    hidden one stays unreadable."""
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(.env)\n  effect: deny\n")
    (project / ".env").write_text("TOKEN=tk-6262\n")
    result = confined("echo made > notes.txt; cat notes.txt; cat .env")
    assert "tk-6262" not in result.stdout
    assert result.stdout.startswith("made"), result


# -- a hidden path inside a writable root, moved away under another name --------------

_SECRET = "TOKEN=tk-7171\n"


def _hidden_in_project(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(.env)\n  effect: deny\n- rule: ReadFile(keys)\n  effect: deny\n")
    (project / ".env").write_text(_SECRET)
    (project / "keys").mkdir(exist_ok=True)
    (project / "keys" / "id").write_text(_SECRET)


def _read_by_name(project: Path, home: Path, name: str) -> bool:
    """Whether the secret is read under `name`: by the next confined run, or by the
    file tools (the decision, then the MCP server's I/O)."""
    from swifty_sandbox import Request, Tool
    from swifty_sandbox.sandbox.agents.fileio import FileToolError, read_file

    box = Sandbox(project, home=home)
    result = box.run(["cat", name])
    if "tk-7171" in result.stdout:
        return True
    decision = box.check(Request.file(Tool.READ_FILE, str(project / name)))
    if decision.effect.value != "allow" or decision.target is None:
        return False
    try:
        return b"tk-7171" in read_file(decision.target, 1 << 16, box.host().hidden_links)
    except FileToolError:
        return False


@pytest.mark.parametrize(("move", "name"), [
    ("mv .env notes.txt", "notes.txt"),
    ("mkdir -p d && mv .env d/x", "d/x"),
    ("mkdir -p d && ln .env d/x && rm .env", "d/x"),
    ("mv keys pub", "pub/id"),
])
def test_a_hidden_file_moved_away_is_still_hidden(attack: Attack, project: Path, home: Path,
                                                  move: str, name: str) -> None:
    """Landlock grants a writable root's removes and renames on the whole root, so a
    command could rename a hidden `.env` (or link it and remove the name) to
    `notes.txt`: the rules and the file tools go by names, and the next run, or the
    agent's Read, then showed the secret. bwrap: the hidden path is a mount point
    (EBUSY, EXDEV)."""
    import shutil

    _hidden_in_project(project, home)

    def reset() -> None:
        for path in (project / "notes.txt", project / "d", project / "pub", project / "keys",
                     project / ".env", *project.glob(".swifty-blocked-*")):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        _hidden_in_project(project, home)

    attack(move, lambda: _read_by_name(project, home, name), reset)
    assert (project / ".env").read_text() == _SECRET  # put back where it was hidden
    assert (project / "keys" / "id").read_text() == _SECRET


def _file_tools_read(project: Path, home: Path, name: str) -> bool:
    """Whether the file tools give the secret under `name`: the decision (as the hook
    makes it, the agent then reading itself), and the MCP server's I/O."""
    from swifty_sandbox import Request, Tool
    from swifty_sandbox.sandbox.agents.fileio import FileToolError, read_file

    box = Sandbox(project, home=home)
    decision = box.check(Request.file(Tool.READ_FILE, str(project / name)))
    if decision.effect.value != "allow" or decision.target is None:
        return False
    host = box.host()
    try:
        return b"tk-7171" in read_file(decision.target, 1 << 16, host.hidden_links,
                                       host.held)
    except FileToolError:
        return False


@pytest.mark.parametrize(("move", "name"), [("mv .env notes.txt", "notes.txt"),
                                            ("mv keys pub", "pub/id")])
def test_a_hidden_file_moved_during_the_run_is_not_read_by_the_file_tools(
        confined: Runner, unconfined: Runner, project: Path, home: Path, move: str,
        name: str) -> None:
    """While the command still runs (an agent's background Bash), the agent's Read of
    the name a hidden `.env` was moved to: the file tools run outside the sandbox, and
    the file goes back only when the run ends. Refused by identity while that run
    lasts (`sandbox/landlock/held.py`); bwrap: the move itself fails."""
    import shutil
    import threading

    script = f"{move}; touch moved; while [ ! -e stop ]; do sleep 0.05; done"

    def during(run: Runner) -> bool:
        for path in (project / "notes.txt", project / "pub", project / "keys",
                     project / "moved", project / "stop"):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        _hidden_in_project(project, home)
        done: list[RunResult] = []
        thread = threading.Thread(target=lambda: done.append(run(script, timeout=60)))
        thread.start()
        try:
            for _ in range(600):
                if (project / "moved").exists():
                    break
                time.sleep(0.05)
            assert (project / "moved").exists(), "the command did not get there"
            return _file_tools_read(project, home, name)
        finally:
            (project / "stop").touch()
            thread.join(60)

    assert during(unconfined), "control: the moved secret is not read unconfined"
    assert not during(confined), "ESCAPE: the file tools read the moved hidden file"
    assert (project / ".env").read_text() == _SECRET


# -- the folders above a hidden file: pinned, or put back -------------------------------

@pytest.mark.parametrize("rules", [
    "- rule: ReadFile(*.env*)\n  effect: deny\n- rule: ReadFile(*.env.example)\n"
    "  effect: allow\n",
    "- rule: ReadFile(*.env*)\n  effect: deny\n- rule: ReadFile(x.env.example/**)\n"
    "  effect: allow\n",
], ids=["basename-allow-after", "path-allow-after"])
def test_a_folder_holding_a_hidden_file_stays_where_a_later_rule_could_reach_it(
        attack: Attack, project: Path, home: Path, rules: str) -> None:
    """`pkg/sub/.env.local`, hidden by `ReadFile(*.env*)` with an allow after it in its
    file: moved below a folder named `x.env.example`, it would be that rule's, and the
    file tools would give it. Its folders are pinned (bwrap: the move fails) or it is
    put back (Landlock); the control moves it and reads it."""
    import shutil

    def reset() -> None:
        for path in (project / "x.env.example", project / "pkg"):
            shutil.rmtree(path, ignore_errors=True)
        (home / ".swifty").mkdir(exist_ok=True)
        (home / ".swifty" / "permissions.yaml").write_text(rules)
        (project / "pkg" / "sub").mkdir(parents=True)
        (project / "pkg" / "sub" / ".env.local").write_text(_SECRET)

    reset()
    moved = "x.env.example/pkg/sub/.env.local"
    attack("mkdir -p x.env.example && mv pkg x.env.example/",
           lambda: _file_tools_read(project, home, moved), reset)
    assert (project / "pkg" / "sub" / ".env.local").read_text() == _SECRET


# -- a hidden path moved where its path is longer than the kernel takes (PATH_MAX) ----

@pytest.mark.parametrize(("rules", "move", "name", "length"), [
    ("- rule: ReadFile(*.env*)\n  effect: deny\n", "mv pkg/sub {long}/", "sub/.env.local",
     4090),
    ("- rule: ReadFile(pkg/sub/.env.local)\n  effect: deny\n", "mv pkg/sub {long}/",
     "sub/.env.local", 4090),
    ("- rule: ReadFile(pkg/sub/.env.local)\n  effect: deny\n",
     "mv pkg/sub/.env.local {long}/", ".env.local", 4090),
    ("- rule: ReadFile(pkg/sub)\n  effect: deny\n", "mv pkg/sub {long}/",
     "sub/.env.local", 4094),  # the folder itself past PATH_MAX there
], ids=["by-name-folder", "by-path-folder", "by-path-file", "hidden-folder"])
def test_a_hidden_file_moved_past_path_max_is_not_read_by_the_next_run(
        attack: Attack, project: Path, home: Path, rules: str, move: str, name: str,
        length: int) -> None:
    """A command moves the hidden file's folder (or the file) below a folder whose
    absolute path nears PATH_MAX: Landlock's put-back asked /proc where it was, which
    cannot name it (ENAMETOOLONG), so it stayed there, and the next run read it by a
    relative path. bwrap: its folders are pinned (EBUSY); Landlock: it is put back,
    found from its own descriptor. The control moves it."""
    import shutil

    long = near_path_max(project, length)
    top = long.split("/")[0]

    def reset() -> None:
        for path in (project / top, project / "pkg", *project.glob(".swifty-blocked-*")):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        (home / ".swifty").mkdir(exist_ok=True)
        (home / ".swifty" / "permissions.yaml").write_text(rules)
        (project / "pkg" / "sub").mkdir(parents=True)
        (project / "pkg" / "sub" / ".env.local").write_text(_SECRET)

    def worked() -> bool:
        """Moved there and left there, or read there by the next run (which, where a
        rule hides it by its name, refuses: test_spec's PATH_MAX test)."""
        hidden = project / "pkg" / "sub" / ".env.local"
        result = Sandbox(project, home=home).run(
            ["/bin/sh", "-c", f"cd {long} && cat {name}"])
        return not hidden.exists() or "tk-7171" in result.stdout

    reset()
    attack(f"mkdir -p {long} && {move.format(long=long)}", worked, reset)
