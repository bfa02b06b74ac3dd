"""The three rule layers: each file's rules, with file:line:col on every error.

Fail closed (SPEC §2): a missing file is empty; an unreadable or invalid one raises
`PolicyFileError` with file:line:col — never ignored, never read as "allow".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from .errors import PolicyFileError
from .files import PolicyFiles
from .paths import is_within
from .rules import Rule, RuleSyntaxError, fixed_prefix, parse_rule
from .types import Effect, Scope, Tool
from .yamlnodes import (
    Source,
    choice,
    compose,
    describe,
    fail,
    is_null,
    mapping,
    read_source,
    string,
)

if TYPE_CHECKING:
    import yaml

_EFFECTS = tuple(e.value for e in Effect)


@dataclass(frozen=True, slots=True)
class RuleFile:
    """One layer's rules, plus per-tool views in reverse order (last match first)."""

    scope: Scope
    path: Path
    rules: tuple[Rule, ...]
    reversed_by_tool: Mapping[Tool, tuple[Rule, ...]] = field(repr=False, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, scope: Scope, path: Path, rules: tuple[Rule, ...],
           warnings: tuple[str, ...] = ()) -> RuleFile:
        by_tool = {tool: tuple(r for r in reversed(rules) if r.applies_to(tool)) for tool in Tool}
        return cls(scope, path, rules, by_tool, warnings)


def parse_rules(source: Source, project: Path, home: Path,
                on_error: Callable[[PolicyFileError], None] | None = None) -> tuple[Rule, ...]:
    """The rules of one file's text. Raises `PolicyFileError` on the first problem, or,
    given `on_error`, reports each bad item to it and goes on (the audit's way)."""
    import yaml

    def report(error: PolicyFileError) -> None:
        if on_error is None:
            raise error
        on_error(error)

    root = compose(source)
    if root is None or is_null(root):
        return ()
    if not isinstance(root, yaml.SequenceNode):
        raise fail(source, root, t("file.not_list", found=describe(root)))
    rules: list[Rule] = []
    for item in root.value:
        try:
            rules.append(_parse_item(source, item, project, home))
        except PolicyFileError as e:
            report(e)
    return tuple(rules)


def _parse_item(source: Source, item: yaml.Node, project: Path, home: Path) -> Rule:
    fields = mapping(source, item, ("rule", "effect"))
    for key in ("rule", "effect"):
        if key not in fields:
            raise fail(source, item, t("file.missing_key", key=key))
    effect = Effect(choice(source, "effect", fields["effect"][1], _EFFECTS))
    rule_node = fields["rule"][1]
    text = string(source, "rule", rule_node)
    mark = rule_node.start_mark
    try:
        return parse_rule(text, effect, file=source.name, line=mark.line + 1,
                          column=mark.column + 1, project=project, home=home)
    except RuleSyntaxError as e:
        raise fail(source, rule_node, str(e), e.kind) from e


def names_outside(rule: Rule, project: Path) -> bool:
    """Whether a path rule can name anything outside the project, after resolving the
    symlinks on its fixed leading directories (`..` counts as outside)."""
    return rule.path is not None and anchored_outside(rule.path.anchored, project)


def anchored_outside(anchored: str, project: Path) -> bool:
    """Whether an anchored path pattern can name anything outside the project."""
    if "/" not in anchored.rstrip("/"):
        return False  # a basename at any depth of the project
    if ".." in anchored.split("/"):
        return True
    prefix, _ = fixed_prefix(anchored)
    return not is_within(os.path.realpath(prefix), str(project))


# What a file's text parses to is a function of that text, its name and the project and
# home it is anchored at, and of nothing else (no file system, no environment, no
# language: only a success is kept, an error is raised again in the caller's words).
# So it is kept per process by those four strings: a long-lived `serve`, and a warm
# worker whose server parsed the same text (`cli/warm.py`: each worker tells its server
# what it parsed), take the rules without parsing them. The file is read on every load
# all the same; an edited one is other text, parsed anew. Nothing is trusted: a key is
# the whole input, whoever named it.
_PARSED: dict[tuple[str, str, str, str], tuple[Rule, ...]] = {}
_FRESH: list[tuple[str, str, str, str]] = []  # parsed in this process since it began
_KEPT_FILES = 64  # a `serve` over many projects and edits
_KEPT_CHARS = 4 << 20


def parsed_rules(source: Source, project: Path, home: Path) -> tuple[Rule, ...]:
    """`parse_rules(source, project, home)`, once per process for the same four
    strings."""
    key = (source.name, source.text, str(project), str(home))
    found = _PARSED.get(key)
    if found is None:
        found = parse_rules(source, project, home)
        _keep(key, found)
        _FRESH.append(key)
    return found


def _keep(key: tuple[str, str, str, str], rules: tuple[Rule, ...]) -> None:
    if len(_PARSED) >= _KEPT_FILES or sum(len(k[1]) for k in _PARSED) + len(key[1]) \
            > _KEPT_CHARS:
        _PARSED.clear()
    _PARSED[key] = rules


def fresh_sources() -> list[tuple[str, str, str, str]]:
    """The (name, text, project, home) of what this process parsed itself (a warm
    worker: what its server did not have), for the server to parse too."""
    return list(_FRESH)


def learn(keys: object) -> int:
    """Parse each (name, text, project, home) not kept yet (the warm server, from its
    workers' reports); how many were new. Anything else is skipped: a report can only
    make us parse text, and the result depends on that text alone."""
    new = 0
    if not isinstance(keys, list):
        return 0
    for key in keys[:_KEPT_FILES]:
        if not (isinstance(key, list) and len(key) == 4
                and all(isinstance(k, str) for k in key)):
            continue
        name, text, project, home = key
        if (name, text, project, home) in _PARSED or len(text) > _KEPT_CHARS // 4:
            continue
        try:
            _keep((name, text, project, home),
                  parse_rules(Source(name, text), Path(project), Path(home)))
            new += 1
        except Exception:  # a text that does not parse is not kept (nor fatal here)
            continue
    return new


def load_rule_file(scope: Scope, files: PolicyFiles) -> RuleFile:
    path = files.rules(scope)
    project, home = files.project, files.home
    source = read_source(path)
    rules = parsed_rules(source, project, home) if source else ()
    warnings: list[str] = []
    if files.is_committed(path):
        # The committed file comes from whoever wrote the repository: its rules speak
        # only of the project. A path outside it (`~/.local/bin/*`, or a link in the repo
        # that leads to home) is ignored, allow and deny alike — a deny there would make
        # the sandbox mount, and so touch, paths the author chose outside the project.
        kept = []
        for rule in rules:
            if names_outside(rule, project):
                warnings.append(t("rules.project_outside", file=rule.file, line=rule.line,
                                  rule=rule.text))
            else:
                kept.append(rule)
        rules = tuple(kept)
    return RuleFile.of(scope, path, rules, tuple(warnings))


def load_rule_layers(files: PolicyFiles) -> tuple[RuleFile, ...]:
    """The three layers, highest priority first: local, project, user."""
    layers = [load_rule_file(scope, files) for scope in (Scope.LOCAL, Scope.PROJECT, Scope.USER)]
    stray = files.stray_local
    if files.is_committed(stray) and os.path.lexists(stray):
        local = layers[0]
        layers[0] = RuleFile.of(local.scope, local.path, local.rules, (
            *local.warnings, t("rules.local_in_project", file=stray,
                               path=files.rules(Scope.LOCAL))))
    return tuple(layers)
