"""The one ``JSON.stringify`` encoder: orjson for speed, the exact writer where V8 differs.

orjson prints strings, integers up to 2**53 and the shortest float digits exactly as V8 does, and
keeps insertion order. What JavaScript prints differently is either refused by orjson or found
by a cheap walk over the containers (strings are never looked into):

* refused (``TypeError``): lone surrogates, integers beyond 2**53 (``OPT_STRICT_INTEGER``),
  nesting deeper than 255, non-string keys;
* found by :func:`needs_exact`: an array-index key (``"0"`` .. ``"4294967294"``: V8 lists those
  first) and the floats orjson lays out differently (integral ``100.0`` and ``-0.0``, ``1e+16`` ..
  ``1e+20``, and ``3e-6`` for ``0.000003``);
* marked while dumping: a raw ``\\x00`` for an ``undefined`` member (left out) or element
  (``null``), a raw ``\\x01`` for the place of a :class:`Serialized` value (spliced in). Raw
  control bytes never occur otherwise: orjson escapes them inside strings.

So a value is dumped by orjson in one go unless the walk stops at one of those; then it is taken
apart one level by :func:`~pitools.core.js.json.exact.write_exact`, and each member goes the same
way, so only the offending members reach the exact (pure-Python) writer.

Entry points: :func:`to_json_bytes` (one document, bytes), :func:`encode` (the same bytes in
pieces, for :mod:`~pitools.core.js.json.stream`), :func:`js_stringify` / :func:`js_stringify_len`
(Pi's ``JSON.stringify(v)`` and its ``.length`` inside the core, JSON data only).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

import orjson

from pitools.core.js.json.exact import Emit, Other, number_text, plain_form, quote, strict_form, write_exact
from pitools.core.js.json.parse import gc_paused
from pitools.core.js.value import UNDEFINED, is_array_index, utf16_len

__all__ = [
    "SHARED_KEEP_BYTES",
    "Serialized",
    "encode",
    "fragment",
    "indent_json",
    "js_stringify",
    "js_stringify_len",
    "js_stringify_size",
    "jsonable",
    "needs_exact",
    "scalar_text",
    "serialize_each",
    "short_json",
    "size_probe",
    "to_json_bytes",
    "utf8_as_utf16_len",
]

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
_MAX_SAFE: Final = 2**53

#: Keys of Pi's messages, blocks and usage: a dict whose keys are all here has no index key.
_COMMON_KEYS: Final = frozenset(
    [
        *("role", "content", "type", "text", "thinking", "thinkingSignature", "redacted", "id", "name"),
        *("arguments", "api", "provider", "model", "usage", "input", "output", "cacheRead", "cacheWrite"),
        *("totalTokens", "cost", "total", "stopReason", "errorMessage", "timestamp", "responseId"),
        *("toolCallId", "toolName", "isError", "details", "data", "mimeType", "summary", "tokensBefore"),
        *("fromId", "customType", "display", "sections", "toolsAdded", "toolsRemoved", "description"),
        *("parameters", "properties", "required", "path", "command", "exitCode", "durationMs", "offset"),
        *("limit", "oldText", "newText", "pattern", "glob", "sourceId", "sourceType", "messages"),
        *("entryId", "region", "tokens"),
    ]
)


# -- values serialized once ------------------------------------------------------------------------


class Serialized:
    """A value whose JSON bytes are made once and embedded as they are: :func:`to_json_bytes`
    writes ``raw``, :func:`jsonable` passes it through, and the exact writer falls back to ``data``.

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


def fragment(data: Any) -> Serialized:
    """``data`` serialized now, exactly as :func:`to_json_bytes` would (:class:`Serialized`): later
    outputs embed the bytes as they are."""
    return Serialized(data, _compact(to_json_bytes(data)))


# -- the fast path -----------------------------------------------------------------------------------


def needs_exact(value: Any) -> bool:
    """Whether orjson would print ``value`` (a dict or list) differently from ``JSON.stringify``,
    as far as keys and floats go: an array-index key, or a float in a layout orjson writes its own way."""
    return size_probe(value, _NO_KEYS, key_order=True)[1]


def _odd_float(x: float) -> bool:
    """Whether orjson lays ``x`` out otherwise than ``JSON.stringify``: 100.0, -0.0,
    1e+16..1e+20 (all integral) and 1e-6..1e-5 as 3e-6."""
    return x.is_integer() or -1e-5 < x < 1e-5


def _odd_float_in(value: Any) -> bool:
    """:func:`needs_exact` without the keys: enough where only the length counts
    (:func:`js_stringify_size`), since V8's key order moves members but never changes their bytes."""
    return size_probe(value, _NO_KEYS)[1]


