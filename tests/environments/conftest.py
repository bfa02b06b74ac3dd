"""The environment tests confine for real: rerun as the unprivileged user too."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/environments/" in str(item.fspath):
            item.add_marker(pytest.mark.bwrap)
            item.add_marker(pytest.mark.unprivileged)
