"""The hidden files and directories a running Landlock command could have moved, by
identity, for the file tools: while it runs, a hidden `.env` renamed to `notes.txt`
(`repair.hold` puts it back only when the run ends) is read by no rule that goes by
names, and the agent's Read runs outside the sandbox. Each run that holds hidden paths
inside a writable root lists their (device, inode) in `~/.swifty/held/<pid>-<n>` (in
the protected `~/.swifty`: no command writes it) until it ends; `identities` is every
live run's. Standard library only: the hook reads it on a file request.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

from swifty_sandbox.policy.paths import SWIFTY_DIR

Identity = tuple[int, int]  # (st_dev, st_ino)


def _folder(home: str) -> str:
    return os.path.join(home, SWIFTY_DIR, "held")


def register(home: str, identities: list[Identity]) -> str | None:
    """List `identities` for this run; the file to `unregister`, None when it could
    not be written (the file tools then miss a moved file until the run ends)."""
    folder = _folder(home)
    path = os.path.join(folder, f"{os.getpid()}-{time.time_ns()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump([list(i) for i in identities], f)
    except OSError:
        return None
    return path


def unregister(path: str | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def alive(pid: int) -> bool:
    """Whether the run that left an entry named by its pid may still be going (another
    user's process counts: its entries are not ours to sweep). Also the placeholders'
    sweep (linux/placeholders.py)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def identities(home: str) -> frozenset[Identity]:
    """Every live run's held identities (a run killed before it could unregister is
    skipped once its process is gone)."""
    folder = _folder(home)
    try:
        names = os.listdir(folder)
    except OSError:
        return frozenset()
    out: set[Identity] = set()
    for name in names:
        pid = name.split("-", 1)[0]
        if not pid.isdigit() or not alive(int(pid)):
            continue
        with contextlib.suppress(OSError, ValueError, TypeError):
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW
                         | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                data = json.loads(f.read(1 << 20))
            out |= {(int(dev), int(ino)) for dev, ino in data}
    return frozenset(out)


__all__ = ["Identity", "identities", "register", "unregister"]
