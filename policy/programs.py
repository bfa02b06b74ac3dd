"""What programs can do beyond their ordinary behaviour (`profiles/programs.yaml`).

An allow rule grants a program's ordinary behaviour: `features()` lists what an
invocation uses beyond it (an option that runs code, a subcommand that reaches the
network, a config key, an environment variable), so the engine can refuse to let
`Bash(git *)` cover `git -c core.pager=sh log`. The same option grammar gives deny and
ask rules more spellings of one command: `/usr/bin/git -C . push` is also `git push`,
`rm -r -f x` is also `rm -rf x` (`spellings()`).

The table is data, read once (libyaml) and extended by the user's
`~/.swifty/programs.yaml`; every malformed entry is an error naming file:line:col.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swifty_sandbox import profiles
from swifty_sandbox.messages import t

from . import cachefile
from .commands import name as program_name
from .files import PolicyFiles
from .yamlnodes import Source, compose, fail, is_null, mapping, read_source, string, string_list

if TYPE_CHECKING:
    import yaml

    from .commands import Invocation
    from .shell import Word

EFFECTS = ("exec", "write", "network")
TARGETS = ("value", "operands", "last_operand", "rest_operands", "first_operand")


# Plain classes, not dataclasses: this module is imported on every cold start, and a
# dataclass costs ~0.7 ms to create.

class Feature:
    """One thing a program can do beyond its ordinary behaviour (see programs.yaml)."""

    __slots__ = ("does", "first_words", "min_operands", "operand", "option_names",
                 "options", "outside", "script_options", "subcommands", "target", "unless",
                 "unless_options", "with_options")

    def __init__(self, does: str, options: tuple[str, ...] = (),
                 subcommands: tuple[tuple[str, ...], ...] = (), unless: tuple[str, ...] = (),
                 unless_options: tuple[str, ...] = (), operand: re.Pattern[str] | None = None,
                 script_options: tuple[str, ...] = (), target: str | None = None,
                 min_operands: int = 0, with_options: tuple[str, ...] = (),
                 outside: bool = False) -> None:
        self.does = does  # exec | write | network
        self.options = options
        self.subcommands = subcommands
        self.unless = unless
        self.unless_options = unless_options
        self.operand = operand
        self.script_options = script_options
        self.target = target
        self.min_operands = min_operands
        self.with_options = with_options  # applies only when one of these is given too
        # A directory switch (`make -C DIR`): the feature only when DIR lies outside the
        # project (policy/writes.py decides, with the project in hand).
        self.outside = outside
        # For a quick "cannot apply" test: option names without values, first subcommands.
        self.option_names = frozenset(o.split("=", 1)[0] for o in options)
        self.first_words = frozenset(p[0] for p in subcommands if p)

    def as_data(self) -> list[object]:
        return [self.does, self.options, self.subcommands, self.unless, self.unless_options,
                self.operand.pattern if self.operand else None, self.script_options,
                self.target, self.min_operands, self.with_options, self.outside]


class Program:
    """One program's entry: its option grammar, features and write targets."""

    def __init__(self, name: str, value_options: frozenset[str] = frozenset(),
                 subcommands: bool = False, runs_code: bool | tuple[str, ...] = False,
                 flags: dict[str, str] | None = None, env: tuple[tuple[str, str], ...] = (),
                 features: tuple[Feature, ...] = (), writes: tuple[Feature, ...] = ()
                 ) -> None:
        self.name = name
        self.value_options = value_options
        self.subcommands = subcommands
        self.runs_code = runs_code
        self.flags = flags or {}
        self.env = env  # (glob, effect)
        self.features = features
        self.writes = writes  # targets of ordinary writes (not features)

    def as_data(self) -> list[object]:
        return [self.name, sorted(self.value_options), self.subcommands, self.runs_code,
                self.flags, self.env, [f.as_data() for f in self.features],
                [f.as_data() for f in self.writes]]

    @functools.cached_property
    def targeted(self) -> tuple[Feature, ...]:
        """What names the files the program writes: `writes` and write features."""
        return (*self.writes, *(f for f in self.features if f.target))

    @functools.cached_property
    def target_options(self) -> tuple[str, ...] | None:
        """The option names that lead to every write target; None if operands do too."""
        if any(not f.options for f in self.targeted):
            return None
        return tuple(o.split("=", 1)[0] for f in self.targeted for o in f.options)

    @functools.cached_property
    def known_words(self) -> frozenset[str]:
        """Whole words that are one option each (`-exec`, `-TT`, `-toolexec`)."""
        words = set(self.value_options)
        for feature in (*self.features, *self.writes):
            words.update(o.rstrip("=") for o in feature.options)
        return frozenset(words)


