"""Caps on a command's processes and memory, as numbers: the defaults and the written
forms (`--max-memory 4G`, `limits: {processes: 512}`). 0 means no cap.

The defaults leave the machine usable while one command runs wild: processes 1024, or
32 per CPU on bigger machines (threads count too: a JVM or a parallel build has
hundreds); memory three quarters of physical memory.
"""

from __future__ import annotations

import os
import re

from swifty_sandbox.messages import t

UNLIMITED = ("unlimited", "none")
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")


def physical_memory() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def default_max_processes() -> int:
    return max(1024, 32 * (os.cpu_count() or 1))


def default_max_memory() -> int:
    return physical_memory() * 3 // 4


def parse_processes(text: str) -> int:
    """`512` → 512; `unlimited` → 0. Raises ValueError with the message to show."""
    value = text.strip().lower()
    if value in UNLIMITED:
        return 0
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise ValueError(t("limits.bad_processes", value=text))


def parse_memory(text: str) -> int:
    """`4G`, `512M`, `1.5GiB`, `50%` (of physical memory), bytes → bytes; `unlimited`
    → 0. Raises ValueError with the message to show."""
    value = text.strip()
    if value.lower() in UNLIMITED:
        return 0
    percent = _PERCENT.fullmatch(value)
    size = _SIZE.fullmatch(value)
    if percent and 0 < float(percent.group(1)) <= 100:
        return int(physical_memory() * float(percent.group(1)) / 100)
    if size and float(size.group(1)) > 0:
        return int(float(size.group(1)) * _UNITS[size.group(2).lower()])
    raise ValueError(t("limits.bad_memory", value=text))


def describe_memory(size: int) -> str:
    """Bytes as a person reads them: 3.5G, 512M."""
    for unit in ("T", "G", "M", "K"):
        if size >= _UNITS[unit.lower()]:
            return f"{size / _UNITS[unit.lower()]:.4g}{unit}"
    return f"{size}B"
