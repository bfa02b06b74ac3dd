"""The session log: every decision and every run, one JSON line each, one file per
project in the user's home (`policy.paths.session_log_dir`), written here — outside the
sandbox, after the decision or the run — and read back by `log` and `report`.

Why it is shaped so:
- Per project, named by the project's digest (`<name>-<16 hex>.jsonl`, the name reduced
  to safe characters): a crafted path can neither share another project's file nor
  put odd bytes in a file name.
- The directory is 0700, each file 0600, opened following no link (a planted link would
  turn an append into a write elsewhere) and only when it is a regular file of ours.
  It is protected and hidden inside the sandbox (`policy/protected.py`), so a command
  can neither forge, erase nor read the record of what it did.
- One `write` per record on an `O_APPEND` descriptor under `flock`: concurrent agents'
  lines never interleave, and rotation (a rename chain) happens under the same lock.
  No `fsync`: the record costs a few syscalls, not a disk flush, per command.
- Secrets are scrubbed by the environment's own rule (`compiler.SecretRule`): a
  `NAME=value` word whose name the profile drops, and a URL's password, become `***`.
  Output (stdout, stderr) is never recorded.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import stat
import sys
import time
from collections.abc import Generator, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from swifty_sandbox.messages import t
from swifty_sandbox.policy import Decision, Policy, Request
from swifty_sandbox.policy.paths import project_digest, session_log_dir

from ..fsafe import open_dir
from ..spec.compiler import SecretRule

VERSION = 1
LOG_BYTES = 4 << 20  # one file; then it is rotated
KEEP = 3  # rotated files kept (`.1` newest): at most 16 MiB per project
TEXT_CHARS = 8192  # a longer command, path or reason is cut, marked with `…`
MASK = "***"
SUFFIX = ".jsonl"

# `NAME=value` as a shell word or a long option (`--api-key=…`): the value is one run of
# quoted or unquoted text. Only names the environment's rule drops are masked.
_ASSIGNMENT = re.compile(
    r"(?<![^\s;&|(`'\"])(-{0,2})([A-Za-z_][A-Za-z0-9_-]*)="
    r"((?:'[^']*'|\"(?:[^\"\\]|\\.)*\"|[^\s;&|<>()'\"`])*)")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")
_warned: list[str] = []


def log_file(project: Path, home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The project's log file (the newest; rotated ones add `.1` … `.KEEP`)."""
    environ = os.environ if environ is None else environ
    return _log_file(project, home, environ.get("XDG_STATE_HOME"))


@functools.lru_cache(maxsize=64)
def _log_file(project: Path, home: Path, state: str | None) -> Path:
    directory = session_log_dir(home, {} if state is None else {"XDG_STATE_HOME": state})
    name = _UNSAFE_NAME.sub("_", project.name)[:32] or "root"
    return directory / f"{name}-{project_digest(project)}{SUFFIX}"


def record(policy: Policy, surface: str, request: Request, decision: Decision,
           result: Mapping[str, object] | None = None) -> None:
    """Append one record: a decision, or (`result`: `RunResult.as_json()`) a run.
    Never raises: a log that cannot be written is said once on stderr, and the command's
    own result stands."""
    entry: dict[str, object] = {
        "v": VERSION, "time": stamp_of(time.time()),
        "kind": "decision" if result is None else "run",
        "surface": surface, "project": str(policy.project),
        "request": _request(request), "decision": decision.as_json(),
    }
    if result is not None:
        # Every field of the run's result but its output: new fields (violations, ran)
        # are recorded as they are added there.
        entry.update((k, v) for k, v in result.items()
                     if k not in ("stdout", "stderr", "decision"))
    path = _path(policy)
    try:
        line = json.dumps(entry, separators=(",", ":"))
        # Nothing to mask or cut (the usual command) unless the text has an `=`, a URL
        # or a long string: JSON escapes none of these, so the encoded line tells.
        if "=" in line or "://" in line or len(line) > TEXT_CHARS:
            rule = SecretRule((*policy.profile.env_drop, *policy.settings.env_drop),
                              (*policy.profile.env_keep, *policy.settings.env_keep))
            line = json.dumps(_scrubbed(entry, rule), separators=(",", ":"))
        append(path, (line + "\n").encode())
    except (OSError, ValueError) as e:
        _warn(path, e)