class Table:
    __slots__ = ("environment", "programs", "writers")

    def __init__(self, programs: dict[str, Program],
                 environment: tuple[tuple[str, str], ...]) -> None:
        self.programs = programs
        self.environment = environment  # (glob, effect) for every program
        # The programs that name files they write (a quick test on every command).
        self.writers = frozenset(k for k, p in programs.items()
                                 if p.writes or any(f.target for f in p.features))


class Use:
    """One feature an invocation uses: what it does and how it was written."""

    __slots__ = ("does", "option", "program", "shown")

    def __init__(self, does: str, shown: str, program: str, option: str = "") -> None:
        self.does = does
        self.shown = shown  # `-c core.pager=sh`, `filter-branch`, `GIT_SSH_COMMAND=…`
        self.program = program
        self.option = option  # the option's name when `shown` is an option and its value


# -- reading the table -------------------------------------------------------------------

def _strings(source: Source, key: str, node: yaml.Node) -> tuple[str, ...]:
    import yaml

    if isinstance(node, yaml.ScalarNode) and not is_null(node):
        return (string(source, key, node),)
    return tuple(string_list(source, key, node))


def _by_effect(source: Source, key: str, node: yaml.Node) -> tuple[tuple[str, str], ...]:
    entries = mapping(source, node, EFFECTS)
    return tuple((glob, does) for does, (_, value) in entries.items()
                 for glob in _strings(source, key, value))


def _feature(source: Source, node: yaml.Node, does_default: str | None = None) -> Feature:
    keys = ("does", "option", "subcommand", "unless", "unless_option", "operand",
            "script_options", "target", "min_operands", "with_option", "outside")
    entries = mapping(source, node, keys)
    if "does" not in entries and does_default is None:
        raise fail(source, node, t("file.missing_key", key="does"))
    does = string(source, "does", entries["does"][1]) if "does" in entries \
        else str(does_default)
    if "does" in entries and does not in EFFECTS:
        raise fail(source, entries["does"][1], t("file.bad_choice", key="does", value=does,
                                                 expected=" | ".join(EFFECTS)))

    def get(key: str) -> tuple[str, ...]:
        return _strings(source, key, entries[key][1]) if key in entries else ()

    operand = None
    if "operand" in entries:
        text = string(source, "operand", entries["operand"][1])
        try:
            operand = re.compile(text)
        except re.error as e:
            raise fail(source, entries["operand"][1],
                       t("programs.bad_regex", error=e)) from e
    target = get("target")
    if target and target[0] not in TARGETS:
        raise fail(source, entries["target"][1], t("file.bad_choice", key="target",
                                                   value=target[0],
                                                   expected=" | ".join(TARGETS)))
    minimum = 0
    if "min_operands" in entries:
        number = entries["min_operands"][1]
        if not str(number.value).isdigit():
            raise fail(source, number, t("programs.not_count", key="min_operands"))
        minimum = int(number.value)
    options = get("option")
    outside = False
    if "outside" in entries:
        flag = entries["outside"][1]
        if getattr(flag, "tag", "") != "tag:yaml.org,2002:bool":
            raise fail(source, flag, t("programs.not_bool", key="outside"))
        outside = str(flag.value).lower() in ("true", "yes", "on")
        if outside and not options:
            raise fail(source, flag, t("file.missing_key", key="option"))
    subcommands = tuple(tuple(s.split()) for s in get("subcommand"))
    return Feature(does, options, subcommands, get("unless"), get("unless_option"), operand,
                   get("script_options"), target[0] if target else None, minimum,
                   get("with_option"), outside)


