"""``JSON.stringify`` bytes straight from orjson, without copying the value first.

orjson prints strings, integers up to 2**53 and the shortest float digits exactly as V8 does, and
keeps insertion order. Everything else that JavaScript prints differently is either refused by
orjson or visible in its output:

* refused (``TypeError``): lone surrogates, integers beyond 2**53 (``OPT_STRICT_INTEGER``),
  nesting deeper than 255, non-string keys;
* visible: an array-index key (``"0"`` .. ``"4294967294"``: V8 lists those first), and the three
  float layouts that differ (``100.0`` for ``100``, ``1e+16``..``1e+20`` for the positional form,
  ``3e-6`` for ``0.000003``); a raw ``\\x00`` marks an ``undefined`` member (left out) or
  element (``null``), a raw ``\\x01`` the place of a :class:`Serialized` value (spliced in).
  Raw control bytes never occur otherwise: orjson escapes them inside strings.

So each value is dumped once by orjson; only a value whose dump was refused or shows one of those
patterns is taken apart, one level at a time, and only its offending members go further down
to the exact (pure-Python) serializer. A pattern inside a string (``"version 1.0"``) costs one
extra level, never a wrong answer.
"""

from __future__ import annotations

import re
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
#: Types whose orjson output is already JavaScript's (or refused).
_SCALARS: Final = (str, int, bool, type(None))
_HOLE_FRAGMENT: Final = orjson.Fragment(_HOLE)

# orjson float layouts JavaScript prints differently (one literal-prefixed pattern each: far
# quicker than one alternation).
_INTEGRAL_FLOAT_RE: Final = re.compile(rb"\.0(?![0-9])")
_EXP_PLUS_RE: Final = re.compile(rb"e\+(?:1[6-9]|20)(?![0-9])")
_EXP_MINUS_6_RE: Final = re.compile(rb"e-6(?![0-9])")
# A member key made of digits. `{"` and `,"` never occur inside an orjson string (a quote in a
# string is always `\"`), so every hit is a real key.
_DIGIT_KEY_AFTER_COMMA_RE: Final = re.compile(rb',"([0-9]{1,10})":')
_DIGIT_KEY_FIRST_RE: Final = re.compile(rb'\{"([0-9]{1,10})":')


def _index_key(m: re.Match[bytes] | None) -> bool:
    return m is not None and _is_array_index(m.group(1).decode())


def needs_exact(out: bytes) -> bool:
    """Whether orjson's bytes for a value may differ from ``JSON.stringify``'s (see the module doc)."""
    if _INTEGRAL_FLOAT_RE.search(out) is not None:
        return True
    if b"e+" in out and _EXP_PLUS_RE.search(out) is not None:
        return True
    if b"e-6" in out and _EXP_MINUS_6_RE.search(out) is not None:
        return True
    for rx in (_DIGIT_KEY_FIRST_RE, _DIGIT_KEY_AFTER_COMMA_RE):
        for m in rx.finditer(out):
            if _index_key(m):
                return True
    return False


def _plain(value: Any) -> Any:
    """A value orjson cannot print itself, as the older ``jsonable`` presented it."""
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
        return _plain(value)


def encode(value: Any) -> list[bytes]:
    """The bytes of ``JSON.stringify(value)`` as a list of pieces (join or write them in order)."""
    parts: list[bytes] = []
    try:
        _encode(value, parts.append)
    except RecursionError:
        # Deeper than Python recursion goes: the older copy-then-dump pair has an iterative path.
        from pitools.core.js.jsonout import dumps, jsonable

        return [dumps(jsonable(value))]
    return parts


def _encode(value: Any, emit: Callable[[bytes], None]) -> None:
    """Emit ``value`` (not ``UNDEFINED`` unless top-level, where it prints ``null``)."""
    t = type(value)
    if t is Serialized:
        emit(value.raw)
        return
    if t is float:
        emit(_stringify_number(value).encode())
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
    if out is not None and (t in _SCALARS or not needs_exact(out)):
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


def _drop_undefined(out: bytes) -> bytes:
    """Resolve the ``\\x00`` markers: an object member is left out, an array element is ``null``."""
    pieces = out.split(_UNDEF)
    buf = bytearray(pieces[0])
    for piece in pieces[1:]:
        if buf.endswith(b":"):  # an object member: drop `"key":` (and the comma that joins it)
            # The key's opening quote follows `{` or `,`; inside a string a quote is always `\"`.
            start = max(buf.rfind(b',"'), buf.rfind(b'{"'))
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
