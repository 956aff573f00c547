"""ATIF trajectories (built by :mod:`pitools.core.views.atif`) as JSON bytes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pitools.core.js.json.encode import indent_json, to_json_bytes
from pitools.core.js.types import JsonObject, JsValue


def atif_chunks(trajectories: Iterable[JsonObject], *, single: bool, release: bool = False) -> Iterator[bytes]:
    """One trajectory object (``single``), else a JSON array of trajectories, indented as
    ``JSON.stringify(value, null, 2)`` would and newline-ended: in pieces, one step at a time, so
    the document is never held whole.

    Each step is serialized and indented on its own, then shifted to its depth: JSON layout is
    the same piece by piece (a raw line break only ever comes from the layout: inside strings it
    is escaped), so the pieces join to exactly the whole document's bytes. With ``release`` each
    step is dropped from its trajectory once written (the trajectories are used up), so their
    memory is given back while the rest is written. ``trajectories`` may be lazy
    (:func:`pitools.core.views.atif.branch_trajectories`): each is asked for only once the
    previous one is written, and is not kept afterwards.
    """
    pending = iter(trajectories)
    if single:
        yield from _trajectory(next(pending), 0, release)
    else:
        current = next(pending, None)
        if current is None:
            yield b"[]"
        else:
            yield b"["
            pad = b"\n  "
            while current is not None:
                yield pad
                yield from _trajectory(current, 1, release)
                pad = b",\n  "
                current = None  # let a lazily built trajectory go before the next is made
                current = next(pending, None)
            yield b"\n]"
    yield b"\n"


def _indented(value: JsValue, depth: int) -> bytes:
    """``value`` as JSON.stringify(value, null, 2) lays it out when it starts ``depth`` levels in."""
    raw = indent_json(to_json_bytes(_fresh_strings(value, FRESH_DEPTH)))
    return raw.replace(b"\n", b"\n" + b"  " * depth) if depth else raw


#: How deep :func:`_fresh_strings` looks (steps' texts sit at depth 1-4; anything deeper is rare).
FRESH_DEPTH = 6


def _fresh_strings(value: Any, depth: int) -> Any:
    """``value`` with its non-ASCII strings (to ``depth`` levels) replaced by equal new ones.

    orjson keeps the UTF-8 form of every non-ASCII string it serializes inside the string object
    (CPython's UTF-8 cache). A step's texts are the loaded session's own strings, which live until
    the end: serializing them would leave a UTF-8 copy of every one behind (a third of the file
    on a typical session). Equal new strings take that cache with them when the step is written.
    """
    t = type(value)
    if t is str:
        return value if value.isascii() else value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    if depth <= 0:
        return value
    if t is dict:
        return {k: _fresh_strings(v, depth - 1) for k, v in value.items()}
    if t is list:
        return [_fresh_strings(v, depth - 1) for v in value]
    return value


def _trajectory(trajectory: dict[str, Any], depth: int, release: bool) -> Iterator[bytes]:
    # A trajectory's own keys are pitools' words (no array-index keys, which JavaScript would
    # list first), and none is undefined: members in insertion order, as to_json_bytes writes them.
    if not trajectory:
        yield b"{}"
        return
    pad = b"\n" + b"  " * (depth + 1)
    for i, (key, value) in enumerate(trajectory.items()):
        yield (b"," if i else b"{") + pad + to_json_bytes(key) + b": "
        if key == "steps" and type(value) is list and value:
            step_pad = pad + b"  "
            for j, step in enumerate(value):
                yield (b"," if j else b"[") + step_pad + _indented(step, depth + 2)
                if release:
                    value[j] = None
            yield pad + b"]"
        else:
            yield _indented(value, depth + 1)
    yield b"\n" + b"  " * depth + b"}"