def _program(source: Source, name: str, node: yaml.Node) -> tuple[Program, tuple[str, ...]]:
    import yaml

    keys = ("also", "value_options", "subcommands", "runs_code", "flags", "env", "features",
            "writes")
    entries = mapping(source, node, keys)

    def value(key: str) -> yaml.Node | None:
        return entries[key][1] if key in entries else None

    runs_code: bool | tuple[str, ...] = False
    subcommands = False
    for key in ("runs_code", "subcommands"):
        found = value(key)
        if found is None:
            continue
        if isinstance(found, yaml.ScalarNode) and found.tag == "tag:yaml.org,2002:bool":
            flag = found.value.lower() in ("true", "yes", "on")
            if key == "subcommands":
                subcommands = flag
            else:
                runs_code = flag
        elif key == "runs_code":
            runs_code = _strings(source, key, found)
        else:
            raise fail(source, found, t("programs.not_bool", key=key))
    flags: dict[str, str] = {}
    if (found := value("flags")) is not None:
        if not isinstance(found, yaml.MappingNode):
            raise fail(source, found, t("file.not_mapping", found="flags"))
        for key_node, value_node in found.value:
            flags[str(key_node.value)] = string(source, "flags", value_node)
    features: list[Feature] = []
    if (found := value("features")) is not None and not is_null(found):
        if not isinstance(found, yaml.SequenceNode):
            raise fail(source, found, t("file.not_list", found="features"))
        features = [_feature(source, item) for item in found.value]
    writes: list[Feature] = []
    if (found := value("writes")) is not None and not is_null(found):
        if not isinstance(found, yaml.SequenceNode):
            raise fail(source, found, t("file.not_list", found="writes"))
        writes = [_feature(source, item, "write") for item in found.value]
        for item, entry in zip(found.value, writes, strict=True):
            if entry.target is None:
                raise fail(source, item, t("file.missing_key", key="target"))
    env = _by_effect(source, "env", found) if (found := value("env")) is not None else ()
    also = _strings(source, "also", found) if (found := value("also")) is not None else ()
    options = frozenset(_strings(source, "value_options", found)) \
        if (found := value("value_options")) is not None else frozenset()
    return Program(name, options, subcommands, runs_code, flags, env, tuple(features),
                   tuple(writes)), also


def parse_table(source: Source, into: Table | None = None) -> Table:
    """The table in `source`, added to `into` (the built-in one) when given."""
    programs = dict(into.programs) if into else {}
    environment = list(into.environment) if into else []
    root = compose(source)
    if root is None:
        return Table(programs, tuple(environment))
    entries = mapping(source, root, ("environment", "programs"))
    if "environment" in entries:
        environment.extend(_by_effect(source, "environment", entries["environment"][1]))
    if "programs" in entries:
        import yaml

        node = entries["programs"][1]
        if not isinstance(node, yaml.MappingNode):
            raise fail(source, node, t("file.not_mapping", found="programs"))
        for key_node, value_node in node.value:
            name = string(source, "programs", key_node)
            program, also = _program(source, name, value_node)
            for each in (name, *also):
                old = programs.get(each)
                programs[each] = program if old is None else _merged(old, program)
    return Table(programs, tuple(environment))


def _merged(old: Program, new: Program) -> Program:
    """A user's entry adds to the built-in one; it never takes anything away."""
    runs_code: bool | tuple[str, ...]
    if old.runs_code is True or new.runs_code is True:
        runs_code = True
    else:
        runs_code = (*(old.runs_code or ()), *(new.runs_code or ()))
    return Program(old.name, old.value_options | new.value_options,
                   old.subcommands or new.subcommands, runs_code,
                   {**old.flags, **new.flags}, (*old.env, *new.env),
                   (*old.features, *new.features), (*old.writes, *new.writes))


BUILTIN = Path(profiles.HERE) / "programs.yaml"
_CACHE_FORMAT = 3
_MAX_CACHE = 4 << 20  # the table is ~100 KiB as marshal data


