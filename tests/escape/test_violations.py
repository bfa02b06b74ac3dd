"""What the sandbox refused a command is reported: kind, op, path or host, rule, fix —
from what the kernel saw (the observer, `sandbox/linux/observe.py`), never from a
text the command printed alone. Real bwrap (and Landlock), real seccomp; each refusal
with an unconfined control proving the command really does it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.linux import cgroups

Runner = Callable[..., RunResult]


def _one(result: RunResult, kind: str, op: str, target: str) -> dict[str, object]:
    found = [v for v in result.violations if v["kind"] == kind and v["op"] == op
             and target in (v.get("path"), v.get("host"))]
    assert found, f"no {kind} {op} of {target} in {result.violations}: {result.stderr}"
    assert found[0]["seen"] == "kernel", found[0]
    return found[0]


def test_write_outside_the_roots(attack: Callable[..., RunResult], home: Path) -> None:
    target = home / ".bashrc"
    result = attack(f"echo evil >> {target}", worked=lambda: target.exists()
                    and "evil" in target.read_text(), reset=lambda: target.unlink())
    found = _one(result, "outside", "write", str(target))
    assert found["fix"] and str(home) in str(found["fix"]) and "sandbox.writable" in \
        str(found["fix"])
    assert f"refused the write to {target}" in result.stderr  # the text line
    assert result.as_json()["violations"] == list(result.violations)


def test_write_to_a_protected_path(attack: Callable[..., RunResult], project: Path) -> None:
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    result = attack(f"echo evil > {hook}", worked=hook.exists, reset=hook.unlink)
    found = _one(result, "read-only", "write", str(hook))
    assert "protected" in str(found["rule"])
    assert "read-only" in str(found["fix"])


def test_a_name_the_agent_runs_from_its_path_says_which_path(
        attack: Callable[..., RunResult], project: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`node_modules/.bin` on the agent's PATH (an npm script, direnv): the names the
    agent runs by name (`git`, `node`, …) stay read-only there, so `rm -rf node_modules`
    is refused for them — and the report says why and that the change is to the PATH,
    not to a rule (no rule can allow it)."""
    bin_dir = project / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    planted = bin_dir / "git"
    result = attack(f"printf '#!/bin/sh\\necho evil\\n' > {planted}",
                    worked=planted.exists, reset=planted.unlink)
    found = _one(result, "read-only", "write", str(planted))
    assert "runs by name" in str(found["rule"]), found
    assert f"take {bin_dir} off the PATH" in str(found["fix"]), found
    assert f"take {bin_dir} off the PATH" in result.stderr


