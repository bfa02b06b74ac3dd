"""Sandbox profiles (`policy/profile.py`): the built-in ones, `extends`, unknown names;
the table is the schema. (The seccomp side: tests/sandbox/test_seccomp.py.)"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

from swifty_sandbox import PolicyFileError, Sandbox
from swifty_sandbox.policy.profile import PROFILE_KEYS, builtin_profiles, load_profile

from .test_settings import schema, schema_leaves, write_config


def test_the_profile_table_is_the_profile_schema() -> None:
    keys = [k.key for k in PROFILE_KEYS]
    assert len(set(keys)) == len(keys)
    assert set(keys) == schema_leaves(schema("profile"))


@pytest.mark.parametrize("name", builtin_profiles())
def test_the_built_in_profiles_validate(name: str) -> None:
    text = (resources.files("swifty_sandbox.profiles") / f"{name}.yaml").read_text()
    jsonschema.validate(yaml.safe_load(text), schema("profile"))


def test_a_profile_schema_violation_is_refused_by_the_loader_too(tmp_path: Path) -> None:
    """The schema and the loader agree on an unknown key (a control for the above)."""
    data = {"extends": "default", "seccomp": {"sockts": ["AF_INET"]}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema("profile"))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(PolicyFileError, match="unknown key `sockts`"):
        load_profile("p.yaml", tmp_path)


def test_unknown_profile(project: Path, home: Path) -> None:
    write_config(home, "sandbox: {profile: nonesuch}\n")
    with pytest.raises(PolicyFileError, match="unknown sandbox profile `nonesuch`"):
        Sandbox(project, home=home)


def test_a_child_profile_keeps_the_parents_denied_calls(tmp_path: Path) -> None:
    """Changing one seccomp key under `extends` must not drop the parent's syscall sets
    (it once did: a profile that set only `socketpairs` allowed ptrace and mount)."""
    (tmp_path / "p.yaml").write_text("extends: default\nseccomp:\n  socketpairs: [SOCK_STREAM]\n")
    child, parent = load_profile("p.yaml", tmp_path).seccomp, load_profile("default",
                                                                             tmp_path).seccomp
    assert "ptrace" in parent.deny and (child.deny, child.enosys) == (parent.deny,
                                                                      parent.enosys)
    assert child.deny_namespaces and child.sockets == parent.sockets
    (tmp_path / "q.yaml").write_text("extends: default\nseccomp:\n  deny: [bpf]\n")
    assert load_profile("q.yaml", tmp_path).seccomp.deny == ("bpf",)  # replaced, not added
