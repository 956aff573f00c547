"""``pitools slim`` as a use case: one streaming read, the plan, the proof, one streaming write.

The file is read once. Each line's bytes are kept (the output copies every untouched line from
them, so what is written is exactly what was parsed and checked); each parsed entry is reduced
at once to its slimmed line, if it has selected content, and to its skeleton (everything but
the replaceable content blocks), and the parsed content is dropped. Peak memory is therefore
about the file's size plus the skeletons, and no time goes into holding or re-reading content.

The source is never written by ``-o``; a change to it while slim runs (another process
appending) is detected by its size and mtime and the output is not published. ``--in-place``
goes through :func:`pitools.store.atomic_replace`, which compares the file's sha256 with the
bytes read before it replaces anything.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pitools import store
from pitools.core.errors import PitoolsError, SessionChangedError, SessionParseError
from pitools.core.repair.slim import Candidate, SlimOptions, SlimPlan, plan_from_candidates, skeleton, slim_candidate
from pitools.core.repair.slim_check import check_slim
from pitools.core.session.load import RawSession, gc_paused, iter_file_lines, parse_json_line, scan_lines
from pitools.core.session.loaded import require_valid, session_from_raw


@dataclass(slots=True)
class SlimResult:
    path: str
    options: SlimOptions
    plan: SlimPlan
    bytes_before: int
    bytes_after: int
    violations: list[str] | None = None
    written: str | None = None
    backup: str | None = None
    dry_run: bool = False
    #: "structural" (the default proof) or "full" (also every leaf replayed, before and after).
    check: str = "structural"
    #: CPU seconds per phase (read, plan, verify, write).
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        return bool(self.violations)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "dryRun": self.dry_run,
            "written": self.written,
            "backup": self.backup,
            "bytesBefore": self.bytes_before,
            "bytesAfter": self.bytes_after,
            "bytesSaved": self.bytes_before - self.bytes_after,
            "entriesChanged": len(self.plan.replacements),
            "compactedEntries": self.plan.compacted_entries,
            "categories": {name: t.to_json() for name, t in self.plan.totals.items()},
            "invariant": None
            if self.violations is None
            else {
                "holds": not self.violations,
                "leaves": self.plan.leaves,
                "check": self.check,
                "violations": self.violations,
            },
        }


@dataclass(slots=True)
class _Read:
    raw: RawSession
    #: Every line of the file as read (with its line end), including lines Pi skips.
    lines: list[bytes]
    #: Candidates by position in ``raw.values``.
    candidates: dict[int, Candidate]
    stat: os.stat_result


def _read(path: str, options: SlimOptions) -> _Read:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    if os.path.isdir(path):
        raise SessionParseError("is a directory, not a session file", path=path)
    raw = RawSession(path=path, size=st.st_size)
    held: list[bytes] = []
    keep = held.append

    def kept(lines: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
        for item in lines:
            keep(item[1])
            yield item

    candidates: dict[int, Candidate] = {}
    values, line_nos, offsets, lengths = raw.values, raw.lines, raw.offsets, raw.lengths
    try:
        with gc_paused():
            for value, lineno, offset, size in scan_lines(raw, kept(iter_file_lines(path))):
                pos = len(values)
                if pos:  # the first value is the header (or Pi rejects the file)
                    cand = slim_candidate(value, options)
                    if cand is not None:
                        candidates[pos] = cand
                    value = skeleton(value)
                values.append(value)
                line_nos.append(lineno)
                offsets.append(offset)
                lengths.append(size)
    except OSError as exc:
        raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    raw.size = sum(map(len, held))
    return _Read(raw, held, candidates, st)


def _chunks(lines: list[bytes], by_line: dict[int, bytes], check: Any = None) -> Iterator[bytes]:
    """The slimmed file in chunks of about 1 MB; ``check()`` runs before the last one."""
    pending: list[bytes] = []
    size = 0
    for lineno, line in enumerate(lines, start=1):
        new = by_line.get(lineno)
        if new is not None:
            line = new
        pending.append(line)
        size += len(line)
        if size >= 1 << 20:
            yield b"".join(pending)
            pending.clear()
            size = 0
    if check is not None:
        check()
    if pending:
        yield b"".join(pending)


def _unchanged_check(path: str, st: os.stat_result) -> Any:
    def check() -> None:
        try:
            now = os.stat(path)
        except OSError:
            now = None
        if now is None or (now.st_size, now.st_mtime_ns, now.st_ino) != (st.st_size, st.st_mtime_ns, st.st_ino):
            raise SessionChangedError(
                "the file changed since pitools read it (another process is writing to it?); nothing was written",
                path=path,
            )

    return check


def slim_file(
    path: str,
    options: SlimOptions,
    *,
    output: str | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    backup: bool = True,
    full_check: bool = False,
) -> SlimResult:
    """Plan, prove and (unless ``dry_run``) write the slimmed session."""
    t0 = time.process_time()
    read = _read(path, options)
    raw = read.raw
    session = require_valid(session_from_raw(raw))
    if session.needs_migration:
        raise PitoolsError("a v1/v2 session: run `pitools migrate --in-place` first, then slim it", path=path)
    timings = {"read": time.process_time() - t0}
    t1 = time.process_time()
    positions = session.positions
    by_entry = {k: read.candidates[p] for k, p in enumerate(positions) if p in read.candidates}
    plan = plan_from_candidates(session.entries, by_entry, options)
    timings["plan"] = time.process_time() - t1
    # Replacements by line number, and the size after (a last line without newline stays so).
    by_line: dict[int, bytes] = {}
    bytes_after = raw.size
    last_line = len(read.lines)
    for pos, data in plan.replacements.items():
        lineno = session.lines[pos]
        if lineno == last_line and not raw.ends_with_newline:
            data = data[:-1]
        by_line[lineno] = data
        bytes_after += len(data) - len(read.lines[lineno - 1])
    result = SlimResult(
        path, options, plan, raw.size, bytes_after, dry_run=dry_run, check="full" if full_check else "structural"
    )
    result.timings = timings
    if not plan.replacements:
        result.violations = []
        return result
    # The proof, on the new lines as Pi will parse them.
    t2 = time.process_time()
    after = {pos: parse_json_line(data)[0] for pos, data in plan.replacements.items()}
    result.violations = check_slim(session.entries, plan, after, session.lines)
    if full_check and not result.violations:
        result.violations = _full_check(read.lines, by_line)
    timings["verify"] = time.process_time() - t2
    if result.refused or dry_run:
        return result
    del after, session, by_entry
    t3 = time.process_time()
    if in_place:
        digest = hashlib.sha256()
        for line in read.lines:
            digest.update(line)
        stamp = store.FileStamp(raw.size, read.stat.st_mtime_ns, digest.hexdigest(), raw.ends_with_newline)
        made = store.atomic_replace(path, _chunks(read.lines, by_line), expected=stamp, backup=backup)
        result.written = path
        result.backup = str(made) if made else None
    elif output:
        store.write_new(output, _chunks(read.lines, by_line, _unchanged_check(path, read.stat)))
        result.written = output
    timings["write"] = time.process_time() - t3
    return result


def _full_check(lines: list[bytes], by_line: dict[int, bytes]) -> list[str]:
    """Replay Pi's context and ``prepareCompaction`` at every leaf on the whole file, before and after."""
    from pitools.core.repair.slim_check import MessageHashes, compare_fingerprints, slim_fingerprints
    from pitools.core.session.load import read_session_bytes
    from pitools.core.session.tree import SessionIndex

    data = b"".join(lines)
    session = session_from_raw(read_session_bytes(data))
    del data
    hashes = MessageHashes()
    index = SessionIndex.build(session.entries)
    before = slim_fingerprints(session, index, hashes)
    entries = session.entries
    for pos, lineno in enumerate(session.lines):
        new = by_line.get(lineno)
        if new is not None:
            entries[pos] = parse_json_line(new)[0]
            session.raw.values[session.positions[pos]] = entries[pos]
    after = slim_fingerprints(session, SessionIndex.build(entries), hashes)
    return compare_fingerprints(before, after)
