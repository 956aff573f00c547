"""A big file cut into parts that can be scanned apart and merged: the pure half of ``validate -j2``.

Parsing and the per-entry checks are most of ``validate``'s work and need nothing from other
entries, so a big file is cut at line boundaries into parts of a few MB (:func:`split_points`).
The first part (the header is there) is scanned by the run itself; any part after it can be
scanned anywhere (:func:`scan_part`), its :class:`PartResult` (records and findings, line numbers
counted from the part's start) sent back as bytes (:meth:`PartResult.to_wire`,
:meth:`PartResult.from_wire`), and the parts are merged in file order (:func:`merge_part`) before
the whole-file checks run.

This module starts no process: the caller hands :func:`pitools.core.validate.validate_file` a
:class:`ShareParts` function (``pitools.ops.parallel.share_work``) that scans the first part
here while helpers take the others. A file whose header is not a plain v3 one on line 1 is never
split (migration needs the whole file).
"""

from __future__ import annotations

import marshal
import os
from array import array
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

import orjson

from pitools.core.js.value import UNDEFINED
from pitools.core.session.findings import Diagnostic, Finding
from pitools.core.session.load import RawSession, accepted_header, load
from pitools.core.session.migrate import effective_version
from pitools.core.validate.scan import RankedFinding, Records, Scanner, scan_entries

T = TypeVar("T")

#: Files smaller than this are not worth a second process (forking and merging cost ~10 ms).
SPLIT_MIN_BYTES = 8 << 20
#: About this many bytes per part: small enough that the two processes end close together.
PART_BYTES = 4 << 20
MAX_PARTS = 64


@dataclass(slots=True)
class PartResult:
    """What scanning a later part of a file found; line numbers count from the part's start."""

    records: Records
    findings: list[RankedFinding]
    extra_headers: list[Finding]
    diagnostics: list[Diagnostic]
    line_count: int
    crlf_lines: int
    ends_with_newline: bool

    def to_wire(self) -> bytes:
        """Everything as builtins, marshalled (several times faster than pickle for this data)."""
        rec = self.records
        columns = [getattr(rec, f.name) for f in fields(rec)]
        # The only non-builtin a record holds: undefined ids. A tuple never comes from JSON.
        names = [f.name for f in fields(rec)]
        columns[names.index("odd_ids")] = {
            pos: _WIRE_UNDEFINED if value is UNDEFINED else value for pos, value in rec.odd_ids.items()
        }
        columns[names.index("lines")] = rec.lines.tobytes()  # an array: marshal would flatten it to bytes
        return marshal.dumps(
            (
                columns,
                [(line, rank, astuple(f)) for line, rank, f in self.findings],
                [astuple(f) for f in self.extra_headers],
                [astuple(d) for d in self.diagnostics],
                self.line_count,
                self.crlf_lines,
                self.ends_with_newline,
            )
        )

    @classmethod
    def from_wire(cls, data: bytes) -> PartResult:
        columns, findings, extra, diagnostics, line_count, crlf_lines, ends_with_newline = marshal.loads(data)
        rec = Records(*columns)
        lines: array[int] = array("q")
        lines.frombytes(rec.lines)  # sent as bytes (to_wire)
        rec.lines = lines
        rec.odd_ids = {pos: UNDEFINED if value == _WIRE_UNDEFINED else value for pos, value in rec.odd_ids.items()}
        return cls(
            rec,
            [(line, rank, Finding(*f)) for line, rank, f in findings],
            [Finding(*f) for f in extra],
            [Diagnostic(*d) for d in diagnostics],
            line_count,
            crlf_lines,
            ends_with_newline,
        )


_WIRE_UNDEFINED: Any = ("undefined",)


def split_points(path: str, min_bytes: int | None = None, part_bytes: int | None = None) -> list[int] | None:
    """Part boundaries ``[0, b1, ..., size]`` (each just after a newline), or None when the file
    should not be split."""
    try:
        size = os.stat(path).st_size
        if size < (SPLIT_MIN_BYTES if min_bytes is None else min_bytes):
            return None
        with open(path, "rb") as fh:
            first = fh.readline(1 << 20)
            if not first.endswith(b"\n"):
                return None
            try:
                head = orjson.loads(first)
            except orjson.JSONDecodeError:
                return None
            if not accepted_header(head) or not effective_version(head.get("version")) >= 3:
                return None
            parts = max(2, min(MAX_PARTS, -(-size // (part_bytes or PART_BYTES))))
            bounds = [0]
            for j in range(1, parts):
                fh.seek(size * j // parts)
                fh.readline()
                offset = fh.tell()
                if bounds[-1] < offset < size:
                    bounds.append(offset)
    except OSError:
        return None
    bounds.append(size)
    return bounds if len(bounds) > 2 else None


def scan_part(path: str, start: int, stop: int) -> PartResult:
    """Scan the bytes ``[start, stop)`` of a v3 session (``start`` just after a newline)."""
    raw, values = load(Path(path), keep="none", start=start, stop=stop, finish=False)
    scanner = Scanner(part=start)
    extra_headers: list[Finding] = []
    scan_entries(values, scanner, extra_headers)
    return PartResult(
        scanner.records,
        scanner.findings,
        extra_headers,
        raw.diagnostics,
        raw.line_count,
        raw.crlf_lines,
        raw.ends_with_newline,
    )


def merge_part(
    raw: RawSession,
    records: Records | None,
    findings: list[RankedFinding],
    extra_headers: list[Finding],
    part: PartResult,
) -> None:
    """Append a later part to what the parts before it gave (the loader's ``raw``, the entries'
    ``records`` and ``findings``, the ``extra_headers``), its line numbers shifted to the file's."""
    shift = raw.line_count
    raw.diagnostics.extend(d if d.line is None else replace(d, line=d.line + shift) for d in part.diagnostics)
    raw.line_count += part.line_count
    raw.crlf_lines += part.crlf_lines
    raw.ends_with_newline = part.ends_with_newline
    extra_headers.extend(f if f.line is None else replace(f, line=f.line + shift) for f in part.extra_headers)
    if records is not None:
        records.extend(part.records, shift)
        findings.extend((line + shift, rank, replace(f, line=line + shift)) for line, rank, f in part.findings)


class ShareParts(Protocol):
    """Runs ``first()`` and ``work(task)`` for every task, perhaps in other processes, each
    result travelling as ``encode``'s bytes; returns ``(first(), {task: result})``
    (``pitools.ops.parallel.share_work`` is one)."""

    def __call__(
        self,
        tasks: Sequence[int],
        work: Callable[[int], PartResult],
        *,
        first: Callable[[], T],
        encode: Callable[[PartResult], bytes],
        decode: Callable[[bytes], PartResult],
    ) -> tuple[T, dict[int, PartResult]]: ...
