"""The one ``JSON.parse``: a session line read as Node reads it.

:func:`parse_json_line` tries orjson first (fast, and right for almost every line), then the
stdlib parser for what orjson refuses but ``JSON.parse`` accepts (invalid UTF-8, which Node
decodes to U+FFFD first; lone surrogate escapes; numbers that overflow to Infinity), then
:func:`parse_deep` for lines nested deeper than any recursive parser goes.

Node 20's ``JSON.parse`` is iterative: it accepted 5,000,000 levels of ``[`` in our tests, so its
only limit is memory. orjson stops at 1,024 levels and Python's ``json`` at the recursion limit,
so a line nested deeper would be skipped by pitools while Pi reads it (and sends the entry to the
model). :func:`parse_deep` keeps its own stack and has no depth limit. It is only used for the rare
lines the C parsers refuse, so plain Python speed is fine; strings go through ``json``'s C
``scanstring``. Its semantics match the stdlib step: JSON whitespace only (space, tab, LF, CR),
later duplicate keys win at the first key's position, integers without a fraction or exponent
become ``int``, the rest ``float`` (``1e400`` is ``inf`` as in JavaScript), and
``NaN``/``Infinity`` are rejected.

The lean search reads lines without importing orjson: :mod:`pitools.core.js.json.lean`, which
comes back here for anything its shortcut cannot prove equal.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

import orjson

__all__ = ["DeepJSONError", "UnparsedLineError", "gc_paused", "parse_deep", "parse_json_line", "reject_constant"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while parsed JSON piles up.

    Parsed JSON holds no reference cycles, yet every few hundred new dicts the collector rescans
    the young ones, and every so often all of them: on a 100 MB session that is a third of the
    load time. Nesting is fine; the outermost caller's state is restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def reject_constant(name: str) -> Any:
    """``parse_constant`` for the stdlib parser: ``NaN`` and ``Infinity`` are not JSON."""
    raise ValueError(f"invalid JSON constant {name}")


class UnparsedLineError(ValueError):
    """``JSON.parse`` accepts the line but pitools could not parse it (out of memory)."""


def parse_json_line(data: bytes) -> tuple[Any, bool]:
    """Parse one line as ``JSON.parse`` would after UTF-8 decoding with replacement.

    Returns ``(value, replaced)`` where ``replaced`` tells that invalid UTF-8 was replaced by
    U+FFFD. Raises ``ValueError`` for text ``JSON.parse`` rejects (:class:`UnparsedLineError`
    when it accepts the text but pitools ran out of memory).
    """
    try:
        return orjson.loads(data), False
    except orjson.JSONDecodeError:
        pass
    try:
        text = data.decode("utf-8")
        replaced = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        replaced = True
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        # Deeper than Python's recursion limit allows: Node's JSON.parse has no depth limit,
        # so neither may we (an attacker could otherwise hide an entry from pitools).
        try:
            value = parse_deep(text)
        except DeepJSONError as exc:
            raise ValueError(str(exc)) from None
        except MemoryError:
            raise UnparsedLineError("out of memory while parsing a deeply nested line") from None
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    return value, replaced


# -- any depth -------------------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


class _Object:
    """An object being filled in, and the key whose value is being parsed."""

    __slots__ = ("key", "obj")

    def __init__(self, key: str) -> None:
        self.obj: dict[str, Any] = {}
        self.key = key


class DeepJSONError(ValueError):
    """The text is not JSON (``JSON.parse`` would throw)."""


def parse_deep(text: str) -> Any:
    """Parse one JSON text of any nesting depth; raise :class:`DeepJSONError` if it is not JSON."""
    n = len(text)
    pos = _skip(text, 0)
    # Each frame is a list (an array being filled in) or an _Object.
    stack: list[Any] = []
    while True:
        # ---- parse one value at pos (containers push a frame and continue) ----
        if pos >= n:
            raise DeepJSONError(f"unexpected end of JSON input at {pos}")
        ch = text[pos]
        value: Any
        if ch == '"':
            value, pos = _string(text, pos + 1)
        elif ch == "{":
            pos = _skip(text, pos + 1)
            if pos < n and text[pos] == "}":
                value, pos = {}, pos + 1
            else:
                key, pos = _key(text, pos)
                stack.append(_Object(key))
                pos = _skip(text, pos)
                continue
        elif ch == "[":
            pos = _skip(text, pos + 1)
            if pos < n and text[pos] == "]":
                value, pos = [], pos + 1
            else:
                stack.append([])
                continue
        elif ch in _LITERALS:
            word, value = _LITERALS[ch]
            if not text.startswith(word, pos):
                raise DeepJSONError(f"unexpected token at {pos}")
            pos += len(word)
        else:
            m = _NUMBER.match(text, pos)
            if m is None:
                raise DeepJSONError(f"unexpected token at {pos}")
            frac, exp = m.group(1), m.group(2)
            value = float(m.group()) if frac or exp else int(m.group())
            pos = m.end()
        # ---- attach the finished value to its container, closing containers as they end ----
        while True:
            pos = _skip(text, pos)
            if not stack:
                if pos != n:
                    raise DeepJSONError(f"unexpected data after JSON at {pos}")
                return value
            top = stack[-1]
            if type(top) is list:
                top.append(value)
                if pos < n and text[pos] == ",":
                    pos = _skip(text, pos + 1)
                    break
                if pos < n and text[pos] == "]":
                    stack.pop()
                    value = top
                    pos += 1
                    continue
                raise DeepJSONError(f"expected ',' or ']' at {pos}")
            top.obj[top.key] = value
            if pos < n and text[pos] == ",":
                top.key, pos = _key(text, _skip(text, pos + 1))
                break
            if pos < n and text[pos] == "}":
                stack.pop()
                value = top.obj
                pos += 1
                continue
            raise DeepJSONError(f"expected ',' or '}}' at {pos}")


def _skip(text: str, pos: int) -> int:
    """The position after the JSON whitespace at ``pos``."""
    m = _WS.match(text, pos)
    return pos if m is None else m.end()


def _string(text: str, pos: int) -> tuple[str, int]:
    try:
        found: tuple[str, int] = scanstring(text, pos, True)
        return found
    except ValueError as exc:
        raise DeepJSONError(str(exc)) from None


def _key(text: str, pos: int) -> tuple[str, int]:
    """Read ``"key" :`` at ``pos``; return the key and the position after the colon and blanks."""
    if pos >= len(text) or text[pos] != '"':
        raise DeepJSONError(f"expected a property name at {pos}")
    key, pos = _string(text, pos + 1)
    pos = _skip(text, pos)
    if pos >= len(text) or text[pos] != ":":
        raise DeepJSONError(f"expected ':' at {pos}")
    return key, _skip(text, pos + 1)
