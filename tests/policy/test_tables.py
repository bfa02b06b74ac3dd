"""The settings and profile tables are the schemas' keys: a key added to one and not
the other is either unreadable or undocumented."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from swifty_sandbox.policy.profile import PROFILE_KEYS, builtin_profiles
from swifty_sandbox.policy.settings import SETTINGS


def _schema(name: str) -> dict[str, Any]:
    text = (resources.files("swifty_sandbox.profiles") / f"{name}.schema.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def _leaves(schema: dict[str, Any], prefix: str = "") -> Iterator[str]:
    for key, sub in schema["properties"].items():
        if "properties" in sub:
            yield from _leaves(sub, f"{prefix}{key}.")
        else:
            yield prefix + key


def test_the_settings_table_is_the_config_schema() -> None:
    keys = [s.key for s in SETTINGS]
    assert len(set(keys)) == len(keys)
    assert set(keys) == set(_leaves(_schema("config")))


def test_the_profile_table_is_the_profile_schema() -> None:
    keys = [k.key for k in PROFILE_KEYS]
    assert len(set(keys)) == len(keys)
    assert set(keys) == set(_leaves(_schema("profile")))


@pytest.mark.parametrize("name", builtin_profiles())
def test_the_built_in_profiles_validate(name: str) -> None:
    text = (resources.files("swifty_sandbox.profiles") / f"{name}.yaml").read_text()
    jsonschema.validate(yaml.safe_load(text), _schema("profile"))


def test_a_profile_schema_violation_is_refused_by_the_loader_too(tmp_path: Path) -> None:
    """The schema and the loader agree on an unknown key (a control for the above)."""
    from swifty_sandbox import PolicyFileError
    from swifty_sandbox.policy.profile import load_profile

    data = {"extends": "default", "seccomp": {"sockts": ["AF_INET"]}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema("profile"))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(PolicyFileError, match="unknown key `sockts`"):
        load_profile("p.yaml", tmp_path)
