"""Shell strings → one small internal form: every simple command that may run.

Two parsers feed the same form. tree-sitter-bash is tried first: it parses everything
agents write (`[[ ]]`, `$(( ))`, `case`, arrays, `<<'EOF'`) in microseconds. When its
tree has errors, bashlex gets a go. When neither can parse the string, `Script.error`
says so and the caller must not allow the command (SPEC §2 "Shell analysis").

The form is flow-insensitive on purpose: the bodies of `if`, loops, functions,
subshells and substitutions are all commands that *may* run, so all are listed.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .evaluation import evaluated_code, substitutions_in

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_DEPTH = 12  # nesting of substitutions and `bash -c` strings
# Pipeline ids are unique across every script of the process, so commands of different
# scripts (substitutions, `bash -c` strings, alternative readings) never share one.
_PIPELINE_IDS = itertools.count(1)


def new_pipeline() -> int:
    return next(_PIPELINE_IDS)


@dataclass(frozen=True, slots=True)
class Word:
    """One word: its source text, its value after quote removal when that is known
    before run time (None when it depends on expansions), and the scripts of the
    command and process substitutions inside it."""

    text: str
    value: str | None
    subs: tuple[Script, ...] = ()

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else self.text


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # >, >>, <, &>, >&, <<, <<<, …
    target: Word | None  # the file (None for heredocs)
    body: str | None = None  # heredoc or here-string text, when fed to the command
    fd: str | None = None

    @property
    def writes(self) -> bool:
        """Opens its target for writing (`>&` too: `>& file` sends both streams there)."""
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>", ">&")


@dataclass(frozen=True, slots=True)
class Simple:
    """A simple command: argv words, leading assignments, redirections."""

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    pipeline: int = 0  # commands of one pipeline share this id …
    stage: int = 0  # … and are numbered left to right
    background: bool = False  # the pipeline ends with `&`

    @property
    def program(self) -> Word | None:
        return self.words[0] if self.words else None


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    body: Script


@dataclass(frozen=True, slots=True)
class Script:
    commands: tuple[Simple, ...] = ()
    functions: tuple[Function, ...] = ()
    error: str | None = None  # why the string could not be analysed, if it could not
    # Other readings of a string no parser read cleanly: every command any of them
    # finds is listed too (the blacklist and deny rules see them all).
    readings: tuple[Script, ...] = ()

    def walk(self) -> Iterator[Simple]:
        """Every simple command, those inside substitutions and function bodies too."""
        for reading in self.readings:
            yield from reading.walk()
        for function in self.functions:
            yield from function.body.walk()
        for command in self.commands:
            yield command
            for word in (*command.words, *command.assignments,
                         *(r.target for r in command.redirects if r.target)):
                for sub in word.subs:
                    yield from sub.walk()

    def scripts(self) -> Iterator[Script]:
        """This script and every script nested in it: readings, function bodies, and
        substitutions, at any depth (`echo $(f(){ f|f& };f)` defines a function too)."""
        yield self
        for reading in self.readings:
            yield from reading.scripts()
        for function in self.functions:
            yield from function.body.scripts()
        for command in self.commands:
            for word in (*command.words, *command.assignments,
                         *(r.target for r in command.redirects if r.target)):
                for sub in word.subs:
                    yield from sub.scripts()

    def errors(self) -> Iterator[str]:
        if self.error:
            yield self.error
        for reading in self.readings:
            yield from reading.errors()
        for function in self.functions:
            yield from function.body.errors()
        for command in self.commands:
            for word in (*command.words, *command.assignments):
                for sub in word.subs:
                    yield from sub.errors()


# -- tree-sitter ------------------------------------------------------------------------

@functools.cache
def _ts_parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_HIDDEN_SUBSCRIPT = re.compile(r"\[.*(?:\$\(|`).*\]", re.DOTALL)
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b",
                 "E": "\x1b", "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)",
                   re.DOTALL)


def ansi_c(body: str) -> str:
    """The value of `$'…'` (so `$'\\x72m'` is seen as `rm`)."""

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xuU" and len(esc) > 1:
            return chr(int(esc[1:], 16))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        return _ANSI_ESCAPES.get(esc, "\\" + esc)

    return _ANSI.sub(one, body)


def _unescape_unquoted(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.DOTALL)


def _unescape_double(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


class _TreeSitter:
    def __init__(self, source: bytes, depth: int) -> None:
        self.source = source
        self.depth = depth
        self.commands: list[Simple] = []
        self.functions: list[Function] = []

    def text(self, node: Any) -> str:
        return str(self.source[node.start_byte:node.end_byte].decode("utf-8", "replace"))

    def sub_script(self, node: Any) -> Script:
        """A command/process substitution: its statements, as a script of their own."""
        inner = _TreeSitter(self.source, self.depth + 1)
        for child in node.named_children:
            inner.statement(child)
        return Script(tuple(inner.commands), tuple(inner.functions))

    # words -------------------------------------------------------------------------
    def word(self, node: Any) -> Word:
        subs: list[Script] = []
        value = self._value(node, subs)
        return Word(self.text(node), value, tuple(subs))

    def _value(self, node: Any, subs: list[Script]) -> str | None:
        kind = node.type
        text = self.text(node)
        if kind in ("word", "number", "command_name", "special_variable_name", "test_operator",
                    "regex", "extglob_pattern"):
            if kind == "command_name":
                return self._value(node.named_children[0], subs) if node.named_children \
                    else text
            return _unescape_unquoted(text)
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            return ansi_c(text[2:-1])
        if kind == "translated_string":
            return self._value(node.named_children[0], subs) if node.named_children else ""
        if kind == "string":
            parts: list[str] | None = []
            for child in node.named_children:
                value = self._value(child, subs)
                if value is None or parts is None:
                    parts = None
                else:
                    parts.append(value)
            return "".join(parts) if parts is not None else None
        if kind == "string_content":
            return _unescape_double(text)
        if kind == "concatenation":
            values = [self._value(child, subs) for child in node.children]
            return None if any(v is None for v in values) else "".join(
                v for v in values if v is not None)
        if kind in ("command_substitution", "process_substitution"):
            subs.append(self.sub_script(node))
            return None
        if kind == "simple_expansion" and any(c.isspace() for c in text) and not (
                node.parent is not None and node.parent.type == "string"
                and not any(c.isspace() for c in text.lstrip())):
            # `$ ls`: bash reads a lone `$` as a literal. (In `"$(a) $b"` tree-sitter
            # only counts the blank into the `$b` token: the same reading.)
            raise _Misparse(text)
        if kind in ("simple_expansion", "expansion", "arithmetic_expansion", "brace_expression"):
            for child in node.named_children:  # `${x:-$(cmd)}` still runs cmd
                self._collect_subs(child, subs)
            return None
        # Anything else inside a word: unknown until run time.
        self._collect_subs(node, subs)
        return None if node.named_children or kind not in ("$", "{", "}") else text

    def _collect_subs(self, node: Any, subs: list[Script]) -> None:
        if node.type in ("command_substitution", "process_substitution"):
            subs.append(self.sub_script(node))
            return
        for child in node.named_children:
            self._collect_subs(child, subs)

    # statements --------------------------------------------------------------------
    def statement(self, node: Any, *, pipeline: int | None = None, stage: int = 0,
                  background: bool = False, redirects: tuple[Redirect, ...] = (),
                  words: tuple[Word, ...] = ()) -> None:
        kind = node.type
        if words and kind not in ("command", "variable_assignment"):
            raise _Misparse(self.text(node))  # `{ …; } <<EOF arg`: not bash
        if kind == "command":
            self.command(node, pipeline, stage, background, redirects, words)
        elif kind == "redirected_statement":
            extra: list[Redirect] = []
            more: list[Word] = []
            for child in node.children_by_field_name("redirect"):
                extra.append(self.redirect(child))
                if child.type == "heredoc_redirect":
                    self._heredoc_rest(child, more, extra)
            body = node.child_by_field_name("body")
            if body is None and more:
                raise _Misparse(self.text(node))
            # A heredoc's redirect may carry the rest of the pipeline (`cat <<EOF | sh`).
            piped = [c for r in node.children_by_field_name("redirect")
                     for c in r.named_children if c.type in ("pipeline", "command", "list")]
            if piped and pipeline is None:
                pipeline = self._new_pipeline()
            if body is not None:
                self.statement(body, pipeline=pipeline, stage=stage, background=background,
                               redirects=redirects + tuple(extra), words=words + tuple(more))
            for offset, rest in enumerate(piped, start=1):
                self.statement(rest, pipeline=pipeline, stage=stage + offset,
                               background=background)
        elif kind == "pipeline":
            # Part of a pipeline already (`cat <<EOF | sh`): continue its numbering.
            pid = pipeline if pipeline is not None else self._new_pipeline()
            for index, child in enumerate(node.named_children):
                self.statement(child, pipeline=pid, stage=stage + index, background=background)
        elif kind == "variable_assignment":  # `PATH=…` alone, or under `export`/`local`
            self.commands.append(Simple(words, (self.word(node),), redirects,
                                        pipeline if pipeline is not None
                                        else self._new_pipeline(), stage, background))
        elif kind == "function_definition":
            name_node = node.child_by_field_name("name")
            inner = _TreeSitter(self.source, self.depth + 1)
            body = node.child_by_field_name("body")
            if body is not None:
                inner.statement(body)
            self.functions.append(Function(self.text(name_node) if name_node else "",
                                           Script(tuple(inner.commands),
                                                  tuple(inner.functions))))
            self.functions.extend(inner.functions)
        else:  # lists, compound commands, loops, conditions, …: what they contain
            if kind in ("declaration_command", "test_command", "unset_command"):
                self._subscript_names(node, pipeline, stage, background)
            elif kind == "for_statement":
                self._loop_values(node)
            self._children(node, pipeline, stage, background, redirects)

    def _children(self, node: Any, pipeline: int | None, stage: int, background: bool,
                  redirects: tuple[Redirect, ...]) -> None:
        children = node.children
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            follows = children[index + 1].type if index + 1 < len(children) else ""
            if child.type in ("command", "pipeline", "redirected_statement", "list",
                              "compound_statement", "subshell", "function_definition",
                              "if_statement", "while_statement", "for_statement",
                              "c_style_for_statement", "case_statement", "negated_command",
                              "test_command", "declaration_command", "unset_command",
                              "variable_assignment", "variable_assignments"):
                self.statement(child, pipeline=pipeline, stage=stage,
                               background=background or follows == "&", redirects=redirects)
            elif child.type in ("command_substitution", "process_substitution"):
                script = self.sub_script(child)
                self.commands.extend(script.commands)
                self.functions.extend(script.functions)
            elif child.type == "comment":
                self.comment(child)
            else:
                self._children(child, pipeline, stage, background, ())

    def _loop_values(self, node: Any) -> None:
        """`for d in / ~; do …`: the variable takes each literal value, recorded as
        assignments (what the shell knows before the loop runs)."""
        variable = node.child_by_field_name("variable")
        if variable is None:
            return
        name = self.text(variable)
        values = [self.word(v).value for v in node.children_by_field_name("value")]
        known = tuple(Word(f"{name}={v}", f"{name}={v}") for v in values if v is not None)
        if known:
            self.commands.append(Simple((), known, (), self._new_pipeline()))

    def _subscript_names(self, node: Any, pipeline: int | None, stage: int,
                         background: bool) -> None:
        """`declare 'a[$(cmd)]=1'`, `[[ -v 'a[$(cmd)]' ]]`: a name given as text is
        evaluated, subscript and all. Such words become a command of their own (named by
        the keyword), whose subscripts `commands.py` follows."""
        found: list[Word] = []
        stack = list(node.named_children)
        while stack:
            child = stack.pop()
            if child.type in ("raw_string", "string", "word", "concatenation"):
                word = self.word(child)
                if word.value is not None and _HIDDEN_SUBSCRIPT.search(word.value):
                    found.append(word)
            else:
                stack.extend(child.named_children)
        if found:
            keyword = "test" if node.type == "test_command" else self.text(node.children[0])
            self.commands.append(Simple((Word(keyword, keyword), *found), (), (),
                                        pipeline if pipeline is not None
                                        else self._new_pipeline(), stage, background))

    def comment(self, node: Any) -> None:
        """bash starts a comment only where a word could start (`x#y` is one word)."""
        start = node.start_byte
        if start and self.source[start - 1:start] not in _COMMENT_MAY_FOLLOW:
            raise _Misparse(self.text(node))

    def _new_pipeline(self) -> int:
        return new_pipeline()

    def redirect(self, node: Any) -> Redirect:
        kind = node.type
        if kind == "heredoc_redirect":
            # The body as written: fed to a shell, it is parsed like any script (an
            # unquoted delimiter's expansions then show up as run-time words).
            body = "".join(self.text(c) for c in node.named_children if c.type == "heredoc_body")
            return Redirect("<<", self._heredoc_subs(node, body), body)
        if kind == "herestring_redirect":
            target = self.word(node.named_children[-1]) if node.named_children else None
            return Redirect("<<<", target, target.value if target else None)
        fd_node = node.child_by_field_name("descriptor")
        dest = node.child_by_field_name("destination")
        op = next((self.text(c) for c in node.children if not c.is_named), ">")
        return Redirect(op, self.word(dest) if dest is not None else None,
                        fd=self.text(fd_node) if fd_node is not None else None)

    def _heredoc_rest(self, node: Any, words: list[Word], redirects: list[Redirect]) -> None:
        """What tree-sitter files under a heredoc's redirect but belongs to its command:
        the rest of the line's words and redirections (`rm <<EOF -rf ~` runs `rm -rf ~`,
        `cat <<EOF > .git/config` writes there)."""
        start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
        line_end = self.source.find(b"\n", start.end_byte) if start is not None else -1
        for child in node.children_by_field_name("argument"):
            if 0 <= line_end < child.start_byte:
                # A body whose first line starts with a backslash: tree-sitter reads
                # it as words of the command line and the body as empty.
                raise _Misparse(self.text(child))
            words.extend(self._lone_dollar(child) or self._braces(child))
        for child in node.children_by_field_name("redirect"):
            if 0 <= line_end < child.start_byte:
                raise _Misparse(self.text(child))
            redirects.append(self.redirect(child))
            if child.type == "heredoc_redirect":
                self._heredoc_rest(child, words, redirects)

    def _heredoc_subs(self, node: Any, body: str) -> Word | None:
        """An unquoted delimiter's body runs its substitutions (`$(…)`, backticks) even
        when the command only reads it: a word holding them, else None."""
        subs: list[Script] = []
        for child in node.named_children:
            if child.type == "heredoc_body":
                self._collect_subs(child, subs)
        start = next((self.text(c) for c in node.named_children if c.type == "heredoc_start"),
                     "")
        if "`" in body and not any(q in start for q in "'\"\\"):
            subs.extend(parse(m.group(1), self.depth + 1)
                        for m in re.finditer(r"(?<!\\)`((?:[^`\\]|\\.)*)`", body))
        return Word(body, None, tuple(subs)) if subs else None

    def command(self, node: Any, pipeline: int | None, stage: int, background: bool,
                redirects: tuple[Redirect, ...], more: tuple[Word, ...] = ()) -> None:
        words: list[Word] = []
        assignments: list[Word] = []
        own_redirects = list(redirects)
        for child in node.named_children:
            if child.type == "variable_assignment":
                assignments.append(self.word(child))
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                own_redirects.append(self.redirect(child))
            elif child.type == "comment":
                self.comment(child)
            elif child.type == "subshell":  # `$( … )` parsed oddly as an argument
                words.append(Word(self.text(child), None, (self.sub_script(child),)))
            else:
                words.extend(self._lone_dollar(child) or self._braces(child))
        words.extend(more)
        self.commands.append(Simple(tuple(words), tuple(assignments), tuple(own_redirects),
                                    pipeline if pipeline is not None else self._new_pipeline(),
                                    stage, background))

    def _braces(self, node: Any) -> tuple[Word, ...]:
        """The words bash makes of one by brace expansion (`rm -rf {/,x}` is `rm -rf /
        x`), which tree-sitter does not do; one word when there is none."""
        word = self.word(node)
        if "{" not in word.text:
            return (word,)
        # Static: known before run time (tree-sitter knows no value for `{1..3}` only).
        static = word.value is not None or not any(
            m in word.text for m in ("$", "`", "<(", ">("))
        tokens = _quote_tokens(word.text) if static else None
        if tokens is None:  # expansions: what the braces make is known only at run time
            if _BRACE_LIST.search(self._unquoted(node)):
                raise _Misparse(word.text)
            return (word,)
        if word.value is not None and "".join(c for c, _ in tokens) != word.value:
            raise _Misparse(word.text)  # our reading of its quotes is not tree-sitter's
        expanded = brace_expand(tokens)
        if expanded == [word.value]:
            return (word,)
        return tuple(Word(text, text) for text in expanded)

    def _unquoted(self, node: Any) -> str:
        """The word's unquoted literal text; every other part (quotes, expansions,
        substitutions) as `x`, which braces never see into."""
        if node.type in ("word", "brace_expression"):
            return self.text(node)
        if node.type in ("concatenation", "command_name"):
            return "".join(self._unquoted(child) for child in node.children)
        return "x"

    def _lone_dollar(self, node: Any) -> tuple[Word, ...]:
        """`$ cat`: tree-sitter reads `$cat`, bash a literal `$` and the word `cat`."""
        if node.type == "command_name" and len(node.named_children) == 1:
            node = node.named_children[0]
        match = _LONE_DOLLAR.fullmatch(self.text(node)) if node.type == "simple_expansion" \
            else None
        return (Word("$", "$"), Word(match.group(1), match.group(1))) if match else ()


_LONE_DOLLAR = re.compile(r"\$[ \t]+(\w+)")
_BRACE_LIST = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_MAX_EXPANSIONS = 1000  # more words than that from one: not analysed, never allowed


def _quote_tokens(text: str) -> list[tuple[str, bool]] | None:
    """A static word's characters after quote removal, each marked quoted or not
    (only unquoted `{`, `,` and `}` expand). None for forms not handled here."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if text[i + 1:i + 2] != "\n":
                out.append((text[i + 1:i + 2], True))
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return None
            out.extend((ch, True) for ch in text[i + 1:end])
            i = end + 1
        elif c == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                return None
            out.extend((ch, True) for ch in _unescape_double(text[i + 1:end]))
            i = end + 1
        elif c == "$":
            return None  # `$'…'`, `$"…"`: left to tree-sitter's reading
        else:
            out.append((c, False))
            i += 1
    return out


