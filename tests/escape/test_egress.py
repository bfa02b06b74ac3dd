"""Network by allowlist, confined for real (bwrap + seccomp), judged from outside: a
fake registry on the host's loopback records every request that reaches it."""

from __future__ import annotations

import http.server
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox import EXIT_SETUP
from swifty_sandbox.sandbox.agents import RunResult

from ..listener import reachable
from ..terminal import person_at_a_terminal

# A client run inside: one request through the proxy at 127.0.0.1:3128 (or straight to
# the address, `direct`), printing the status line or the error.
CLIENT = r"""
import socket, sys
how, target = sys.argv[1], sys.argv[2]
try:
    if how == "direct":
        host, port = target.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=3)
        s.sendall(b"GET /simple/ HTTP/1.1\r\nHost: x\r\n\r\n")
    else:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
        if how == "connect":
            s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        else:
            s.sendall(f"GET http://{target}/simple/ HTTP/1.1\r\n\r\n".encode())
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print(data.split(b"\r\n")[0].decode() or "closed")
except OSError as e:
    print("error", e)
"""


class Registry:
    """A fake package index on the host's loopback that records each request."""

    def __init__(self) -> None:
        seen = self.seen = []  # type: list[str]
        # Its own handler threads, each recorded before it answers: one may still be
        # finishing after the client has read the answer, and is not the proxy's.
        handlers = self.handlers = set()  # type: set[threading.Thread]

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                handlers.add(threading.current_thread())
                seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def registry() -> Iterator[Registry]:
    server = Registry()
    yield server
    server.close()


@pytest.fixture
def fetch(project: Path, home: Path, outside_temp: Path) -> Callable[..., RunResult]:
    script = outside_temp / "client.py"
    script.write_text(CLIENT)

    def run(how: str, target: str, allow: tuple[str, ...] = (), *,
            sandbox_mode: str | None = None) -> RunResult:
        box = Sandbox(project, home=home, allow_net=allow, sandbox_mode=sandbox_mode,
                      mode="bypassPermissions" if sandbox_mode == "off" else None)
        result = box.run([sys.executable, "-I", str(script), how, target])
        assert result.exit_code != EXIT_SETUP, result.stderr
        return result

    return run


def test_registry_is_not_reachable_by_default(fetch: Callable[..., RunResult],
                                              registry: Registry) -> None:
    target = f"127.0.0.1:{registry.port}"
    control = fetch("direct", target, sandbox_mode="off")
    assert control.stdout.startswith("HTTP/1.1 200") and registry.seen, control
    registry.seen.clear()
    for how in ("direct", "get", "connect"):
        result = fetch(how, target)
        assert result.stdout.startswith("error"), result  # no proxy, no route
        assert result.network is None
    assert registry.seen == []


@pytest.mark.differs("allowlist")
def test_not_through_a_name_that_resolves_to_loopback(fetch: Callable[..., RunResult],
                                                      registry: Registry) -> None:
    """`localhost` is allowed by name: the proxy resolves it to 127.0.0.1, which only an
    IP entry opens. The control names the IP:port and gets through."""
    for how in ("get", "connect"):
        result = fetch(how, f"localhost:{registry.port}", ("localhost",))
        assert result.stdout.startswith("HTTP/1.1 403"), result
        assert f"blocked network access to localhost:{registry.port}" in result.stderr
        assert f"--allow-net 127.0.0.1:{registry.port}" in result.stderr
        assert result.network == ({"host": "localhost", "port": registry.port,
                                   "allowed": False},)
    assert registry.seen == []
    control = fetch("get", f"localhost:{registry.port}",
                    ("localhost", f"127.0.0.1:{registry.port}"))
    assert control.stdout.startswith("HTTP/1.1 200"), control
    assert registry.seen == ["/simple/"]


