"""The egress proxy against a hostile command, confined for real (bwrap + seccomp) and
judged from outside: a host-side server records whatever reaches it."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.network import is_public
from swifty_sandbox.sandbox import EXIT_SETUP

from ..listener import PIPELINED, Front, Listener, tcp_listener, wait_for
from ..terminal import person_at_a_terminal

CLIENT = r"""
import socket, sys
how, target = sys.argv[1], sys.argv[2]
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
if how == "connect":
    s.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
else:
    s.sendall(f"GET http://{target}/ HTTP/1.1\r\n\r\n".encode())
print(s.recv(4096).split(b"\r\n")[0].decode() or "closed")
"""


def _own_public_address() -> str | None:
    """An address of this machine's own interfaces that `is_public` calls public (a
    VPS's IPv4, a global IPv6, a TEST-NET one in a test VM), or None."""
    found: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:  # the source address of the default route (no packet is sent)
            probe.connect(("192.0.2.123", 9))
            found.append(probe.getsockname()[0])
        except OSError:
            pass
    try:
        with open("/proc/net/if_inet6") as table:
            for line in table:
                raw = line.split()[0]
                found.append(str(ipaddress.IPv6Address(int(raw, 16))))
    except OSError:
        pass
    for text in found:
        if is_public(ipaddress.ip_address(text)):
            return text
    return None


@pytest.fixture
def own() -> Iterator[Listener]:
    address = _own_public_address()
    if address is None:
        pytest.skip("this machine has no public-looking address of its own")
    server = tcp_listener(address, reply=b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    yield server
    server.close()


@pytest.mark.differs("allowlist")
def test_the_host_s_own_public_address_is_refused(own: Listener, project: Path,
                                                   home: Path, outside_temp: Path) -> None:
    """`*` allows public addresses, but the host's own (bound by a service on 0.0.0.0
    or ::) is the host itself: refused unless an IP entry names it (the control)."""
    script = outside_temp / "client.py"
    script.write_text(CLIENT)
    address = own.sock.getsockname()[0]
    shown = f"[{address}]" if ":" in address else address
    targets = [f"{shown}:{own.port}"]
    if ":" not in address:
        targets.append(f"[::ffff:{address}]:{own.port}")

    def fetch(how: str, target: str, allow: tuple[str, ...]) -> str:
        box = Sandbox(project, home=home, allow_net=allow)
        result = box.run([sys.executable, "-I", str(script), how, target])
        assert result.exit_code != EXIT_SETUP, result.stderr
        return str(result.stdout)

    for target in targets:
        for how in ("get", "connect"):
            assert fetch(how, target, ("*",)).startswith("HTTP/1.1 403"), (how, target)
    assert own.received == []
    control = fetch("get", targets[0], (f"{shown}:{own.port}",))
    assert control.startswith("HTTP/1.1 200"), control
    assert own.received


STEAL = r"""
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)


def attack(pid, fd):
    # What the command can do to process `pid` (holding descriptor `fd`): open its
    # memory to write code into it, and take the descriptor.
    try:
        with open(f"/proc/{pid}/mem", "r+b", buffering=0):
            mem = "mem-opened"
    except OSError as e:
        mem = "mem-refused " + (e.strerror or "")
    pidfd = libc.syscall(434, pid, 0)  # pidfd_open
    stolen = libc.syscall(438, pidfd, fd, 0) if pidfd >= 0 else -1  # pidfd_getfd
    if stolen < 0:
        return mem + " fd-refused " + os.strerror(ctypes.get_errno())
    return mem + " fd-stolen " + socket.socket(fileno=stolen).family.name


forwarder = os.getppid()
argv = open(f"/proc/{forwarder}/cmdline", "rb").read().split(b"\0")
fd = int(argv[argv.index(b"--") - 2])  # the forwarder: ... -c SOURCE FD PORT -- ...
print("forwarder:", attack(forwarder, fd), flush=True)
# The control: this process is as dumpable as the forwarder was, and a child of its
# own stands where the command stands to the forwarder (its child, same user).
mine, _ = socket.socketpair()
child = os.fork()
if child == 0:
    print("dumpable:", attack(os.getppid(), mine.fileno()), flush=True)
    os._exit(0)
os.waitpid(child, 0)
"""


@pytest.mark.differs("allowlist")
@pytest.mark.parametrize("profile", ["default", "permissive"])
def test_the_forwarder_s_channel_cannot_be_taken(project: Path, home: Path,
                                                 outside_temp: Path, profile: str) -> None:
    """The forwarder holds the unix socket to the host's proxy (the command could send
    it any descriptor). A command rewrote the forwarder's /proc/<pid>/mem and ran its
    own code there; pidfd_getfd would hand over the socket where the profile allows it
    (permissive: debuggers). The forwarder is non-dumpable now: neither works under any
    profile. The control: a dumpable process of the same sandbox in the same place
    (the command, to a child of its own) is open to both, as far as seccomp allows."""
    script = outside_temp / "steal.py"
    script.write_text(STEAL)
    config = home / ".swifty" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"sandbox:\n  profile: {profile}\n")
    box = Sandbox(project, home=home, allow_net=("example.com",))
    result = box.run([sys.executable, "-I", str(script)])
    assert result.exit_code == 0, result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert lines["forwarder"].startswith("mem-refused"), lines
    assert "fd-refused" in lines["forwarder"], lines
    assert lines["dumpable"].startswith("mem-opened"), lines  # the control
    if profile == "permissive":
        assert "fd-stolen AF_UNIX" in lines["dumpable"], lines