def test_a_script_the_agents_settings_run_is_not_blamed_on_the_path(
        attack: Callable[..., RunResult], project: Path) -> None:
    """What a project's agent settings run (a Claude Code hook's script) is kept
    read-only too, but no PATH change frees it: its report gives no PATH fix."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "bash tools/lint.sh"}]}]}}))
    script = project / "tools" / "lint.sh"
    script.parent.mkdir()
    script.write_text("echo ok\n")
    result = attack(f"echo evil >> {script}", worked=lambda: "evil" in script.read_text(),
                    reset=lambda: script.write_text("echo ok\n"))
    found = _one(result, "read-only", "write", str(script))
    assert "off the PATH" not in str(found["fix"]), found
    assert "protected paths stay read-only" in str(found["fix"]), found
    assert "outside the sandbox; whoever edits it runs code there" in str(found["rule"]), found


def test_a_refusal_after_thousands_of_allowed_writes(attack: Callable[..., RunResult],
                                                     home: Path, project: Path) -> None:
    """What is allowed is dropped as the run goes: 3000 distinct files written in the
    project first (more than the observer keeps) still leave room for the refusal."""
    target = home / ".profile"
    command = (f"mkdir -p {project}/many && for i in $(seq 3000); do : > {project}/many/f$i;"
               f" done; echo evil >> {target}")
    result = attack(command, worked=lambda: target.exists(), reset=target.unlink)
    _one(result, "outside", "write", str(target))
    assert not any(str(project) in str(v.get("path")) for v in result.violations)


def test_create_in_an_outside_directory(attack: Callable[..., RunResult],
                                        home: Path) -> None:
    made = home / "newdir"
    result = attack(f"mkdir {made}", worked=made.exists, reset=made.rmdir)
    _one(result, "outside", "create", str(made))


@pytest.mark.differs("hidden-names")
def test_listing_a_hidden_directory(confined: Runner, unconfined: Runner,
                                    home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    command = f"ls {home}/.ssh"
    assert "id_ed25519" in unconfined(command).stdout
    result = confined(command)
    assert "id_ed25519" not in result.stdout
    found = _one(result, "hidden", "read", f"{home}/.ssh")
    assert "denyRead" in str(found["rule"]) and found["fix"]


def test_connect_without_network(confined: Runner) -> None:
    # 127.0.0.1 is the sandbox's own loopback: an outside address is what is refused
    script = ("import socket\n"
              "try: socket.create_connection(('192.0.2.1', 443), timeout=2)\n"
              "except OSError as e: print('refused', e)\n")
    result = confined([sys.executable, "-c", script])
    assert "refused" in result.stdout
    found = _one(result, "network", "connect", "192.0.2.1:443")
    assert found["fix"] == "--allow-net 192.0.2.1 (or network.allow in ~/.swifty/config.yaml)"


def test_nothing_refused_reports_nothing(confined: Runner, project: Path) -> None:
    result = confined(f"echo ok > {project}/out.txt; mkdir -p {project}/a/b; ls /usr; "
                      f"rm {project}/out.txt; cat /etc/hostname > /dev/null; "
                      "echo t > /tmp/x; mkdir -p /usr/lib")
    assert result.exit_code == 0, result.stderr
    assert result.violations == ()
    assert result.as_json()["violations"] == []
    assert "refused" not in result.stderr


def test_a_printed_refusal_blames_nothing(confined: Runner, home: Path) -> None:
    """The spoof: a command that only PRINTS a hidden path's refusal gets no report
    that would lead to allowing it."""
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    result = confined("echo '~/.ssh/id_ed25519: Permission denied' >&2; "
                      f"echo 'cat: {home}/.ssh/id_ed25519: Permission denied' >&2")
    for one in result.violations:
        assert one["seen"] == "output" and one["fix"] is None, one
    assert "to allow it" not in result.stderr
    assert not any(v["seen"] == "kernel" for v in result.violations)


def test_text_mode_and_json_through_the_cli(
        project: Path, home: Path, as_argv: Callable[[str], list[str]]) -> None:
    env = {**os.environ, "HOME": str(home)}
    target = home / "notes.txt"
    argv = [str(Path(sys.executable).parent / "swifty-sandbox")]
    command = as_argv(f"echo x >> {target}")
    text = subprocess.run([*argv, "run", "--project", str(project), "--", *command],
                          env=env, cwd=project, capture_output=True, text=True,
                          check=False)
    assert f"refused the write to {target}" in text.stderr, text.stderr
    assert "sandbox.writable" in text.stderr
    done = subprocess.run([*argv, "run", "--json", "--project", str(project), "--",
                           *command], env=env, cwd=project, capture_output=True,
                          text=True, check=False)
    out = json.loads(done.stdout)
    assert any(v["path"] == str(target) and v["kind"] == "outside"
               for v in out["violations"]), out
    assert not target.exists()


@pytest.mark.differs("violations-dns")
def test_the_network_hint_at_a_terminal(project: Path, home: Path,
                                        as_argv: Callable[[str], list[str]]) -> None:
    """Item 2: at a terminal the command's stderr is the screen's, not ours to read;
    the run that failed on the missing network says so there too."""
    from ..terminal import person_at_a_terminal

    script = project.parent / "fetch.py"
    script.write_text("import socket, sys\n"
                      "try: socket.getaddrinfo('pypi.org', 443)\n"
                      "except OSError: sys.exit(3)\n")
    env = {**os.environ, "HOME": str(home)}
    argv = [str(Path(sys.executable).parent / "swifty-sandbox"), "run", "--project",
            str(project), "--", sys.executable, str(script)]
    screen, status = person_at_a_terminal(argv, env, b"", b"")
    assert status == 3, screen
    assert b"ran without network" in screen, screen
    assert b"--allow-net" in screen


def test_the_process_cap(confined: Runner) -> None:
    storm = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait"
    result = confined(["sh", "-c", storm], processes=6)
    found = [v for v in result.violations if v["kind"] == "limit"]
    assert [v["op"] for v in found] == ["processes"], result.violations
    # from the cgroup's count, else (an rlimit: no count) from the shell's "Cannot fork"
    assert found[0]["seen"] == ("kernel" if cgroups.places().get("pids") else "output")
    assert "sandbox.limits.processes" in str(found[0]["rule"])
    control = confined(["sh", "-c", storm], processes=64)
    assert control.violations == (), control.violations


@pytest.mark.skipif("memory" not in cgroups.places(),
                    reason="no cgroup for the memory controller here: the memory cap is "
                           "RLIMIT_DATA per process, a MemoryError the kernel counts nowhere")
def test_the_memory_cap(confined: Runner) -> None:
    # four processes of 160 MB under 256 MB: each fits its rlimit, together the cgroup
    code = ("import os, time\n"
            "for _ in range(4):\n"
            "    if os.fork() == 0:\n"
            "        block = bytearray(160 << 20)\n"
            "        for i in range(0, len(block), 4096): block[i] = 1\n"
            "        time.sleep(2)\n"
            "        os._exit(0)\n"
            "for _ in range(4): os.wait()\n")
    result = confined([sys.executable, "-c", code], memory_bytes=256 << 20)
    found = [v for v in result.violations if v["kind"] == "limit"]
    assert found and found[0]["op"] == "memory" and found[0]["seen"] == "kernel", \
        result.violations
    assert "--max-memory" in str(found[0]["fix"])


def _rules(project: Path, *rules: tuple[str, str]) -> Path:
    path = project / ".swifty" / "permissions.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(f"- rule: {r}\n  effect: {e}\n" for r, e in rules))
    return path


@pytest.mark.differs("hidden-names")
def test_a_directory_hidden_by_a_rule_names_the_rule_and_its_exception(
        confined: Runner, unconfined: Runner, project: Path) -> None:
    rules = _rules(project, ("ReadFile(private/**)", "deny"), ("ReadFile(private)", "deny"))
    (project / "private").mkdir()
    (project / "private" / "notes.txt").write_text("mine\n")
    assert "notes.txt" in unconfined(f"ls {project}/private").stdout
    result = confined(f"ls {project}/private")
    assert "notes.txt" not in result.stdout
    found = _one(result, "hidden", "read", str(project / "private"))
    assert f"{rules}:" in str(found["rule"]) and "ReadFile(private" in str(found["rule"])
    assert found["fix"] == (f"add the rule ReadFile({project}/private) with effect allow "
                            f"below it in {rules}")


def test_a_write_deny_rule_names_its_line(attack: Callable[..., RunResult],
                                          project: Path) -> None:
    rules = _rules(project, ("WriteFile(docs/**)", "deny"))
    (project / "docs").mkdir()
    target = project / "docs" / "index.md"
    result = attack(f"echo changed > {target}", worked=target.exists,
                    reset=target.unlink)
    found = _one(result, "read-only", "write", str(target))
    assert found["rule"] == f"WriteFile(docs/**) ({rules}:1)"
    assert found["fix"] == f"remove or narrow the deny rule at {rules}:1"


@pytest.mark.differs("allowlist")
def test_a_host_the_proxy_refused(confined: Runner, project: Path, home: Path) -> None:
    from swifty_sandbox import Sandbox

    script = ("import socket\n"
              "s = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n"
              "s.sendall(b'CONNECT evil.example:443 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\n"
              "print(s.recv(100))\n")
    result = Sandbox(project, home=home, allow_net=("pypi.org",)).run(
        [sys.executable, "-c", script])
    assert result.exit_code != 125, result.stderr
    found = [v for v in result.violations if v["kind"] == "network"]
    assert found == [{"kind": "network", "op": "connect", "host": "evil.example:443",
                      "rule": found[0]["rule"], "seen": "proxy",
                      "fix": "--allow-net evil.example (or network.allow in "
                             "~/.swifty/config.yaml)"}], result.violations
    # the proxy's own line names it on stderr: no second line for the same host
    assert [line for line in result.stderr.splitlines() if "evil.example" in line] == [
        "swifty-sandbox: blocked network access to evil.example:443 (not in the "
        "allowlist); allow it with --allow-net evil.example or network.allow in "
        "~/.swifty/config.yaml"]


# kcmp(self, self, KCMP_VM) and keyctl(KEYCTL_GET_KEYRING_ID, the session keyring): both
# work for any process outside, both are refused by the default profile (its sets debug
# and keyring). (Not ptrace: a PTRACE_TRACEME that works leaves the control traced.)
_REFUSED_CALLS = """
import ctypes, os, platform, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": {"kcmp": 312, "keyctl": 250},
      "aarch64": {"kcmp": 272, "keyctl": 219}}[platform.machine()]
