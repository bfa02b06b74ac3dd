"""Rule and config files: every malformed case names file:line:col; nothing is guessed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Mode, PolicyFileError, Sandbox, SandboxMode
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

Box = Callable[..., Sandbox]

MALFORMED = [
    # (file text, line, column, words the message must contain)
    ("- rule: Bsh(git *)\n  effect: allow\n", 1, 9, ["unknown tool `Bsh`", "Bash"]),
    ("- rule: Bash(git *\n  effect: allow\n", 1, 9, ["missing `)`"]),
    ("- rule: Bash(git *)\n  effect: allowed\n", 2, 11, ["`effect` must be one of",
                                                        "allowed"]),
    ("rule: Bash(git *)\neffect: allow\n", 1, 1, ["must be a YAML list", "a mapping"]),
    ("just text\n", 1, 1, ["must be a YAML list"]),
    ("- Bash(git *)\n", 1, 3, ["expected a mapping"]),
    ("- rule: Bash(git *)\n", 1, 3, ["missing key `effect`"]),
    ("- effect: allow\n", 1, 3, ["missing key `rule`"]),
    ("- rule: Bash(x)\n  effect: allow\n  note: hi\n", 3, 3, ["unknown key `note`"]),
    ("- rule: Bash(x)\n  rule: Bash(y)\n  effect: allow\n", 2, 3, ["duplicate key `rule`"]),
    ("- rule: Bash()\n  effect: allow\n", 1, 9, ["empty pattern"]),
    ("- rule: ReadFile(src/[a)\n  effect: deny\n", 1, 9, ["invalid glob"]),
    ("- rule: ReadFile(!secret)\n  effect: deny\n", 1, 9, ["negation"]),
    ("- rule: 42\n  effect: allow\n", 1, 9, ["`rule` must be a string"]),
    ("- rule: Bash(x)\n  effect: yes\n", 2, 11, ["`effect` must be a string"]),
    ("- rule: Bash(x)\n   effect: allow\n", 2, 10, ["invalid YAML"]),
    ("- rule: 'Bash(x)\n", 2, 1, ["invalid YAML"]),
    ("- rule: Bash(ok)\n  effect: allow\n- rule: Nope(x)\n  effect: deny\n", 3, 9,
     ["unknown tool `Nope`"]),
    ("- rule: '*(foo)'\n  effect: deny\n", 1, 9, ["malformed rule"]),
    ("---\n- rule: Bash(a)\n  effect: allow\n---\n- rule: Bash(b)\n  effect: allow\n", 4, 1,
     ["invalid YAML"]),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), MALFORMED)
@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_malformed_rule_file_names_file_line_column(
        project: Path, home: Path, text: str, line: int, column: int, words: list[str],
        where: str) -> None:
    base = home if where == "user" else project
    path = PolicyFiles(project, home).rules(Scope.LOCAL) if where == "local" else \
        base / ".swifty" / "permissions.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(PolicyFileError) as info:
        Sandbox(project, home=home)
    error = info.value
    assert (error.file, error.line, error.column) == (str(path), line, column)
    assert str(error).startswith(f"{path}:{line}:{column}: ")
    for word in words:
        assert word in error.message


@pytest.mark.parametrize("text", ["", "# only a comment\n", "[]\n", "~\n"])
def test_empty_files_are_empty(project: Path, home: Path, text: str) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(text)
    assert Sandbox(project, home=home).policy.layers[1].rules == ()


def test_unreadable_file_is_an_error(project: Path, home: Path) -> None:
    (project / ".swifty" / "permissions.yaml").mkdir(parents=True)  # a directory
    with pytest.raises(PolicyFileError, match="cannot read"):
        Sandbox(project, home=home)


def test_not_utf8_is_an_error(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_bytes(b"- rule: Bash(\xff)\n")
    with pytest.raises(PolicyFileError, match="cannot read"):
        Sandbox(project, home=home)


def test_aliases_and_effects_parse(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "# team rules\n"
        "- rule: Read(*.md)\n  effect: allow\n"
        "- rule: Write(docs/**)\n  effect: ask\n"
        "- rule: Edit\n  effect: deny\n"
        "- {rule: 'Bash(npm test:*)', effect: allow}\n")
    rules = Sandbox(project, home=home).policy.layers[1].rules
    assert [(r.tool and r.tool.value, r.effect.value, r.line, r.column) for r in rules] == [
        ("ReadFile", "allow", 2, 9), ("WriteFile", "ask", 4, 9), ("EditFile", "deny", 6, 9),
        ("Bash", "allow", 8, 10)]


# -- config.yaml ---------------------------------------------------------------------------

def write_config(base: Path, text: str) -> None:
    (base / ".swifty").mkdir(exist_ok=True)
    (base / ".swifty" / "config.yaml").write_text(text)


def test_settings_project_overrides_user_where_it_tightens(project: Path,
                                                          home: Path) -> None:
    """SPEC §2 says the project's settings override the user's; a committed file comes
    from whoever wrote the repository, so it overrides only towards stricter values
    (the looser ones are ignored with a warning, below)."""
    write_config(home, "permissions: {defaultMode: acceptEdits}\nsandbox: {mode: manual}\n")
    write_config(project, "permissions:\n  defaultMode: plan\n")
    settings = Sandbox(project, home=home).policy.settings
    assert (settings.default_mode, settings.sandbox_mode) == (Mode.PLAN, SandboxMode.MANUAL)


def test_deny_lists_add_up(project: Path, home: Path) -> None:
    write_config(home, "sandbox:\n  denyRead: [~/.secret-a]\n  env: {drop: [A_*]}\n")
    write_config(project, "sandbox:\n  denyRead: [~/.secret-b]\n  env: {drop: [B_*]}\n")
    settings = Sandbox(project, home=home).policy.settings
    assert settings.deny_read == ("~/.secret-a", "~/.secret-b")
    assert settings.env_drop == ("A_*", "B_*")


def test_committed_project_config_cannot_loosen(project: Path, home: Path) -> None:
    write_config(project, "permissions: {defaultMode: bypassPermissions}\n"
                          "sandbox:\n  mode: 'off'\n  profile: permissive\n"
                          "  writable: [/, ~/.ssh, build]\n  env: {keep: [AWS_SECRET_KEY]}\n")
    box = Sandbox(project, home=home)
    settings = box.policy.settings
    assert settings.default_mode is Mode.DEFAULT
    assert settings.sandbox_mode is SandboxMode.AUTO
    assert settings.profile == "default"
    assert settings.writable == (project / "build",)
    assert settings.env_keep == ()
    assert len(box.warnings) == 6
    assert all("cannot loosen" in w and "config.yaml" in w for w in box.warnings)


def test_user_config_may_loosen(project: Path, home: Path) -> None:
    write_config(home, "permissions: {defaultMode: bypassPermissions}\n"
                       "sandbox: {mode: 'off', env: {keep: [GH_TOKEN]}}\n")
    box = Sandbox(project, home=home)
    assert box.policy.settings.default_mode is Mode.BYPASS
    assert box.policy.settings.sandbox_mode is SandboxMode.OFF
    assert box.warnings == ()


@pytest.mark.parametrize(("text", "line", "column", "word"), [
    ("permissions: {defaultMode: yolo}\n", 1, 28, "defaultMode"),
    ("sandbox:\n  mode: sometimes\n", 2, 9, "sandbox.mode"),
    ("sandbox:\n  writable: /tmp\n", 2, 13, "list of strings"),
    ("sandbox:\n  netwrok: true\n", 2, 3, "unknown key `netwrok`"),
    ("- a list\n", 1, 1, "must be a YAML mapping"),
    ("sandbox:\n  env: {keep: [1]}\n", 2, 16, "must be a string"),
])
def test_malformed_config(project: Path, home: Path, text: str, line: int, column: int,
                          word: str) -> None:
    write_config(project, text)
    with pytest.raises(PolicyFileError) as info:
        Sandbox(project, home=home)
    assert (info.value.line, info.value.column) == (line, column)
    assert word in info.value.message


def test_unknown_profile(project: Path, home: Path) -> None:
    write_config(home, "sandbox: {profile: nonesuch}\n")
    with pytest.raises(PolicyFileError, match="unknown sandbox profile `nonesuch`"):
        Sandbox(project, home=home)


def test_a_local_file_in_the_project_is_never_read(project: Path, home: Path) -> None:
    """A repository can commit `.swifty/permissions.local.yaml`: were it read, its
    allows would outrank the user's own rules. The local layer lives in the home."""
    from swifty_sandbox import Request, Tool

    shipped = project / ".swifty" / "permissions.local.yaml"
    shipped.parent.mkdir()
    shipped.write_text("- rule: WriteFile(~/**)\n  effect: allow\n"
                       "- rule: Bash(*)\n  effect: allow\n")
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(git push *)\n  effect: ask\n")
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check(Request.file(Tool.WRITE_FILE, str(home / ".ssh" / "authorized_keys"))
                     ).effect.value != "allow"
    assert box.check("git push origin main").effect.value == "ask"  # the user's ask
    assert any("local rules are not read from the project" in w for w in box.warnings)
    local = PolicyFiles(project, home).rules(Scope.LOCAL)
    assert local.parent.parent == home / ".swifty" / "projects"
    box.always_allow("npm test")
    assert "Bash(npm test)" in local.read_text()
    assert "npm test" not in shipped.read_text()


