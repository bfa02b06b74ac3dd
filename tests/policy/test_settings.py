"""`config.yaml` settings (`policy/settings.py`): layers, what a committed file may not
loosen, malformed values at file:line:col; the table is the schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from swifty_sandbox import Mode, PolicyFileError, Sandbox, SandboxMode
from swifty_sandbox.policy.settings import SETTINGS


def schema_leaves(schema: dict[str, Any], prefix: str = "") -> set[str]:
    """The dotted keys of a JSON Schema's leaves (properties that are not objects)."""
    out: set[str] = set()
    for key, sub in schema["properties"].items():
        if "properties" in sub:
            out |= schema_leaves(sub, f"{prefix}{key}.")
        else:
            out.add(prefix + key)
    return out


def schema(name: str) -> dict[str, Any]:
    text = (resources.files("swifty_sandbox.profiles") / f"{name}.schema.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def test_the_settings_table_is_the_config_schema() -> None:
    keys = [s.key for s in SETTINGS]
    assert len(set(keys)) == len(keys)
    assert set(keys) == schema_leaves(schema("config"))


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