PIPELINER = r"""
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(sys.argv[3].encode())
data = b""
deadline = time.monotonic() + 3
try:
    while time.monotonic() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError:
    pass
print(data.count(b"HTTP/1.1 200"), "answer(s)")
"""


@pytest.mark.differs("allowlist")
def test_a_request_pipelined_through_the_proxy_reaches_no_other_host(
        project: Path, home: Path, outside_temp: Path) -> None:
    """A front on the host's loopback that ignores `Connection: close` and serves each
    request by its Host: a confined command allowed to reach it sent a second request
    behind the first, for another of its hosts, and the proxy relayed it unparsed; and
    then inside a CONNECT tunnel to that front. The control: the same bytes from
    outside reach `internal.test`."""
    script = outside_temp / "pipeline.py"
    script.write_text(PIPELINER)
    front = Front()
    try:
        request = PIPELINED.format(port=front.port)
        direct = Sandbox(project, home=home, sandbox_mode="off", mode="bypassPermissions"
                         ).run([sys.executable, "-I", str(script), "127.0.0.1",
                                str(front.port),
                                request.replace(f"http://127.0.0.1:{front.port}", "")])
        assert wait_for(lambda: b"internal.test" in front.hosts), (direct, front.hosts)
        front.hosts.clear()
        box = Sandbox(project, home=home, allow_net=(f"127.0.0.1:{front.port}",))
        result = box.run([sys.executable, "-I", str(script), "127.0.0.1", "3128", request])
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("1 answer"), result.stdout
        assert front.hosts == [f"127.0.0.1:{front.port}".encode()], front.hosts
        # the next variant: the same two requests inside a CONNECT tunnel to the front
        front.hosts.clear()
        tunnel = (f"CONNECT 127.0.0.1:{front.port} HTTP/1.1\r\n\r\n"
                  + request.replace(f"http://127.0.0.1:{front.port}", ""))
        result = box.run([sys.executable, "-I", str(script), "127.0.0.1", "3128", tunnel])
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("2 answer"), result.stdout  # established + one
        assert front.hosts == [f"127.0.0.1:{front.port}".encode()], front.hosts
    finally:
        front.close()


TOKEN_STORES = [".local/share/uv/credentials/credentials.toml", ".config/pypoetry/auth.toml",
                ".config/pnpm/rc", ".yarnrc", ".bundle/config", ".composer/auth.json",
                ".config/composer/auth.json", ".nuget/NuGet/NuGet.Config",
                ".cache/huggingface/token", ".huggingface/token",
                ".pulumi/credentials.json"]


@pytest.mark.differs("allowlist")
def test_package_managers_token_stores_are_unreadable(project: Path, home: Path,
                                                      outside_temp: Path) -> None:
    """With a registry allowed, a token the command reads leaves through it (an issue
    or gist on an allowed github.com): the token stores of uv, poetry, pnpm, yarn,
    bundler, composer, NuGet, Hugging Face and Pulumi stay hidden, like ~/.npmrc."""
    for name in TOKEN_STORES:
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"token-{name}\n")
    script = outside_temp / "read.py"
    script.write_text("import sys\nfor f in sys.argv[1:]:\n    try:\n"
                      "        print(open(f).read().strip())\n    except OSError:\n"
                      "        pass\n")
    argv = [sys.executable, "-I", str(script), *(str(home / n) for n in TOKEN_STORES)]
    control = Sandbox(project, home=home, sandbox_mode="off",
                      mode="bypassPermissions").run(argv)
    assert control.stdout.count("token-") == len(TOKEN_STORES), control
    result = Sandbox(project, home=home, allow_net=("@pypi",)).run(argv)
    assert result.exit_code != EXIT_SETUP, result.stderr
    assert "token-" not in result.stdout, result.stdout


FLOOD = r"""
import socket, sys
for i in range(int(sys.argv[1])):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(f"CONNECT h{i}.example.net:443 HTTP/1.1\r\n\r\n".encode())
    s.recv(100)
    s.close()
"""


