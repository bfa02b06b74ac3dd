"""Project discovery: which directory a command's policy belongs to."""

from __future__ import annotations

import os
from pathlib import Path


def find_project(start: Path) -> Path:
    """The git top-level containing `start` (a `.git` dir or file), else `start`."""
    start = Path(os.path.realpath(start))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start
