"""Validate a big file with two processes that share its parts as they go.

Parsing and the per-entry checks are most of ``validate``'s work and need nothing from other
entries, so a big file is cut at line boundaries into parts of a few MB. This process scans the
first part (the header is there), a child forked for the occasion and this process then take
the remaining parts one at a time from a shared queue (a pipe holding their numbers), so the
faster of the two does more (on a shared machine one core is often slower). The child sends
its :class:`PartResult` s (records and findings, line numbers counted from each part's start)
back through a second pipe, and the parts are merged in file order before the whole-file
checks run.

Anything unusual falls back to one process, with the same results: no ``fork`` (Windows),
other threads running (forking them is unsafe), a header that is not a plain v3 one on line 1
(migration needs the whole file), a child that fails or dies (its parts are scanned here).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import threading
from array import array
from dataclasses import astuple, dataclass, fields
from typing import Any

import orjson

from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import Diagnostic, accepted_header, stream_session
from pitools.core.session.migrate import effective_version
from pitools.core.validate.codes import Finding
from pitools.core.validate.scan import RankedFinding, Records, Scanner, scan_entries

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
    raw, values = stream_session(path, start=start, stop=stop, finish=False)
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


class ForkedParts:
    """A child process taking parts from the shared queue; this process takes from it too."""

    def __init__(self, pid: int, queue_fd: int, results_fd: int) -> None:
        self.pid = pid
        self.queue_fd = queue_fd
        self.chunks: list[bytes] = []
        self.fd = results_fd
        # Drain the pipe while this process scans: a full pipe would stall the child.
        self.reader = threading.Thread(target=self._read, name="pitools-part-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self.fd, 1 << 20):
                self.chunks.append(chunk)
        except OSError:
            self.chunks.clear()
        finally:
            os.close(self.fd)

    def claim(self) -> int | None:
        """The number of the next part nobody has taken, or None when all are taken."""
        return _claim(self.queue_fd)

    def cancel(self) -> None:
        """Stop the child now and reap it (this process no longer needs its parts)."""
        import signal

        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        self._finish()

    def _finish(self) -> int:
        self.reader.join()
        with contextlib.suppress(OSError):
            os.close(self.queue_fd)
        try:
            return os.waitpid(self.pid, 0)[1]
        except ChildProcessError:
            return 0

    def result(self) -> dict[int, PartResult]:
        """The parts the child scanned, by number (those it lost, if it failed, are missing)."""
        if self._finish() != 0 or not self.chunks:
            return {}
        try:
            return {i: PartResult.from_wire(data) for i, data in marshal.loads(b"".join(self.chunks))}
        except Exception:
            return {}


def _claim(queue_fd: int) -> int | None:
    data = os.read(queue_fd, 4)  # every number was written as one 4-byte record
    return int.from_bytes(data, "little") if len(data) == 4 else None


def fork_parts(path: str, bounds: list[int]) -> ForkedParts | None:
    """Queue parts 1.. of ``bounds`` and start a child taking them; None when forking is not
    possible or safe (this process then scans every part)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    numbers = b"".join(i.to_bytes(4, "little") for i in range(1, len(bounds) - 1))
    queue_r, queue_w = os.pipe()
    if len(numbers) > 60_000:  # the whole queue must fit in the pipe before anyone reads
        os.close(queue_r)
        os.close(queue_w)
        return None
    os.write(queue_w, numbers)
    os.close(queue_w)
    results_r, results_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for fd in (queue_r, results_r, results_w):
            os.close(fd)
        return None
    if pid == 0:  # the child: scan parts, send them, leave without any cleanup
        status = 1
        try:
            os.close(results_r)
            done: list[tuple[int, bytes]] = []
            while (i := _claim(queue_r)) is not None:
                done.append((i, scan_part(path, bounds[i], bounds[i + 1]).to_wire()))
            view = memoryview(marshal.dumps(done))
            while view:
                view = view[os.write(results_w, view) :]
            status = 0
        except BaseException:  # the parent redoes whatever is missing
            pass
        finally:
            os._exit(status)
    os.close(results_w)
    return ForkedParts(pid, queue_r, results_r)