@functools.cache
def builtin_table() -> Table:
    """The built-in table. Reading its YAML takes ~10 ms, so the result is kept (marshal:
    plain data, never code that runs) in the protected cache store (`cachefile`: the
    agent cannot write there, and an entry is used only under its MAC), keyed by the
    file's identity and the interpreter; anything that does not load is rebuilt."""
    import marshal
    import sys

    info = BUILTIN.stat()
    key = (f"programs\0{_CACHE_FORMAT}\0{BUILTIN}\0{info.st_dev}\0{info.st_ino}\0"
           f"{info.st_size}\0{info.st_mtime_ns}\0{sys.version}").encode(
               "utf-8", "surrogateescape")
    built: list[Table] = []

    def build() -> bytes:
        built.append(parse_table(Source("<profiles/programs.yaml>",
                                        BUILTIN.read_text("utf-8"))))
        return marshal.dumps(_as_data(built[0]))

    data = cachefile.cached("programs", key, build, max_size=_MAX_CACHE)
    if built:
        return built[0]
    try:
        return _from_data(marshal.loads(data))
    except (EOFError, ValueError, KeyError, TypeError, AttributeError, re.error):
        build()  # an entry under a valid MAC that does not load: built, not trusted
        return built[0]


def _as_data(table: Table) -> dict[str, object]:
    return {"environment": table.environment,
            "programs": {key: p.as_data() for key, p in table.programs.items()}}


def _from_data(data: Any) -> Table:
    def feature(f: Any) -> Feature:
        (does, options, subs, unless, unless_options, operand, scripts, target, minimum,
         with_options, outside) = f
        subcommands = tuple(tuple(str(w) for w in p) for p in subs)
        return Feature(str(does), tuple(options), subcommands, tuple(unless),
                       tuple(unless_options), re.compile(operand) if operand else None,
                       tuple(scripts), target, int(minimum), tuple(with_options),
                       bool(outside))

    programs: dict[str, Program] = {}
    shared: dict[str, Program] = {}
    for key, entry in data["programs"].items():
        name, options, subcommands, runs_code, flags, env, features, writes = entry
        program = shared.get(name)
        if program is None:
            program = shared[name] = Program(
                str(name), frozenset(options), bool(subcommands),
                runs_code if isinstance(runs_code, bool) else tuple(runs_code),
                dict(flags), tuple((g, d) for g, d in env),
                tuple(feature(f) for f in features), tuple(feature(f) for f in writes))
        programs[str(key)] = program
    return Table(programs, tuple((g, d) for g, d in data["environment"]))


@functools.cache
def load_table(home: Path) -> Table:
    """The built-in table extended by `~/.swifty/programs.yaml`."""
    source = read_source(PolicyFiles(home, home).programs)
    return builtin_table() if source is None else parse_table(source, builtin_table())


# -- reading one invocation --------------------------------------------------------------

class _Parsed:
    __slots__ = ("computed", "operands", "options", "path", "words")

    def __init__(self, options: list[tuple[str, str | None, str]], operands: list[str],
                 path: list[str], computed: str | None, words: list[str]) -> None:
        self.options = options  # (name, value, as written)
        self.operands = operands
        self.path = path  # the subcommand and the words after it, as written
        self.computed = computed  # a word known only at run time that may be an option
        self.words = words


def _parse(program: Program, argv: tuple[Word, ...]) -> _Parsed:
    options: list[tuple[str, str | None, str]] = []
    operands: list[str] = []
    path: list[str] = []
    computed = None
    words = [w.value if w.value is not None else "\0" + w.text for w in argv[1:]]
    if program.name == "tar" and words and words[0][:1].isalpha():
        words[0] = "-" + words[0]  # `tar xIf prog a.tar`: old-style bundled options
    index, ended = 0, False
    while index < len(words):
        word = words[index]
        index += 1
        if word.startswith("\0"):
            text = word[1:].lstrip("\"'")
            if not ended and computed is None and not text.startswith(("-", "+")) \
                    and not (program.subcommands and not path and text[:1].isalnum()):
                computed = word[1:]
            if program.subcommands and not path:
                path = words[index - 1:]
            operands.append(word)
            continue
        if ended or not word.startswith("-") or word == "-":
            if program.subcommands and not path:
                path = words[index - 1:]
            operands.append(word)
            continue
        if word == "--":
            ended = True
            continue
        value: str | None = None
        if word.startswith("--") or word in program.known_words or len(word) == 2 or (
                word.partition("=")[0] in program.known_words):  # `-toolexec=sh`
            name, _, attached = word.partition("=")
            if attached or "=" in word:
                value = attached
            elif name in program.value_options and index < len(words):
                value, index = words[index], index + 1
            options.append((name, value, word if value is None or "=" in word
                            else f"{word} {value}"))
            continue
        for position, letter in enumerate(word[1:], start=1):  # a cluster: `-xvf`, `-n5`
            name = "-" + letter
            if name in program.value_options:
                rest = word[position + 1:]
                if rest:
                    value = rest
                elif index < len(words):
                    value, index = words[index], index + 1
                options.append((name, value, f"{name} {value}"))
                break
            options.append((name, None, name))
    return _Parsed(options, operands, path, computed, words)