_NO_KEYS: frozenset[str] = frozenset()


def size_probe(value: Any, keys: frozenset[str], *, key_order: bool = False) -> tuple[bool, bool]:
    """One walk of the containers under ``value`` for two answers: whether some object has one
    of ``keys`` (a caller's own question, asked on the way), and whether orjson's bytes for
    ``value`` differ from ``JSON.stringify``'s: in length (a float orjson lays out differently;
    what :func:`js_stringify_size` needs, passed on as its ``exact``) or, with ``key_order``, in
    order too (an array-index key, which V8 lists first: :func:`needs_exact`). Each answer stops
    being looked for once it is yes; the first is also yes when the walk meets a subclass of dict
    or list, which it does not enter."""
    has_key = differs = False
    stack = [value]
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        if type(v) is dict:
            if key_order and not differs and not (v.keys() <= _COMMON_KEYS) and _has_index_key(v):
                differs = True
                if has_key or not keys:
                    return has_key, True
            if not has_key and keys and not keys.isdisjoint(v):
                has_key = True
                if differs:
                    break
            items: Any = v.values()
        else:
            items = v
        for x in items:
            t = type(x)
            if t is str or t is int or t is bool or x is None:
                continue
            if t is float:
                if not differs and _odd_float(x):
                    differs = True
                    if has_key or not keys:
                        return has_key, True
            elif t is dict or t is list or t is tuple:
                push(x)
            elif keys and isinstance(x, (dict, list)):
                has_key = True  # a subclass is not entered: it might hold one (the caller looks)
    return has_key, differs


def _has_index_key(obj: dict[Any, Any]) -> bool:
    return any(type(k) is str and k and k[0] in _DIGITS and is_array_index(k) for k in obj)


class _Dump:
    """One orjson pass; remembers the :class:`Serialized` values it left holes for, in order."""

    __slots__ = ("holes", "other", "undefined")

    def __init__(self, other: Callable[[Any], Any]) -> None:
        self.holes: list[Serialized] = []
        self.other = other
        #: whether a ``\x00`` marker was written (else the output need not be searched for one)
        self.undefined = False

    def default(self, value: Any) -> Any:
        if value is UNDEFINED:
            self.undefined = True
            return _UNDEF_FRAGMENT
        if type(value) is Serialized:
            self.holes.append(value)
            return _HOLE_FRAGMENT
        # An object with to_json() (or anything else): its plain form, printed exactly.
        parts: list[bytes] = []
        _encode(self.other(value), parts.append, self.other)
        return orjson.Fragment(b"".join(parts))


def encode(value: Any, emit: Emit, *, strict: bool = False) -> None:
    """Emit the bytes of ``JSON.stringify(value)`` in pieces, in order (``UNDEFINED`` at the top
    prints ``null``; :class:`Serialized` values without bytes yet are serialized as they are
    reached, so a stream never holds them all).

    A value that is not JSON data is written as its ``to_json()`` or else its ``str()``; with
    ``strict`` it raises ``TypeError`` instead."""
    _encode(value, emit, strict_form if strict else plain_form)


def _encode(value: Any, emit: Emit, other: Other, exact: Callable[[Any], bool] = needs_exact) -> None:
    """:func:`encode`'s work; ``exact`` tells whether a container must take the exact writer
    (only its own level: the members go through :func:`needs_exact` again)."""
    t = type(value)
    if t is Serialized:
        emit(value.raw)
        return
    if t is float:
        emit(number_text(value).encode())
        return
    if (t is dict or t is list or t is tuple) and exact(value):
        write_exact(value, emit, other, _encode)
        return
    dump = _Dump(other)
    try:
        out = orjson.dumps(value, default=dump.default, option=_OPTS)
    except TypeError as exc:  # orjson.JSONEncodeError included
        if "recursion" in str(exc).lower():
            # Deeper than orjson goes: the exact writer in one go, not level by level.
            write_exact(value, emit, lambda v: v.data if type(v) is Serialized else other(v))
            return
        write_exact(value, emit, other, _encode)
        return
    if dump.undefined:  # (a marker is the only raw \x00 orjson writes: no search of every output)
        out = _drop_undefined(out)
    if dump.holes:
        pieces = out.split(_HOLE)
        emit(pieces[0])
        for hole, piece in zip(dump.holes, pieces[1:], strict=True):
            emit(hole.raw)
            emit(piece)
    else:
        emit(out)


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


