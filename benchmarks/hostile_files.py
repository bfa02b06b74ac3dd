"""Hostile policy files: time and peak memory of `check` against each kind, in each place.

    python -m benchmarks.hostile_files

Each kind of file a clumsy or hostile repository (or a slip at home) can hold — a FIFO,
a symlink to `/dev/zero` or `/dev/urandom`, a directory, 50 MB of rules, a huge scalar,
bytes that are not UTF-8, deep nesting, an alias bomb, a NUL in a value or as a byte —
is put in turn at every policy location (the three rule files, both config files, a profile named by
the config, the user's program table), and `swifty-sandbox check` is run against it in
a fresh process. Target: exit 2 naming the file (and line) in under 1 s and 64 MB. The
test suite asserts the same (tests/policy/test_hostile_files.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

LOCATIONS = ("user-rules", "project-rules", "local-rules", "user-config", "project-config",
             "profile", "user-programs")
_KIND_OF = {"user-rules": "rules", "project-rules": "rules", "local-rules": "rules",
            "user-config": "config", "project-config": "config", "profile": "profile",
            "user-programs": "programs"}
_BIG = 50 * 1024 * 1024


def location_path(location: str, project: Path, home: Path) -> Path:
    from swifty_sandbox.policy.store import local_rules_path

    return {
        "user-rules": home / ".swifty" / "permissions.yaml",
        "project-rules": project / ".swifty" / "permissions.yaml",
        "local-rules": local_rules_path(Path(os.path.realpath(project)),
                                        Path(os.path.realpath(home))),
        "user-config": home / ".swifty" / "config.yaml",
        "project-config": project / ".swifty" / "config.yaml",
        "profile": home / ".swifty" / "profile.yaml",
        "user-programs": home / ".swifty" / "programs.yaml",
    }[location]


def _text(kind: str, bad: str) -> str:
    """A file of the location's kind whose third line holds `bad` as a value."""
    if kind == "rules":
        return f"- rule: Bash(ls)\n  effect: allow\n- rule: {bad}\n  effect: allow\n"
    if kind == "config":
        return f"sandbox:\n  writable: []\n  mode: {bad}\n"
    if kind == "programs":
        return f"programs:\n  ls:\n    subcommands: {bad}\n"
    return f"extends: default\ndescription: x\nprivateTmp: {bad}\n"


def _write(path: Path, data: str | bytes) -> None:
    path.write_bytes(data.encode() if isinstance(data, str) else data)


@dataclass(frozen=True)
class Hostile:
    name: str
    make: Callable[[Path, str], None]  # (path, location kind) → the file at path
    line: int | None  # the line the error must name, when one applies


def _fifo(path: Path, kind: str) -> None:
    os.mkfifo(path)


def _link(target: str) -> Callable[[Path, str], None]:
    return lambda path, kind: path.symlink_to(target)


def _directory(path: Path, kind: str) -> None:
    path.mkdir()


