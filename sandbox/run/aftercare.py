"""After a confined command: undo what it left that git or swifty-sandbox would trust.

Runs once the command is over (nothing of it runs any more), on the host:
- the empty files bwrap made as mount points for guarded files are removed (the empty
  guard directories stay, read-only from the next run on);
- a watched file git or an agent would trust that appeared (`.git/commondir`, an
  include, `.claude/settings.json`, a `swifty-sandbox` on PATH), a repository planted
  with code in its config or hooks (a `.git`, or a bare repository found by its
  `HEAD`), a planted `.swifty/` and a link into the command's own temp dir are moved
  aside, `.swifty-blocked-…`, and reported. Where the command made a symbolic link on
  the way (`.claude -> docs`), the link itself is moved (`culprit`): its parent has no
  link, and what lay behind it is out of the agent's way;
- a protected file that changed anyway (only a process outside the sandbox can
  replace one, which detaches the read-only mount inside): kept when written in place
  or removed (that was the user), kept when what replaced it is harmless (a git config
  without new code-running keys, a rule file that only gained denials), else put back
  from before with its owner and mode exactly, the new one kept aside and named;
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

from ..fsafe import links_on_the_way, open_dir
from ..spec import gitfiles, walkcache
from ..spec.compiler import (
    MARKERS,
    NESTED_AGENT_DIRS,
    Identity,
    SandboxSpec,
    Snapshot,
    nested_agent_dir,
)
from ..spec.expand import Found, find_named
from ..spec.toolchains import CONFIG_IN_CACHE

UNRESOLVED = "unresolved"


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
        # 64 bytes of the name, not characters: 64 four-byte ones past NAME_MAX made
        # the move fail, and so every later run refuse.
        moved = f".swifty-blocked-{time.time_ns()}-" + os.fsdecode(os.fsencode(name)[:64])
        os.rename(name, moved, src_dir_fd=fd, dst_dir_fd=fd)
        return os.path.join(os.path.dirname(path), moved)
    finally:
        os.close(fd)


def _remove_guards(spec: SandboxSpec) -> None:
    """Remove the empty files bwrap made as mount points for guarded files (an empty
    `~/.bash_login` would change which file bash reads). The empty guard directories
    stay: a concurrent sandbox of this project may be about to mount them."""
    for path in (*spec.guard_files, *spec.worktree_locks):
        if not os.path.lexists(path):
            continue  # the usual case: bwrap's mount point is gone with its namespace
        with contextlib.suppress(OSError), _parent(path) as (fd, name):
            info = os.lstat(name, dir_fd=fd)
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(name, dir_fd=fd)  # only when still empty
            elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
                os.unlink(name, dir_fd=fd)


def _identity(path: str) -> Identity | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_uid,
            info.st_gid)


def _changed(snapshot: Snapshot) -> list[tuple[str, Identity | None, bytes | None]]:
    """Protected files that are not what they were before the command, with what they
    were (identity, small content)."""
    out = []
    for path, (identity, content) in snapshot.items():
        now = _identity(path)
        if now != identity and not (identity is None and _empty(path)):
            out.append((path, identity, content))
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


def _restore(path: str, content: bytes, identity: Identity) -> None:
    """Put `content` back at `path` with its owner and mode from before, exactly (a
    0600 `.git/config` holding a token must not come back 0644): written to a new
    0600 file, then given the mode, then renamed into place."""
    with _parent(path) as (fd, name):
        temporary = f".swifty-restore-{time.time_ns()}"
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                      | os.O_CLOEXEC, 0o600, dir_fd=fd)
        try:
            os.write(out, content)
            _ino, _size, _mtime, mode, uid, gid = identity
            if (uid, gid) != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(out, uid, gid)
            os.fchmod(out, stat.S_IMODE(mode))
        except BaseException:
            os.close(out)
            os.unlink(temporary, dir_fd=fd)
            raise
        os.close(out)
        os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)


def _small_content(path: str) -> bytes | None:
    """A regular file's content (at most 1 MiB), opened following no link."""
    with contextlib.suppress(OSError), _parent(path) as (fd, name):
        f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                    dir_fd=fd)
        with os.fdopen(f, "rb") as reader:
            if stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
                data = reader.read((1 << 20) + 1)
                return data if len(data) <= 1 << 20 else None
    return None