@pytest.mark.differs("allowlist")
def test_a_flood_of_destinations_is_recorded_bounded(project: Path, home: Path,
                                                     outside_temp: Path) -> None:
    """Each refused destination was kept (memory) and printed (one line each, also in
    run --json): a command asking for a million names grew both without end. The
    first MAX_EVENTS are listed (the control), the rest counted in one line."""
    from swifty_sandbox.sandbox.net.netproxy import MAX_EVENTS

    script = outside_temp / "flood.py"
    script.write_text(FLOOD)
    count = MAX_EVENTS + 300
    result = Sandbox(project, home=home, allow_net=("example.com",)).run(
        [sys.executable, "-I", str(script), str(count)])
    assert result.exit_code == 0, result.stderr
    assert result.network is not None and len(result.network) == MAX_EVENTS
    assert "blocked network access to h0.example.net:443" in result.stderr
    assert result.stderr.count("blocked network access") == MAX_EVENTS
    assert "300 more network request(s)" in result.stderr


FORGER = r"""
import socket, sys, threading, time
target, forged = sys.argv[1], sys.argv[2]
def ask():
    s = socket.create_connection(("127.0.0.1", 3128), timeout=60)
    s.sendall(f"GET http://{target}/simple/ HTTP/1.1\r\n\r\n".encode())
    print("answer:", s.recv(100).split(b"\r\n")[0].decode(), flush=True)
thread = threading.Thread(target=ask)
thread.start()
time.sleep(1.5)  # the real question is on the screen: erase both lines, draw ours
sys.stderr.write("\r\x1b[2K\x1b[1A\x1b[2K\r" + forged + "<forged>")
sys.stderr.flush()
thread.join()
"""


def test_a_forged_host_question_allows_nothing(project: Path, home: Path,
                                               outside_temp: Path) -> None:
    """The command shares the terminal with the host question: it erased ours and drew
    one naming pypi.org, and the person's "a" wrote the command's host into
    ~/.swifty/config.yaml. Now a yes is the host typed back: what the forged screen
    asks for (pypi.org) allows nothing; the control types the real host."""
    import os

    from swifty_sandbox.messages import t

    registry = tcp_listener("127.0.0.1", reply=b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    try:
        target = f"127.0.0.1:{registry.port}"
        forged = t("prompt.host_typed", reason=t("net.ask", host="pypi.org", port=443),
                   host="pypi.org")
        script = outside_temp / "forger.py"
        script.write_text(FORGER)
        cli = str(Path(sys.executable).with_name("swifty-sandbox"))
        argv = [cli, "run", "--project", str(project), "--allow-net", "example.com", "--",
                sys.executable, "-I", str(script), target, forged]
        env = {"HOME": str(home), "PATH": os.environ["PATH"], "TERM": "dumb"}
        config = home / ".swifty" / "config.yaml"

        seen, _ = person_at_a_terminal(argv, env, b"<forged>", b"always pypi.org\n")
        assert b"answer: HTTP/1.1 403" in seen, seen
        assert registry.received == []
        assert not config.exists() or "127.0.0.1" not in config.read_text()

        seen, _ = person_at_a_terminal(argv, env, b"<forged>", b"always 127.0.0.1\n")
        assert b"answer: HTTP/1.1 200" in seen, seen  # the control: the real host
        assert registry.received
        assert f"127.0.0.1:{registry.port}" in config.read_text()
    finally:
        registry.close()


INDEX_WRITER = r"""
import struct, sys
count = int(sys.argv[2])
entry = bytes(62) + b"\x00" + b"a" + b"\x00"  # keeps all of the previous path, adds "a"
with open(sys.argv[1], "wb") as index:
    index.write(b"DIRC" + struct.pack(">II", 4, count) + entry * count)
"""


def test_a_planted_git_index_cannot_exhaust_the_host(project: Path, home: Path,
                                                     outside_temp: Path) -> None:
    """`.git/index` is writable inside. A version-4 index whose every entry keeps the
    whole previous path made the next run's host side (hidden paths git tracks) spell
    n²/2 bytes: 2.6 MB written became 0.8 GB of our memory, outside every cap."""
    import subprocess
    import tracemalloc

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".env").write_text("SECRET=1\n")
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "config.yaml").write_text('sandbox:\n  denyRead: [".env"]\n')
    script = outside_temp / "index.py"
    script.write_text(INDEX_WRITER)
    index = project / ".git" / "index"
    planted = Sandbox(project, home=home).run(
        [sys.executable, "-I", str(script), str(index), "40000"])
    assert planted.exit_code == 0, planted.stderr
    assert index.stat().st_size > 2_000_000  # the command could write it

    tracemalloc.start()
    try:
        result = Sandbox(project, home=home).run(["true"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.stderr
    assert peak < 150 << 20, f"{peak >> 20} MB for a {index.stat().st_size} byte index"