def _option_matches(spec: str, name: str, written: str) -> bool:
    if spec.endswith("="):
        return name == spec[:-1] and "=" in written
    if "=" in spec:  # one value only: `--network=host`, also written `--network host`
        option, value = spec.split("=", 1)
        return name == option and written in (spec, f"{option} {value}")
    return name == spec


def _glob(pattern: str, text: str) -> bool:
    return fnmatch.fnmatchcase(text.lower(), pattern.lower())


def _uses(program: Program, parsed: _Parsed, feature: Feature) -> list[tuple[str, str]]:
    """Each way the invocation uses `feature`: as written, and the option's name."""
    shown_path = ""
    if feature.subcommands:
        found = next((p for p in feature.subcommands if parsed.path[:len(p)] == list(p)),
                     None)
        if found is None:
            return []
        shown_path = " ".join(found)
    if feature.min_operands and len(parsed.operands) - (1 if feature.subcommands else 0) \
            < feature.min_operands:
        return []
    if feature.unless_options and any(
            o in feature.unless_options for o in (*(n for n, _, _ in parsed.options),
                                                  *parsed.path[1:2])):
        return []
    if feature.with_options and not any(
            n in feature.with_options for n, _, _ in parsed.options):
        return []
    if feature.options:
        return [(written.replace("\0", ""), name) for name, value, written in parsed.options
                if any(_option_matches(spec, name, written) for spec in feature.options)
                and not (feature.unless and value is not None and not value.startswith("\0")
                         and any(_glob(g, value) for g in feature.unless))]
    if feature.operand is not None:
        scripts = [v for n, v, _ in parsed.options if n in feature.script_options and v]
        candidates = parsed.operands[len(feature.subcommands and parsed.path[:1]):] + scripts
        for text in candidates:
            if not text.startswith("\0") and feature.operand.search(text):
                return [(text if len(text) < 60 else text[:57] + "…", "")]
        return []
    return [(shown_path, "")] if shown_path else []


def lookup(table: Table, name: str | None) -> Program | None:
    return table.programs.get(name) if name else None


def features(table: Table, invocation: Invocation) -> list[Use]:
    """What the invocation uses beyond its program's ordinary behaviour."""
    argv = invocation.argv
    found: list[Use] = []
    program_text = program_name(argv[0]) if argv else None
    for assignment in assignments_of(invocation):
        variable = assignment.split("=", 1)[0]
        if env_effect(table, lookup(table, program_text), variable) is not None:
            found.append(Use("env", f"{variable}=…", program_text or variable))
    program = lookup(table, program_text)
    if program is None or not argv or not program.features:
        return found
    key = (table, "xargs" in invocation.via, *(w.text for w in argv))
    known = _FEATURES.get(key)
    if known is None:
        known = _argument_features(program, argv, "xargs" in invocation.via)
        if len(_FEATURES) >= 2048:
            _FEATURES.clear()
        _FEATURES[key] = known
    return [*found, *known] if found else known


# (table, fed by xargs, words as written) → features: agents repeat their commands.
_FEATURES: dict[tuple[object, ...], list[Use]] = {}


def _argument_features(program: Program, argv: tuple[Word, ...], xargs: bool) -> list[Use]:
    found: list[Use] = []
    parsed = _parse(program, argv)
    if parsed.computed is not None and program.features:
        found.append(Use("computed", parsed.computed, program.name))
    elif xargs and program.features:
        # `… | xargs rg x`: the input adds arguments, and an argument may be any option.
        found.append(Use("computed", "xargs", program.name))
    names = {n for n, _, _ in parsed.options}
    first = parsed.path[0] if parsed.path else None
    for feature in program.features:
        if feature.outside or (feature.first_words and first not in feature.first_words) or (
                feature.option_names and feature.option_names.isdisjoint(names)):
            continue
        found.extend(Use(feature.does, shown, program.name, option)
                     for shown, option in _uses(program, parsed, feature))
    return found


