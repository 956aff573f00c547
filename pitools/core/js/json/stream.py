"""The streaming writer: a JSON document written in pieces, never held whole.

:func:`write_json_to` writes any value to a binary stream as :func:`~pitools.core.js.json.encode.encode`
produces it. For outputs too big to build even once (``compact --dry-run``), a value may hold
:class:`JsonStream` members (at any depth of plain dicts): each writes its own bytes when reached,
so a 100 MB list of messages is serialized one message at a time instead of as one 100 MB
``bytes``, and a transcript is never held as one (possibly 4-bytes-a-character) Python string.
:func:`json_chunks` yields such a document's pieces. Every other value goes through the one
encoder, so the bytes are exactly those of ``to_json_bytes`` on the same data (tests compare the two).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from pitools.core.js.json.encode import encode
from pitools.core.js.json.exact import quote
from pitools.core.js.json.parse import gc_paused
from pitools.core.js.value import UNDEFINED

__all__ = [
    "ARRAY_BATCH",
    "TEXT_PIECE_BYTES",
    "JsonStream",
    "json_chunks",
    "stream_array",
    "stream_text",
    "write_json_to",
]

#: Elements of an array serialized at a time by :func:`stream_array`.
ARRAY_BATCH = 64

#: Bytes of escaped transcript handed on as one piece.
TEXT_PIECE_BYTES = 1 << 16


def write_json_to(stream: Any, value: Any, *, newline: bool = True) -> None:
    """Write ``to_json_bytes(value)`` (and a newline) to a binary ``stream`` piece by piece, so a
    huge output is never held in memory twice."""
    with gc_paused():
        encode(value, stream.write)
    if newline:
        stream.write(b"\n")


class JsonStream:
    """A member whose JSON bytes a generator yields when the document reaches it."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: Callable[[], Iterator[bytes]]) -> None:
        self.chunks = chunks


def stream_array(values: list[Any]) -> JsonStream:
    """``values`` as a JSON array, serialized :data:`ARRAY_BATCH` elements at a time as it is
    written (one ``orjson`` call per batch when the batch needs no exact-path care)."""

    def chunks() -> Iterator[bytes]:
        if not values:
            yield b"[]"
            return
        out: list[bytes] = []
        step = ARRAY_BATCH
        for start in range(0, len(values), step):
            batch = values[start : start + step]
            # A batch is an array: its bytes open with "[" and close with "]", in one piece or
            # (on the exact path) as separate pieces; joined, the batches make one array.
            encode(batch, out.append)
            if start:
                out[0] = b"," + out[0][1:]
            if start + step < len(values):
                out[-1] = out[-1][:-1]
            yield from out
            out.clear()

    return JsonStream(chunks)


def stream_text(parts: Callable[[], Iterable[str]], sep: str = "\n\n") -> JsonStream:
    """``sep.join(parts())`` as a JSON string, never built: the parts are made and escaped as
    the document is written.

    Each part is escaped on its own (one emoji no longer widens a whole transcript to 4 bytes a
    character) and handed on in pieces of about :data:`TEXT_PIECE_BYTES`. Escaping is per code
    unit, and a surrogate pair never spans two parts (``sep`` lies between them), so the pieces
    concatenate to ``JSON.stringify`` of the whole. ``parts`` must not throw once the writing has
    begun (see :func:`pitools.core.compaction.prepare.checked_conversation`).
    """

    def chunks() -> Iterator[bytes]:
        sep_json = _escaped(sep)
        batch: list[bytes] = []
        size = 0
        yield b'"'
        first = True
        dumps = orjson.dumps
        for part in parts():
            try:
                escaped = dumps(part)[1:-1]
            except TypeError:  # lone surrogates: JavaScript escapes them
                escaped = _escaped(part)
            batch.append(escaped)
            size += len(escaped)
            if size >= TEXT_PIECE_BYTES:
                if not first:
                    yield sep_json
                yield sep_json.join(batch)
                first = False
                batch, size = [], 0
        if batch:
            if not first:
                yield sep_json
            yield sep_json.join(batch)
        yield b'"'

    return JsonStream(chunks)


def _escaped(text: str) -> bytes:
    """The inside of ``JSON.stringify(text)`` (no quotes), UTF-8."""
    return quote(text).encode("utf-8")[1:-1]


def json_chunks(value: Any) -> Iterator[bytes]:
    """The bytes of ``to_json_bytes(value)`` in pieces, :class:`JsonStream` members written in place.

    Dicts that hold a stream are written member by member in insertion order (their keys are
    pitools' own field names: no array-index keys, which JavaScript would list first);
    ``UNDEFINED`` members are left out as ``JSON.stringify`` leaves them out.
    """
    if type(value) is JsonStream:
        yield from value.chunks()
        return
    if type(value) is dict and _holds_stream(value):
        sep = b"{"
        for key, member in value.items():
            if member is UNDEFINED:
                continue
            yield sep + quote(key).encode("utf-8") + b":"
            sep = b","
            yield from json_chunks(member)
        yield b"{}" if sep == b"{" else b"}"
        return
    out: list[bytes] = []
    encode(value, out.append)
    yield from out


def _holds_stream(value: dict[str, Any]) -> bool:
    for member in value.values():
        if type(member) is JsonStream or (type(member) is dict and _holds_stream(member)):
            return True
    return False
