"""Reading YAML with positions: every value keeps the file:line:col it came from.

PyYAML's composer gives nodes with marks; these helpers check shapes and raise
`PolicyFileError` naming the exact place, so no bad file is ever half-used.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from .errors import PolicyFileError

if TYPE_CHECKING:
    import yaml

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"


@dataclass(frozen=True, slots=True)
class Source:
    """A file's display name and text."""

    name: str
    text: str


# Policy files are a few kilobytes; a cap keeps a hostile one from costing more than
# a fraction of a second and a few megabytes (256 KiB hold some 5,000 rules).
MAX_FILE_BYTES = 256 * 1024
SHOWN_CHARS = 80  # the longest value echoed into a message


class NotRegular(Exception):
    """Not a regular file (a FIFO, a device, a directory)."""


class TooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def read_regular(path: str | Path, limit: int) -> bytes | None:
    """A regular file's bytes, at most `limit`; None when it does not exist.

    Checked on the open descriptor (a FIFO, device or `/dev/zero` symlink is refused,
    never waited on or read forever); `O_NONBLOCK` keeps the open itself from blocking
    on a FIFO. Raises `NotRegular`, `TooLarge`, or OSError/ValueError (a NUL in the
    path) when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular()
        if info.st_size > limit:
            raise TooLarge(info.st_size)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # the file may grow after fstat
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise TooLarge(size)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_source(path: Path) -> Source | None:
    """The file's text; None when it does not exist (a missing file is empty).

    The one reader of every policy file (rules, config, profiles), on `read_regular`:
    only a regular file is read; over `MAX_FILE_BYTES` is an error, as is text that is
    not UTF-8 (at the line it occurs)."""
    name = str(path)
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except NotRegular as e:
        raise PolicyFileError(name, 1, 1, t("file.not_regular")) from e
    except TooLarge as e:
        raise PolicyFileError(name, 1, 1, t("file.too_large", size=e.size,
                                            limit=MAX_FILE_BYTES)) from e
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise PolicyFileError(name, 1, 1, t("file.unreadable", error=_os_reason(e))) from e
    if data is None:
        return None
    try:
        return Source(name, data.decode("utf-8"))
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
        raise PolicyFileError(name, line, column,
                              t("file.not_utf8", byte=f"0x{data[e.start]:02x}")) from e


def _os_reason(e: Exception) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else str(e)


def shown(value: object) -> str:
    """A value as echoed in a message: at most `SHOWN_CHARS` characters, one line."""
    text = str(value)
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS - 1] + "…"
    return text.replace("\n", "\\n")


def compose(source: Source) -> yaml.Node | None:
    """The document's root node (None for an empty file); YAML errors carry a position."""
    import yaml

    # libyaml's loader keeps the marks and composes about 10x faster (start-up time).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.compose(source.text, Loader=loader)
    except yaml.reader.ReaderError as e:  # a character YAML refuses: at its own line
        text = source.text
        at = min(max(e.position, 0), len(text))
        line, col = text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
        character = e.character  # libyaml gives the code point, PyYAML the character
        point = ord(character) if isinstance(character, str) else int(character)
        code = f"U+{point:04X}"
        raise PolicyFileError(source.name, line, col, t("file.control_char", code=code),
                              "yaml-syntax") from e
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = " ".join(p for p in (e.context, e.problem) if p)
        raise PolicyFileError(source.name, line, col, t("file.yaml", error=problem),
                              "yaml-syntax") from e
    except yaml.YAMLError as e:
        raise PolicyFileError(source.name, 1, 1, t("file.yaml", error=e), "yaml-syntax") from e


def fail(source: Source, node: yaml.Node, message: str, kind: str = "schema"
         ) -> PolicyFileError:
    mark = node.start_mark
    return PolicyFileError(source.name, mark.line + 1, mark.column + 1, message, kind)


def describe(node: yaml.Node) -> str:
    """A short name for what was found, for "expected X, found Y" messages."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node.tag == _NULL:
        return "nothing"
    if node.tag == _STR:
        return f"the text `{shown(node.value)}`"
    return f"`{shown(node.value)}`"


def is_null(node: yaml.Node) -> bool:
    import yaml

    return isinstance(node, yaml.ScalarNode) and node.tag == _NULL


def mapping(
    source: Source, node: yaml.Node, allowed: tuple[str, ...], *, what: str = "file.not_mapping"
) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """Key → (key node, value node); rejects non-mappings, unknown and duplicate keys."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise fail(source, node, t(what, found=describe(node)))
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str) or key not in allowed:
            raise fail(source, key_node, t("file.unknown_key", key=shown(key),
                                           expected=", ".join(allowed)))
        if key in out:
            raise fail(source, key_node, t("file.duplicate_key", key=key))
        out[key] = (key_node, value_node)
    return out


def string(source: Source, key: str, node: yaml.Node) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
        raise fail(source, node, t("file.not_string", key=key, found=describe(node)))
    if "\0" in node.value:  # no path, name or pattern holds one (`"a\0b"` in YAML)
        raise fail(source, node, t("file.nul", key=key))
    return str(node.value)


def choice(source: Source, key: str, node: yaml.Node, choices: tuple[str, ...]) -> str:
    value = string(source, key, node)
    if value not in choices:
        raise fail(source, node, t("file.bad_choice", key=key, value=shown(value),
                                   expected=" | ".join(choices)))
    return value


def string_list(source: Source, key: str, node: yaml.Node) -> list[str]:
    import yaml

    if is_null(node):
        return []
    if not isinstance(node, yaml.SequenceNode):
        raise fail(source, node, t("file.not_string_list", key=key, found=describe(node)))
    return [string(source, key, item) for item in node.value]


def dotted_nodes(source: Source, root: yaml.Node, keys: tuple[str, ...], *,
                 what: str = "file.not_mapping") -> dict[str, yaml.Node]:
    """The value node of each dotted key (`sandbox.env.keep`) present under `root`, in
    the order of `keys`; every mapping on the way is checked once against the keys the
    table allows there (unknown and duplicate keys, not a mapping: `what` at the top)."""
    allowed: dict[str, dict[str, None]] = {}
    for key in keys:
        parts = key.split(".")
        for depth, part in enumerate(parts):
            allowed.setdefault(".".join(parts[:depth]), {})[part] = None
    checked: dict[str, dict[str, tuple[yaml.Node, yaml.Node]]] = {}
    found: dict[str, yaml.Node] = {}
    for key in keys:
        node: yaml.Node | None = root
        parts = key.split(".")
        for depth, part in enumerate(parts):
            prefix = ".".join(parts[:depth])
            if prefix not in checked:
                assert node is not None
                checked[prefix] = mapping(source, node, tuple(allowed[prefix]),
                                          what=what if prefix == "" else "file.not_mapping")
            entry = checked[prefix].get(part)
            node = entry[1] if entry is not None else None
            if node is None:
                break
        if node is not None:
            found[key] = node
    return found