def env_effect(table: Table, program: Program | None, variable: str) -> str | None:
    for glob, does in (*table.environment, *(program.env if program else ())):
        if fnmatch.fnmatchcase(variable, glob):
            return does
    return None


_SETS_NAMES = frozenset({"read", "printf", "mapfile", "readarray", "getopts", "export",
                         "declare", "typeset", "local", "readonly", "let"})
_NAME = re.compile(r"[A-Za-z_]\w*")


def assignments_of(invocation: Invocation) -> list[str]:
    """`VAR=…` given to this command: its prefix assignments and those of `env`/`sudo`
    wrappers it was reached through."""
    out = [w.text for w in invocation.simple.assignments]
    # `export PATH=…; cmd`, `PATH=…; cmd`: the rest of the script runs with it; so do
    # names set by `read`, `printf -v`, `mapfile`, … (`read PATH <<< /tmp`).
    for s in invocation.script.commands:
        if not s.words:
            out.extend(w.text for w in s.assignments)
        elif s.words[0].value in _SETS_NAMES:
            out.extend(f"{w.value}=?" for w in s.words[1:]
                       if w.value and _NAME.fullmatch(w.value))
    for form in invocation.forms[:-1]:
        head = form[0].value.rsplit("/", 1)[-1] if form and form[0].value else ""
        if head in ("env", "sudo", "doas"):
            out.extend(w.shown for w in form[1:]
                       if re.match(r"[A-Za-z_]\w*=", w.shown))
    return out


# -- more spellings for deny and ask rules ---------------------------------------------------

def spellings(table: Table, argv: tuple[Word, ...]) -> list[str]:
    """Equivalent texts of one command for deny/ask rules: the program's base name for
    a path (`/usr/bin/git` → `git`), without the global options before a subcommand
    (`git -C . push` → `git push`), git's inline aliases (`git -c alias.p=push p` →
    `git push`) and its helper binaries (`git-push` → `git push`)."""
    if not argv or argv[0].value is None:
        return []
    head = argv[0].value
    base = head.rsplit("/", 1)[-1]
    rest = [w.shown for w in argv[1:]]
    if base.startswith("git-") and len(base) > 4:  # /usr/lib/git-core/git-push
        return [" ".join(["git", base[4:], *rest])]
    program = table.programs.get(base)
    if base == head and (program is None or not program.subcommands or len(argv) < 2
                         or not argv[1].shown.startswith("-")):
        return []
    out = []
    if base != head and base:
        out.append(" ".join([base, *rest]))
    if program is not None and program.subcommands:
        index = 0
        aliases: dict[str, str] = {}
        while index < len(rest) and rest[index].startswith("-") and rest[index] != "--":
            option = rest[index]
            if program.name == "git" and option.startswith("-c"):
                setting = option[2:] or (rest[index + 1] if index + 1 < len(rest) else "")
                m = _GIT_ALIAS.match(setting)
                if m is not None:
                    aliases[m.group(1).lower()] = m.group(2)
            index += 2 if option in program.value_options and "=" not in option else 1
        if rest[index:index + 1] == ["--"]:
            index += 1
        if 0 < index <= len(rest):
            out.append(" ".join([base, *rest[index:]]))
        if index < len(rest) and rest[index].lower() in aliases:
            out.append(" ".join([base, aliases[rest[index].lower()], *rest[index + 1:]]))
    return out


_GIT_ALIAS = re.compile(r"alias\.([^=]+)=\s*([^!].*)", re.DOTALL | re.IGNORECASE)


# -- write targets -----------------------------------------------------------------------

def _may_be(word: str, options: tuple[str, ...]) -> bool:
    """Whether `word` may hold one of `options` (`-o`, `--output=x`, a cluster `-xo`)."""
    if not word.startswith("-"):
        return False
    if word.startswith("--") or any(len(o) > 2 and not o.startswith("--") for o in options):
        return word.startswith(options)
    return any(len(o) == 2 and o[1] in word for o in options)


_INTO_DIRECTORY = frozenset({"cp", "mv", "install", "ln"})


