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


def _entry(home: Path) -> Path:
    [entry] = [p for p in (home / ".cache" / "swifty-sandbox" / "programs").iterdir()
               if p.name != "key"]
    return entry


def test_a_corrupt_cache_is_rebuilt(home: Path) -> None:
    builtin_table.cache_clear()
    try:
        builtin_table()
        entry = _entry(home)
        entry.write_bytes(b"\x00garbage")
        builtin_table.cache_clear()
        assert "git" in builtin_table().programs
    finally:
        builtin_table.cache_clear()


def _forged(home: Path, *, mac_from_secret: bool) -> None:
    """The cached table rewritten with `git`'s features gone (`git -c core.pager=…`
    would then be ordinary git, which `Bash(git *)` allows)."""
    import marshal

    from swifty_sandbox.policy import cachefile

    entry = _entry(home)
    data = _as_data(builtin_table())
    programs: dict[str, list[object]] = data["programs"]  # type: ignore[assignment]
    programs["git"] = [*programs["git"][:4], {}, programs["git"][5], [], []]  # no features
    forged = marshal.dumps(data)
    mac = bytes(32)
    if mac_from_secret:
        import sys

        info = BUILTIN.stat()
        key = (f"programs\0{3}\0{BUILTIN}\0{info.st_dev}\0{info.st_ino}\0"
               f"{info.st_size}\0{info.st_mtime_ns}\0{sys.version}").encode()
        mac = cachefile.digest(key + forged, (entry.parent / "key").read_bytes())
    entry.write_bytes(cachefile.MAGIC + mac + forged)


@pytest.mark.parametrize("mac_from_secret", [False, True])
def test_a_forged_cache_does_not_loosen_a_decision(layers: Layers, box_for: Box, home: Path,
                                                   mac_from_secret: bool) -> None:
    """Forged without the secret, the entry is not used: the decision stays ask. The
    control, with the MAC made from the secret, shows the forgery would loosen it."""
    layers(project_rules=[("Bash(git *)", "allow")])
    builtin_table.cache_clear()
    try:
        builtin_table()
        _forged(home, mac_from_secret=mac_from_secret)
        builtin_table.cache_clear()
        effect = box_for(sandbox_mode="manual").check("git -c core.pager=sh log").effect
        assert effect is (Effect.ALLOW if mac_from_secret else Effect.ASK)
    finally:
        builtin_table.cache_clear()
