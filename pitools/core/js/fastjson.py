"""``JSON.stringify`` bytes straight from orjson, without copying the value first.

orjson prints strings, integers up to 2**53 and the shortest float digits exactly as V8 does, and
keeps insertion order. What JavaScript prints differently is either refused by orjson or found
by a cheap walk over the containers (strings are never looked into):

* refused (``TypeError``): lone surrogates, integers beyond 2**53 (``OPT_STRICT_INTEGER``),
  nesting deeper than 255, non-string keys;
* found by :func:`plain_json`: an array-index key (``"0"`` .. ``"4294967294"``: V8 lists those
  first) and the floats orjson lays out differently (integral ``100.0`` and ``-0.0``, ``1e+16`` ..
  ``1e+20``, and ``3e-6`` for ``0.000003``);
* marked while dumping: a raw ``\x00`` for an ``undefined`` member (left out) or element
  (``null``), a raw ``\x01`` for the place of a :class:`Serialized` value (spliced in). Raw
  control bytes never occur otherwise: orjson escapes them inside strings.

So a value is dumped by orjson in one go unless the walk stops at one of those; then it is taken
apart one level, and each member goes the same way, so only the offending members reach the
exact (pure-Python) serializer. The walk stops at the first find, so the levels above cost little.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import orjson

from pitools.core.js.jsonout import Serialized
from pitools.core.js.value import (
    UNDEFINED,
    _is_array_index,
    _quote,
    _stringify_number,
    js_number_to_string,
)

_OPTS: Final = (
    orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_UNDEF: Final = b"\x00"
_HOLE: Final = b"\x01"
_UNDEF_FRAGMENT: Final = orjson.Fragment(_UNDEF)
_HOLE_FRAGMENT: Final = orjson.Fragment(_HOLE)
_DIGITS: Final = frozenset("0123456789")

#: Keys of Pi's messages, blocks and usage: a dict whose keys are all here has no index key.
_COMMON_KEYS: Final = frozenset(
    [
        "role",
        "content",
        "type",
        "text",
        "thinking",
        "thinkingSignature",
        "redacted",
        "id",
        "name",
        "arguments",
        "api",
        "provider",
        "model",
        "usage",
        "input",
        "output",
        "cacheRead",
        "cacheWrite",
        "totalTokens",
        "cost",
        "total",
        "stopReason",
        "errorMessage",
        "timestamp",
        "responseId",
        "toolCallId",
        "toolName",
        "isError",
        "details",
        "data",
        "mimeType",
        "summary",
        "tokensBefore",
        "fromId",
        "customType",
        "display",
        "sections",
        "toolsAdded",
        "toolsRemoved",
        "description",
        "parameters",
        "properties",
        "required",
        "path",
        "command",
        "exitCode",
        "durationMs",
        "offset",
        "limit",
        "oldText",
        "newText",
        "pattern",
        "glob",
        "sourceId",
        "sourceType",
        "messages",
        "entryId",
        "region",
        "tokens",
    ]
)


def plain_json(value: Any) -> bool:
    """Whether orjson prints ``value`` (a dict or list) exactly as ``JSON.stringify`` does, as far
    as keys and floats go: no array-index key, no float in a layout orjson writes differently."""
    stack = [value]
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        if type(v) is dict:
            if not (v.keys() <= _COMMON_KEYS):
                for k in v:
                    if type(k) is str and k and k[0] in _DIGITS and _is_array_index(k):
                        return False
            items = v.values()
        else:
            items = v
        for x in items:
            t = type(x)
            if t is str or t is int or t is bool or x is None:
                continue
            if t is float:
                # orjson: 100.0, -0.0, 1e+16..1e+20 (all integral) and 1e-6..1e-5 as 3e-6.
                if x.is_integer() or -1e-5 < x < 1e-5:
                    return False
            elif t is dict or t is list or t is tuple:
                push(x)
    return True


def _plain(value: Any) -> Any:
    """A value orjson cannot print itself, as plain data (what the older ``jsonable`` made of it)."""
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    return str(value)


class _Dump:
    """One orjson pass; remembers the :class:`Serialized` values it left holes for, in order."""

    __slots__ = ("holes",)

    def __init__(self) -> None:
        self.holes: list[Serialized] = []

    def default(self, value: Any) -> Any:
        if value is UNDEFINED:
            return _UNDEF_FRAGMENT
        if type(value) is Serialized:
            self.holes.append(value)
            return _HOLE_FRAGMENT
        # An object with to_json() (or anything else): its plain form, printed exactly.
        parts: list[bytes] = []
        _encode(_plain(value), parts.append)
        return orjson.Fragment(b"".join(parts))


def encode(value: Any, emit: Callable[[bytes], None]) -> None:
    """Emit the bytes of ``JSON.stringify(value)`` in pieces, in order (:class:`Serialized` values
    without bytes yet are serialized as they are reached, so a stream never holds them all)."""
    _encode(value, emit)


def _encode(value: Any, emit: Callable[[bytes], None]) -> None:
    """Emit ``value`` (not ``UNDEFINED`` unless top-level, where it prints ``null``)."""
    t = type(value)
    if t is Serialized:
        emit(value.raw)
        return
    if t is float:
        emit(_stringify_number(value).encode())
        return
    if (t is dict or t is list or t is tuple) and not plain_json(value):
        _encode_exact(value, emit)
        return
    dump = _Dump()
    try:
        out = orjson.dumps(value, default=dump.default, option=_OPTS)
    except TypeError as exc:  # orjson.JSONEncodeError included
        if "recursion" in str(exc).lower():
            # Deeper than orjson goes: the pure-Python serializer in one go, not level by level.
            from pitools.core.js.jsonout import _unwrap_serialized, jsonable
            from pitools.core.js.value import js_stringify

            emit((js_stringify(_unwrap_serialized(jsonable(value))) or "null").encode("utf-8"))
            return
        out = None
    if out is not None:
        if _UNDEF in out:
            out = _drop_undefined(out)
        if dump.holes:
            pieces = out.split(_HOLE)
            emit(pieces[0])
            for hole, piece in zip(dump.holes, pieces[1:], strict=True):
                emit(hole.raw)
                emit(piece)
        else:
            emit(out)
        return
    _encode_exact(value, emit)


def _encode_exact(value: Any, emit: Callable[[bytes], None]) -> None:
    """One level by hand, every member through :func:`_encode` again."""
    t = type(value)
    if t is dict:
        keys = list(value)
        names = [k if type(k) is str else _key_text(k) for k in keys]
        order = range(len(keys))
        if any(_is_array_index(n) for n in names):
            index = sorted((i for i, n in enumerate(names) if _is_array_index(n)), key=lambda i: int(names[i]))
            order = index + [i for i, n in enumerate(names) if not _is_array_index(n)]  # type: ignore[assignment]
        emit(b"{")
        first = True
        for i in order:
            item = value[keys[i]]
            if item is UNDEFINED:
                continue
            emit((b"" if first else b",") + _quote(names[i]).encode("utf-8") + b":")
            first = False
            _encode(item, emit)
        emit(b"}")
    elif t is list or t is tuple:
        emit(b"[")
        for i, item in enumerate(value):
            if i:
                emit(b",")
            if item is UNDEFINED:
                emit(b"null")
            else:
                _encode(item, emit)
        emit(b"]")
    elif t is str:
        emit(_quote(value).encode("utf-8"))
    elif t is int or t is float:
        emit(_stringify_number(value).encode())
    elif value is None or value is UNDEFINED:
        emit(b"null")
    elif value is True:
        emit(b"true")
    elif value is False:
        emit(b"false")
    else:
        _encode(_plain(value), emit)


def _key_text(key: Any) -> str:
    """``String(key)`` for a non-string dict key (never from JSON; from pitools' own dicts)."""
    if key is None:
        return "null"
    if key is True or key is False:
        return "true" if key else "false"
    if type(key) is int or type(key) is float:
        return js_number_to_string(key)
    return str(key)


def _key_quote(buf: bytearray, end: int) -> int:
    """Where the key string whose closing quote is at ``end`` opens: the nearest quote before it
    that is not escaped (inside a string a quote is always ``\\"``; the key may hold ``,"`` or
    ``{"`` as text, so searching for those would stop too early)."""
    i = end
    while True:
        i = buf.rfind(b'"', 0, i)
        j = i
        while j > 0 and buf[j - 1] == 0x5C:  # backslashes before it
            j -= 1
        if (i - j) % 2 == 0:
            return i


def _drop_undefined(out: bytes) -> bytes:
    """Resolve the ``\\x00`` markers: an object member is left out, an array element is ``null``."""
    pieces = out.split(_UNDEF)
    buf = bytearray(pieces[0])
    for piece in pieces[1:]:
        if buf.endswith(b":"):  # an object member: drop `"key":` (and the comma that joins it)
            # The key's opening quote follows `{` or `,` (the member's start).
            start = _key_quote(buf, len(buf) - 2) - 1
            if buf[start] == 0x2C:  # `,"key":` -> remove with its comma
                del buf[start:]
                buf += piece
            else:  # `{"key":` -> keep `{`, and drop the comma before the next member
                del buf[start + 1 :]
                buf += piece[1:] if piece.startswith(b",") else piece
        else:  # an array element
            buf += b"null"
            buf += piece
    return bytes(buf)
