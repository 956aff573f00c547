"""Small readers shared by the trace/trajectory builders: times, usage numbers, message text."""

from __future__ import annotations

import math

from pitools.core.js.date import js_date_ms
from pitools.core.js.types import Entry, JsValue


def entry_ms(entry: Entry) -> int | None:
    """The entry's ISO ``timestamp`` in epoch milliseconds, or None when it does not parse."""
    if type(entry) is not dict:
        return None
    ts = entry.get("timestamp")
    if type(ts) is not str:
        return None
    ms = js_date_ms(ts)
    return None if isinstance(ms, float) and math.isnan(ms) else int(ms)


def message_ms(message: JsValue) -> int | None:
    """A message's numeric ``timestamp`` (Pi stamps it when the message object is created)."""
    if type(message) is not dict:
        return None
    ts = message.get("timestamp")
    if (type(ts) is int or type(ts) is float) and math.isfinite(ts) and 0 <= ts < 8.64e15:
        return int(ts)
    return None


def num(value: JsValue) -> int | float:
    """A usage count as a number: anything but a finite JSON number counts as 0."""
    if type(value) is int:
        return value
    if type(value) is float and math.isfinite(value):
        return int(value) if value.is_integer() else value
    return 0


def fnum(value: JsValue) -> float:
    """A number as a finite float (cost columns); anything else, or out of range, is 0.0."""
    if type(value) is not int and type(value) is not float:
        return 0.0
    try:
        f = float(value)
    except OverflowError:
        return 0.0
    return f if math.isfinite(f) else 0.0


def usage_numbers(usage: JsValue) -> dict[str, int | float] | None:
    """Pi's usage record as plain numbers (input excludes cache reads and writes, as Pi counts)."""
    if type(usage) is not dict:
        return None
    cost = usage.get("cost")
    return {
        "input": num(usage.get("input")),
        "output": num(usage.get("output")),
        "cacheRead": num(usage.get("cacheRead")),
        "cacheWrite": num(usage.get("cacheWrite")),
        "cost": num(cost.get("total")) if type(cost) is dict else 0,
    }


def text_of(content: JsValue, kinds: tuple[str, ...] = ("text",), *, images: bool = False) -> str:
    """The text blocks of a message content (a plain string is its own text); with ``images``, an
    image block stands as a short placeholder."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    parts: list[str] = []
    for block in content:
        if type(block) is not dict:
            continue
        btype = block.get("type")
        if btype in kinds:
            text = block.get("thinking") if btype == "thinking" else block.get("text")
            if type(text) is str:
                parts.append(text)
        elif images and btype == "image":
            parts.append(f"[image {str_or(block.get('mimeType'), 'unknown type')}]")
    return "\n".join(parts)


def str_or(value: JsValue, default: str = "") -> str:
    return value if type(value) is str else default