_SEQUENCE = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([a-zA-Z])\.\.([a-zA-Z])"
                       r"(?:\.\.(-?\d+))?")


def brace_expand(tokens: list[tuple[str, bool]]) -> list[str]:
    """bash's brace expansion of one word: `a{b,c}d` → `abd acd`, `{1..3}` → `1 2 3`;
    `{}`, `{a}` and unclosed braces stay as they are. Raises `_Misparse` past
    `_MAX_EXPANSIONS` words."""
    for start, (char, quoted) in enumerate(tokens):
        if char != "{" or quoted:
            continue
        depth, commas, close = 0, [], -1
        for index in range(start + 1, len(tokens)):
            c, q = tokens[index]
            if q:
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0:
                    close = index
                    break
                depth -= 1
            elif c == "," and depth == 0:
                commas.append(index)
        if close < 0:
            continue
        head, tail = tokens[:start], tokens[close + 1:]
        if commas:
            bounds = [start, *commas, close]
            options = [tokens[a + 1:b] for a, b in itertools.pairwise(bounds)]
        else:
            sequence = _sequence("".join(c for c, _ in tokens[start + 1:close]))
            if sequence is None:
                continue  # a literal brace; one further right may still expand
            options = [[(c, True) for c in item] for item in sequence]
        out: list[str] = []
        for option in options:
            out.extend(brace_expand(head + option + tail))
            if len(out) > _MAX_EXPANSIONS:
                raise _Misparse("".join(c for c, _ in tokens)[:40])
        return out
    return ["".join(c for c, _ in tokens)]


