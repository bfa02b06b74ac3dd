"""The README's backend table and the suites agree: every `@differs` row of the escape
suites is a row of the table, and every id in the table is one a test stands behind."""

from __future__ import annotations

import re
from pathlib import Path

from tests.escape.differences import ROWS

ROOT = Path(__file__).resolve().parent.parent


def _table_ids() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where user namespaces are refused (Landlock)", 1)[1]
    rows = [line for line in section.split("\n## ", 1)[0].splitlines()
            if line.startswith("| ")]
    return {m.group(1) for line in rows for m in [re.search(r"\| `([a-z-]+)` \|$", line)]
            if m}


def _used() -> set[str]:
    used = set()
    for path in (ROOT / "tests" / "escape").glob("test_*.py"):
        used |= set(re.findall(r'@pytest\.mark\.differs\("([a-z-]+)"', path.read_text()))
    return used


def test_every_difference_is_a_row_of_the_table() -> None:
    assert _table_ids() == set(ROWS)


def test_every_row_has_a_test_behind_it() -> None:
    assert _used() == set(ROWS)
