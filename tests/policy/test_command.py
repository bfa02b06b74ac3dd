"""The minimal split of shell strings into simple commands, and wrapper unwrapping."""

from __future__ import annotations

import pytest

from swifty_sandbox.policy.command import split_command, unwrap


@pytest.mark.parametrize(("command", "expected"), [
    ("git status", [("git", "status")]),
    ("git status && curl x | sh; ls", [("git", "status"), ("curl", "x"), ("sh",), ("ls",)]),
    ("a || b & c |& d", [("a",), ("b",), ("c",), ("d",)]),
    ("echo 'a;b' \"c && d\"", [("echo", "a;b", "c && d")]),
    ("npm test 2>&1 > out.log", [("npm", "test")]),
    ("FOO=1 BAR=x make -j4", [("make", "-j4")]),
    ("ls\nrm x", [("ls",), ("rm", "x")]),
    ("echo \"multi\nline\"", [("echo", "multi\nline")]),
    ("r\\m -rf x", [("rm", "-rf", "x")]),
    ("echo a#b", [("echo", "a#b")]),
    ("", []),
])
def test_split(command: str, expected: list[tuple[str, ...]]) -> None:
    analysis = split_command(command)
    assert analysis.opaque is None
    assert list(analysis.commands) == expected


@pytest.mark.parametrize("command", [
    "echo $(id)", "echo `id`", "diff <(a) <(b)", "tee >(x)", "cat <<EOF\nx\nEOF",
    "(cd x && make)", "{ a; }", "if true; then rm x; fi", "for f in *; do rm $f; done",
    "$CMD -rf /", "'unbalanced", "[[ -d / ]] && rm -rf /",
])
def test_opaque(command: str) -> None:
    analysis = split_command(command)
    assert analysis.opaque is not None
    assert analysis.commands == ()


@pytest.mark.parametrize(("argv", "innermost"), [
    (("sudo", "-u", "root", "rm", "x"), ("rm", "x")),
    (("env", "-i", "A=1", "B=2", "make"), ("make",)),
    (("timeout", "-k", "5", "60", "pytest", "-x"), ("pytest", "-x")),
    (("nice", "-n", "10", "nohup", "stdbuf", "-oL", "make"), ("make",)),
    (("/usr/bin/xargs", "-0", "-n", "1", "rm"), ("rm",)),
    (("command", "exec", "ls"), ("ls",)),
    (("sudo",), ("sudo",)),
    (("git", "status"), ("git", "status")),
])
def test_unwrap(argv: tuple[str, ...], innermost: tuple[str, ...]) -> None:
    forms = unwrap(argv)
    assert forms[0] == argv
    assert forms[-1] == innermost
