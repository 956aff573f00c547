"""Turn core values into JSON exactly as ``JSON.stringify`` would present them.

:func:`to_json_bytes` (and its streaming form :func:`write_json_to`) is what every output uses.
:func:`jsonable` + :func:`dumps` are the older copy-then-dump pair, kept for callers that want the
plain data; unlike :func:`to_json_bytes` they keep Python's key order (JavaScript lists array-index
keys first) and orjson's float layouts (``1e+16``, ``3e-6``, ``9007199254740994.0``).

``UNDEFINED`` object members are left out (and become ``null`` inside arrays), NaN and
infinities become ``null``, integers beyond 2**53 become the double JavaScript holds, and
integral floats print without a fraction (``200.0`` is ``200`` in JavaScript).
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from pitools.core.js.value import UNDEFINED

_MAX_SAFE = 2**53


def jsonable(value: Any) -> Any:
    """A copy of ``value`` holding only what ``JSON.stringify`` would keep, JS-normalised."""
    try:
        return _jsonable(value)
    except RecursionError:
        # JSON.parse accepts any depth; values too deep for recursion are copied with a stack.
        return _jsonable_iterative(value)


def _jsonable_iterative(value: Any) -> Any:
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, holder, 0)]
    while stack:
        src, parent, key = stack.pop()
        t = type(src)
        if t is dict:
            new: Any = {}
            for k, v in src.items():
                if v is not UNDEFINED:
                    new[k] = None  # keeps the key order; filled in below
                    stack.append((v, new, k))
        elif t is list or t is tuple:
            new = [None] * len(src)
            for i, v in enumerate(src):
                if v is not UNDEFINED:
                    stack.append((v, new, i))
        else:
            new = _jsonable(src)
        parent[key] = new
    return holder[0]


def _jsonable(value: Any) -> Any:
    t = type(value)
    if t is str or value is None or t is bool:
        return value
    if t is int:
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return value
        return _float(float(value))
    if t is float:
        return _float(value)
    if t is dict:
        return {k: _jsonable(v) for k, v in value.items() if v is not UNDEFINED}
    if t is list or t is tuple:
        return [None if v is UNDEFINED else _jsonable(v) for v in value]
    if value is UNDEFINED:
        return None
    if t is Serialized:
        return value
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return _jsonable(to_json())
    return str(value)


def _float(x: float) -> Any:
    if math.isnan(x) or math.isinf(x):
        return None
    if x.is_integer() and abs(x) <= _MAX_SAFE:
        return int(x)
    return x


class Serialized:
    """A value whose JSON bytes are made once and embedded as they are: :func:`to_json_bytes` and
    :func:`dumps` write ``raw``, :func:`jsonable` passes it through, and the slow serializers
    fall back to ``data``.

    Made with ``raw=None`` (see :func:`serialize_each`), the bytes are produced when first
    written and kept only while the shared ``budget`` (a one-item list of bytes left) allows, so
    a huge output is streamed instead of held.
    """

    __slots__ = ("_raw", "budget", "data")

    def __init__(self, data: Any, raw: bytes | None = None, budget: list[int] | None = None) -> None:
        self.data = data
        self._raw = raw
        self.budget = budget

    @property
    def raw(self) -> bytes:
        raw = self._raw
        if raw is None:
            raw = to_json_bytes(self.data)
            budget = self.budget
            if budget is None or budget[0] >= len(raw):
                if budget is not None:
                    budget[0] -= len(raw)
                raw = self._raw = _compact(raw)
        return raw


def _compact(raw: bytes) -> bytes:
    # orjson's output keeps the slack of its growing buffer in the heap: a kept copy is smaller.
    return bytes(memoryview(raw)) if len(raw) > 4096 else raw


#: How many bytes of shared message JSON :func:`serialize_each` keeps for reuse by default.
SHARED_KEEP_BYTES = 4 << 20


def serialize_each(values: list[Any], keep_bytes: int = SHARED_KEEP_BYTES) -> list[Serialized]:
    """One :class:`Serialized` per value, the same one for repeated objects: an output that lists
    the same messages twice (``context``: per entry and flat) serializes each once, keeping at
    most ``keep_bytes`` of them (the rest are serialized again rather than held in memory)."""
    seen: dict[int, Serialized] = {}
    budget = [keep_bytes]
    out: list[Serialized] = []
    for value in values:
        done = seen.get(id(value))
        if done is None:
            done = seen[id(value)] = Serialized(value, None, budget)
        out.append(done)
    return out


def fragment(data: Any) -> Any:
    """``data`` serialized now, exactly as :func:`to_json_bytes` would (:class:`Serialized`): later
    outputs embed the bytes as they are."""
    return Serialized(data, _compact(to_json_bytes(data)))


def _embed(value: Any) -> Any:
    if type(value) is Serialized:
        return orjson.Fragment(value.raw)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _unwrap_serialized(value: Any, depth: int = 0) -> Any:
    """``value`` with its :class:`Serialized` members replaced by their data, for the slow
    serializers. pitools wraps values only near the top of a result (a context's message lists sit
    three or four levels down), so only the first :data:`_SERIALIZED_DEPTH` levels are copied; what
    lies deeper (session data nested thousands of levels, the reason the slow path runs) is
    passed through untouched and never recursed into."""
    t = type(value)
    if t is Serialized:
        return value.data
    if depth >= _SERIALIZED_DEPTH:
        return value
    if t is dict:
        return {k: _unwrap_serialized(v, depth + 1) for k, v in value.items()}
    if t is list or t is tuple:
        return [_unwrap_serialized(v, depth + 1) for v in value]
    return value


#: How deep :func:`_unwrap_serialized` looks for :class:`Serialized` members.
_SERIALIZED_DEPTH = 16


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while serializing: only bytes and small acyclic lists are
    made, yet with a big session loaded each collection would rescan all of it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def short_json(value: Any, limit: int = 40) -> str:
    """A short one-line JSON rendering of a value, for messages about it."""
    if value is UNDEFINED:
        return "undefined"
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """Serialize already-``jsonable`` data (orjson; non-ASCII raw, like JavaScript).

    Output paths use :func:`to_json_bytes`; this is the older copy-then-dump form, kept for the
    tests that compare the two."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        return orjson.dumps(value, option=option, default=_embed)
    except TypeError:
        pass
    import json

    # Deeper than orjson goes (255 levels), lone surrogates (not valid UTF-8), or values only the
    # exact serializer knows (undefined members inside pre-serialized data): JSON.stringify's form.
    from pitools.core.js.value import js_stringify

    text = js_stringify(_unwrap_serialized(value)) or "null"
    if indent:
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=True)
    return text.encode("utf-8")


