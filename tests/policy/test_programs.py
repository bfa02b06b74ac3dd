"""The program table (`profiles/programs.yaml`): shape checks with positions, the
user's extension, and the cache of the built-in table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Effect, Sandbox
from swifty_sandbox.policy.errors import PolicyFileError
from swifty_sandbox.policy.programs import BUILTIN, _as_data, builtin_table, parse_table
from swifty_sandbox.policy.yamlnodes import Source

Box = Callable[..., Sandbox]
Layers = Callable[..., Path]

REQUIRED = ("git", "find", "fd", "sed", "awk", "rg", "grep", "sort", "tar", "zip", "unzip",
            "rsync", "ssh", "scp", "make", "man", "less", "more", "env", "xargs", "npm", "npx",
            "pnpm", "yarn", "pip", "python", "pytest", "node", "perl", "ruby", "docker",
            "podman", "kubectl", "cargo", "go")


def test_the_builtin_table_covers_the_programs_the_issue_names() -> None:
    table = builtin_table()
    assert [p for p in REQUIRED if p not in table.programs] == []
    assert table.programs["gawk"] is table.programs["awk"]  # `also`


def test_the_cached_table_is_the_parsed_table() -> None:
    parsed = parse_table(Source(str(BUILTIN), BUILTIN.read_text("utf-8")))
    assert _as_data(builtin_table()) == _as_data(parsed)


@pytest.mark.parametrize(("text", "line", "column", "words"), [
    ("programs:\n  git:\n    featuers: []\n", 3, 5, "featuers"),
    ("programs:\n  git:\n    features:\n      - {option: [-x]}\n", 4, 9, "does"),
    ("programs:\n  git:\n    features:\n      - {does: run, option: [-x]}\n", 4, 16, "run"),
    ("programs:\n  sed:\n    features:\n      - {does: exec, operand: '(['}\n", 4, 31,
     "regular expression"),
    ("programs:\n  cp:\n    writes:\n      - {option: [-t]}\n", 4, 9, "target"),
    ("programs:\n  git:\n    subcommands: maybe\n", 3, 18, "true or false"),
    ("programs:\n  x:\n    features:\n      - {does: exec, min_operands: two}\n", 4, 36,
     "whole number"),
    ("environment:\n  exec: PATH\n  runs: [X]\n", 3, 3, "runs"),
    ("programs: [git]\n", 1, 11, "mapping"),
])
def test_a_malformed_table_names_file_line_and_column(text: str, line: int, column: int,
                                                       words: str) -> None:
    with pytest.raises(PolicyFileError) as caught:
        parse_table(Source("user/programs.yaml", text))
    error = caught.value
    assert (error.file, error.line, error.column) == ("user/programs.yaml", line, column)
    assert words in error.message


def test_the_users_table_adds_a_feature(layers: Layers, box_for: Box, home: Path) -> None:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "programs.yaml").write_text(
        "programs:\n  mytool:\n    value_options: [--config]\n    features:\n"
        "      - {does: exec, option: [--hook]}\n"
        "  git:\n    features:\n      - {does: network, subcommand: [lfs]}\n")
    layers(project_rules=[("Bash(mytool *)", "allow"), ("Bash(git *)", "allow")])
    box = box_for(sandbox_mode="manual")
    assert box.check("mytool --config x run").effect is Effect.ALLOW
    hooked = box.check("mytool --hook=sh run")
    assert hooked.effect is Effect.ASK and "`mytool … --hook=sh` runs other code" in \
        hooked.reason
    assert box.check("git lfs pull").effect is Effect.ASK  # added to the built-in git
    assert box.check("git -c core.pager=sh log").effect is Effect.ASK  # still there


def test_a_broken_user_table_fails_closed(layers: Layers, box_for: Box, home: Path) -> None:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "programs.yaml").write_text("programs:\n  git: [\n")
    layers(project_rules=[("Bash(git *)", "allow")])
    with pytest.raises(PolicyFileError) as caught:
        box_for(sandbox_mode="manual").check("git status")
    assert caught.value.file.endswith("programs.yaml")


def test_a_corrupt_cache_is_rebuilt(home: Path) -> None:
    builtin_table.cache_clear()
    try:
        builtin_table()
        cache = home / ".cache" / "swifty-sandbox"
        files = list(cache.glob("programs-*.marshal"))
        assert len(files) == 1
        files[0].write_bytes(b"\x00garbage")
        builtin_table.cache_clear()
        assert "git" in builtin_table().programs
    finally:
        builtin_table.cache_clear()
