"""Reading YAML with positions: every value keeps the file:line:col it came from.

PyYAML's composer gives nodes with marks; these helpers check shapes and raise
`PolicyFileError` naming the exact place, so no bad file is ever half-used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import PolicyFileError
from .messages import t

if TYPE_CHECKING:
    import yaml

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"


@dataclass(frozen=True, slots=True)
class Source:
    """A file's display name and text."""

    name: str
    text: str


def read_source(path: Path) -> Source | None:
    """The file's text; None when it does not exist (a missing file is empty)."""
    try:
        return Source(str(path), path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyFileError(str(path), 1, 1, t("file.unreadable", error=e)) from e


def compose(source: Source) -> yaml.Node | None:
    """The document's root node (None for an empty file); YAML errors carry a position."""
    import yaml

    # libyaml's loader keeps the marks and composes about 10x faster (start-up time).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.compose(source.text, Loader=loader)
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
        return f"the text `{node.value}`"
    return f"`{node.value}`"


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
            raise fail(source, key_node, t("file.unknown_key", key=key,
                                           expected=", ".join(allowed)))
        if key in out:
            raise fail(source, key_node, t("file.duplicate_key", key=key))
        out[key] = (key_node, value_node)
    return out


def string(source: Source, key: str, node: yaml.Node) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
        raise fail(source, node, t("file.not_string", key=key, found=describe(node)))
    return str(node.value)


def choice(source: Source, key: str, node: yaml.Node, choices: tuple[str, ...]) -> str:
    value = string(source, key, node)
    if value not in choices:
        raise fail(source, node, t("file.bad_choice", key=key, value=value,
                                   expected=" | ".join(choices)))
    return value


def string_list(source: Source, key: str, node: yaml.Node) -> list[str]:
    import yaml

    if is_null(node):
        return []
    if not isinstance(node, yaml.SequenceNode):
        raise fail(source, node, t("file.not_string_list", key=key, found=describe(node)))
    return [string(source, key, item) for item in node.value]
