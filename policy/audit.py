"""`audit`: what is wrong, dead or dangerous in rule and config files (SPEC §6).

Every finding has a stable id (the SARIF rule id), a level, a position, a message and a
fix hint, all from the message table. Reads the files it is given, and the user's own
config to judge a committed one as the loader does; spawns nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from swifty_sandbox.messages import t

from .analysis import analyse
from .blacklist import check
from .commands import INTERPRETERS
from .errors import PolicyFileError
from .files import CONFIG_FILE, PolicyFiles
from .netconfig import wide_entries
from .programs import builtin_table
from .rulefiles import names_outside, parse_rules
from .rules import Rule
from .settings import config_layer, user_settings
from .types import Effect, Request, Scope, Tool
from .yamlnodes import Source, read_source

ERROR, WARNING, NOTE = "error", "warning", "note"

# id → default level. The order is the SARIF rules order.
FINDINGS: dict[str, str] = {
    "yaml-syntax": ERROR,
    "schema": ERROR,
    "unknown-tool": ERROR,
    "malformed-rule": ERROR,
    "invalid-glob": ERROR,
    "shadowed": WARNING,
    "duplicate": WARNING,
    "blacklisted": WARNING,
    "risky-grant": WARNING,
    "protected-lift": WARNING,
    "project-loosens": WARNING,
    "hidden-tracked": WARNING,  # found by the CLI: it needs the compiled sandbox
    "risky-network": WARNING,
}

_NETWORK = frozenset({"curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "rsync",
                      "ftp", "telnet", "socat", "aria2c", "http", "xh"})
_PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec", "runuser"})
# Interpreters, and what runs any program or text given to it.
_RUNS_ANYTHING = frozenset({*INTERPRETERS, "eval", "exec", "env", "xargs", "npx", "source", "."})


@dataclass(frozen=True, slots=True)
class Finding:
    id: str
    level: str
    file: str
    line: int
    column: int
    message: str
    hint: str

    def as_json(self) -> dict[str, object]:
        return {"id": self.id, "level": self.level, "file": self.file, "line": self.line,
                "column": self.column, "message": self.message, "hint": self.hint}


def finding(id_: str, file: str, line: int, column: int, level: str | None = None,
            **params: object) -> Finding:
    return Finding(id_, level or FINDINGS[id_], file, line, column,
                   t(f"audit.{id_}", **params), t(f"audit.{id_}.hint", **params))


def from_error(e: PolicyFileError) -> Finding:
    """A file error as a finding: its kind is the finding id."""
    return Finding(e.kind, ERROR, e.file, e.line, e.column, e.message,
                   t(f"audit.{e.kind}.hint"))


def default_paths(project: Path, home: Path) -> list[Path]:
    """The policy files that exist, with the local file a repository may have shipped."""
    files = PolicyFiles(project, home)
    candidates = [files.rules(Scope.PROJECT), files.config(Scope.PROJECT),
                  files.rules(Scope.LOCAL), files.stray_local,
                  files.rules(Scope.USER), files.config(Scope.USER)]
    return [p for p in dict.fromkeys(candidates) if p.exists()]


def audit(paths: Iterable[Path], project: Path, home: Path) -> list[Finding]:
    """Findings for each file, in file order. Raises `PolicyFileError` only for a file
    that cannot be read at all."""
    found: list[Finding] = []
    files = PolicyFiles(project, home)
    for path in paths:
        source = read_source(path)
        if source is None:
            raise PolicyFileError(str(path), 1, 1, t("file.unreadable", error="no such file"))
        if path.name == CONFIG_FILE or path.name.endswith("config.yaml"):
            found += _audit_config(source, path, files)
            continue
        scope = files.scope_of(path)
        if path.name.endswith(".local.yaml") and scope is not Scope.LOCAL:
            found.append(Finding("project-loosens", WARNING, source.name, 1, 1, t(
                "rules.local_in_project", file=path, path=files.rules(Scope.LOCAL)),
                t("audit.project-loosens.hint")))
        found += audit_rules(source, scope, project, home)
    return found


def _audit_config(source: Source, path: Path, files: PolicyFiles) -> list[Finding]:
    # Judged as the loader judges it: against the user's own settings.
    committed = files.is_committed(path)
    try:
        _, warnings = config_layer(source, files, committed=committed,
                                   user=user_settings(files) if committed else None)
    except PolicyFileError as e:
        return [from_error(e)]

    return [*(Finding("project-loosens", WARNING, source.name, 1, 1, w,
                      t("audit.project-loosens.hint")) for w in warnings),
            # A committed file's wide entry is ignored (project-loosens) unless the
            # user's own allows it, where it is flagged.
            *(finding("risky-network", source.name, line, column, entry=entry, why=why)
              for line, column, entry, why in ([] if committed else wide_entries(source)))]


def audit_rules(source: Source, scope: Scope, project: Path, home: Path) -> list[Finding]:
    errors: list[PolicyFileError] = []
    try:
        rules = parse_rules(source, project, home, on_error=errors.append)
    except PolicyFileError as e:  # the file as a whole: YAML syntax, not a list
        errors.append(e)
        rules = ()
    found = [from_error(e) for e in errors]
    found += _dead_rules(rules)
    samples = _protected_samples(project, home)
    for rule in rules:
        found += _risks(rule, scope, project, samples)
        if scope is Scope.PROJECT and names_outside(rule, project):
            found.append(Finding("project-loosens", WARNING, rule.file, rule.line, rule.column,
                                 t("rules.project_outside", file=rule.file, line=rule.line,
                                   rule=rule.text), t("audit.project-loosens.hint")))
    return sorted(found, key=lambda f: (f.line, f.column, f.id))


# -- dead rules --------------------------------------------------------------------------

def covers(later: Rule, earlier: Rule) -> bool:
    """Whether `later` matches every request `earlier` matches (then, last match
    winning, `earlier` never decides anything)."""
    if later.tool is not None and later.tool is not earlier.tool:
        return False
    if later.matches_everything:
        return True
    if earlier.bash is not None and later.bash is not None:
        text = earlier.bash.text
        text = text[:-2] + " *" if text.endswith(":*") else text
        # Each `*` of `earlier` stands for any text: a character no literal of `later`
        # can match stands in for it, so only a `*` of `later` covers it (`git *`
        # covers `git push *`; `ls \*` does not cover `ls *`). A trailing ` *` also
        # matches no arguments at all: `later` must match that form too.
        probe = text.replace("\\*", "\x01").replace("*", "\x00").replace("\x01", "*")
        forms = [probe, probe.removesuffix(" \x00")] if probe.endswith(" \x00") else [probe]
        return all(later.bash.matches(form) for form in forms)
    if earlier.path is not None and later.path is not None:
        return later.path.matches("/" + earlier.path.anchored.lstrip("/"))
    return False


def _bucket(rule: Rule) -> tuple[object, str] | None:
    """Where a rule's possible coverers live: rules of its tool whose pattern starts
    with the same first word. None for rules that may cover anything of their tool."""
    if rule.matches_everything:
        return None
    if rule.bash is not None:
        first = rule.bash.text.split(" ", 1)[0]
        return None if "*" in first else (rule.tool, first.removesuffix(":"))
    return (rule.tool, "")  # path rules: one bucket per tool


def shadowing(rules: tuple[Rule, ...]) -> dict[int, Rule]:
    """index of a rule → the first later rule of the same file that covers it.

    Only rules that could cover are compared (same tool, same first word, or a rule
    whose first word is a glob): a file of 100 rules is not 5,000 comparisons."""
    out: dict[int, Rule] = {}
    buckets: dict[tuple[object, str], list[tuple[int, Rule]]] = {}
    wide: list[tuple[int, Rule]] = []  # later rules that may cover anything of a tool
    for i in range(len(rules) - 1, -1, -1):
        rule = rules[i]
        key = _bucket(rule)
        candidates = [*wide, *(buckets.get(key, []) if key is not None else
                                (c for group in buckets.values() for c in group))]
        covering = [j for j, later in candidates if covers(later, rule)]
        if covering:
            out[i] = rules[min(covering)]
        (wide if key is None else buckets.setdefault(key, [])).append((i, rule))
    return out


@functools.lru_cache(maxsize=4096)
def _blacklisted(command: str) -> bool:
    return check(list(analyse(Request.bash(command)).invocations), "/home/u") is not None


def _dead_rules(rules: tuple[Rule, ...]) -> list[Finding]:
    found = []
    seen: dict[tuple[str, Effect], Rule] = {}
    for rule in rules:
        key = (rule.text, rule.effect)
        if key in seen:
            first = seen[key]
            found.append(finding("duplicate", rule.file, rule.line, rule.column,
                                 rule=rule.text, first=first.line))
        seen.setdefault(key, rule)
    duplicates = {(f.line, f.column) for f in found}
    for i, later in shadowing(rules).items():
        rule = rules[i]
        if later.text == rule.text and (later.line, later.column) in duplicates:
            continue  # reported once, as the duplicate
        found.append(finding("shadowed", rule.file, rule.line, rule.column, rule=rule.text,
                             by=later.text, line_by=later.line))
    for rule in rules:
        if rule.effect is Effect.ALLOW and rule.bash is not None:
            command = rule.bash.text.removesuffix(":*").removesuffix(" *").rstrip("*").strip()
            if command and _blacklisted(command):
                found.append(finding("blacklisted", rule.file, rule.line, rule.column,
                                     rule=rule.text))
    return found


# -- risky grants ------------------------------------------------------------------------

def _protected_samples(project: Path, home: Path) -> tuple[str, ...]:
    """Paths every protected-path list covers: an allow matching one lifts nothing."""
    files = PolicyFiles(project, home)
    return tuple(str(p) for p in (
        files.rules(Scope.PROJECT), files.config(Scope.PROJECT),
        project / ".git" / "hooks" / "pre-commit", project / ".git" / "config",
        home / ".bashrc", files.rules(Scope.USER)))


def _runs_code(words: list[str]) -> bool:
    """`Bash(make *)`, `Bash(npm run *)`, `Bash(npm *)`: the program's ordinary
    behaviour (per `programs.yaml`) already runs code the project or its packages hold."""
    program = builtin_table().programs.get(words[0].rsplit("/", 1)[-1])
    runs_code = program.runs_code if program is not None else False
    if isinstance(runs_code, bool):
        return runs_code
    sub = words[1] if len(words) > 1 else "*"
    return "*" in sub or sub in runs_code


def _risks(rule: Rule, scope: Scope, project: Path, samples: tuple[str, ...]
           ) -> list[Finding]:
    if rule.effect is not Effect.ALLOW:
        return []
    level = ERROR if scope is Scope.PROJECT else WARNING
    where = (rule.file, rule.line, rule.column)
    if rule.tool is None or (rule.tool is Tool.BASH and rule.bash is None):
        return [finding("risky-grant", *where, level, rule=rule.text,
                        why=t("audit.why.everything"))]
    out: list[Finding] = []
    if rule.bash is not None:
        words = rule.bash.text.replace(":*", " *").split()
        program = words[0].rsplit("/", 1)[-1] if words else ""
        wide = "*" in rule.bash.text
        why = (t("audit.why.network") if program in _NETWORK else
               t("audit.why.privilege") if program in _PRIVILEGE else
               t("audit.why.interpreter") if program in _RUNS_ANYTHING and (
                   wide or "-c" in words) else
               t("audit.why.runs_code", program=program) if wide and _runs_code(words)
               else None)
        if why is not None:
            # A build or test runner is a common, deliberate grant: a warning everywhere.
            runner = why == t("audit.why.runs_code", program=program)
            out.append(finding("risky-grant", *where, WARNING if runner else level,
                               rule=rule.text, why=why))
    if rule.tool in (Tool.WRITE_FILE, Tool.EDIT_FILE) and rule.path is not None:
        pattern = rule.path
        if pattern.anchored.startswith("/") and not pattern.anchored.startswith(
                str(project).rstrip("/") + "/"):
            out.append(finding("risky-grant", *where, WARNING, rule=rule.text,
                               why=t("audit.why.outside")))
        hit = next((s for s in samples if pattern.matches(s)), None)
        if hit is not None:
            out.append(finding("protected-lift", *where, level, rule=rule.text, path=hit))
    return out