@pytest.mark.differs("allowlist")
def test_reachable_when_its_ip_port_is_allowed(fetch: Callable[..., RunResult],
                                               registry: Registry) -> None:
    allow = (f"127.0.0.1:{registry.port}",)
    result = fetch("get", f"127.0.0.1:{registry.port}", allow)
    assert result.stdout.startswith("HTTP/1.1 200"), result
    assert result.network == ({"host": "127.0.0.1", "port": registry.port,
                               "allowed": True},)
    assert "blocked" not in result.stderr
    tunnel = fetch("connect", f"127.0.0.1:{registry.port}", allow)
    assert tunnel.stdout.startswith("HTTP/1.1 200 Connection established"), tunnel
    # The proxy is the only way out: straight to the address still goes nowhere.
    direct = fetch("direct", f"127.0.0.1:{registry.port}", allow)
    assert direct.stdout.startswith("error"), direct
    assert registry.seen == ["/simple/"]
    other = fetch("get", f"127.0.0.1:{registry.port + 1 if registry.port < 65535 else 1}",
                  allow)
    assert other.stdout.startswith("HTTP/1.1 403"), other  # another port: not allowed


@pytest.mark.differs("allowlist")
def test_connect_to_an_unlisted_host(fetch: Callable[..., RunResult]) -> None:
    result = fetch("connect", "evil.example:443", ("pypi.org",))
    assert result.stdout.startswith("HTTP/1.1 403"), result
    lines = [line for line in result.stderr.splitlines() if "swifty-sandbox" in line]
    assert lines == [
        "swifty-sandbox: blocked network access to evil.example:443 (not in the "
        "allowlist); allow it with --allow-net evil.example or network.allow in "
        "~/.swifty/config.yaml"]
    assert result.network == ({"host": "evil.example", "port": 443, "allowed": False},)
    assert result.as_json()["network"] == [
        {"host": "evil.example", "port": 443, "allowed": False}]


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError as e:
        return str(e)


@pytest.mark.differs("allowlist")
def test_the_proxy_is_gone_after_the_run(fetch: Callable[..., RunResult],
                                         registry: Registry) -> None:
    """Judged from outside the proxy: this process's threads, descriptors and children
    are as before the run."""
    fetch("get", f"127.0.0.1:{registry.port}", (f"127.0.0.1:{registry.port}",))  # warm
    threads = set(threading.enumerate())
    fds = set(os.listdir("/proc/self/fd"))
    result = fetch("connect", f"127.0.0.1:{registry.port}", (f"127.0.0.1:{registry.port}",))
    assert result.stdout.startswith("HTTP/1.1 200"), result
    # A thread may still be finishing a close it was handed (the placeholders' inotify
    # descriptor, placeholders.py): each left must end by itself, and soon.
    for thread in set(threading.enumerate()) - threads - registry.handlers:
        assert thread.name == "swifty-inotify-close", thread
        thread.join(5)
    assert set(threading.enumerate()) - registry.handlers <= threads
    left = set(os.listdir("/proc/self/fd")) - fds
    assert not left, {n: _link(f"/proc/self/fd/{n}") for n in left}
    assert psutil.Process().children(recursive=True) == []
    unix = [c for c in psutil.Process().net_connections(kind="unix")]
    assert unix == []


@pytest.mark.differs("allowlist")
def test_the_command_holds_no_socket_and_cannot_make_a_unix_one(project: Path,
                                                               home: Path) -> None:
    """The forwarder's end of the channel is close-on-exec: the command has no socket
    among its descriptors, and still cannot create an AF_UNIX socket."""
    code = ("import os, socket\n"
            "links = []\n"
            "for n in os.listdir('/proc/self/fd'):\n"
            " try: links.append(os.readlink(f'/proc/self/fd/{n}'))\n"
            " except OSError: pass\n"
            "print('sockets', [l for l in links if l.startswith('socket:')])\n"
            "try:\n socket.socket(socket.AF_UNIX); print('unix ok')\n"
            "except OSError as e: print('unix', e.errno)\n")
    box = Sandbox(project, home=home, allow_net=("pypi.org",))
    result = box.run([sys.executable, "-I", "-c", code])
    assert result.network == (), result
    assert result.stdout.splitlines() == ["sockets []", "unix 1"], result


