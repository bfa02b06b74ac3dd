"""Path helpers of the policy: `~` expansion, containment, each project's own state
directory in the user's home."""

from __future__ import annotations

import os
from pathlib import Path

SWIFTY_DIR = ".swifty"


def expand_home(entry: str, home: Path | str) -> str:
    """`~` and `~/x` under `home`; anything else as it is (not `~user`)."""
    return str(home) + entry[1:] if entry == "~" or entry.startswith("~/") else entry


def expand_path(entry: str, *, base: Path, home: Path) -> Path:
    """`~`/`~/x` → home; relative → under `base`; then normalised (symlinks resolved)."""
    entry = expand_home(entry, home)
    path = Path(entry) if entry.startswith("/") else base / entry
    return Path(os.path.realpath(path))


def is_within(path: str, root: str) -> bool:
    """`path` is `root` or below it, on a path-component boundary."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def project_state_dir(project: Path, home: Path) -> Path:
    """The user's own directory for one project (`~/.swifty/projects/<name>-<hash>`):
    outside the repository, so nothing in it can come from a clone or a commit."""
    return home / SWIFTY_DIR / "projects" / f"{project.name[:32]}-{project_digest(project)}"


def project_digest(project: Path | str) -> str:
    """16 hex digits naming a project's own state (local rules, temp dir): BLAKE2b, a
    cryptographic hash, so no crafted path can share another project's state. From
    CPython's built-in `_blake2` where present: `hashlib` loads OpenSSL (~4 ms)."""
    data = str(project).encode(errors="surrogateescape")
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - every CPython build has it
        from hashlib import blake2b
    return blake2b(data, digest_size=8).hexdigest()