def ready(policy: Policy) -> None:
    """The project's log directory and file exist (made if missing) and are ours."""
    path = _path(policy)
    try:
        _descriptors(path)
    except OSError as e:
        _warn(path, e)


def _path(policy: Policy) -> Path:
    return _log_file(policy.project, policy.home, os.environ.get("XDG_STATE_HOME"))


def _warn(path: Path, error: Exception) -> None:
    if str(path) not in _warned:  # once per process and file, not per command
        _warned.append(str(path))
        print(t("log.unwritable", path=path,
                error=getattr(error, "strerror", None) or error), file=sys.stderr)


def _request(request: Request) -> dict[str, object]:
    out: dict[str, object] = {"tool": request.tool.value}
    if request.command is not None:
        out["command"] = request.command
    elif request.argv is not None:
        out["argv"] = list(request.argv)
    if request.path is not None:
        out["path"] = request.path
    return out


def scrub(text: str, rule: SecretRule) -> str:
    """`text` with the values of secret-named assignments and URL passwords masked."""
    def masked(match: re.Match[str]) -> str:
        dashes, name, value = match.groups()
        if value and rule.secret(name.replace("-", "_"), _unquoted(value)):
            return f"{dashes}{name}={MASK}"
        return match.group(0)

    if "=" in text:
        text = _ASSIGNMENT.sub(masked, text)
    return rule.without_url_passwords(text, MASK)


def _unquoted(value: str) -> str:
    return value.replace("'", "").replace('"', "")


def _scrubbed(value: object, rule: SecretRule) -> object:
    """Every string in a record scrubbed and cut to `TEXT_CHARS`."""
    if isinstance(value, str):
        value = scrub(value, rule)
        return value if len(value) <= TEXT_CHARS else value[:TEXT_CHARS] + "…"
    if isinstance(value, dict):
        return {k: _scrubbed(v, rule) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(v, rule) for v in value]
    return value


# -- the file ------------------------------------------------------------------------------

_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


# path → (pid, directory fd, file fd): kept open between records (a long-lived `serve`
# or MCP server appends without a walk from `/` each time). O_CLOEXEC: no command ever
# inherits them. Per process: a forked child shares the parent's open file, and with
# it the flock, so it opens its own.
_held: dict[Path, tuple[int, int, int]] = {}
HELD = 4  # projects whose log stays open at once


def append(path: Path, line: bytes) -> None:
    """One line appended to `path` in one `write` on an `O_APPEND` descriptor: the
    kernel appends each write whole (other writers' lines never interleave). Rotation,
    when the line would pass `LOG_BYTES`, is a rename chain under `flock`, so two
    writers never rotate the same file; a writer still holding the old file appends
    its line there (nothing lost) and opens the new one next time. Raises OSError."""
    for _ in range(8):  # rotated or removed since we opened it: open the new one
        dir_fd, fd = _descriptors(path)
        try:
            info = os.fstat(fd)
            if not _same(info, str(path)):  # rotated, or the directory moved
                _forget(path)
                continue
            if stat.S_IMODE(info.st_mode) != 0o600:  # loosened since: tightened again
                os.fchmod(fd, 0o600)
            if stat.S_IMODE(os.fstat(dir_fd).st_mode) != 0o700:
                os.fchmod(dir_fd, 0o700)
            if info.st_size and info.st_size + len(line) > LOG_BYTES:
                _rotate_locked(path, dir_fd, fd)
                _forget(path)
                continue
            os.write(fd, line)
            return
        except BaseException:
            _forget(path)
            raise
    raise OSError(0, t("log.busy"), str(path))


