"""`network:` in config.yaml: reading it (file:line on every bad entry), and the wide
entries `audit` reports. The writer of an "always" host is `store.add_allowed_host`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .network import NetworkEntryError, expand, wide_entry
from .yamlnodes import Source, compose, fail, string_list

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