@pytest.mark.parametrize(("user", "committed", "kept"), [
    ("permissions: {defaultMode: plan}", "permissions: {defaultMode: acceptEdits}",
     ("default_mode", Mode.PLAN)),
    ("sandbox: {mode: manual}", "sandbox: {mode: auto}",
     ("sandbox_mode", SandboxMode.MANUAL)),
    ("sandbox: {profile: strict}", "sandbox: {profile: default}", ("profile", "strict")),
])
def test_a_committed_config_never_loosens_the_users(project: Path, home: Path, user: str,
                                                    committed: str,
                                                    kept: tuple[str, object]) -> None:
    write_config(home, user + "\n")
    write_config(project, committed + "\n")
    box = Sandbox(project, home=home)
    assert getattr(box.policy.settings, kept[0]) == kept[1]
    assert any("cannot loosen" in w for w in box.warnings)


def test_a_committed_config_may_tighten(project: Path, home: Path) -> None:
    write_config(project, "permissions: {defaultMode: plan}\n"
                          "sandbox: {mode: manual, profile: strict}\n")
    settings = Sandbox(project, home=home).policy.settings
    assert (settings.default_mode, settings.sandbox_mode, settings.profile) == (
        Mode.PLAN, SandboxMode.MANUAL, "strict")


# -- PolicyFiles: where each file is, and which came with the repository -----------------

