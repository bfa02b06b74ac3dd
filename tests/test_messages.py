"""The message table: English and Chinese agree; every key a call site uses exists; a key
lives in the module of its first word; importing it is cheap; language selection
follows SPEC §7."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox import parts
from swifty_sandbox.messages import DOMAINS, MESSAGES, parameters, t
from swifty_sandbox.policy.audit import ERROR, FINDINGS
from swifty_sandbox.policy.blacklist import CATEGORIES
from swifty_sandbox.policy.programs import EFFECTS
from swifty_sandbox.policy.types import Category, Effect
from swifty_sandbox.sandbox.agents import refusals


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_both_languages_have_the_same_parameters(key: str) -> None:
    english, chinese = MESSAGES[key]
    assert english.strip() and chinese.strip()
    assert parameters(english) == parameters(chinese), key
    assert english != chinese


def test_every_first_word_lives_in_one_domain() -> None:
    """`net.*` keys in `network`, and nowhere else: where a new key goes is never a
    question, and two branches adding keys meet in one module."""
    homes: dict[str, set[str]] = {}
    for domain in DOMAINS:
        for key in domain.MESSAGES:
            homes.setdefault(key.split(".")[0], set()).add(domain.__name__)
    assert {word: d for word, d in homes.items() if len(d) > 1} == {}
    assert sum(len(domain.MESSAGES) for domain in DOMAINS) == len(MESSAGES)  # none twice
    modules = {name for name in parts.modules() if name.startswith("swifty_sandbox.messages.")}
    assert modules == {domain.__name__ for domain in DOMAINS}  # none left out of the table


def _calls(name: str) -> Iterator[tuple[str, ast.Call]]:
    """Every call to `name` in the package's code outside the table, with its place."""
    root = Path(parts.packages()[parts.ROOT][0]).parent
    for module, path in sorted(parts.modules().items()):
        if module.startswith("swifty_sandbox.messages"):
            continue
        for node in ast.walk(ast.parse(Path(path).read_text(), path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute) \
                    and (node.func.id if isinstance(node.func, ast.Name)
                         else node.func.attr) == name:
                place = Path(path).relative_to(root) if Path(path).is_relative_to(root) \
                    else Path(path)
                yield f"{place}:{node.lineno}", node


def _constants(function: str, keyword: str) -> set[str]:
    """The literal values passed to `function` as `keyword`, and its default there."""
    found: set[str] = set()
    for _, call in _calls(function):
        found |= {str(k.value.value) for k in call.keywords
                  if k.arg == keyword and isinstance(k.value, ast.Constant)}
    for path in parts.modules().values():
        for node in ast.walk(ast.parse(Path(path).read_text(), path)):
            if isinstance(node, ast.FunctionDef) and node.name == function:
                args = node.args
                for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                    if arg.arg == keyword and isinstance(default, ast.Constant):
                        found.add(str(default.value))
    return found


def _literal_first(function: str) -> set[str]:
    """The literal first arguments of the calls to `function`."""
    return {str(call.args[0].value) for _, call in _calls(function)
            if call.args and isinstance(call.args[0], ast.Constant)}


def _kinds_of_use() -> set[str]:
    """What `Use.does` can be: the program table's effects, and the kinds the code
    makes itself (`Use("computed", …)`)."""
    return {*EFFECTS, *_literal_first("Use")}


def _words() -> Iterable[str]:
    from swifty_sandbox.policy.engine import _EFFECT_WORDS

    assert set(_EFFECT_WORDS) == set(Effect)
    return _EFFECT_WORDS.values()


# Each call site that builds its key at run time (`t(f"audit.{id_}")`): every key it can
# build, from the closed set the part comes from. A new such site fails
# `test_every_key_used_exists` until it is listed here with its set.
DYNAMIC: dict[str, Callable[[], Iterable[str]]] = {
    "f'policy.effective.{key}'": lambda: (
        f"policy.effective.{key}" for key in _literal_first("paths")),
    "f'audit.{id_}'": lambda: (f"audit.{id_}" for id_ in _literal_first("finding")),
    "f'audit.{id_}.hint'": lambda: (f"audit.{id_}.hint" for id_ in FINDINGS),  # SARIF: all
    "f'audit.{e.kind}.hint'": lambda: (f"audit.{id_}.hint" for id_, level in FINDINGS.items()
                                       if level == ERROR),  # a file error's kind
    "f'blacklist.{category}'": lambda: (f"blacklist.{c}" for c in CATEGORIES),
    "_EFFECT_WORDS[effect]": _words,
    "f'word.{category.value}'": lambda: (f"word.{c.value}" for c in Category),
    "f'does.{use.does}'": lambda: (f"does.{kind}" for kind in _kinds_of_use()),
    "what": lambda: _constants("mapping", "what") | _constants("dotted_nodes", "what"),
    "f'violation.op.{op}'": lambda: (f"violation.op.{op}" for op in refusals.OPS),
    "f'violation.rule.{op}'": lambda: (f"violation.rule.{op}" for op in refusals.LIMITS),
    "f'violation.fix.{op}'": lambda: (f"violation.fix.{op}" for op in refusals.LIMITS),
}


def _keys(node: ast.expr) -> Iterable[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = _keys(node.body), _keys(node.orelse)
        return None if body is None or orelse is None else [*body, *orelse]
    built = DYNAMIC.get(ast.unparse(node))
    return None if built is None else list(built())


def test_every_key_used_exists() -> None:
    """Each literal key, and each key a dynamic site can build over its closed set: a
    typo or a renamed key would otherwise be a KeyError on the one path that needs it
    (often an error path no other test walks)."""
    missing, unknown_sites, dynamic_seen = [], [], set()
    for place, call in _calls("t"):
        if not call.args:
            continue
        keys = _keys(call.args[0])
        if keys is None:
            unknown_sites.append(f"{place}: {ast.unparse(call.args[0])}")
            continue
        if not isinstance(call.args[0], ast.Constant):
            dynamic_seen.add(ast.unparse(call.args[0]))
            assert keys, place  # a set that came out empty proves nothing
        missing += [f"{place}: {key}" for key in keys if key not in MESSAGES]
    assert unknown_sites == []
    assert missing == []
    assert dynamic_seen >= set(DYNAMIC)  # no stale entry hides a site that moved


def test_the_import_is_cheap() -> None:
    """The table and the exit statuses load no engine, parser or YAML: the console
    script's fast path reports with them (`cli/entry.py`)."""
    code = ("import sys, swifty_sandbox.policy.errors, swifty_sandbox.messages; "
            "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                text=True).stdout.split())
    ours = {m for m in loaded if m.startswith("swifty_sandbox")}
    assert ours - {"swifty_sandbox", "swifty_sandbox.policy", "swifty_sandbox.policy.errors",
                   "swifty_sandbox.messages"} == {domain.__name__ for domain in DOMAINS}
    assert not loaded & {"yaml", "pathspec", "tree_sitter", "bashlex", "click"}


@pytest.mark.parametrize(("env", "chinese"), [
    ({}, False),
    ({"LANG": "zh_CN.UTF-8"}, True),
    ({"LANG": "en_US.UTF-8", "LC_ALL": "zh_TW.UTF-8"}, True),
    ({"LC_MESSAGES": "zh_CN", "LANG": "en_US"}, True),
    ({"LC_ALL": "C", "LANG": "zh_CN"}, False),
    ({"SWIFTY_LANG": "en", "LANG": "zh_CN.UTF-8"}, False),
    ({"SWIFTY_LANG": "zh"}, True),
])
def test_language_selection(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                            chinese: bool) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert (t("word.denied") == "已拒绝") is chinese