worked = []
def attempt(name, *args):
    if libc.syscall(nr[name], *args) >= 0:
        worked.append(name)
    else:
        print(name, os.strerror(ctypes.get_errno()))
def race():  # threads at once, each trying, while others come and go
    for _ in range(50):
        attempt("kcmp", os.getpid(), os.getpid(), 1, 0, 0)
        attempt("keyctl", 0, -3, 0)
threads = [threading.Thread(target=race) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
if worked:
    open(sys.argv[1], "w").write(" ".join(sorted(set(worked))))
"""


def test_a_syscall_the_profile_refuses(attack: Callable[..., RunResult],
                                       project: Path) -> None:
    """`kcmp` and `keyctl` from eight threads racing: each stays refused (the control
    shows both work outside), and each is reported once, with the profile's set that
    refused it and the profile that allows it."""
    marker = project / "worked"
    result = attack([sys.executable, "-c", _REFUSED_CALLS, str(marker)],
                    worked=marker.exists, reset=marker.unlink)
    assert "kcmp Operation not permitted" in result.stdout, result
    found = {v["op"]: v for v in result.violations if v["kind"] == "syscall"}
    assert set(found) == {"kcmp", "keyctl"}, result.violations
    assert found["kcmp"]["seen"] == "kernel"
    assert "seccomp.deny: debug" in str(found["kcmp"]["rule"])
    assert "sandbox.profile: permissive" in str(found["kcmp"]["fix"])
    assert "seccomp.deny: keyring" in str(found["keyctl"]["rule"])
    assert "leaves out keyring" in str(found["keyctl"]["fix"])
    assert "refused the system call kcmp" in result.stderr
    assert result.as_json()["violations"] == list(result.violations)


@pytest.mark.differs("syscall-setup", backends=("bwrap",))
def test_unshare_is_refused_and_reported(confined: Runner, unconfined: Runner,
                                         project: Path) -> None:
    script = ("import ctypes, os, platform, sys\n"
              "libc = ctypes.CDLL(None, use_errno=True)\n"
              "nr = {'x86_64': 272, 'aarch64': 97}[platform.machine()]\n"
              "ok = libc.syscall(nr, 0x10000000) == 0\n"  # CLONE_NEWUSER
              "print('unshare', ok, os.strerror(ctypes.get_errno()))\n")
    assert "unshare True" in unconfined([sys.executable, "-c", script]).stdout
    result = confined([sys.executable, "-c", script])
    assert "unshare False Operation not permitted" in result.stdout, result
    (found,) = [v for v in result.violations if v["kind"] == "syscall"]
    assert found["op"] == "unshare" and "seccomp.deny: namespaces" in str(found["rule"])


def test_the_syscall_report_through_the_cli(project: Path, home: Path) -> None:
    env = {**os.environ, "HOME": str(home)}
    argv = [str(Path(sys.executable).parent / "swifty-sandbox"), "run", "--project",
            str(project), "--", sys.executable, "-c", _REFUSED_CALLS,
            str(project / "worked")]
    text = subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True,
                          check=False)
    assert "swifty-sandbox: refused the system call keyctl: the sandbox profile's " \
        "seccomp filter (seccomp.deny: keyring); to allow it: " in text.stderr, text.stderr
    done = subprocess.run([*argv[:2], "--json", *argv[2:]], env=env, cwd=project,
                          capture_output=True, text=True, check=False)
    out = json.loads(done.stdout)
    (kcmp,) = [v for v in out["violations"] if v["op"] == "kcmp"]
    assert kcmp["kind"] == "syscall" and kcmp["seen"] == "kernel" and kcmp["fix"]
    assert not (project / "worked").exists()
