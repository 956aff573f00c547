"""The session's display name (Pi's ``getSessionName``)."""

from __future__ import annotations

from typing import Any

from pitools.core.js.access import entry_type
from pitools.core.js.value import JS_WHITESPACE, UNDEFINED
from pitools.errors import PiCrashError


def session_name(entries: list[Any]) -> Any:
    """Pi's ``getSessionName``: the latest ``session_info`` name, trimmed; empty clears it."""
    for entry in reversed(entries):
        if entry_type(entry) == "session_info":
            name = entry.get("name", UNDEFINED)
            if name is None or name is UNDEFINED:
                return None
            if type(name) is not str:
                raise PiCrashError("TypeError: entry.name?.trim is not a function")
            trimmed = name.strip(JS_WHITESPACE)
            return trimmed or None
    return None
