"""Variables whose value bash evaluates as code.

Arithmetic (`$((x))`, `((…))`, `let`, `[[ x -eq … ]]`, `declare -i`, offsets and
subscripts) evaluates a variable's value as an expression, and an array subscript in it
runs its `$(…)`: `x='a[$(rm -rf ~)]'; echo $((x))` runs `rm`. So do `${!x}` (indirect)
and `${x@P}` (prompt expansion). The command analysis never sees that code, so a script
where such a context names a variable whose value may hold it — a literal with `[`, `$(`
or a backtick, or a value known only at run time (a substitution, `read`, `mapfile`,
`printf -v`, a loop over one) — is not analysed soundly: `evaluated_code` names the
place, and the script is then never allowed (its other commands still meet the
blacklist and deny rules). Variables the script does not set come from the agent's
environment, not from the command, and are trusted.
"""

from __future__ import annotations

import re
from typing import Any

# A quick look before any walk: no evaluating context, nothing to check.
_MAY_EVALUATE = re.compile(rb"\(\(|\$\[|\$\{[!#]?[A-Za-z_0-9]*[:@\[]|\$\{!|\blet\b|"
                           rb"-(?:eq|ne|lt|le|gt|ge)\b|\b(?:declare|typeset|local)\b")
_NAME = re.compile(r"(?<![-\w])[A-Za-z_]\w*")
_POSITIONAL = re.compile(r"\$\{?([0-9@*])")
_CODE_IN_LITERAL = re.compile(r"[\[`]|\$\(")
# Programs whose output is a plain number whatever their (static) arguments.
_NUMERIC = frozenset({"nproc"})
_READERS = {"read": frozenset("adinNptu"), "mapfile": frozenset("dnOscCu"),
            "readarray": frozenset("dnOscCu"), "getopts": frozenset()}


def evaluated_code(root: Any, source: bytes, depth: int = 0) -> str | None:
    """The text of the first context that evaluates a variable the script may have set
    to code; None when there is none. Positional parameters count as set by the
    command in a nested script (`bash -c '…' _ ARG`) or after `set`."""
    if not _MAY_EVALUATE.search(source):
        return None
    tainted: set[str] = set()
    if depth > 0 or re.search(rb"(?:^|[;&|(\s])set\s", source):
        tainted.update("0123456789@*")
    contexts: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        kind = node.type
        if kind == "variable_assignment":
            _assignment(node, source, tainted)
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            values = node.children_by_field_name("value")
            if variable is not None and any(not _safe_value(v, source) for v in values):
                tainted.add(_text(variable, source))
        elif kind == "command":
            _reader(node, source, tainted)
            if _command_name(node, source) == "let":
                contexts.append(node)
        elif _is_context(node, kind, source):
            contexts.append(node)
    if not tainted:
        return None
    for node in contexts:
        text = _text(node, source)
        if tainted & {*_NAME.findall(text), *_POSITIONAL.findall(text)}:
            return text
    return None


def _is_context(node: Any, kind: str, source: bytes) -> bool:
    """Arithmetic, an integer test, an evaluating expansion, `declare -i`."""
    if kind in ("arithmetic_expansion", "c_style_for_statement"):
        return True
    text = _text(node, source)
    if kind == "compound_statement":
        return text.startswith("((")
    if kind == "test_command":
        return re.search(r"\s-(?:eq|ne|lt|le|gt|ge)\s", text) is not None
    if kind == "expansion":
        return _evaluates(text)
    return kind == "declaration_command" and any(
        c.type == "word" and _text(c, source).startswith("-") and "i" in _text(c, source)
        for c in node.named_children)


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _evaluates(text: str) -> bool:
    """`${!x}` (not `${!x[@]}`, `${!pre*}`), `${x@P}`, `${x:off:len}`, `${a[i]}`."""
    body = text[2:-1]
    if body.startswith("!"):
        return not re.fullmatch(r"![A-Za-z_]\w*(?:\[[@*]\]|[@*])", body)
    name = re.match(r"#?[A-Za-z_]\w*", body)
    rest = body[name.end():] if name else body
    if rest.startswith(("[@]", "[*]")):  # every element: no index evaluated
        rest = rest[3:]
    return rest.startswith(("@P", "[")) or (rest.startswith(":")
                                            and not rest.startswith((":-", ":=", ":+", ":?")))


def _assignment(node: Any, source: bytes, tainted: set[str]) -> None:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name is None:
        return
    target = _text(name, source).split("[", 1)[0]
    if value is not None and not _safe_value(value, source):
        tainted.add(target)


def _safe_value(value: Any, source: bytes) -> bool:
    """A value that cannot hold code for an evaluating context."""
    kind = value.type
    if kind in ("number", "arithmetic_expansion"):
        return True
    if kind == "array":
        return all(_safe_value(v, source) for v in value.named_children)
    if kind in ("word", "raw_string") or (kind == "string" and all(
            c.type == "string_content" for c in value.named_children)):
        return not _CODE_IN_LITERAL.search(_text(value, source))
    if kind == "command_substitution":
        inner = value.named_children
        return len(inner) == 1 and inner[0].type == "command" and \
            _command_name(inner[0], source) in _NUMERIC and len(inner[0].named_children) == 1
    return False


def _command_name(node: Any, source: bytes) -> str | None:
    name = node.child_by_field_name("name")
    return _text(name, source) if name is not None else None


def _reader(node: Any, source: bytes, tainted: set[str]) -> None:
    """`read x`, `mapfile a`, `printf -v x`, `getopts s x`: set at run time."""
    program = _command_name(node, source)
    words = [_text(c, source) for c in node.children_by_field_name("argument")]
    if program == "printf":
        for index, word in enumerate(words[:-1]):
            if word == "-v":
                tainted.add(words[index + 1].split("[", 1)[0])
    elif program in _READERS:
        valued = _READERS[program]
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word.startswith("-") and len(word) > 1:
                skip = word[-1] in valued
            else:
                tainted.add(word.split("[", 1)[0])


def substitutions_in(text: str, limit: int = 16) -> list[str]:
    """The bodies of `$(…)` and backticks anywhere in `text`, quotes or not: what an
    evaluated value may run, for the blacklist and deny rules to see."""
    bodies: list[str] = [m.group(1) for m in re.finditer(r"`([^`]*)`", text)]
    start = text.find("$(")
    while start >= 0 and len(bodies) < limit:
        depth, index = 0, start + 1
        while index < len(text):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                break
            index += 1
        body = text[start + 2:index]
        if body and not body.startswith("("):  # `$((…))` is arithmetic
            bodies.append(body)
        start = text.find("$(", start + 2)
    return bodies[:limit]