@pytest.mark.parametrize("profile", ["default", "strict"])
@pytest.mark.differs("allowlist")
def test_the_forwarder_is_under_seccomp_too(project: Path, home: Path, profile: str) -> None:
    """The command's parent is the forwarder, filtered like the command (Seccomp: 2),
    also under a profile that limits reads (its interpreter is made readable)."""
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(f"sandbox:\n  profile: {profile}\n")
    code = ("import os\n"
            "status = open(f'/proc/{os.getppid()}/status').read()\n"
            "line = [l for l in status.splitlines() if l.startswith('Seccomp:')][0]\n"
            "args = open(f'/proc/{os.getppid()}/cmdline').read().split(chr(0))\n"
            "print(line.split()[1], args[1:3])\n")
    box = Sandbox(project, home=home, allow_net=("pypi.org",))
    assert box.policy.profile.name == profile
    result = box.run([sys.executable, "-I", "-c", code])
    assert result.stdout.split() == ["2", "['-I',", "'-S']"], result


@pytest.mark.differs("allowlist")
def test_forwarder_passes_status_and_signals(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home, allow_net=("pypi.org",))
    assert box.run(["sh", "-c", "exit 7"]).exit_code == 7
    assert box.run(["sh", "-c", "kill -TERM $$"]).exit_code == 128 + 15
    missing = box.run(["/no/such/program"])
    assert missing.exit_code == 127 and "/no/such/program" in missing.stderr
    piped = box.run(["sh", "-c", "yes | head -1"])  # SIGPIPE is the default again
    assert piped.exit_code == 0 and piped.stdout == "y\n"


@pytest.mark.differs("allowlist")
def test_pip_download_end_to_end(project: Path, home: Path) -> None:
    if not reachable("pypi.org"):
        pytest.skip("pypi.org:443 is not reachable from this machine")
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
           "--retries", "0", "--timeout", "20", "six", "-d", str(project / "dl")]
    ok = Sandbox(project, home=home, allow_net=("@pypi",)).run(pip, timeout=120)
    assert ok.exit_code == 0, ok
    assert any(p.name.startswith("six-") for p in (project / "dl").iterdir())
    assert {"host": "pypi.org", "port": 443, "allowed": True} in (ok.network or ())
    # Without @pypi (the network is on for another host): our one line names pypi.org.
    refused = Sandbox(project, home=home, allow_net=("example.org",)).run(pip, timeout=120)
    assert refused.exit_code != 0
    assert "swifty-sandbox: blocked network access to pypi.org:443 (not in the " \
           "allowlist); allow it with --allow-net pypi.org" in refused.stderr, refused
    # And with no network at all: nothing leaves (no proxy); pip's error, then our line.
    none = Sandbox(project, home=home).run(pip, timeout=120)
    assert none.exit_code != 0 and none.network is None
    assert OFFLINE in none.stderr, none


OFFLINE = "swifty-sandbox: this command ran without network (the sandbox's default)"


def test_a_command_without_network_is_told_why(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home)
    lookup = [sys.executable, "-I", "-c",
              "import socket; socket.getaddrinfo('example.com', 443)"]
    failed = box.run(lookup)
    assert failed.exit_code != 0 and "name resolution" in failed.stderr, failed
    assert failed.stderr.count(OFFLINE) == 1, failed
    # Controls: another failure, or a success, gets no such line.
    other = box.run(["sh", "-c", "echo 'no such file' >&2; exit 3"])
    assert other.exit_code == 3 and OFFLINE not in other.stderr
    assert OFFLINE not in box.run(["sh", "-c", "echo ok"]).stderr


@pytest.mark.differs("allowlist")
def test_a_person_is_asked_and_always_is_kept(fetch: Callable[..., RunResult],
                                              registry: Registry, project: Path,
                                              home: Path, outside_temp: Path) -> None:
    from swifty_sandbox.sandbox.agents import Answer

    target = f"127.0.0.1:{registry.port}"
    script = outside_temp / "client.py"
    argv = [sys.executable, "-I", str(script), "get", target]
    asked: list[tuple[str, int]] = []

    def person(answer: Answer) -> Callable[[str, int], Answer]:
        def ask(host: str, port: int) -> Answer:
            asked.append((host, port))
            return answer
        return ask

    no = Sandbox(project, home=home, allow_net=("pypi.org",), ask_host=person(Answer.NO))
    assert no.run(argv).stdout.startswith("HTTP/1.1 403")
    assert registry.seen == []
    box = Sandbox(project, home=home, allow_net=("pypi.org",))
    assert box.run(argv, ask_host=person(Answer.ALWAYS)).stdout.startswith("HTTP/1.1 200")
    assert asked == [("127.0.0.1", registry.port)] * 2
    assert target in (home / ".swifty" / "config.yaml").read_text()
    again = box.run(argv)  # no asker: the config allows it now
    assert again.stdout.startswith("HTTP/1.1 200"), again
    assert len(asked) == 2 and len(registry.seen) == 2