def write_targets(table: Table, argv: tuple[Word, ...]) -> list[str]:
    """The files a command writes, as written (`tee -a F`, `cp x D`, `sed -i … F`, `dd
    of=F`, `sort -o F`, `find -fprint F`, …): its program's `writes` and the targets of
    the write features it uses. Words known only at run time are left out."""
    return [path for path, _ in targets_shown(table, argv) if not path.startswith("\0")]


def targets_shown(table: Table, argv: tuple[Word, ...]) -> list[tuple[str, str]]:
    """`write_targets`, each with how it was written (`-C ~` for an option's value, the
    operand itself otherwise): what an allow rule must name to cover that write. A
    target known only at run time is its text after a NUL (`\0$D`)."""
    program = lookup(table, program_name(argv[0])) if argv else None
    if program is None or not program.targeted:
        return []
    if program.target_options is not None and not any(
            _may_be(w.shown, program.target_options) for w in argv[1:]):
        return []  # writes only through options, and none is given (the common case)
    parsed = _parse(program, argv)
    given = {n for n, _, _ in parsed.options}
    out: list[tuple[str, str]] = []
    for feature in program.targeted:
        if feature.with_options and given.isdisjoint(feature.with_options):
            continue  # `tar -f a.tar` writes the archive only with `-c`, `-r`, …
        if feature.options:
            matched = [(n, v, w) for n, v, w in parsed.options
                       if any(_option_matches(spec, n, w) for spec in feature.options)]
            if not matched:
                continue
            if feature.target == "value":
                for _, value, written in matched:
                    if value:  # `cp -t DIR a b` writes DIR/a and DIR/b
                        out.append((value, written))
                        if program.name in _INTO_DIRECTORY:
                            out.extend((f"{value}/{s.rsplit('/', 1)[-1]}", written)
                                       for s in parsed.operands if not s.startswith("\0"))
                continue
        operands = list(parsed.operands)
        if program.name == "sed" and not any(
                n in ("-e", "--expression", "-f", "--file") for n, _, _ in parsed.options):
            operands = operands[1:]  # the script
        if feature.operand is not None:
            for text in operands:
                m = feature.operand.search(text)
                if m is not None:
                    out.append((m.group(1) if m.groups() else text, text))
        elif feature.target == "operands":
            out.extend((o, o) for o in operands)
        elif feature.target == "rest_operands":
            out.extend((o, o) for o in operands[1:])
        elif feature.target == "first_operand":
            out.extend((o, o) for o in operands[:1])
        elif feature.target == "last_operand" and len(operands) > 1:
            last = operands[-1]
            out.append((last, last))  # `cp config .git` writes .git/config
            # A source known only at run time names a file in it that is not known.
            out.extend((f"{last}/{s.rstrip('/').rsplit('/', 1)[-1]}", last)
                       for s in operands[:-1] if not s.startswith("\0"))
    return [(p, w.replace("\0", "")) for p, w in out if p]


def directory_switches(table: Table, argv: tuple[Word, ...]) -> list[tuple[str | None, str]]:
    """The directories an invocation's `outside` features move it to (`make -C DIR`,
    `cargo --manifest-path P`), each with how it was written; None for a value known
    only at run time."""
    program = lookup(table, program_name(argv[0])) if argv else None
    switches = [f for f in program.features if f.outside] if program is not None else []
    if program is None or not switches:
        return []
    parsed = _parse(program, argv)
    out: list[tuple[str | None, str]] = []
    for feature in switches:
        if feature.subcommands and not any(
                parsed.path[:len(p)] == list(p) for p in feature.subcommands):
            continue
        for name, value, written in parsed.options:
            if any(_option_matches(spec, name, written) for spec in feature.options):
                known = value is not None and not value.startswith("\0")
                out.append((value if known else None, written.replace("\0", "")))
    return out


# -- flag spellings of deny and ask rules ----------------------------------------------------

class FlagRule:
    """A rule pattern read with its program's option grammar: `rm -rf *` is `rm` with
    `--recursive` and `--force`, whatever else follows `*`."""

    __slots__ = ("flags", "path", "program", "rest")

    def __init__(self, program: str, path: tuple[str, ...], flags: frozenset[str],
                 rest: re.Pattern[str]) -> None:
        self.program = program
        self.path = path  # the subcommand (`git push --force *`)
        self.flags = flags
        self.rest = rest  # what the operands must match


_FLAG_RULES: dict[tuple[Table, str], FlagRule | None] = {}