def _rotate_locked(path: Path, dir_fd: int, fd: int) -> None:
    """Rotate unless another writer did while we waited for the lock."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        info = os.fstat(fd)
        if _same(info, str(path)):
            _rotate(path.name, dir_fd)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _descriptors(path: Path) -> tuple[int, int]:
    held = _held.get(path)
    if held is not None and held[0] == os.getpid() and _same(os.fstat(held[2]), str(path)):
        return held[1], held[2]
    if held is not None:  # inherited through fork, rotated, moved or removed: reopened
        _forget(path)
    while len(_held) >= HELD:  # a process recording for many projects: the oldest go
        _forget(next(iter(_held)))
    dir_fd = _open_log_dir(path.parent)
    try:
        fd = os.open(path.name, _FLAGS, 0o600, dir_fd=dir_fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            os.close(fd)
            raise OSError(0, t("log.not_ours"), str(path))
    except BaseException:
        os.close(dir_fd)
        raise
    _held[path] = (os.getpid(), dir_fd, fd)
    return dir_fd, fd


def _forget(path: Path) -> None:
    held = _held.pop(path, None)
    if held is not None:
        for fd in held[1:]:
            with contextlib.suppress(OSError):
                os.close(fd)


def _open_log_dir(directory: Path) -> int:
    """The log directory, made 0700 where missing, opened following no link; refused
    unless it is ours."""
    parent = os.path.realpath(directory.parent)  # the user's own spelling may hold links
    fd = open_dir(parent, create=True)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory.name, 0o700, dir_fd=fd)
        child = os.open(directory.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                        | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)
    info = os.fstat(child)
    if info.st_uid != os.getuid():
        os.close(child)
        raise OSError(0, t("log.not_ours"), str(directory))
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.fchmod(child, 0o700)
    return child


def _same(info: os.stat_result, name: str, dir_fd: int | None = None) -> bool:
    """Whether `name` (in `dir_fd`, else a whole path) is still the file `info`
    describes."""
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino)


def _rotate(name: str, dir_fd: int) -> None:
    """`name.KEEP-1` → `name.KEEP` … `name` → `name.1` (the oldest dropped)."""
    for n in range(KEEP - 1, 0, -1):
        with contextlib.suppress(FileNotFoundError):
            os.rename(f"{name}.{n}", f"{name}.{n + 1}", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.rename(name, f"{name}.1", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


# -- reading -----------------------------------------------------------------------------

def files(path: Path) -> list[Path]:
    """The log's files, oldest first."""
    return [p for p in (*(path.with_name(f"{path.name}.{n}") for n in range(KEEP, 0, -1)),
                        path) if p.is_file()]


def parse(line: bytes) -> dict[str, object] | None:
    """A record, or None for a line that is not one (a torn last line, a foreign line)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) and value.get("v") == VERSION else None


def read(path: Path, since: float | None = None) -> Iterator[dict[str, object]]:
    """Every record of the log, oldest first; `since`: only those at or after it (epoch
    seconds)."""
    for name in files(path):
        try:
            with open(name, "rb") as f:
                for line in f:
                    entry = parse(line)
                    if entry is not None and (since is None or after(entry, since)):
                        yield entry
        except FileNotFoundError:  # rotated away while we read
            continue


def after(entry: Mapping[str, object], since: float) -> bool:
    stamp = entry.get("time")
    return isinstance(stamp, str) and stamp >= stamp_of(since)


def stamp_of(epoch: float) -> str:
    """The record's `time`: UTC, milliseconds (text order is time order)."""
    return _second(int(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


@functools.lru_cache(maxsize=4)
def _second(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))


def follow(path: Path, poll: float = 0.25) -> Generator[dict[str, object], None, None]:
    """New records as they are appended (from the end now), through rotations: the old
    file is read to its end before the new one is opened."""
    held = [_open(path)]  # the file being read; replaced at each rotation
    if held[0] is not None:
        held[0].seek(0, os.SEEK_END)
    try:
        yield from _follow(path, held, poll)
    finally:  # the reader stopped (Ctrl-C, close): whichever file is open now
        if held[0] is not None:
            held[0].close()


def _follow(path: Path, held: list[BinaryIO | None], poll: float
            ) -> Iterator[dict[str, object]]:
    pending = b""
    while True:
        handle = held[0]
        chunk = handle.read() if handle is not None else b""
        if chunk:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                entry = parse(line)
                if entry is not None:
                    yield entry
            continue
        if _replaced(handle, path):  # rotated (or made): the old one is read to its end
            if handle is not None:
                handle.close()
            held[0], pending = _open(path), b""
            continue
        time.sleep(poll)


def _open(path: Path) -> BinaryIO | None:
    try:
        return open(path, "rb")  # held across the loop, closed there
    except FileNotFoundError:
        return None


def _replaced(handle: BinaryIO | None, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    if handle is None:
        return True
    info = os.fstat(handle.fileno())
    return (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino)