def _sequence(text: str) -> list[str] | None:
    m = _SEQUENCE.fullmatch(text)
    if m is None:
        return None
    step = abs(int(m.group(3) or m.group(6) or 1)) or 1
    if m.group(1) is not None:
        first, last = int(m.group(1)), int(m.group(2))
        if abs(last - first) // step > _MAX_EXPANSIONS:
            raise _Misparse(text)
        width = max(len(m.group(1)), len(m.group(2))) if (
            m.group(1).lstrip("-").startswith("0") or m.group(2).lstrip("-").startswith("0")
        ) else 0
        values = range(first, last + (1 if last >= first else -1), step if last >= first
                       else -step)
        return [str(v).zfill(width) if width else str(v) for v in values]
    first_c, last_c = ord(m.group(4)), ord(m.group(5))
    chars = range(first_c, last_c + (1 if last_c >= first_c else -1),
                  step if last_c >= first_c else -step)
    return [chr(c) for c in chars]
_COMMENT_MAY_FOLLOW = frozenset(bytes([c]) for c in b" \t\n;&|()<>")


# Where a value may be evaluated as code (policy/evaluation.py).
_EVALUATED = re.compile(r"\(\(|\$\[|\$\{|\blet\b|-(?:eq|ne|lt|le|gt|ge)\b|\bdeclare\b|"
                        r"\btypeset\b|\blocal\b")


