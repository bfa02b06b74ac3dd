"""`network:` in config.yaml: reading it (file:line on every bad entry) and adding an
"always" host to the user's own file (the rule writer's lock and atomic rename)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from .errors import StoreError
from .files import PolicyFiles
from .network import NetworkEntryError, expand, wide_entry
from .types import Scope
from .yamlnodes import Source, compose, fail, is_null, read_source, string_list

if TYPE_CHECKING:
    import yaml


def network_entries(source: Source, key: str, node: yaml.Node) -> tuple[str, ...]:
    """`network.allow` / `network.deny`: each entry (and preset name) checked now, at
    its own line."""
    entries = string_list(source, key, node)
    for item, entry in zip(node.value if entries else [], entries, strict=True):
        try:
            expand([entry])
        except NetworkEntryError as e:
            raise fail(source, item, str(e)) from e
    return tuple(entries)


def wide_entries(source: Source) -> list[tuple[int, int, str, str]]:
    """`network.allow` entries that open more than a few hosts (`network.wide_entry`),
    as (line, column, entry, why); the file is known to be valid."""
    import yaml

    root = compose(source)
    if not isinstance(root, yaml.MappingNode):
        return []
    net = {k.value: v for k, v in root.value}.get("network")
    if not isinstance(net, yaml.MappingNode):
        return []
    allow = {k.value: v for k, v in net.value}.get("allow")
    found = []
    for item in allow.value if isinstance(allow, yaml.SequenceNode) else []:
        for entry in expand([item.value]):
            why = wide_entry(entry)
            if why is not None:
                mark = item.start_mark
                found.append((mark.line + 1, mark.column + 1, item.value, why))
    return found


def add_allowed_host(files: PolicyFiles, entry: str) -> bool:
    """Append `entry` to `network.allow` in the user's config (created when missing),
    keeping every comment and line; False when it is there already. Refuses
    (StoreError) a file whose shape it cannot extend by inserting lines, a symlink, or
    a result that does not read back as valid settings."""
    from .settings import config_layer
    from .store import locked, write_atomically

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
    import json

    import yaml

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