def to_json_bytes(value: Any) -> bytes:
    """One JSON document for ``value`` exactly as ``JSON.stringify`` prints it (no trailing newline).

    The single entry point every JSON output path uses. orjson writes the value directly (no
    copy); only the parts whose bytes could differ from JavaScript's take the exact path (see
    :mod:`pitools.core.js.fastjson`). :class:`Serialized` values are embedded as they are.
    """
    from pitools.core.js.fastjson import encode

    parts: list[bytes] = []
    with _gc_paused():
        encode(value, parts.append)
    return parts[0] if len(parts) == 1 else b"".join(parts)


_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^"{}\[\],:]+')


def indent_json(raw: bytes, step: int = 2) -> bytes:
    """Compact JSON bytes (from :func:`to_json_bytes`) laid out as ``JSON.stringify(v, null, 2)``
    does: one member per line, ``": "`` after keys, empty ``{}``/``[]`` kept on one line.

    Works on the bytes, so numbers, strings and key order stay exactly as they were; no recursion.
    """
    tokens = _TOKEN.findall(raw)
    out: list[bytes] = []
    depth = 0
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if t == b"{" or t == b"[":
            close = b"}" if t == b"{" else b"]"
            if i + 1 < n and tokens[i + 1] == close:
                out.append(t + close)
                i += 2
                continue
            depth += 1
            out.append(t + b"\n" + b" " * (step * depth))
        elif t == b"}" or t == b"]":
            depth -= 1
            out.append(b"\n" + b" " * (step * depth) + t)
        elif t == b",":
            out.append(b",\n" + b" " * (step * depth))
        elif t == b":":
            out.append(b": ")
        else:
            out.append(t)
        i += 1
    return b"".join(out)


def write_json_to(stream: Any, value: Any, *, newline: bool = True) -> None:
    """Write ``to_json_bytes(value)`` (and a newline) to a binary ``stream`` piece by piece, so a
    huge output is never held in memory twice."""
    from pitools.core.js.fastjson import encode

    with _gc_paused():
        encode(value, stream.write)
    if newline:
        stream.write(b"\n")