@pytest.mark.differs("allowlist")
def test_serve_asks_with_the_host(project: Path, home: Path, registry: Registry,
                                  outside_temp: Path) -> None:
    import json
    import subprocess

    script = outside_temp / "client.py"
    script.write_text(CLIENT)
    serve = Path(sys.executable).with_name("swifty-sandbox")
    proc = subprocess.Popen([str(serve), "serve", "--project", str(project),
                             "--allow-net", "pypi.org"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        argv = [sys.executable, "-I", str(script), "get", f"127.0.0.1:{registry.port}"]
        proc.stdin.write(json.dumps({"id": 7, "tool": "Bash", "argv": argv}) + "\n")
        proc.stdin.flush()
        ask = json.loads(proc.stdout.readline())
        assert (ask["type"], ask["host"], ask["port"]) == (
            "permission_request", "127.0.0.1", registry.port), ask
        assert ask["decision"]["category"] == "network"
        proc.stdin.write(json.dumps({"id": 7, "type": "permission_response",
                                     "allow": True}) + "\n")
        proc.stdin.flush()
        result = json.loads(proc.stdout.readline())
        assert result["stdout"].startswith("HTTP/1.1 200"), result
        assert result["network"] == [{"host": "127.0.0.1", "port": registry.port,
                                      "allowed": True}]
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()


@pytest.mark.differs("allowlist")
def test_cli_allow_net_json_and_bad_entries(project: Path, home: Path, registry: Registry,
                                            outside_temp: Path) -> None:
    import json

    from click.testing import CliRunner

    from swifty_sandbox.cli.main import main

    script = outside_temp / "client.py"
    script.write_text(CLIENT)
    target = f"127.0.0.1:{registry.port}"
    base = ["run", "--json", "--project", str(project)]
    out = CliRunner().invoke(main, [*base, "--allow-net", target, "--allow-net", "@pypi",
                                    "--", sys.executable, "-I", str(script), "get", target])
    result = json.loads(out.stdout)
    assert result["stdout"].startswith("HTTP/1.1 200"), result
    assert result["network"] == [{"host": "127.0.0.1", "port": registry.port,
                                  "allowed": True}]
    plain = json.loads(CliRunner().invoke(main, [*base, "--", "true"]).stdout)
    assert "network" not in plain  # no allowlist: no proxy, nothing to report
    for bad in ("https://pypi.org", "@pip", "foo*.com", "pypi.org:99999"):
        failed = CliRunner().invoke(main, [*base, "--allow-net", bad, "--", "true"])
        assert failed.exit_code == 2, (bad, failed.output)
        assert bad.split(":")[0].rstrip("/") in failed.stderr or "@pip" in failed.stderr


def test_terminal_prompt_for_a_host(project: Path, home: Path, registry: Registry,
                                    outside_temp: Path) -> None:
    script = outside_temp / "client.py"
    script.write_text(CLIENT)
    target = f"127.0.0.1:{registry.port}"
    cli = str(Path(sys.executable).with_name("swifty-sandbox"))
    argv = [cli, "run", "--project", str(project), "--allow-net", "pypi.org", "--",
            sys.executable, "-I", str(script), "get", target]
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "TERM": "dumb"}
    seen, code = person_at_a_terminal(argv, env, b"type its host name", b"127.0.0.1\n")
    assert f"reach {target}".encode() in seen
    assert b"HTTP/1.1 200" in seen and code == 0, seen
    assert registry.seen == ["/simple/"]
