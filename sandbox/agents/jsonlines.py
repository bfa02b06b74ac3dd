"""The one reader of JSON lines, for `serve` and `check --batch`.

Whatever a line holds — bytes that are not UTF-8, deep nesting, a lone surrogate, a
megabyte-long line, JSON that is not JSON — it becomes a `JsonLine` with `error` set,
never an exception: the caller answers that line with an error object and reads on.
Memory stays flat: a line over `MAX_LINE_BYTES` is skipped without being kept. A bad
line whose `id` can still be read (a lone surrogate or a byte that is not UTF-8 in
another field, a `NaN` elsewhere) keeps that id, so the answer reaches the request the
agent is waiting on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from swifty_sandbox.messages import t

MAX_LINE_BYTES = 4 * 1024 * 1024  # a command with a heredoc is kilobytes
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class JsonLine:
    number: int  # 1-based, as editors count
    value: object = None  # the parsed JSON when `error` is None
    error: str | None = None
    read_id: object = None  # a bad line's `id`, when it could be read cleanly

    @property
    def id(self) -> object:
        """The request's `id`, to echo in an answer (None when there is none)."""
        if self.error is not None:
            return self.read_id
        return self.value.get("id") if isinstance(self.value, dict) else None


def read_json_lines(stream: IO[bytes]) -> Iterator[JsonLine]:
    """Every non-blank line of the stream, parsed or with the reason it is not."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # skip the rest of the line
                raw = stream.readline(_CHUNK)
            yield JsonLine(number, error=t("jsonl.too_long", limit=MAX_LINE_BYTES))
            continue
        if raw.strip():
            yield parse_json_line(raw, number)


def parse_json_line(raw: bytes, number: int) -> JsonLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return JsonLine(number, error=t("jsonl.not_utf8", byte=f"0x{raw[e.start]:02x}",
                                        column=e.start + 1), read_id=_readable_id(raw))
    try:
        value = json.loads(text, parse_constant=_not_finite, parse_float=_finite)
    except RecursionError:
        return JsonLine(number, error=t("jsonl.too_deep"))
    except ValueError as e:  # not JSON, or an integer too long to convert
        return JsonLine(number, error=str(e), read_id=_readable_id(raw))
    bad = _lone_surrogate(value)
    if bad is not None:
        return JsonLine(number, error=t("jsonl.surrogate", code=f"\\u{ord(bad):04x}"),
                        read_id=_clean_id(value))
    return JsonLine(number, value)


def _readable_id(raw: bytes) -> object:
    """The `id` of a line that is JSON but for bytes that are not UTF-8 or a `NaN`:
    read with those parts replaced (an id holding them is not readable)."""
    try:
        value = json.loads(raw.decode("utf-8", "surrogateescape"),
                           parse_constant=lambda _: None, parse_float=_finite_or_none)
    except (ValueError, RecursionError):
        return None
    return _clean_id(value)


def _clean_id(value: object) -> object:
    """The object's `id` when echoing it is safe (no lone surrogate, nothing infinite)."""
    if not isinstance(value, dict):
        return None
    id_ = value.get("id")
    try:
        json.dumps(id_, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, RecursionError):
        return None
    return id_ if _lone_surrogate(id_) is None else None


def _finite_or_none(token: str) -> float | None:
    value = float(token)
    return None if value in (float("inf"), float("-inf")) else value


def _not_finite(token: str) -> float:
    """`NaN`, `Infinity`: not JSON, and echoed in an `id` they would make our own answer
    invalid JSON for the agent."""
    raise ValueError(t("jsonl.not_finite", token=token))


def _finite(token: str) -> float:
    value = float(token)
    if value in (float("inf"), float("-inf")):  # `1e400`
        return _not_finite(token)
    return value


def _lone_surrogate(value: object) -> str | None:
    """A `\\ud800`-style escape that names no character, anywhere in the value (keys
    too): such a string can be neither encoded nor passed to the system."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as e:
                return item[e.start]
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None
