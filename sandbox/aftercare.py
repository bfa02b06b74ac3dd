"""After a confined command: undo what it left that git or swifty-sandbox would trust.

Runs once the command is over (nothing of it runs any more), on the host:
- the empty files bwrap made as mount points for guarded files are removed (the empty
  guard directories stay, read-only from the next run on);
- a watched file git would trust that appeared (`.git/commondir`, an include), a
  repository planted with code in its config or hooks (a `.git`, or a bare repository
  found by its `HEAD`), a planted `.swifty/`, a link into the command's own temp dir, and
  a protected file that changed after all (another sandbox's unlink can detach a
  read-only mount) are moved aside, `.swifty-blocked-…`, and reported; a changed
  protected file gets its content from before the command back;
- what cannot be moved (its directory made read-only and not ours to change back) is
  recorded in the user's state for the project, and every later run refuses until it
  is gone (`unresolved`).
Every step goes through directories opened without following links (`open_dir`): a
command must not be able to aim a rename or an unlink at a file of the user's.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy.paths import project_state_dir

from . import gitfiles
from .expand import Found, find_named
from .spec import MARKERS, SandboxSpec, Snapshot
from .toolchains import CONFIG_IN_CACHE

_DIR_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
UNRESOLVED = "unresolved"


def open_dir(path: str) -> int:
    """`path` opened component by component from `/`, following no symlink
    (`O_PATH|O_NOFOLLOW`); OSError when a component is a link or missing."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in path.strip("/").split("/"):
            if part:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _parent(path: str) -> Iterator[tuple[int, str]]:
    parent, name = os.path.split(path)
    fd = open_dir(parent)
    try:
        yield fd, name
    finally:
        os.close(fd)


def _writable_parent(path: str) -> int:
    """The directory of `path` opened for changes (no link followed); when the command
    took away its write permission, the owner's is given back (the user owns it)."""
    parent, _name = os.path.split(path)
    grand = open_dir(os.path.dirname(parent) or "/")
    try:
        fd = os.open(os.path.basename(parent) or ".", os.O_RDONLY | os.O_DIRECTORY
                     | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=grand)
    finally:
        os.close(grand)
    mode = os.fstat(fd).st_mode
    if mode & 0o700 != 0o700:
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(mode) | 0o700)
    return fd


def move_aside(path: str) -> str | None:
    """Rename `path` to `.swifty-blocked-<time>-<name>` in its own directory; None when
    nothing is there. Raises OSError when it cannot be moved."""
    try:
        fd = _writable_parent(path)
    except FileNotFoundError:
        return None
    try:
        name = os.path.basename(path)
        try:
            os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return None
        moved = f".swifty-blocked-{time.time_ns()}-{name[:64]}"
        os.rename(name, moved, src_dir_fd=fd, dst_dir_fd=fd)
        return os.path.join(os.path.dirname(path), moved)
    finally:
        os.close(fd)


def _remove_guards(spec: SandboxSpec) -> None:
    """Remove the empty files bwrap made as mount points for guarded files (an empty
    `~/.bash_login` would change which file bash reads). The empty guard directories
    stay: a concurrent sandbox of this project may be about to mount them."""
    for path in spec.guard_files:
        if not os.path.lexists(path):
            continue  # the usual case: bwrap's mount point is gone with its namespace
        with contextlib.suppress(OSError), _parent(path) as (fd, name):
            info = os.lstat(name, dir_fd=fd)
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(name, dir_fd=fd)  # only when still empty
            elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
                os.unlink(name, dir_fd=fd)


def _changed(snapshot: Snapshot) -> list[tuple[str, bytes | None]]:
    """Protected files that are not what they were before the command."""
    out = []
    for path, (identity, content) in snapshot.items():
        try:
            info = os.lstat(path)
            now = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            now = None
        if now != identity and not (identity is None and _empty(path)):
            out.append((path, content))
    return out


def _empty(path: str) -> bool:
    """An empty file or directory: nothing in it for git or us to trust, and what
    another sandbox of this project makes as a mount point while it runs."""
    try:
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode):
            return not os.listdir(path)
        return stat.S_ISREG(info.st_mode) and info.st_size == 0
    except OSError:
        return False