def _harmless(path: str, before: bytes, now: bytes) -> bool:
    """Whether a protected file's new content only does what the user plainly may
    have done themselves while the command ran: a git config that gained no key off
    the safe list, a rule file that only gained deny and ask rules. Such a change is
    kept — it is the user's, or it grants nothing — instead of being reverted (a deny
    rule added during a run must not be undone)."""
    try:
        old, new = before.decode(), now.decode()
    except UnicodeDecodeError:
        return False
    name = os.path.basename(path)
    if name in ("config", "config.worktree") and "/.git" in path:
        return gitfiles.new_unsafe_key(old, new) is None
    if name.startswith("permissions") and name.endswith((".yaml", ".yml")):
        return _only_tightens(old, new)
    return False


def _only_tightens(before: str, after: str) -> bool:
    """Every rule of `before` is still in `after`, in the same order, and every rule
    added is a deny or an ask."""
    import json

    import yaml

    try:
        old, new = yaml.safe_load(before) or [], yaml.safe_load(after) or []
    except yaml.YAMLError:
        return False
    if not isinstance(old, list) or not isinstance(new, list):
        return False
    remaining = [json.dumps(r, sort_keys=True, default=str) for r in old]
    for rule in new:
        text = json.dumps(rule, sort_keys=True, default=str)
        if remaining and text == remaining[0]:
            remaining.pop(0)
        elif not (isinstance(rule, dict) and rule.get("effect") in ("deny", "ask")):
            return False
    return not remaining


def _revert(spec: SandboxSpec, path: str, identity: Identity | None,
            content: bytes | None) -> str | None:
    """A protected file that changed during the command. A command cannot write one
    (read-only mount) nor rename or remove it (a mount point) — only a process outside
    the sandbox can, which also detaches the mount, after which the command can write
    what took its place. So: the same file written in place, or a file removed, was
    changed from outside: kept. A file replaced is put back from before, unless the
    new one is harmless (`_harmless`); the new one is kept aside and named, so that a
    user's own edit is never lost. The note for stderr, or None."""
    now = _identity(path)
    if identity is not None and (now is None or now[0] == identity[0]):
        return None  # removed, or written in place: only from outside the sandbox
    if identity is not None and content is not None and now is not None:
        current = _small_content(path)
        if current is not None and (
                (current == content and stat.S_IMODE(now[3]) == stat.S_IMODE(identity[3]))
                or _harmless(path, content, current)):
            return None
    moved = _try_move(spec, path)
    if moved and identity is not None and content is not None:
        with contextlib.suppress(OSError):
            _restore(path, content, identity)
    return t("run.changed", path=path, moved=moved)


def suspects(spec: SandboxSpec) -> tuple[list[tuple[str, str]], Found]:
    """What the command left that git or swifty-sandbox would trust, with why."""
    main = os.path.join(spec.project, ".git")
    found = Found()
    if spec.markers_in:
        # The walk before the run did not look below what it matched (read-only or
        # hidden inside: nothing can have been planted there), so neither does this one.
        skip = frozenset((*spec.read_only, *spec.unreadable_dirs, *spec.guard_dirs))
        found = find_named(spec.markers_in, MARKERS, skip, links_into=spec.temp_dir,
                           cache=walkcache.recall(spec.walk_cache))
    before = set(spec.markers)
    created = t("run.reason_created")
    out: list[tuple[str, str]] = []
    loose = frozenset(spec.loose_heads)
    for path in dict.fromkeys((*spec.watch, *spec.loose_heads, *(
            p for p in found.named if p not in before and (
                not p.endswith(NESTED_AGENT_DIRS) or nested_agent_dir(p, spec.project))))):
        try:
            if path.endswith("/HEAD"):  # a bare repository: git finds it from inside
                directory = os.path.dirname(path)
                # Inside a `.git`, only a submodule's git dir (`.git/modules/…`): git
                # runs its hooks at the next `git submodule update`; or one a gitfile
                # names (`loose`: none before the command, one now).
                inside = "/.git/" in directory + "/"
                if gitfiles.is_git_dir(directory) and (
                        path in loose or not inside or "/.git/modules/" in directory + "/"):
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
            elif new_link(spec, path) is not None:
                # Even where nothing lies behind it on the host: inside the next
                # sandbox `/tmp/…` is that command's /tmp, and on the host a shared
                # directory anyone may fill.
                out.append((path, t("run.reason_link_on_the_way")))
        except (OSError, ValueError) as e:  # whatever confuses the check is a suspect
            out.append((path, str(e)))
    out += [(link, t("run.reason_link")) for link in found.links]
    for link, text in spec.kept_links:
        try:
            now = os.readlink(link)
        except OSError:
            now = None
        if now != text and os.path.lexists(link):
            out.append((link, t("run.reason_agent_link")))
    return out, found


