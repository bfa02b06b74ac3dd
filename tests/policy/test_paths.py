"""Path helpers (`policy/paths.py`): containment on component boundaries, `~`, and each
project's state directory in the user's home."""

from __future__ import annotations

from pathlib import Path

import pytest

from swifty_sandbox.policy.paths import (
    expand_home,
    expand_path,
    is_within,
    project_digest,
    project_state_dir,
)


@pytest.mark.parametrize(("path", "root", "inside"), [
    ("/a/b", "/a", True), ("/a", "/a", True), ("/ab", "/a", False), ("/a/../b", "/a", True),
    ("/x", "/", True), ("/", "/", True), ("a", "/", False),
])
def test_is_within_is_on_a_component_boundary(path: str, root: str, inside: bool) -> None:
    """A string test on normalised paths (callers resolve first): `/ab` is not in `/a`."""
    assert is_within(path, root) is inside


def test_expand_home_only_for_the_users_own_tilde() -> None:
    assert expand_home("~", "/h") == "/h"
    assert expand_home("~/x", "/h") == "/h/x"
    assert expand_home("~bob/x", "/h") == "~bob/x"
    assert expand_home("a/~/b", "/h") == "a/~/b"


def test_expand_path_resolves_links(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert expand_path("link", base=tmp_path, home=tmp_path) == tmp_path.resolve() / "real"


def test_project_state_is_in_the_home_and_distinct_per_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one, other = project_state_dir(Path("/w/app"), home), project_state_dir(Path("/v/app"), home)
    assert one.parent == other.parent == home / ".swifty" / "projects"
    assert one != other and one.name.startswith("app-")
    assert len(project_digest("/w/app")) == 16
