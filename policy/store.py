"""The "always allow" writer: appends rules to the local layer's file
(`~/.swifty/projects/<project>/permissions.local.yaml`), and an "always" host to
`network.allow` in the user's own config.yaml.

Nothing a user wrote is lost: the new rules are appended as text (comments and
formatting stay), the result is parsed before it replaces the file, the replace is
an atomic rename, and concurrent writers are serialised by an flock on a side file
(locking the rule file itself would not survive the rename).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from .errors import PolicyFileError, StoreError
from .files import PolicyFiles
from .rulefiles import parse_rules
from .settings import config_layer
from .types import Effect, Scope
from .yamlnodes import Source, compose, is_null, read_source

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path`'s side file (`….lock`) for a read-change-write."""
    lock_path = path.with_name(path.name + ".lock")
    # O_NOFOLLOW: a planted `….lock` symlink must not make us create a file elsewhere.
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _entry_text(rule: str, effect: Effect) -> str:
    import yaml

    return yaml.safe_dump([{"rule": rule, "effect": effect.value}], default_flow_style=False,
                          sort_keys=False, allow_unicode=True, width=10_000)


def _appended(source: Source, entries: str) -> str:
    """The file's text with `entries` (a block list) added after its last rule."""
    import yaml

    root = compose(source)
    text = source.text
    if isinstance(root, yaml.SequenceNode) and root.flow_style:
        # `[]` or `[a, b]`: a block item cannot follow it; replace the flow list by the
        # same items in block style (comments around it stay where they are).
        items = yaml.safe_load(text[root.start_mark.index:root.end_mark.index]) or []
        block = yaml.safe_dump(items, default_flow_style=False, sort_keys=False,
                               allow_unicode=True, width=10_000) if items else ""
        text = text[:root.start_mark.index] + block + text[root.end_mark.index:]
    if text and not text.endswith("\n"):
        text += "\n"
    return text + entries


def write_atomically(path: Path, text: str, *, new_mode: int | None = None) -> None:
    """Write beside the file and rename over it: readers see the old or the new file,
    never a part; it keeps its mode (a new one gets `new_mode`, else 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        elif new_mode is not None:
            os.chmod(tmp, new_mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a crash
    finally:
        os.close(dir_fd)


def local_rules_path(project: Path, home: Path) -> Path:
    """The local layer's file (`~/.swifty/projects/<project>/permissions.local.yaml`)."""
    return PolicyFiles(project, home).rules(Scope.LOCAL)


def add_rules(path: Path, rules: list[str], effect: Effect, *, project: Path,
              home: Path) -> list[str]:
    """Append `rules` with `effect` to the rule file at `path`; returns those added.

    A rule whose last occurrence in the file already has this effect is not repeated.
    Raises `PolicyFileError` if the file is invalid now (it is never "repaired") or if
    a new rule is malformed, and `StoreError` if it cannot be written (read-only, disk
    full) or is a symbolic link; the file is then left untouched.

    A symlink is refused rather than replaced or written through: replacing it would
    silently cut the link, and writing through it would put a rule meant for this
    project wherever the link points (another project's file, or the user's own
    `~/.swifty/permissions.yaml`, which applies everywhere).
    """
    try:
        return _add_rules(path, rules, effect, project=project, home=home)
    except OSError as e:
        raise StoreError(t("store.cannot_write", file=path, error=e.strerror or e)) from e


def _add_rules(path: Path, rules: list[str], effect: Effect, *, project: Path,
               home: Path) -> list[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        if path.is_symlink():
            raise StoreError(t("store.symlink", file=path, target=os.readlink(path)))
        source = read_source(path) or Source(str(path), "")
        try:
            existing = parse_rules(source, project, home)
        except PolicyFileError as e:
            raise PolicyFileError(e.file, e.line, e.column, t(
                "store.invalid_existing", file=path, error=e.message)) from e
        last_effect = {r.text: r.effect for r in existing}
        added = [r for r in dict.fromkeys(rules) if last_effect.get(r.strip()) is not effect]
        if not added:
            return []
        new_text = _appended(source, "".join(_entry_text(r, effect) for r in added))
        parse_rules(Source(str(path), new_text), project, home)  # never write a bad file
        write_atomically(path, new_text)
        return added


def add_allowed_host(files: PolicyFiles, entry: str) -> bool:
    """Append `entry` to `network.allow` in the user's config (created when missing),
    keeping every comment and line; False when it is there already. Refuses
    (StoreError) a file whose shape it cannot extend by inserting lines, a symlink, or
    a result that does not read back as valid settings."""
    from .network import expand  # here: `check` and `run` never load the network tables

    path = files.config(Scope.USER)
    expand([entry])  # never write an entry the reader would refuse
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            if path.is_symlink():
                raise StoreError(t("store.symlink", file=path, target=path.readlink()))
            source = read_source(path) or Source(str(path), "")
            values, _ = config_layer(source, files, committed=False)
            if entry in values.get("network_allow", ()):
                return False
            text = _inserted(source, entry)
            new = Source(str(path), text)
            values, _ = config_layer(new, files, committed=False)
            if entry not in values.get("network_allow", ()):
                raise StoreError(t("net.store_shape", entry=entry, file=path))
            write_atomically(path, text)
            return True
    except OSError as e:
        raise StoreError(t("store.cannot_write", file=path, error=e.strerror or e)) from e


def _inserted(source: Source, entry: str) -> str:
    import yaml  # PyYAML costs start-up time that a decision without files does not pay

    item = json.dumps(entry)  # a YAML double-quoted scalar: `*.x` and `@pypi` stay text
    text = source.text
    if text and not text.endswith("\n"):
        text += "\n"
    root = compose(source)
    if root is None or is_null(root):
        return text + f"network:\n  allow:\n    - {item}\n"
    shape_error = StoreError(t("net.store_shape", entry=entry, file=source.name))
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise shape_error
    top = {k.value: (k, v) for k, v in root.value}
    if "network" not in top:
        return text + f"network:\n  allow:\n    - {item}\n"
    key, net = top["network"]
    if not isinstance(net, yaml.MappingNode) or net.flow_style:
        raise shape_error
    fields = {k.value: (k, v) for k, v in net.value}
    if "allow" not in fields:
        indent = " " * net.value[0][0].start_mark.column if net.value else "  "
        at = _line_end(text, net.end_mark.index if net.value else key.end_mark.index)
        return text[:at] + f"{indent}allow:\n{indent}  - {item}\n" + text[at:]
    allow_key, allow = fields["allow"]
    if isinstance(allow, yaml.SequenceNode) and allow.flow_style:
        close = allow.end_mark.index - 1  # the `]`
        sep = ", " if allow.value else ""
        return str(text[:close] + sep + item + text[close:])
    if isinstance(allow, yaml.SequenceNode) and allow.value:
        column = int(allow.value[0].start_mark.column) - 2  # where its `- ` starts
        at = _line_end(text, allow.value[-1].end_mark.index)
        return text[:at] + " " * column + f"- {item}\n" + text[at:]
    if is_null(allow) and allow.start_mark.index == allow.end_mark.index:
        at = _line_end(text, allow_key.end_mark.index)
        indent = " " * (allow_key.start_mark.column + 2)
        return text[:at] + f"{indent}- {item}\n" + text[at:]
    raise shape_error


def _line_end(text: str, index: int) -> int:
    """Where the line holding `index` ends (after its newline): new lines go there."""
    if index > 0 and text[index - 1] == "\n":
        return index
    end = text.find("\n", index)
    return len(text) if end < 0 else end + 1