def test_policy_files_know_what_is_committed(project: Path, home: Path) -> None:
    files = PolicyFiles(project, home)
    assert [files.is_committed(files.rules(s)) for s in Scope] == [False, True, False]
    assert files.is_committed(files.config(Scope.PROJECT))
    assert not files.is_committed(files.config(Scope.USER))
    assert files.is_committed(files.stray_local)
    assert files.scope_of(files.rules(Scope.LOCAL)) is Scope.LOCAL
    assert files.scope_of(files.stray_local) is Scope.PROJECT
    # The home directory as the project: its `.swifty/` is the user's own.
    mine = PolicyFiles(home, home)
    assert not mine.is_committed(mine.config(Scope.PROJECT))
    assert mine.scope_of(mine.rules(Scope.PROJECT)) is Scope.USER


def test_a_linked_swifty_dir_in_the_project_is_still_committed(project: Path,
                                                               home: Path) -> None:
    """A repository's `.swifty -> ~/.swifty` does not make its files the user's."""
    (home / ".swifty").mkdir()
    (project / ".swifty").symlink_to(home / ".swifty")
    files = PolicyFiles(project, home)
    assert files.is_committed(files.config(Scope.PROJECT))
    assert not files.is_committed(files.config(Scope.USER))


def test_audit_and_loader_agree_on_what_a_committed_config_loosens(project: Path,
                                                                  home: Path) -> None:
    """`acceptEdits` in a committed file loosens the default: the loader ignores it,
    so the audit reports it (it once reported only bypassPermissions); with the same
    value in the user's own config, neither complains."""
    from swifty_sandbox.policy.audit import audit

    write_config(project, "permissions: {defaultMode: acceptEdits}\n")
    config = project / ".swifty" / "config.yaml"
    box = Sandbox(project, home=home)
    assert box.policy.settings.default_mode is Mode.DEFAULT and len(box.warnings) == 1
    assert [f.id for f in audit([config], project, home)] == ["project-loosens"]
    write_config(home, "permissions: {defaultMode: acceptEdits}\n")
    box = Sandbox(project, home=home)
    assert box.policy.settings.default_mode is Mode.ACCEPT_EDITS and box.warnings == ()
    assert audit([config], project, home) == []