def _canonical(program: Program, option: str) -> list[str]:
    if option.startswith("--"):
        return [option.split("=", 1)[0]]
    return program.flags.get(option[1:], option).split()


def flag_rule(table: Table, pattern: str) -> FlagRule | None:
    """The pattern as flags, for a program whose flags are in the table; else None."""
    key = (table, pattern)
    if key in _FLAG_RULES:
        return _FLAG_RULES[key]
    words = pattern.split()
    found: FlagRule | None = None
    program = table.programs.get(words[0]) if words and "*" not in words[0] else None
    if program is not None and program.flags:
        index = 1
        path: list[str] = []
        while program.subcommands and index < len(words) and not words[index].startswith(
                "-") and "*" not in words[index]:
            path.append(words[index])
            index += 1
        flags: set[str] = set()
        while index < len(words) and words[index].startswith("-") and "*" not in words[
                index] and words[index] not in ("-", "--"):
            word = words[index]
            if word.startswith("--") or word in program.known_words:
                flags.update(_canonical(program, word))
            else:
                for letter in word[1:]:
                    flags.update(_canonical(program, "-" + letter))
            index += 1
        if flags:
            rest = " ".join(words[index:])
            optional = rest == "*" or rest.endswith(" *")
            body = rest[:-1].rstrip() if optional else rest
            regex = ".*".join(re.escape(p) for p in body.split("*")) + (
                "(?: .*)?" if optional and body else ".*" if optional else "")
            found = FlagRule(program.name, tuple(path), frozenset(flags),
                             re.compile(regex, re.DOTALL))
    if len(_FLAG_RULES) > 4096:
        _FLAG_RULES.clear()
    _FLAG_RULES[key] = found
    return found


def flag_matches(table: Table, rule: FlagRule, argv: tuple[Word, ...]) -> bool:
    """Whether the command is the rule's program with (at least) the rule's flags in any
    spelling (`-fr`, `-r -f`, `--recursive --force`) and operands the rule allows."""
    if not argv or argv[0].value is None:
        return False
    program = table.programs.get(argv[0].value.rsplit("/", 1)[-1])
    if program is None or program.name != rule.program:
        return False
    parsed = _parse(program, argv)
    operands = parsed.operands
    if rule.path:
        if parsed.path[:len(rule.path)] != list(rule.path):
            return False
        operands = operands[len(rule.path):]
    flags = {f for name, _, _ in parsed.options for f in _canonical(program, name)}
    return rule.flags <= flags and rule.rest.fullmatch(
        " ".join(o.lstrip("\0") for o in operands)) is not None


# -- repositories the agent may have written ---------------------------------------------------

_GIT_PLACES = ("-C", "--git-dir", "--work-tree")


def foreign_repository(invocation: Invocation, project: str) -> Use | None:
    """`git -C /tmp/x status`, `cd /tmp/x && git log`: git reads that repository's own
    config and hooks (`core.pager`, `core.fsmonitor`, …), which nothing protects outside
    the project — running code is then part of what the command does."""
    argv = invocation.argv
    if not argv or program_name(argv[0]) != "git":
        return None
    places: list[tuple[str, str | None]] = []
    words = [w.value for w in argv[1:]]
    for index, value in enumerate(words):
        if value is None:
            continue
        name, eq, attached = value.partition("=")
        if name in _GIT_PLACES:
            target = attached if eq else (words[index + 1] if index + 1 < len(words) else "")
            places.append((value if eq else f"{name} {target}", target))
        elif value.startswith("-C") and len(value) > 2:
            places.append((value, value[2:]))
        elif not value.startswith("-"):
            break  # the subcommand: options after it are its own
    for simple in invocation.script.commands:
        if simple.words and simple.words[0].value in ("cd", "pushd"):
            operands = [w.value for w in simple.words[1:] if (w.value or "x")[:1] != "-"]
            target = operands[0] if operands else "~"
            places.append((f"(after cd {target or simple.words[1].text})", target))
    for shown, target in places:
        if target is None or target.startswith(("~", "-")):
            return Use("exec", shown, "git")
        path = os.path.normpath(os.path.join(project, target))
        if path != project and not path.startswith(project.rstrip("/") + "/"):
            return Use("exec", shown, "git")
    return None
