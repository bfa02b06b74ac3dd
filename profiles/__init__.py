"""The built-in profiles, rule sets and schemas: package data, read from beside this file
(not through `importlib.resources`, whose first use costs a cold start tens of ms; the
package is always installed as files, never from a zip)."""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def names() -> list[str]:
    """The data files' names."""
    return os.listdir(HERE)


def read(name: str) -> str:
    """One data file's text."""
    with open(os.path.join(HERE, name), encoding="utf-8") as file:
        return file.read()