def _finish_removals(spec: SandboxSpec) -> list[str]:
    """Work trees the command emptied (`spec.gitfile_trees`): what stopped the removal
    was our read-only gitfile, so it and the directory go too."""
    notes = []
    for tree in spec.gitfile_trees:
        try:
            if os.listdir(tree) != [".git"]:
                continue
            with _parent(os.path.join(tree, ".git")) as (fd, name):
                if not stat.S_ISREG(os.lstat(name, dir_fd=fd).st_mode):
                    continue
                os.unlink(name, dir_fd=fd)
            with _parent(tree) as (fd, name):
                os.rmdir(name, dir_fd=fd)
        except OSError:
            continue
        notes.append(t("run.tree_removed", path=tree))
    return notes


def after_run(spec: SandboxSpec) -> str:
    """Undo and report; the notes for stderr."""
    _remove_guards(spec)
    notes = _finish_removals(spec)
    for path, identity, content in _changed(spec.snapshot):
        note = _revert(spec, path, identity, content)
        if note is not None:
            notes.append(note)
    found_suspects, found = suspects(spec)
    notes += [t("run.unsearchable", path=p) for p in found.unsearchable]
    kept = dict(spec.kept_links)
    for path, reason in dict.fromkeys(found_suspects):
        moved = _try_move(spec, path)
        if moved:
            notes.append(t("run.watched", path=path, reason=reason, moved=moved))
            if path in kept:
                with contextlib.suppress(OSError), _parent(path) as (fd, name):
                    os.symlink(kept[path], name, dir_fd=fd)  # the agent's link, back
    if spec.toolchain_dir:
        for name in CONFIG_IN_CACHE:
            path = os.path.join(spec.toolchain_dir, name)
            if os.path.lexists(path) or new_link(spec, path) is not None:
                notes.append(t("run.toolchain_config", path=path,
                               moved=_try_move(spec, path)))
    return "".join(f"swifty-sandbox: {n}\n" for n in notes)


def _roots(spec: SandboxSpec) -> tuple[str, ...]:
    """Where a command could have written: its writable roots, its /tmp, its caches."""
    return (*spec.writable, *(r for r in (spec.temp_dir, spec.toolchain_dir) if r))


def new_link(spec: SandboxSpec, path: str) -> str | None:
    """The first symbolic link on the way to `path` that was not there before the
    command (`spec.links_before`): the command made it."""
    before = set(spec.links_before)
    for link in links_on_the_way(path, _roots(spec)):
        if link not in before:
            return link[0]
    return None


def culprit(spec: SandboxSpec, path: str) -> str:
    """What to move aside for the suspect `path`. A link the command made on its way
    (`.claude -> docs` with `docs/settings.json`) cannot be gone through without
    following it, but it can be moved itself: its parent has no link, and with it goes
    what the agent would have found behind it. Through links that were there before
    (the user's), the file where it really is; else the path itself."""
    made = new_link(spec, path)
    if made is not None:
        return made
    if links_on_the_way(path, _roots(spec)):
        return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return path


def _try_move(spec: SandboxSpec, path: str) -> str:
    target = culprit(spec, path)
    try:
        return move_aside(target) or ""
    except OSError:
        # Not ours to move (a directory of someone else's, locked): what lies there
        # stays, so every later run refuses until the user has looked.
        _record(spec, target)
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
