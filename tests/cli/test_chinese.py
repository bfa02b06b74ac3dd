"""In Chinese, the command line shows no English fragment: every command's `--help`
(click's own words included: "Usage:", "Options:", "Show this message and exit.") and
the usage errors, in real processes under `SWIFTY_LANG=zh`; and no Chinese text of the
message table carries one. What may stay Latin: command and option names, their
values, paths, rule syntax and identifiers, quoted literals, example command lines,
and the few names in `ALLOWED`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from swifty_sandbox.cli.main import main
from swifty_sandbox.messages import MESSAGES

SWIFTY = Path(sys.executable).with_name("swifty-sandbox")

# Product and protocol names, and abbreviations Chinese writes in Latin letters.
ALLOWED = frozenset({
    "swifty-sandbox", "bubblewrap", "bwrap", "Landlock", "seccomp", "seatbelt",
    "sandbox-exec", "Linux", "macOS", "Ubuntu", "AppArmor", "Claude", "Code", "Codex",
    "Gemini", "Cursor", "git", "bash", "sh", "docker", "podman", "runc", "crun",
    "Kubernetes", "Job", "JSON", "Lines", "Schema", "YAML", "MCP", "OCI", "SARIF", "AI",
    "CPU", "IP", "CIDR", "BPF", "PFC", "shell", "stdio", "stdin", "stdout", "stderr", "Ctrl-C",
    "FIFO", "UTF-8", "NUL", "TCP", "URL", "PID", "UID", "ABI", "CLI", "Python", "root",
    "cgroup", "libseccomp", "pip", "npm", "cargo", "go", "README", "HTML", "ISO",
    "English",  # the report's language switch names the other language in its own
    "x",  # click's range notation: [x>0]
})


def _commands(group: click.Group, path: tuple[str, ...] = ()
              ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


COMMANDS = [((), main), *_commands(main)]


def _names() -> set[str]:
    """Every command name, option name and option value (choices) the CLI has."""
    names: set[str] = set()
    for path, command in COMMANDS:
        names.update(path)
        for param in command.params:
            names.update(param.opts)
            if isinstance(param.type, click.Choice):
                names.update(str(c) for c in param.type.choices)
    return names


NAMES = _names()
# Quoted literals, placeholders, JSON and option names: what stays as it is written.
_LITERALS = re.compile(r"`[^`]*`|%\([^)]*\)s|\"[^\"\n]*\"|'[^'\n]*'|“[^”\n]*”|\{[^{}]*\}"
                       r"|\[[A-Za-z]\]|(?<![\w-])--?[A-Za-z][\w-]*")
_WORD = re.compile(r"(?<![0-9A-Za-z_])[.*~/@$]*[A-Za-z][\w.+*/~@:$>-]*")
_IDENTIFIER = re.compile(r"[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w*[_\d]\w*")


def english_fragments(text: str) -> list[str]:
    """The Latin-script words of `text` that are none of what may stay Latin."""
    found = []
    text = "\n".join(line for line in text.splitlines()  # not the example command lines
                     if not line.strip().startswith(("swifty-sandbox ", "claude ")))
    # click wraps a run of Chinese (no spaces) wherever the width ends, inside a Latin
    # word too (`C` / `IDR`), and a word at its hyphen: join those pieces again.
    text = re.sub(r"(?<=[A-Za-z-])\n\s*(?=[A-Za-z])", "", text)
    for line in _LITERALS.sub(" ", text).splitlines():
        for word in _WORD.findall(line):
            word = word.rstrip(".:-")
            if not word or word in NAMES or word in ALLOWED:
                continue
            if any(c in word for c in "./~@:$*>") or _IDENTIFIER.fullmatch(word):
                continue  # a path, file name, setting, preset, variable, glob, identifier
            found.append(word)
    return found


def swifty(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SWIFTY), *args], capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "SWIFTY_LANG": "zh",
                                            "SWIFTY_DAEMON": "off"})


@pytest.mark.parametrize("path", [" ".join(p) for p, _ in COMMANDS])
def test_every_help_is_chinese(path: str) -> None:
    done = swifty(*path.split(), "--help")
    assert done.returncode == 0, done.stderr
    assert "用法:" in done.stdout and "选项:" in done.stdout
    assert "显示此帮助并退出。" in done.stdout
    assert english_fragments(done.stdout) == [], done.stdout


USAGE_ERRORS = [
    ("run", "--bogus"),  # no such option
    ("run", "--jso"),  # … did you mean
    ("run", "--timeout", "0", "--", "true"),  # out of range
    ("run", "--timeout", "soon", "--", "true"),  # not a number
    ("run", "--mode", "nope", "--", "true"),  # not one of the choices
    ("run", "--project"),  # an option without its value
    ("run", "--allow-net", "pypi", "--", "true"),  # a preset without its @
    ("run",),  # no command (ours)
    ("hook",),  # a missing argument
    ("hook", "nope"),
    ("schema", "config", "more.yaml"),  # an unexpected extra argument
    ("no-such-command",),
    ("audit", "/"),  # a directory where a file is wanted
    ("policy",),  # a group without its command
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=" ".join)
def test_every_usage_error_is_chinese(args: tuple[str, ...]) -> None:
    done = swifty(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    shown = done.stdout + done.stderr
    assert "错误" in shown or "用法:" in shown, shown
    assert english_fragments(shown) == [], shown
    assert "Traceback" not in shown


def test_the_version_is_chinese() -> None:
    done = swifty("--version")
    prefix = MESSAGES["usage.version"][1].split("%(version)s")[0] % {"prog": "swifty-sandbox"}
    assert done.returncode == 0 and done.stdout.startswith(prefix), done.stdout
    assert english_fragments(done.stdout) == []


def test_english_is_still_english() -> None:
    """The control: without the variable, click's words and ours are English."""
    done = subprocess.run([str(SWIFTY), "run", "--bogus"], capture_output=True, text=True,
                          timeout=60, check=False, env={
                              k: v for k, v in os.environ.items()
                              if k not in ("SWIFTY_LANG", "LC_ALL", "LC_MESSAGES", "LANG")})
    assert done.returncode == 2
    assert "Usage: swifty-sandbox run [OPTIONS]" in done.stderr
    assert "Error: No such option: --bogus" in done.stderr or \
        "Error: No such option '--bogus'" in done.stderr, done.stderr
    assert english_fragments("Usage: swifty-sandbox run [OPTIONS]\nShow this message") != []


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_no_chinese_message_carries_english(key: str) -> None:
    chinese = MESSAGES[key][1]
    assert english_fragments(chinese) == [], chinese
