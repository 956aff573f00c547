"""The exact ``JSON.stringify`` writer, in plain Python: what the fast encoder falls back to.

:mod:`pitools.core.js.json.encode` lets orjson print whatever it prints exactly as V8 does and
hands this module only what it cannot: lone surrogates, array-index keys (V8 lists them first),
integers beyond 2**53, the float layouts orjson writes differently, nesting deeper than orjson
goes. :func:`write_exact` writes one container level here and each member through a callback,
so the fast encoder sends only the offending members this way, and :func:`exact_bytes` walks a
whole value (the reference the fast path is tested against; node's own output pins this one,
``tests/unit/fixtures/jsvalue/cases.json``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_basestring
from typing import Any, Final

import orjson

from pitools.core.js.value import UNDEFINED, _float_to_string, _int_to_number, is_array_index, js_number_to_string

__all__ = ["exact_bytes", "number_text", "quote", "write_exact"]

_TWO_53: Final = 2**53

# JS escapes lone surrogates (well-formed JSON.stringify); a high surrogate directly followed by a low one
# is a valid pair and stays raw, even when Python holds it as two separate code points.
_LONE_SURROGATE_RE: Final = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ANY_SURROGATE_RE: Final = re.compile(r"[\ud800-\udfff]")


def _escape_surrogate(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def quote(s: str) -> str:
    """JS ``JSON.stringify(s)`` for a string: ``QuoteJSONString``.

    ``"`` and ``\\`` escaped; ``\\b \\t \\n \\f \\r`` named; other code units below U+0020 as ``\\u00xx``
    (lowercase hex); lone surrogates as ``\\udxxx``; everything else raw (non-ASCII, U+2028/U+2029, DEL).
    orjson and the stdlib's C ``encode_basestring`` both do exactly this (checked against node for every
    ASCII character), except for surrogates, which orjson refuses and ``encode_basestring`` leaves raw.
    """
    if len(s) < 48:
        # encode_basestring is quicker on short strings, orjson on long ones.
        if s.isascii() or _ANY_SURROGATE_RE.search(s) is None:
            return _encode_basestring(s)
    else:
        try:
            return orjson.dumps(s).decode()
        except orjson.JSONEncodeError:
            pass
    quoted = _LONE_SURROGATE_RE.sub(_escape_surrogate, _encode_basestring(s))
    if _ANY_SURROGATE_RE.search(quoted) is not None:
        # What is left are high/low pairs held as two code points: JS sees one character; make it one.
        quoted = quoted.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return quoted


def number_text(v: int | float) -> str:
    """``JSON.stringify`` of a number: like ``toString`` but non-finite numbers become ``null``."""
    if type(v) is int:
        if -_TWO_53 <= v <= _TWO_53:
            return str(v)
        v = _int_to_number(v)
    if v - v != 0:  # NaN or +-Infinity
        return "null"
    return _float_to_string(v)


def key_text(key: Any) -> str:
    """``String(key)`` for a non-string dict key (never from JSON; from pitools' own dicts)."""
    if key is None:
        return "null"
    if key is True or key is False:
        return "true" if key else "false"
    if type(key) is int or type(key) is float:
        return js_number_to_string(key)
    return str(key)


def plain_form(value: Any) -> Any:
    """A value that is not JSON data, as plain data: its ``to_json()``, else its ``str()``."""
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    return str(value)


def strict_form(value: Any) -> Any:
    """:func:`plain_form` for writers that accept JSON data only: refuse the value."""
    raise TypeError(f"JSON.stringify: unsupported type {type(value).__name__}")


Emit = Callable[[bytes], None]
Other = Callable[[Any], Any]
Member = Callable[[Any, Emit, Other], None]


def write_exact(value: Any, emit: Emit, other: Other = plain_form, member: Member | None = None) -> None:
    """Emit ``JSON.stringify(value)`` for one level of ``value`` by hand (``UNDEFINED`` at the top
    prints ``null``), each member through ``member(item, emit, other)`` (default: this function,
    a whole walk; one frame a level, as deep values need).

    Keys in V8's own-property order (array indices first, ascending), ``UNDEFINED`` members left
    out and elements ``null``, numbers as JavaScript prints them. Anything that is not JSON data
    is written as ``other(value)``.
    """
    if member is None:
        member = write_exact
    t = type(value)
    if t is dict:
        keys = list(value)
        names = [k if type(k) is str else key_text(k) for k in keys]
        order: list[int] | range = range(len(keys))
        if any(n[:1].isdigit() and is_array_index(n) for n in names):
            index = sorted((i for i, n in enumerate(names) if is_array_index(n)), key=lambda i: int(names[i]))
            order = index + [i for i, n in enumerate(names) if not is_array_index(n)]
        emit(b"{")
        first = True
        for i in order:
            item = value[keys[i]]
            if item is UNDEFINED:
                continue
            emit((b"" if first else b",") + quote(names[i]).encode("utf-8") + b":")
            first = False
            member(item, emit, other)
        emit(b"}")
    elif t is list or t is tuple:
        emit(b"[")
        for i, item in enumerate(value):
            if i:
                emit(b",")
            if item is UNDEFINED:
                emit(b"null")
            else:
                member(item, emit, other)
        emit(b"]")
    elif t is str:
        emit(quote(value).encode("utf-8"))
    elif t is int or t is float:
        emit(number_text(value).encode())
    elif value is None or value is UNDEFINED:
        emit(b"null")
    elif value is True:
        emit(b"true")
    elif value is False:
        emit(b"false")
    elif isinstance(value, str):
        emit(quote(str(value)).encode("utf-8"))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        emit(number_text(int(value) if isinstance(value, int) else float(value)).encode())
    elif isinstance(value, dict):
        write_exact(dict(value), emit, other, member)
    elif isinstance(value, list | tuple):
        write_exact(list(value), emit, other, member)
    else:
        member(other(value), emit, other)


def exact_bytes(value: Any, other: Other = strict_form) -> bytes:
    """``JSON.stringify(value)`` (``null`` for ``UNDEFINED``) by the plain-Python walk alone."""
    parts: list[bytes] = []
    write_exact(value, parts.append, other)
    return b"".join(parts)
