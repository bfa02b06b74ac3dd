"""Fuzz: random bytes and JSON through `serve` and `check --batch`.

Every non-blank line gets exactly one answer (a result or an error object), the process
survives to the end of its input and exits normally, and its memory stays flat. Nothing
of substance runs (Bash is denied by a rule; only an empty command is allowed), and
bypassPermissions turns every other ask into an answer without a permission request.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy import local_rules_path

SEED = 20261130
_KEYS = ["id", "tool", "command", "argv", "path", "timeout", "type", "allow", "always"]
_TOOLS = ["Bash", "ReadFile", "WriteFile", "EditFile", "Read", "Shell", "", "*"]
_STRINGS = ["ls", "a\0b", "\ud800", "\udfff x", "rm -rf /", "~/.ssh/id_rsa", "../../etc",
            ".swifty/config.yaml", "é", "\U0001f600", "x" * 5000, "$(", "\n", ""]
SERVE = Path(sys.executable).with_name("swifty-sandbox")


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice(_STRINGS)
    if kind == 1:
        return rng.choice([0, -1, 10**30, 1e308, 0.5, True, False, None])
    if kind == 2:
        return rng.choice(_TOOLS)
    if kind == 3:
        return "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(8)))
    if kind in (4, 5):
        return rng.choice(_STRINGS[:4])
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return _request(rng, depth + 1)


def _request(rng: random.Random, depth: int = 0) -> dict[str, object]:
    keys = rng.sample(_KEYS, rng.randrange(1, len(_KEYS)))
    message = {key: _value(rng, depth) for key in keys}
    if rng.random() < 0.5:
        message["tool"] = rng.choice(_TOOLS)
    return message


def hostile_lines(count: int, rng: random.Random) -> list[bytes]:
    lines: list[bytes] = []
    for index in range(count):
        roll = rng.random()
        if roll < 0.25:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
            line = line.replace(b"\n", b" ")
        elif roll < 0.3:
            depth = rng.choice([50, 500, 5000, 100_000])
            line = b"[" * depth + b"]" * rng.choice([0, depth])
        elif roll < 0.35:
            line = b'{"id": ' + str(index).encode() + b', "tool": "Bash", "command": "' \
                + b"\\ud800" * rng.randrange(1, 3) + b'"}'
        else:
            message = _request(rng)
            text = json.dumps(message, ensure_ascii=rng.random() < 0.5, allow_nan=True)
            line = text.encode("utf-8", "surrogatepass")
            if rng.random() < 0.2:  # one byte mutated
                at = rng.randrange(len(line))
                line = line[:at] + bytes([rng.randrange(256)]) + line[at + 1:]
                line = line.replace(b"\n", b" ")
        lines.append(line + b"\n")
    return lines


def answered(lines: list[bytes]) -> int:
    """How many lines want an answer (the reader skips blank ones)."""
    return sum(1 for line in lines if line.strip())


@pytest.fixture
def denied_project(project: Path) -> Path:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text("- rule: Bash\n  effect: deny\n")
    return project


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Serve:
    def __init__(self, project: Path) -> None:
        self.proc = subprocess.Popen(
            [str(SERVE), "serve", "--project", str(project), "--mode", "bypassPermissions"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def exchange(self, lines: list[bytes]) -> list[dict[str, object]]:
        """Send the lines, and read one answer per line that wants one."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        stdin = self.proc.stdin

        def write() -> None:  # while answers are read: neither pipe may fill up
            stdin.write(b"".join(lines))
            stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        out = []
        for _ in range(answered(lines)):
            raw = self.proc.stdout.readline()
            assert raw, f"serve ended early: {self.stderr()}"
            out.append(json.loads(raw))
        writer.join(timeout=10)
        return out

    def stderr(self) -> str:
        self.proc.kill()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")[-2000:]

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=20)
        assert self.proc.stdout is not None
        rest = self.proc.stdout.read()
        self.proc.stdout.close()
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        return code, rest + err


@pytest.fixture
def serve(denied_project: Path) -> Iterator[Serve]:
    server = Serve(denied_project)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def test_serve_answers_every_hostile_line_and_survives(serve: Serve) -> None:
    rng = random.Random(SEED)
    warm = serve.exchange(hostile_lines(100, rng))
    assert all(m["type"] in ("result", "error") for m in warm)
    before = _rss_kb(serve.proc.pid)
    answers = serve.exchange(hostile_lines(1500, rng))
    after = _rss_kb(serve.proc.pid)
    assert all(m["type"] in ("result", "error") for m in answers)
    assert after - before < 20 * 1024, (before, after)  # flat, not growing per line
    last = serve.exchange([b'{"id": "last", "tool": "ReadFile", "path": "README"}\n'])
    assert last[0]["id"] == "last" and last[0]["type"] == "result"
    code, trailing = serve.close()
    assert (code, trailing) == (0, b"")


@pytest.mark.parametrize("line", [
    b"[" * 100_000, b'"\\ud800"', b'{"id": 1, "tool": "Bash", "command": "ls\\u0000"}',
    b'{"id": 2, "tool": "ReadFile", "path": "a\\u0000b"}',
    b'{"id": 3, "tool": "Bash", "argv": ["ls", "\\udc80"]}', b"\xff\xfe\xfd",
    b'{"id": {"x": "\\ud800"}}', b"1" * 5000, b'{"id": 4, "tool": "Bash", "timeout": 1e999}',
    b'"' + b"x" * (5 * 1024 * 1024) + b'"',
])
def test_serve_answers_each_reported_crash_with_an_error(serve: Serve, line: bytes) -> None:
    answer = serve.exchange([line + b"\n"])[0]
    assert answer["type"] == "error", answer
    again = serve.exchange([b'{"id": "next", "tool": "ReadFile", "path": "README"}\n'])[0]
    assert (again["id"], again["type"]) == ("next", "result")
    assert serve.close()[0] == 0