def _fifty_megabytes(path: Path, kind: str) -> None:
    unit = "- rule: Bash(ls)\n  effect: allow\n" if kind == "rules" \
        else "# padding padding padding padding\n"
    block = (unit * (1024 * 1024 // len(unit))).encode()
    with path.open("wb") as f:  # in blocks: the measuring process itself stays small
        f.write(_text(kind, "x").encode())
        for _ in range(_BIG // len(block)):
            f.write(block)


def _huge_scalar(path: Path, kind: str) -> None:
    _write(path, _text(kind, "Bash(" + "a" * 200_000 if kind == "rules"
                 else "[" + "a" * 200_000 + "]"))


def _undecodable(path: Path, kind: str) -> None:
    _write(path, _text(kind, "BAD").encode().replace(b"BAD", b"\xff\xfe"))


def _deep(path: Path, kind: str) -> None:
    _write(path, _text(kind, "[" * 100_000 + "]" * 100_000))


def _alias_bomb(path: Path, kind: str) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    _write(path, "\n".join(lines) + "\n")


def _nul(path: Path, kind: str) -> None:
    _write(path, _text(kind, '"a\\0b"'))


def _nul_byte(path: Path, kind: str) -> None:  # a raw NUL: YAML refuses the character
    _write(path, _text(kind, '"a\0b"'))


HOSTILE = (
    Hostile("fifo", _fifo, None),
    Hostile("symlink to /dev/zero", _link("/dev/zero"), None),
    Hostile("symlink to /dev/urandom", _link("/dev/urandom"), None),
    Hostile("directory", _directory, None),
    Hostile("50 MB file", _fifty_megabytes, None),
    Hostile("200 kB scalar", _huge_scalar, 3),
    Hostile("undecodable bytes", _undecodable, 3),
    Hostile("100k-deep nesting", _deep, 3),
    Hostile("alias bomb", _alias_bomb, None),
    Hostile("NUL in a value", _nul, 3),
    Hostile("NUL byte", _nul_byte, 3),
)


def place(hostile: Hostile, location: str, project: Path, home: Path) -> Path:
    """Put the hostile file at the location (a profile is named by the user's config)."""
    path = location_path(location, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    if location == "profile":
        _write(home / ".swifty" / "config.yaml", f"sandbox:\n  profile: {path}\n")
    if location == "user-programs":  # the table is read when an allow rule is weighed
        _write(home / ".swifty" / "permissions.yaml", "- rule: Bash(ls *)\n  effect: allow\n")
    hostile.make(path, _KIND_OF[location])
    return path


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None  # None: killed at the deadline
    seconds: float
    peak_mb: float
    stderr: str
    cpu_seconds: float = 0.0  # user + system: what the work cost, whatever the load
    # Runnable but waiting for a CPU (/proc/PID/schedstat's run delay): what load adds.
    # None where the kernel does not say.
    queued_seconds: float | None = None

    @property
    def blocked_seconds(self) -> float | None:
        """The time it spent neither on a CPU nor waiting for one: asleep, on a read, a
        lock or a child. Load does not inflate it, so it bounds waiting whatever the
        machine does (with our own poll's wake-up on top)."""
        if self.queued_seconds is None:
            return None
        return self.seconds - self.cpu_seconds - self.queued_seconds


# Measures one command from a small process of its own: a child's peak RSS (ru_maxrss)
# starts from the size of the process it was forked from, so forking straight from a
# big test runner would report the runner's size.
_MEASURE = """
import os, signal, sys, time
deadline = float(sys.argv[1])
start = time.monotonic()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.execv(sys.argv[2], sys.argv[2:])
code, queued = None, "None"
while True:
    if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
        ended = time.monotonic()
        try:  # read while it is a zombie: its run delay, in ns
            with open(f"/proc/{pid}/schedstat") as f:
                queued = str(int(f.read().split()[1]) / 1e9)
        except (OSError, IndexError, ValueError):
            pass
        _, status, usage = os.wait4(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        break
    if time.monotonic() - start > deadline:
        os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
        ended = time.monotonic()
        break
    time.sleep(0.002)
print(code, ended - start, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, queued)
"""


def run_check(project: Path, home: Path, deadline: float = 10.0) -> Outcome:
    """`swifty-sandbox check -c ls` in a fresh process: exit code, time, peak RSS."""
    env = {**os.environ, "HOME": str(home), "SWIFTY_LANG": "en"}
    command = [sys.executable, "-m", "swifty_sandbox.cli", "check", "--project", str(project),
               "-c", "ls"]
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(deadline), *command], env=env,
                          capture_output=True, check=False, timeout=deadline + 30)
    code, seconds, peak_kb, cpu, queued = done.stdout.split()
    return Outcome(None if code == b"None" else int(code), float(seconds), int(peak_kb) / 1024,
                   done.stderr.decode("utf-8", "replace"), float(cpu),
                   None if queued == b"None" else float(queued))


def main() -> None:
    worst: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for hostile in HOSTILE:
            for location in LOCATIONS:
                case = Path(tmp) / f"{HOSTILE.index(hostile)}-{location}"
                project, home = case / "project", case / "home"
                (project / ".git").mkdir(parents=True)
                home.mkdir()
                path = place(hostile, location, project, home)
                outcome = run_check(project, home)
                named = str(path) in outcome.stderr
                print(f"{hostile.name:24} {location:15} exit {outcome.exit_code} "
                      f"{outcome.seconds * 1000:6.0f} ms {outcome.peak_mb:6.1f} MB"
                      f"{'' if named else '  (file not named!)'}")
                seconds, peak = worst.get(hostile.name, (0.0, 0.0))
                worst[hostile.name] = (max(seconds, outcome.seconds), max(peak, outcome.peak_mb))
    print("\nworst per kind:")
    for name, (seconds, peak) in worst.items():
        print(f"  {name:24} {seconds * 1000:6.0f} ms {peak:6.1f} MB")


if __name__ == "__main__":
    main()
