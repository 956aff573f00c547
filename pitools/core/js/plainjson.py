"""JSON text of plain values without orjson: for the lean warm search, which must not import it.

Plain values are dicts with string keys, lists and tuples, strings, booleans, None and integers
in a given range: there JSON writers agree byte for byte (CPython's C string quoting is the
same as orjson's and JSON.stringify's, ``ensure_ascii`` off). Anything else — floats, integers
out of range, lone surrogates, and what the caller excludes — gives None, and the caller uses
the real writer. Imports nothing at module level.
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