def _restore(path: str, content: bytes) -> None:
    with _parent(path) as (fd, name):
        temporary = f".swifty-restore-{time.time_ns()}"
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                      | os.O_CLOEXEC, 0o644, dir_fd=fd)
        try:
            os.write(out, content)
        finally:
            os.close(out)
        os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)


def suspects(spec: SandboxSpec) -> tuple[list[tuple[str, str]], Found]:
    """What the command left that git or swifty-sandbox would trust, with why."""
    main = os.path.join(spec.project, ".git")
    found = Found()
    if spec.markers_in:
        # The walk before the run did not look below what it matched (read-only or
        # hidden inside: nothing can have been planted there), so neither does this one.
        skip = frozenset((*spec.read_only, *spec.unreadable_dirs, *spec.guard_dirs))
        found = find_named(spec.markers_in, MARKERS, skip, links_into=spec.temp_dir)
    before = set(spec.markers)
    created = t("run.reason_created")
    out: list[tuple[str, str]] = []
    for path in (*spec.watch, *(p for p in found.named if p not in before)):
        try:
            if path.endswith("/HEAD"):  # a bare repository: git finds it from inside
                directory = os.path.dirname(path)
                # Inside a `.git`, only a submodule's git dir (`.git/modules/…`): git
                # runs its hooks at the next `git submodule update`.
                inside = "/.git/" in directory + "/"
                if gitfiles.is_git_dir(directory) and (
                        not inside or "/.git/modules/" in directory + "/"):
                    # A `commondir` outside `.git/worktrees/` is no one's but a command's.
                    reason = "commondir" if gitfiles.common_dir(directory) else \
                        gitfiles.unsafe_config(directory, spec.project)
                    if reason is not None:
                        out.append((path, reason))
            elif path.endswith("/.git"):
                reason = gitfiles.untrusted(path, main, spec.project)
                if reason is not None:
                    out.append((path, reason))
            elif os.path.lexists(path) and not _empty(path):
                out.append((path, created))
        except (OSError, ValueError) as e:  # whatever confuses the check is a suspect
            out.append((path, str(e)))
    out += [(link, t("run.reason_link")) for link in found.links]
    return out, found


def after_run(spec: SandboxSpec) -> str:
    """Undo and report; the notes for stderr."""
    _remove_guards(spec)
    notes = []
    for path, content in _changed(spec.snapshot):
        moved = _try_move(spec, path)
        if content is not None:
            with contextlib.suppress(OSError):
                _restore(path, content)
        notes.append(t("run.changed", path=path, moved=moved))
    found_suspects, found = suspects(spec)
    notes += [t("run.unsearchable", path=p) for p in found.unsearchable]
    for path, reason in dict.fromkeys(found_suspects):
        moved = _try_move(spec, path)
        if moved:
            notes.append(t("run.watched", path=path, reason=reason, moved=moved))
    if spec.toolchain_dir:
        for name in CONFIG_IN_CACHE:
            path = os.path.join(spec.toolchain_dir, name)
            if os.path.lexists(path):
                notes.append(t("run.toolchain_config", path=path,
                               moved=_try_move(spec, path)))
    return "".join(f"swifty-sandbox: {n}\n" for n in notes)


def _try_move(spec: SandboxSpec, path: str) -> str:
    try:
        return move_aside(path) or ""
    except OSError:
        _record(spec, path)
        return t("run.not_moved")


def _state_file(spec: SandboxSpec) -> Path:
    return project_state_dir(Path(spec.project), Path(spec.home)) / UNRESOLVED


def _record(spec: SandboxSpec, path: str) -> None:
    """Remember a suspect that could not be moved: every later run refuses until it is
    gone (`spec.compile_spec` reads the list)."""
    import json

    with contextlib.suppress(OSError):
        state = _state_file(spec)
        state.parent.mkdir(parents=True, exist_ok=True)
        with open(state, "a", encoding="utf-8", errors="surrogateescape") as f:
            f.write(json.dumps(path) + "\n")