class _Misparse(Exception):
    """tree-sitter accepted something bash reads differently."""


def _parse_tree_sitter(command: str, depth: int) -> tuple[Script | None, str | None]:
    """tree-sitter's script, and the text where it disagrees with bash (if anywhere).

    With a disagreement the script is only a partial reading (None when even that
    failed): what it lists may run, but other commands may run too."""
    source = command.encode("utf-8", "surrogatepass")
    tree = _ts_parser().parse(source)
    doubt = _first_error(tree.root_node, source) if tree.root_node.has_error else None
    walker = _TreeSitter(source, depth)
    try:
        walker.statement(tree.root_node)
    except _Misparse as misparse:
        return None, doubt or _snippet(str(misparse))
    except RecursionError:  # deep nesting: the rough reading takes over
        return None, doubt or "nested too deeply"
    if doubt is None:  # `x='a[$(cmd)]'; echo $((x))` runs cmd (policy/evaluation.py)

        doubt = evaluated_code(tree.root_node, source, depth)
    return Script(tuple(walker.commands), tuple(walker.functions)), doubt


def _first_error(root: Any, source: bytes) -> str:
    """The source text around the first place tree-sitter could not parse."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            start = node.parent if node.is_missing and node.parent is not None else node
            return _snippet(source[start.start_byte:].decode("utf-8", "replace"))
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return _snippet(source.decode("utf-8", "replace"))


def _snippet(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# -- bashlex (second opinion) --------------------------------------------------------------

def _parse_bashlex(command: str, depth: int) -> Script | None:
    try:
        import bashlex

        trees = bashlex.parse(command)
    except Exception:  # bashlex raises many kinds of errors on what it cannot parse
        return None
    converter = _Bashlex(command, depth)
    try:
        for tree in trees:
            converter.node(tree)
    except RecursionError:
        return None
    return Script(tuple(converter.commands), tuple(converter.functions))


class _Bashlex:
    def __init__(self, source: str, depth: int) -> None:
        self.source = source
        self.depth = depth
        self.commands: list[Simple] = []
        self.functions: list[Function] = []

    def word(self, node: Any) -> Word:
        subs: list[Script] = []
        dynamic = False
        for part in getattr(node, "parts", []):
            if part.kind in ("commandsubstitution", "processsubstitution"):
                inner = _Bashlex(self.source, self.depth + 1)
                inner.node(part.command)
                subs.append(Script(tuple(inner.commands), tuple(inner.functions)))
                dynamic = True
            elif part.kind in ("parameter", "tilde"):
                dynamic = dynamic or part.kind == "parameter"
        text = self.source[node.pos[0]:node.pos[1]]
        return Word(text, None if dynamic else node.word, tuple(subs))

    def node(self, node: Any, pipeline: int | None = None, stage: int = 0,
             background: bool = False) -> None:
        kind = node.kind
        if kind == "command":
            words, assignments, redirects = [], [], []
            for part in node.parts:
                if part.kind == "word":
                    words.append(self.word(part))
                elif part.kind == "assignment":
                    assignments.append(self.word(part))
                elif part.kind == "redirect":
                    target = part.output if hasattr(part.output, "kind") else None
                    body = getattr(part, "heredoc", None)
                    redirects.append(Redirect(part.type, self.word(target) if target else None,
                                              body.value if body is not None else None))
            if pipeline is None:
                pipeline = new_pipeline()
            self.commands.append(Simple(tuple(words), tuple(assignments), tuple(redirects),
                                        pipeline, stage, background))
        elif kind == "pipeline":
            pid = new_pipeline()
            stages = [p for p in node.parts if p.kind != "pipe"]
            for index, part in enumerate(stages):
                self.node(part, pid, index, background)
        elif kind == "list":
            parts = node.parts
            for index, part in enumerate(parts):
                if part.kind == "operator":
                    continue
                nxt = parts[index + 1] if index + 1 < len(parts) else None
                bg = nxt is not None and nxt.kind == "operator" and nxt.op == "&"
                self.node(part, None, 0, bg)
        elif kind == "function":
            inner = _Bashlex(self.source, self.depth + 1)
            for part in node.parts[1:]:
                inner.node(part)
            self.functions.append(Function(node.name.word, Script(
                tuple(inner.commands), tuple(inner.functions))))
        else:
            for part in getattr(node, "parts", []) or []:
                self.node(part, pipeline, stage, background)
            for attr in ("list", "command"):
                child = getattr(node, attr, None)
                # A compound command's `list` is a Python list of nodes (`( … )`, `{ …; }`).
                for item in child if isinstance(child, list) else [child]:
                    if item is not None and hasattr(item, "kind"):
                        self.node(item, pipeline, stage, background)


# -- entry point ------------------------------------------------------------------------

_DOUBLE_BRACKETS = re.compile(r"(?<![\w\]])\[\[(?=\s)|(?<=\s)\]\](?![\w\[])")


def parse(command: str, depth: int = 0) -> Script:
    """The script of a shell string; `error` set when it could not be analysed soundly.

    tree-sitter-bash reads it. Where tree-sitter reports an error or reads something
    bash reads differently, nothing is trusted: the script then has `error` set (so it
    is never allowed) and lists, as `readings`, every command any method finds —
    tree-sitter's partial tree, bashlex, the same string with `[[ … ]]` read as `test …`,
    and a rough split — so the blacklist and deny rules still see all of them.
    """
    if depth > MAX_DEPTH:
        return Script(error="nested too deeply")
    if (len(command) - len(command.rstrip("\\"))) % 2:
        command = command[:-1]  # a line continuation at the very end continues nothing
    if "\\\n" in command:
        command = _joined_lines(command)
    script, doubt = _parse_tree_sitter(command, depth)
    if script is not None and doubt is None:
        return script
    readings = [script, _parse_bashlex(command, depth)]
    if "[[" in command:
        readings.append(_parse_tree_sitter(_DOUBLE_BRACKETS.sub(
            lambda m: "test" if m.group(0) == "[[" else "", command), depth)[0])
    readings.append(rough(command))
    if script is not None and _EVALUATED.search(command):  # a value run as code

        readings.extend(parse(body, depth + 1) for body in substitutions_in(command))
    return Script(error=doubt,
                  readings=tuple(dataclasses.replace(r, error=None) for r in readings if r))


def _joined_lines(command: str) -> str:
    """The string with its line continuations removed, as bash removes them before it
    splits words — except in single quotes, `$'…'`, comments and the bodies of quoted
    heredocs. tree-sitter reads one as a blank instead, so `r\\<newline>m -rf ~` would
    be `r m -rf ~` to it and `rm -rf ~` to bash."""
    source = command.encode("utf-8", "surrogatepass")
    literal: list[tuple[int, int]] = []  # byte spans where `\\<newline>` stays as it is
    stack = [_ts_parser().parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type in ("raw_string", "ansi_c_string", "comment"):
            literal.append((node.start_byte, node.end_byte))
            continue
        if node.type == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            if start is not None and any(q in source[start.start_byte:start.end_byte]
                                         for q in (b"'", b'"', b"\\")):
                literal.extend((c.start_byte, c.end_byte) for c in node.children
                               if c.type == "heredoc_body")
        stack.extend(node.children)
    out = bytearray()
    index = 0
    for m in re.finditer(rb"\\+\n", source):
        # An odd run of backslashes ends in a continuation (`\\\\<newline>` is one
        # escaped backslash and a newline).
        if (m.end() - m.start() - 1) % 2 and not any(a <= m.start() < b for a, b in literal):
            out += source[index:m.end() - 2]
            index = m.end()
    out += source[index:]
    return out.decode("utf-8", "surrogatepass")


_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", "\n", ";;", "(", ")", "{", "}"})


def rough(command: str) -> Script:
    """A last-resort reading of a string no parser accepts: split on operators and
    blanks, every segment taken as a command with literal words. Used only so the
    blacklist still sees what may run; such a script is never trusted to allow."""
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to blanks
        tokens = re.split(r"[\s;&|()]+", command)
    commands: list[Simple] = []
    words: list[Word] = []
    for token in [*tokens, ";"]:
        if token in _OPERATORS or set(token) <= set(";&|<>()\n"):
            if words:
                commands.append(Simple(tuple(words), pipeline=new_pipeline()))
            words = []
        elif token:
            for part in token.replace("$(", " ").replace("`", " ").split():
                words.append(Word(part, part))
    return Script(tuple(commands), error="neither tree-sitter-bash nor bashlex can parse it")
