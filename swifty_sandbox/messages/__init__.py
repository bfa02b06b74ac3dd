"""Every sentence a person or a model reads, in English and Chinese, one module per
domain. A key lives in the module of its first word (`net.blocked` in `network`; a test
holds every first word to one module). Identifiers, rule text and JSON keys are never
translated: they are parameters. A test fails when the two languages disagree, and one
when a key a call site uses is missing.

A leaf: it imports nothing else of swifty_sandbox, so every layer may use it, and
importing it costs a few dictionaries (the console script's fast path uses it).
"""

from __future__ import annotations

import os

from . import (
    audit,
    cli,
    confinement,
    decisions,
    doctor,
    files,
    help,
    hooks,
    mcp,
    network,
    oci,
    protocol,
    record,
    run,
    usage,
)

DOMAINS = (files, decisions, confinement, run, network, hooks, mcp, protocol, audit, doctor,
           cli, oci, record, help, usage)

MESSAGES: dict[str, tuple[str, str]] = {
    key: texts for domain in DOMAINS for key, texts in domain.MESSAGES.items()}

_ENGLISH, _CHINESE = 0, 1


def language() -> int:
    """SWIFTY_LANG, else the POSIX locale variables in their precedence order."""
    for var in ("SWIFTY_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return _CHINESE if value.lower().startswith("zh") else _ENGLISH
    return _ENGLISH


def t(key: str, /, **params: object) -> str:
    """The message `key` in the user's language, with `params` filled in."""
    return MESSAGES[key][language()].format(**params)


def parameters(text: str) -> set[str]:
    """The `{names}` a message text uses (for the table's consistency test)."""
    import string  # only the tests ask; the console script's fast path does not load it

    return {name for _, name, _, _ in string.Formatter().parse(text) if name}
