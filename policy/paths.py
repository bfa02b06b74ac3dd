"""Path helpers of the policy: `~` expansion, containment, each project's own state
directory in the user's home."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
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


LOG_DIR_NAME = "swifty-sandbox"
DEFAULT_STATE_HOME = "~/.local/state"
_GLOB_CHARACTERS = frozenset("*?[]\\\n")


def state_home(environ: Mapping[str, str]) -> str | None:
    """`$XDG_STATE_HOME` where it is usable, else None (the default, `~/.local/state`).
    The XDG spec ignores a relative value; a value with glob characters is ignored too,
    because the directory is also a protected pattern (`policy/protected.py`) and must
    name exactly this directory."""
    value = environ.get("XDG_STATE_HOME", "").rstrip("/")
    if not value.startswith("/") or _GLOB_CHARACTERS.intersection(value):
        return None
    return os.path.normpath(value)


def session_log_dir(home: Path, environ: Mapping[str, str]) -> Path:
    """Where the session log lives (`sandbox/agents/sessionlog.py`):
    `$XDG_STATE_HOME/swifty-sandbox`, by default `~/.local/state/swifty-sandbox`."""
    state = state_home(environ)
    base = Path(state) if state is not None else home / ".local" / "state"
    return base / LOG_DIR_NAME


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


# -- where the kernel will open a path -----------------------------------------------------

MAX_LINKS = 40  # the kernel's limit on symlinks followed in one lookup (ELOOP beyond)
PATH_MAX = 4096  # bytes of a path the kernel takes in one call


@dataclass(frozen=True, slots=True)
class Resolved:
    """A path resolved as the kernel resolves it.

    `path` is absolute and holds no `.`, `..`, repeated `/` or symlink: where the kernel
    lands (below the first missing component, lexically: what `mkdir -p` then `open`
    make). `spellings` are the other names the lookup went by (as written, and after
    each link followed): deny patterns are matched on every one. `error`: why the
    lookup fails or cannot be seen (a loop, a component that is not a directory, no
    search permission, a name too long); `proc`: it passes through `/proc`, whose
    links the kernel follows to an object, not to the name they show.
    """

    path: str
    spellings: tuple[str, ...]
    error: str | None = None
    proc: bool = False
    # As written with `..` collapsed, when it has one: what an agent that normalises the
    # path opens ("" when that is the kernel's reading anyway).
    written: str = ""

    @property
    def opened(self) -> tuple[str, ...]:
        """What may be opened: where the kernel lands, and the lexical reading (an
        agent that normalises `..` before it opens, as Node's `path.resolve` does)."""
        return (self.path,) if self.written in ("", self.path) else (self.written, self.path)


def resolve(path: str) -> Resolved:
    """`path` (absolute) as the kernel looks it up: component by component, each link
    read and followed before any `..` after it applies (`a/b/../x` with `a/b -> ../..`
    is `../x` from `a`, not `a/x`). Reads links only; opens nothing."""
    written = _normal(path)
    pending = [part for part in reversed(path.split("/")) if part not in ("", ".")]
    current, links, missing, proc = "", 0, False, False
    spellings = [written]
    error: str | None = None
    try:
        encoded = os.fsencode(path)
    except UnicodeEncodeError:
        encoded = b""
        error = "name not encodable"
    if len(encoded) >= PATH_MAX:
        error = os.strerror(errno.ENAMETOOLONG)
    while pending and error is None:
        name = pending.pop()
        if name == "..":
            current = current.rsplit("/", 1)[0]  # `/..` is `/`
            continue
        candidate = f"{current}/{name}"
        proc = proc or is_within(candidate, "/proc")
        if missing:
            current = candidate
            continue
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            missing, current = True, candidate
            continue
        except OSError as e:
            error, current = e.strerror or str(e), candidate
            break
        if stat.S_ISLNK(info.st_mode):
            links += 1
            if links > MAX_LINKS:
                error, current = os.strerror(errno.ELOOP), candidate
                break
            try:
                target = os.readlink(candidate)
            except OSError as e:
                error, current = e.strerror or str(e), candidate
                break
            if target.startswith("/"):
                current = ""
            pending += [p for p in reversed(target.split("/")) if p not in ("", ".")]
            spellings.append(_normal("/".join((current, *reversed(pending)))))
            continue
        current = candidate
        if pending and not stat.S_ISDIR(info.st_mode):
            error = os.strerror(errno.ENOTDIR)
            break
    resolved = current or "/"
    if error is not None:  # the rest as written, so that deny patterns still see it
        resolved = _normal("/".join((resolved, *reversed(pending))))
    # Only a `..` makes the lexical reading another file than the kernel's.
    lexical = written if ".." in path.split("/") else ""
    return Resolved(resolved, tuple(dict.fromkeys(s for s in spellings if s != resolved)),
                    error, proc, lexical)


def _normal(path: str) -> str:
    """`os.path.normpath`, without the leading `//` POSIX lets it keep."""
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path
