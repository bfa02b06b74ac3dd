"""A reader and evaluator of the SBPL subset our seatbelt profiles use, for the tests.

`read` turns profile text into nested lists: symbols are `str`, strings are
`("str", text)`, regex literals (`#"…"`) are `("re", text)`. It refuses anything it does
not know (an unbalanced parenthesis, a stray quote, a character outside every token),
so "it parses" means "it is well formed". `matches` decides a filter for one path the
way the sandbox would (subpath, literal, regex, require-all, require-not).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeAlias

Node: TypeAlias = "str | tuple[str, str] | list[Node]"

_TOKEN = re.compile(r'\s+|;[^\n]*|\(|\)|#"[^"\\\n]*"|"(?:[^"\\\n]|\\.)*"|[^\s()";#]+')


class Malformed(ValueError):
    pass


def read(text: str) -> list[Node]:
    """Every top-level form of `text`."""
    stack: list[list[Node]] = [[]]
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise Malformed(f"unexpected {text[pos:pos + 20]!r} at {pos}")
        token, pos = m.group(), m.end()
        if token.isspace() or token.startswith(";"):
            continue
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise Malformed(f"unbalanced ) at {pos}")
            done = stack.pop()
            stack[-1].append(done)
        elif token.startswith('#"'):
            stack[-1].append(("re", token[2:-1]))
        elif token.startswith('"'):
            stack[-1].append(("str", re.sub(r"\\(.)", r"\1", token[1:-1])))
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise Malformed("unbalanced (")
    return stack[0]


def shape(node: Node) -> Node:
    """The tree with every string and regex blanked: what a path could change."""
    if isinstance(node, tuple):
        return (node[0], "")
    if isinstance(node, list):
        return [shape(n) for n in node]
    return node


def atoms(node: Node, kind: str) -> list[str]:
    if isinstance(node, tuple):
        return [node[1]] if node[0] == kind else []
    if isinstance(node, list):
        return [a for n in node for a in atoms(n, kind)]
    return []


def _value(node: Node, params: Mapping[str, str]) -> str:
    if isinstance(node, list) and node and node[0] == "param":
        name = node[1]
        assert isinstance(name, tuple)
        return params[name[1]]
    assert isinstance(node, tuple) and node[0] == "str", node
    return node[1]


def matches(node: Node, params: Mapping[str, str], path: str,
            vnode: str = "REGULAR-FILE") -> bool:
    assert isinstance(node, list) and isinstance(node[0], str), node
    head, args = node[0], node[1:]
    if head == "vnode-type":
        return args[0] == vnode
    if head == "extension":
        return False  # a sandbox extension (a pty opened inside): none here
    if head == "subpath":
        root = _value(args[0], params)
        return path == root or path.startswith(root.rstrip("/") + "/")
    if head == "literal":
        return path == _value(args[0], params)
    if head == "regex":
        pattern = args[0]
        assert isinstance(pattern, tuple)
        return re.search(pattern[1], path) is not None
    if head == "require-all":
        return all(matches(a, params, path, vnode) for a in args)
    if head == "require-not":
        return not matches(args[0], params, path, vnode)
    raise AssertionError(f"unknown filter {head}")


def rules(tree: list[Node], action: str, operations: str) -> list[list[Node]]:
    """The filters of every `(action operations… filters…)` form with exactly these
    operations."""
    ops = operations.split()
    out: list[list[Node]] = []
    for form in tree:
        if isinstance(form, list) and form[:1] == [action] and \
                [o for o in form[1:] if isinstance(o, str)] == ops:
            out.append([f for f in form[1:] if isinstance(f, list)])
    return out


def allowed(tree: list[Node], params: Mapping[str, str], operation: str, path: str,
            vnode: str = "REGULAR-FILE") -> bool:
    """The sandbox's verdict on one file operation: the last matching rule wins."""
    verdict = False
    for form in tree:
        if not isinstance(form, list) or form[0] not in ("allow", "deny"):
            continue
        ops = [o for o in form[1:] if isinstance(o, str)]
        filters = [f for f in form[1:] if isinstance(f, list)]
        if not any(o == "default" or o == operation or
                   (o.endswith("*") and operation.startswith(o[:-1])) for o in ops):
            continue
        if filters and not any(matches(f, params, path, vnode) for f in filters):
            continue
        verdict = form[0] == "allow"
    return verdict
