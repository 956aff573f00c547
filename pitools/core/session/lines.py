"""Streaming session reader: Pi's ``loadEntriesFromFile`` + ``parseSessionEntries``, read-only and talkative.

Pi's loader splits the decoded text on ``"\\n"`` only, skips blank lines (JavaScript ``trim()``
whitespace) and lines that ``JSON.parse`` rejects, drops values that parse to something falsy,
and accepts the file only when the first parsed value is a ``session`` header whose ``id`` is a
string. pitools returns the same entries, never writes (Pi appends a newline to a torn tail and
rewrites migrated files), and reports every anomaly as a :class:`Diagnostic` with a line number
and byte offset.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.json.parse import UnparsedLineError, gc_paused, parse_json_line
from pitools.core.js.value import JS_WHITESPACE, json_kind
from pitools.core.session.findings import ERROR, INFO, WARNING, Diagnostic
from pitools.core.session.header import accepted_header
from pitools.errors import SessionParseError

#: Lines longer than this are reported (Pi itself has no limit and still reads them).
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: The reader's buffer. Session lines average several KB (tool outputs, file contents): with
#: Python's default 8 KiB buffer, iterating over the lines of such a file costs as much CPU as
#: parsing them (each long line is read in pieces and joined); with 1 MiB it costs a fifth.
_READ_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class RawSession:
    """What Pi's loader returns for one file, plus where every value came from.

    ``values`` holds every parsed, truthy JSON value in file order (Pi's ``fileEntries``
    before migration), including the header and any later ``session`` lines. ``lines`` and
    ``offsets`` are parallel to it: the 1-based line number and byte offset of each value.
    """

    path: str
    size: int
    values: list[Any] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    line_count: int = 0
    ends_with_newline: bool = True
    crlf_lines: int = 0
    #: The first kept value, and the lines skipped before it (for the file-level verdict).
    head: ScannedValue | None = None
    skipped_before_header: list[int] = field(default_factory=list)
    #: True when Pi would accept the file (first parsed value is a header with a string id).
    valid: bool = False


#: What :func:`scan_lines` yields per kept value: ``(value, line number, byte offset, size)``.
ScannedValue = tuple[Any, int, int, int]


def _js_blank(text: str) -> bool:
    return not text.strip(JS_WHITESPACE)


def _iter_raw_lines(path: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, bytes]]:
    """Yield ``(offset, line)`` with each line's ``\n`` still attached (C-speed buffered reads).

    Only the bytes present when the file was opened are read (or those before ``stop``): a
    session another process is appending to reads as a consistent snapshot, its last line torn
    at most. ``start`` must be 0 or just after a newline.
    """
    with open(path, "rb", buffering=_READ_CHUNK) as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            # A pipe, /dev/stdin, a process substitution: no size to snapshot, read to the end.
            yield from _iter_stream_lines(fh, path)
            return
        limit = os.fstat(fh.fileno()).st_size if stop is None else stop
        if start:
            fh.seek(start)
        offset = start
        if offset >= limit:
            return
        for line in fh:
            end = offset + len(line)
            if end >= limit:
                if end > limit:
                    line = line[: limit - offset]
                if line:
                    yield offset, line
                return
            yield offset, line
            offset = end


#: A stream (not a regular file) is read up to this many bytes; /dev/zero would otherwise fill memory.
MAX_STREAM_BYTES = 1 << 30


def _iter_stream_lines(fh: Any, path: str) -> Iterator[tuple[int, bytes]]:
    offset = 0
    while True:
        line = fh.readline(MAX_STREAM_BYTES - offset + 1)
        if not line:
            return
        if offset + len(line) > MAX_STREAM_BYTES:
            raise SessionParseError(
                f"not a regular file and longer than {MAX_STREAM_BYTES:,} bytes; save it to a file first", path=path
            )
        yield offset, line
        offset += len(line)


def _iter_lines(path: str) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(offset, line_bytes_without_newline, had_newline)``."""
    for offset, line in _iter_raw_lines(path):
        if line.endswith(b"\n"):
            yield offset, line[:-1], True
        else:
            yield offset, line, False


def _truthy_json(value: Any) -> bool:
    # JSON values that are falsy in JavaScript: null, false, 0, -0, "".
    if value is None or value is False:
        return False
    if type(value) in (int, float):
        nonzero: bool = value != 0
        return nonzero
    return not (type(value) is str and value == "")


