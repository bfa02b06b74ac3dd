"""Strict readings of the `serve` protocol's fields (docs/protocol.md). Pure.

A field that is not of its documented JSON type is an error, never a guess: the string
`"false"` is not a "no" that happens to be truthy, and a `"timeout": "5"` is not "no
timeout".
"""

from __future__ import annotations

import math

from swifty_sandbox.messages import t

from .api import Answer

MAX_TIMEOUT = 1e9  # seconds; above it the deadline would be meaningless (no limit)


class ProtocolError(ValueError):
    """A message whose fields are not of their documented types."""


def permission_answer(message: dict[str, object]) -> Answer:
    """A `permission_response`'s answer: `allow` must be a JSON boolean, `always` a JSON
    boolean when present."""
    allow, always = message.get("allow"), message.get("always", False)
    if not isinstance(allow, bool):
        raise ProtocolError(t("serve.not_bool", key="allow", found=_json(allow)))
    if not isinstance(always, bool):
        raise ProtocolError(t("serve.not_bool", key="always", found=_json(always)))
    if not allow:
        return Answer.NO
    return Answer.ALWAYS if always else Answer.YES


def timeout_of(message: dict[str, object]) -> float | None:
    """A request's `timeout` in seconds: absent or null is none; anything but a positive
    finite number is an error."""
    value = message.get("timeout")
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0):
        raise ProtocolError(t("serve.bad_timeout", found=_json(value)))
    return float(value) if value < MAX_TIMEOUT else None


def stream_of(message: dict[str, object]) -> bool:
    """A Bash request's `stream`: whether its output is sent as `output` events while
    it runs; absent is no, anything but a JSON boolean an error."""
    value = message.get("stream", False)
    if not isinstance(value, bool):
        raise ProtocolError(t("serve.not_bool", key="stream", found=_json(value)))
    return value


def _json(value: object) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["MAX_TIMEOUT", "ProtocolError", "permission_answer", "stream_of", "timeout_of"]
