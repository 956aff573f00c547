"""Validate a big file with two processes: the second half is scanned by a forked child.

Parsing and the per-entry checks are most of ``validate``'s work and need nothing from other
entries, so the file is cut at the newline nearest its middle: this process scans the first
part (header included), a child forked for the occasion scans the second part and sends its
:class:`PartResult` (records and findings, line numbers counted from the part's start) back
through a pipe, and the parent merges them before the whole-file checks run.

Anything unusual falls back to one process, with the same results: no ``fork`` (Windows),
other threads running (forking them is unsafe), a header that is not a plain v3 one on line 1
(migration needs the whole file), a child that fails or dies.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import threading
from dataclasses import astuple, dataclass, fields
from typing import Any

import orjson

from pitools.core.jsvalue import UNDEFINED
from pitools.core.load import Diagnostic, accepted_header, stream_session
from pitools.core.migrate import effective_version
from pitools.core.validate.codes import Finding
from pitools.core.validate.scan import RankedFinding, Records, Scanner, scan_entries

#: Files smaller than this are not worth a second process (forking and merging cost ~10 ms).
SPLIT_MIN_BYTES = 8 << 20
#: The child's share of the bytes: a bit less than half, since it also has to send its records
#: (measured on the 100 MB benchmark session, this makes both parts end together).
CHILD_SHARE = 0.45


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
        columns[[f.name for f in fields(rec)].index("odd_ids")] = {
            pos: _WIRE_UNDEFINED if value is UNDEFINED else value for pos, value in rec.odd_ids.items()
        }
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


def split_point(path: str, min_bytes: int | None = None) -> tuple[int, int] | None:
    """``(offset, size)``: where a second part can start, or None when the file should not be split."""
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
            fh.seek(int(size * (1 - CHILD_SHARE)))
            fh.readline()
            offset = fh.tell()
    except OSError:
        return None
    return (offset, size) if offset < size else None


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


class ForkedPart:
    """A child process scanning one part; :meth:`result` waits for it (None if it failed)."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.chunks: list[bytes] = []
        self.fd = fd
        # Drain the pipe while this process scans its own part: a full pipe would stall the child.
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

    def cancel(self) -> None:
        """Stop the child now and reap it (this process no longer needs its part)."""
        import signal

        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        self.reader.join()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)

    def result(self) -> PartResult | None:
        self.reader.join()
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        if status != 0 or not self.chunks:
            return None
        try:
            return PartResult.from_wire(b"".join(self.chunks))
        except Exception:
            return None


def fork_part(path: str, start: int, stop: int) -> ForkedPart | None:
    """Start a child that scans ``[start, stop)``; None when forking is not possible or safe."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the child: scan, send, and leave without any cleanup (nothing to flush or free)
        status = 1
        try:
            os.close(read_fd)
            payload = scan_part(path, start, stop).to_wire()
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view) :]
            status = 0
        except BaseException:  # the parent redoes the part itself
            pass
        finally:
            os._exit(status)
    os.close(write_fd)
    return ForkedPart(pid, read_fd)