def test_batch_answers_every_hostile_line(denied_project: Path, tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    lines = hostile_lines(800, rng)
    batch = tmp_path / "hostile.jsonl"
    batch.write_bytes(b"".join(lines))
    done = subprocess.run([str(SERVE), "check", "--project", str(denied_project), "--mode",
                           "bypassPermissions", "--batch", str(batch)],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 2  # some lines are errors: the worst outcome is the code
    assert b"Traceback" not in done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == answered(lines)
    assert all(("error" in o) != ("effect" in o) for o in out)


# -- "always" that cannot be written -----------------------------------------------------

def _ask_always(project: Path, *, fsize: int | None = None) -> list[dict[str, object]]:
    """serve in manual mode: one command asks, the agent answers "always"; then a read."""

    def limit() -> None:
        if fsize is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    proc = subprocess.Popen([str(SERVE), "serve", "--project", str(project), "--sandbox",
                             "manual"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=limit)
    assert proc.stdin is not None and proc.stdout is not None
    out, err = proc.communicate(
        b'{"id": 1, "tool": "Bash", "command": "echo approved"}\n'
        b'{"id": 1, "type": "permission_response", "allow": true, "always": true}\n'
        b'{"id": 2, "tool": "ReadFile", "path": "README"}\n', timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in err, err
    answers = [json.loads(line) for line in out.splitlines()]
    # Answered as they finish (out of order); in order for each id.
    return sorted(answers, key=lambda m: str(m["id"]))


def test_always_on_a_full_disk_is_an_error_and_serving_goes_on(project: Path,
                                                                home: Path) -> None:
    # RLIMIT_FSIZE fails the write as a full disk does (EFBIG instead of ENOSPC), as root too.
    answers = _ask_always(project, fsize=8)
    assert [(m["id"], m["type"]) for m in answers] == [
        (1, "permission_request"), (1, "error"), (2, "result")]
    assert "could not add the rule" in str(answers[1]["message"])
    assert not local_rules_path(project, home).exists()


@pytest.mark.bwrap
@pytest.mark.unprivileged  # the only user it runs as: root writes anywhere
@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only directories")
def test_always_in_a_read_only_directory_is_an_error(project: Path, home: Path) -> None:
    state = local_rules_path(project, home).parent
    state.mkdir(parents=True)
    state.chmod(0o500)
    try:
        answers = _ask_always(project)
    finally:
        state.chmod(0o700)
    assert [(m["id"], m["type"]) for m in answers] == [
        (1, "permission_request"), (1, "error"), (2, "result")]


def test_always_refuses_a_symlinked_local_file(project: Path, home: Path) -> None:
    target = home / ".swifty" / "permissions.yaml"  # the user's rules, for every project
    target.parent.mkdir()
    target.write_text("- rule: Bash(ls)\n  effect: allow\n")
    local = local_rules_path(project, home)
    local.parent.mkdir(parents=True)
    local.symlink_to(target)
    answers = _ask_always(project)
    assert [(m["id"], m["type"]) for m in answers] == [
        (1, "permission_request"), (1, "error"), (2, "result")]
    assert "symbolic link" in str(answers[1]["message"])
    assert local.is_symlink() and os.readlink(local) == str(target)
    assert target.read_text() == "- rule: Bash(ls)\n  effect: allow\n"
    # The Python API says the same, and leaves both alone.
    box = Sandbox(project, home=home)
    from swifty_sandbox.policy import StoreError

    with pytest.raises(StoreError):
        box.always_allow("echo approved")
    assert local.is_symlink()
    assert target.read_text() == "- rule: Bash(ls)\n  effect: allow\n"


def test_batch_survives_lines_after_a_slow_reader(denied_project: Path) -> None:
    """`check --batch -` reads stdin as bytes too (a pipe, line by line)."""
    proc = subprocess.Popen([str(SERVE), "check", "--project", str(denied_project),
                             "--batch", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(b'"ls"\n\xff\n')
    proc.stdin.flush()
    time.sleep(0.2)
    out, err = proc.communicate(b'"git push -f"\n', timeout=30)
    lines = [json.loads(line) for line in out.splitlines()]
    assert [("effect" in x) for x in lines] == [True, False, True]
    assert proc.returncode == 2 and b"Traceback" not in err


def test_serve_meets_a_fifo_rule_file_with_an_error_not_a_hang(project: Path) -> None:
    server = Serve(project)
    try:
        ok = b'{"id": 1, "tool": "ReadFile", "path": "README"}\n'
        assert server.exchange([ok])[0]["type"] == "result"
        rules = project / ".swifty" / "permissions.yaml"
        rules.parent.mkdir()
        os.mkfifo(rules)
        start = time.monotonic()
        error = server.exchange([ok])[0]
        assert error["type"] == "error" and "not a regular file" in str(error["message"])
        assert time.monotonic() - start < 1.0
        rules.unlink()
        rules.write_text("- rule: ReadFile(README)\n  effect: deny\n")
        again = server.exchange([ok])[0]
        assert again["type"] == "result" and again["is_error"] is True
        assert server.close()[0] == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.communicate()