def to_json_bytes(value: Any) -> bytes:
    """One JSON document for ``value`` exactly as ``JSON.stringify`` prints it (no trailing newline).

    The single entry point every JSON output path uses. orjson writes the value directly (no
    copy); only the parts whose bytes could differ from JavaScript's take the exact path.
    :class:`Serialized` values are embedded as they are.
    """
    parts: list[bytes] = []
    with gc_paused():
        _encode(value, parts.append, plain_form)
    return parts[0] if len(parts) == 1 else b"".join(parts)


# -- JSON.stringify inside the core --------------------------------------------------------------------


def js_stringify(value: Any) -> str | None:
    """``JSON.stringify(value)`` (no indentation, no replacer) exactly as V8 prints it.

    Object keys in JS own-property order (:func:`~pitools.core.js.value.js_keys`), numbers as
    ``Number#toString`` (NaN and +-Infinity -> ``null``; ints beyond 2**53 rounded to a double
    first), strings escaped like JS (lone surrogates as ``\\udxxx``).  An :data:`UNDEFINED` object
    member is omitted, an :data:`UNDEFINED` array element is ``null``, and a top-level
    :data:`UNDEFINED` gives ``None`` (JS returns ``undefined``). JSON data only: anything else
    raises ``TypeError``.
    """
    if value is UNDEFINED:
        return None
    text = scalar_text(value)
    if text is not None:
        return text
    parts: list[bytes] = []
    _encode(value, parts.append, strict_form)
    return (parts[0] if len(parts) == 1 else b"".join(parts)).decode()


def scalar_text(value: Any) -> str | None:
    """``JSON.stringify`` of a string, number, null or boolean; None for anything else."""
    t = type(value)
    if t is str:
        return quote(value)
    if t is int or t is float:
        return number_text(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return None


_FOUR_BYTE_LEADS: Final = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def utf8_as_utf16_len(b: bytes) -> int:
    """UTF-16 length of UTF-8 text: one unit per code point, two for a 4-byte (non-BMP) sequence."""
    if b.isascii():
        return len(b)
    n = len(b.decode())
    for lead in _FOUR_BYTE_LEADS:
        if lead in b:  # memchr: much cheaper than count() when absent
            n += b.count(lead)
    return n


def js_stringify_len(value: Any) -> int:
    """``JSON.stringify(value).length`` (UTF-16 code units); 0 for ``undefined``.

    (JS would throw reading ``.length`` of ``undefined``; Pi only measures JSON-able values.)
    """
    t = type(value)
    if t is dict or t is list:
        parts: list[bytes] = []
        _encode(value, parts.append, strict_form)
        return utf8_as_utf16_len(parts[0] if len(parts) == 1 else b"".join(parts))
    s = js_stringify(value)
    if s is None:
        return 0
    return utf16_len(s)


def js_stringify_size(value: Any, depth: int = 2, exact: Callable[[Any], bool] | None = None) -> int:
    """The UTF-8 byte length of ``JSON.stringify(value)`` (:func:`js_stringify`'s text; 0 for
    ``undefined``), without holding that text: the members of objects and arrays down to
    ``depth`` levels are serialized one at a time, so a request body of 100 MB costs the memory
    of its largest message, not of three copies of the body.

    ``exact(member)`` tells whether such a member takes the exact writer (default: the float
    walk of :func:`size_probe`); a caller that walked the members already passes its answers."""
    if value is UNDEFINED:
        return 0
    size = 0

    def add(piece: bytes) -> None:
        nonlocal size
        size += len(piece)

    _size(value, depth, add, _odd_float_in if exact is None else exact)
    return size


def _size(value: Any, depth: int, emit: Emit, exact: Callable[[Any], bool]) -> None:
    """One level by :func:`write_exact` (V8's key order, undefined left out), each member by this
    again, and below ``depth`` a member whole by :func:`_encode` (the fast path)."""
    t = type(value)
    if depth <= 0 or not (t is dict or t is list or t is tuple):
        _encode(value, emit, strict_form, exact)
        return
    write_exact(value, emit, strict_form, lambda item, out, _other: _size(item, depth - 1, out, exact))


# -- plain data, short forms, layout -------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """A copy of ``value`` holding only what ``JSON.stringify`` would keep, as plain data:
    ``UNDEFINED`` members left out (``null`` in arrays), NaN/infinities ``null``, integral floats
    and integers beyond 2**53 as the number JavaScript holds. (Key order stays Python's; outputs
    use :func:`to_json_bytes`.)"""
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


def short_json(value: Any, limit: int = 40) -> str:
    """A short one-line JSON rendering of a value, for messages about it."""
    if value is UNDEFINED:
        return "undefined"
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
