"""JSON for the lean warm search, which must not import orjson: read and write plain values.

A warm ``pitools search`` starts in a few tens of milliseconds, and importing orjson (or
``re``, ``typing``…) would be a noticeable share of that. Both functions here take a shortcut
through CPython's C JSON code where its result provably equals the general code's, and otherwise
say so, so the caller uses :mod:`~pitools.core.js.json.parse` or :mod:`~pitools.core.js.json.encode`:

* :func:`loads`: a line parsed by the C scanner when the value equals ``orjson.loads``'s, else by
  :func:`~pitools.core.js.json.parse.parse_json_line` (imported only then);
* :func:`plain_json`: plain values (dicts with string keys, lists and tuples, strings, booleans,
  None and integers in a given range) as compact JSON text, where JSON writers agree byte for byte
  (CPython's C string quoting is the same as orjson's and JSON.stringify's, ``ensure_ascii`` off);
  anything else (floats, integers out of range, lone surrogates, and what the caller excludes)
  gives None.

Imports nothing at module level.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_DIGITS = frozenset("0123456789")


class _NotPlain(Exception):
    pass


def plain_json(
    value: Any, *, min_int: int, max_int: int, index_keys: bool = True, max_depth: int | None = None
) -> str | None:
    """``value`` as compact JSON text, or None when it is not plain.

    ``min_int``/``max_int``: the integers written as digits (inclusive). ``index_keys=False``
    refuses keys starting with a digit (JavaScript writes array-index keys first).
    ``max_depth``: containers nested deeper give None (a writer with a depth limit)."""
    try:
        from _json import encode_basestring as quote
    except ImportError:  # not CPython
        return None
    parts: list[str] = []
    append = parts.append

    def walk(v: Any, depth: int) -> None:
        t = type(v)
        if t is str:
            append(quote(v))
            return
        if t is dict or t is list or t is tuple:
            if max_depth is not None and depth >= max_depth:
                raise _NotPlain
            if t is dict:
                append("{")
                first = True
                for k, item in v.items():
                    if type(k) is not str or (not index_keys and k[:1] in _DIGITS):
                        raise _NotPlain
                    append(quote(k) + ":" if first else "," + quote(k) + ":")
                    first = False
                    walk(item, depth + 1)
                append("}")
            else:
                append("[")
                for i, item in enumerate(v):
                    if i:
                        append(",")
                    walk(item, depth + 1)
                append("]")
        elif v is None:
            append("null")
        elif v is True:
            append("true")
        elif v is False:
            append("false")
        elif t is int and min_int <= v <= max_int:
            append(str(v))
        else:
            raise _NotPlain

    try:
        walk(value, 0)
    except _NotPlain:
        return None
    text = "".join(parts)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the writers escape or refuse it
        return None
    return text


class _Unsure(Exception):
    """The C scanner's value might differ from orjson's here: use orjson."""


def _int(text: str) -> int:
    value = int(text)
    if not -(1 << 63) <= value < (1 << 64):  # orjson reads these as floats
        raise _Unsure
    return value


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # orjson refuses these
        raise _Unsure
    return value


def _constant(_text: str) -> Any:
    raise _Unsure  # NaN, Infinity, -Infinity: orjson (and JSON.parse) refuse them


class _Context:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = staticmethod(_float)
    parse_int = staticmethod(_int)
    parse_constant = staticmethod(_constant)


_scanner: Any = None


def _scan(data: bytes) -> Any:
    """``data`` parsed by CPython's C JSON scanner when the result equals ``orjson.loads(data)``;
    raises _Unsure (or ValueError) when it might not."""
    global _scanner
    if _scanner is None:
        try:
            from _json import make_scanner
        except ImportError:  # not CPython: orjson always
            _scanner = False
        else:
            _scanner = make_scanner(_Context())  # type: ignore[arg-type]  # any object with these attributes
    if _scanner is False:
        raise _Unsure
    # Escaped surrogates (orjson refuses lone ones), very deep nesting (orjson stops at 1024
    # levels): leave those to orjson. Strict UTF-8 decoding refuses what orjson refuses.
    if b"\\ud" in data or b"\\uD" in data or data.count(b"[") + data.count(b"{") > 1000:
        raise _Unsure
    text = data.decode("utf-8")
    start = len(text) - len(text.lstrip(" \t\n\r"))
    try:
        value, end = _scanner(text, start)
    except StopIteration:
        raise _Unsure from None
    if text[end:].strip(" \t\n\r"):
        raise _Unsure
    return value


def loads(data: bytes) -> Any:
    """``data`` as search reads a line: orjson's value, or JSON.parse's (the loader's parser) for what
    orjson refuses; raises ValueError when neither reads it."""
    try:
        return _scan(data)
    except (_Unsure, ValueError, RecursionError):
        pass
    # orjson, and for what orjson refuses and JSON.parse reads (invalid UTF-8, lone surrogates,
    # huge numbers, any depth) the rest of the one parser: loaded only then.
    from pitools.core.js.json.parse import parse_json_line

    return parse_json_line(data)[0]
