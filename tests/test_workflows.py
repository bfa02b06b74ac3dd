"""CI workflows run third-party code with the repository's token: every action is pinned
by a full commit SHA (a tag can be moved to other code), and no job gets more than it
asks for (`permissions: {}` at the top)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).resolve().parent.parent / ".github" / "workflows")
                   .glob("*.yml"))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_are_pinned_and_permissions_least(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text())
    assert workflow["permissions"] == {}, "the default must grant nothing"
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"{name}: say what the job needs"
        for step in job.get("steps", []):
            uses = step.get("uses")
            if uses is not None and not uses.startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), uses


def test_there_are_workflows() -> None:
    assert WORKFLOWS