def read_session(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    shape: Callable[[Any], Any] | None = None,
    tap: Callable[[bytes], object] | None = None,
) -> RawSession:
    """Read a session file the way Pi 1.6.0 does, never writing to it.

    Raises :class:`SessionParseError` only when the file cannot be opened at all; a file that
    is not a session is returned with ``valid=False`` and a diagnostic saying why. ``shape``
    replaces each value as it is read, ``tap`` sees every line's bytes (see
    :func:`pitools.core.session.load.load`).
    """
    raw, values = stream_session(path, max_line_bytes=max_line_bytes, tap=tap)
    if shape is not None:
        values = ((shape(value), line, offset, size) for value, line, offset, size in values)
    with gc_paused():
        _consume(raw, values)
    return raw


def stream_session(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    start: int = 0,
    stop: int | None = None,
    finish: bool = True,
    tap: Callable[[bytes], object] | None = None,
) -> tuple[RawSession, Iterator[ScannedValue]]:
    """:func:`read_session` one value at a time: ``raw`` fills in as the iterator is consumed.

    Both the call and the iteration raise :class:`SessionParseError` when the file cannot be
    read (a directory, no permission, an I/O error halfway). ``start``/``stop`` read only part
    of the file (see :func:`scan_lines` for ``finish``; a part from ``start > 0`` numbers its
    lines from 1).
    """
    spath = os.fspath(path)
    try:
        st = os.stat(spath)
    except OSError as exc:
        raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=spath) from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise SessionParseError("is a directory, not a session file", path=spath)
    raw = RawSession(path=spath, size=st.st_size if stat.S_ISREG(mode) else 0)

    def counted(lines: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
        # A stream's size is only known once it is read (before scan_lines' file-level verdict).
        for offset, line in lines:
            raw.size = offset + len(line)
            yield offset, line

    def tapped(lines: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
        assert tap is not None
        for item in lines:
            tap(item[1])
            yield item

    def values() -> Iterator[ScannedValue]:
        try:
            lines = _iter_raw_lines(spath, start, stop)
            if not stat.S_ISREG(mode):
                lines = counted(lines)
            if tap is not None:
                lines = tapped(lines)
            yield from scan_lines(raw, lines, max_line_bytes, later_part=start > 0, finish=finish)
        except OSError as exc:
            raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=spath) from None

    return raw, values()


def iter_file_lines(path: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for a file, each line with its ``\n``, as the loader reads it (public form)."""
    return _iter_raw_lines(path, start, stop)


def line_spans(data: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line of in-memory bytes, split on ``\n`` only: ``data[start:end]``
    is the line without its ``\n``; ``end == len(data)`` only for a last line with none."""
    start = 0
    size = len(data)
    find = data.find
    while start < size:
        end = find(b"\n", start)
        if end < 0:
            yield start, size
            return
        yield start, end
        start = end + 1


def iter_byte_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for in-memory bytes, split on ``\n`` only (each line keeps its ``\n``)."""
    for start, end in line_spans(data):
        yield start, data[start : end + 1]


def read_session_bytes(data: bytes, path: str = "<bytes>", *, shape: Callable[[Any], Any] | None = None) -> RawSession:
    """:func:`read_session` on bytes already in memory (e.g. a repaired file before it is written).

    ``shape`` replaces each parsed value as it is read (the loader's "skeleton" keep policy:
    :func:`pitools.core.session.load.load` given bytes)."""
    raw = RawSession(path=path, size=len(data))
    scanned: Iterator[ScannedValue] = scan_lines(raw, iter_byte_lines(data))
    if shape is not None:
        scanned = ((shape(value), line, offset, size) for value, line, offset, size in scanned)
    with gc_paused():
        _consume(raw, scanned)
    return raw


def _consume(raw: RawSession, scanned: Iterator[ScannedValue]) -> None:
    values, lines, offsets, lengths = raw.values, raw.lines, raw.offsets, raw.lengths
    for value, lineno, offset, size in scanned:
        values.append(value)
        lines.append(lineno)
        offsets.append(offset)
        lengths.append(size)


def scan_lines(
    raw: RawSession,
    lines_iter: Iterator[tuple[int, bytes]],
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    later_part: bool = False,
    finish: bool = True,
) -> Iterator[ScannedValue]:
    """Parse lines as Pi does and yield every value Pi keeps, without holding on to them.

    The line-level diagnostics, ``line_count``, ``crlf_lines``, ``ends_with_newline`` and, once
    the iterator is exhausted, ``valid`` and the file-level diagnostics land in ``raw``;
    ``raw.values`` is left alone (``validate`` checks each value and drops it).

    A file can be read in parts (``validate`` splits big files between processes): a
    ``later_part`` numbers its lines from 1 and knows the header came before it; parts are
    read with ``finish=False``, and the first part's ``raw`` gets :func:`finish_raw` once the
    others are merged into it.
    """
    diags = raw.diagnostics
    header_seen = later_part
    lineno = offset = 0
    skipped_before_header = raw.skipped_before_header

    def flag(code: str, severity: str, message: str, *, skipped: bool = False) -> None:
        """A diagnostic on the current line; ``skipped``: Pi drops the line (noted when it comes
        before the header, for ``header-not-first``)."""
        diags.append(Diagnostic(code, severity, message, lineno, offset=offset))
        if skipped and not header_seen:
            skipped_before_header.append(lineno)

    for offset, line in lines_iter:
        lineno += 1
        # orjson ignores the trailing newline, so the line is parsed without copying it.
        had_nl = line.endswith(b"\n")
        size = len(line) - 1 if had_nl else len(line)
        if not had_nl:
            raw.ends_with_newline = False
        elif line.endswith(b"\r\n"):
            raw.crlf_lines += 1
        if size > max_line_bytes:
            flag("line-too-long", INFO, f"line is {size} bytes, over the {max_line_bytes}-byte limit")
        if lineno == 1 and not later_part and line.startswith(_BOM):
            flag("utf8-bom", ERROR, "file starts with a UTF-8 byte order mark; Pi cannot parse that line")
        try:
            value, replaced = parse_json_line(line)
        except UnparsedLineError as exc:
            flag("unparsed-line", ERROR, f"Pi reads this line, pitools could not ({exc})", skipped=True)
            continue
        except ValueError as exc:
            if _js_blank(line.decode("utf-8", "replace")):
                flag("blank-line", INFO, "blank line (skipped)", skipped=True)
            else:
                flag("malformed-json", ERROR, f"not valid JSON ({_short(str(exc))}); Pi skips it", skipped=True)
            continue
        if replaced:
            flag("invalid-utf8", WARNING, "invalid UTF-8 replaced by U+FFFD (as Pi does)")
        if type(value) is not dict:
            if not _truthy_json(value):
                flag("falsy-line", INFO, f"line parses to {js_stringify(value)}, which Pi skips")
                continue
            flag(
                "non-object-line",
                ERROR,
                f"line is a JSON {json_kind(value)}, not an object; Pi keeps it as a broken entry",
            )
        item = (value, lineno, offset, size)
        if not header_seen:
            raw.head = item
        header_seen = True
        yield item
    raw.line_count = lineno
    if finish:
        finish_raw(raw)


def finish_raw(raw: RawSession) -> None:
    """The file-level verdict once every line is read: is it a session Pi accepts?"""
    diags = raw.diagnostics
    head_item = raw.head
    skipped_before_header = raw.skipped_before_header
    if raw.size == 0:
        diags.append(
            Diagnostic("empty-file", INFO, "file is empty; Pi would start a new session in it", None, offset=0)
        )
        return
    if head_item is None:
        diags.append(Diagnostic("missing-header", ERROR, "no JSON value in the file; it is not a Pi session", None))
        return
    head, head_line, head_offset, _ = head_item
    if type(head) is not dict or head.get("type") != "session":
        diags.append(
            Diagnostic(
                "missing-header",
                ERROR,
                "first parsed line is not a session header; Pi rejects the whole file",
                head_line,
                offset=head_offset,
            )
        )
        return
    if type(head.get("id")) is not str:
        diags.append(
            Diagnostic(
                "invalid-header",
                ERROR,
                "session header has no string id; Pi rejects the whole file",
                head_line,
                offset=head_offset,
            )
        )
        return
    raw.valid = accepted_header(head)
    if skipped_before_header:
        diags.append(
            Diagnostic(
                "header-not-first",
                INFO,
                f"the header is on line {head_line}; {len(skipped_before_header)} line(s) before it are skipped",
                head_line,
                offset=head_offset,
            )
        )
    if raw.crlf_lines:
        diags.append(
            Diagnostic(
                "crlf-line-endings",
                INFO,
                f"{raw.crlf_lines} line(s) end in CRLF; Pi reads them, other tools may not",
            )
        )
    if not raw.ends_with_newline:
        diags.append(
            Diagnostic(
                "unterminated-last-line",
                INFO,
                "the last line has no newline (torn write?); Pi would append one when it opens the file",
                raw.line_count,
            )
        )


def _short(text: str, limit: int = 60) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
