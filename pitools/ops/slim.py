"""``pitools slim`` as a use case: one streaming read, the plan, the proof, one streaming write.

Memory: the parsed entries (Pi holds the same on resume) plus the replacement lines; the file's
bytes are never held whole. The stamp is the sha256 of exactly the bytes parsed, and the write
re-reads the file line by line, hashing as it goes: if what it copies is not what was parsed,
the write is abandoned (and :mod:`pitools.store` refuses anyway when the file changed).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pitools import store
from pitools.core.errors import PitoolsError, SessionChangedError, SessionParseError
from pitools.core.repair.slim import (
    MessageHashes,
    SlimOptions,
    SlimPlan,
    compare_fingerprints,
    plan_slim,
    slim_fingerprints,
)
from pitools.core.session.load import RawSession, consume_values, gc_paused, iter_file_lines, scan_lines
from pitools.core.session.loaded import require_valid, session_from_raw
from pitools.core.session.tree import SessionIndex


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
            else {"holds": not self.violations, "leaves": self.plan.leaves, "violations": self.violations},
        }


def _hashing_lines(path: str, digest: Any) -> Iterator[tuple[int, bytes]]:
    for offset, line in iter_file_lines(path):
        digest.update(line)
        yield offset, line


def _read(path: str) -> tuple[RawSession, store.FileStamp]:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    if os.path.isdir(path):
        raise SessionParseError("is a directory, not a session file", path=path)
    raw = RawSession(path=path, size=st.st_size)
    digest = hashlib.sha256()
    try:
        with gc_paused():
            consume_values(raw, scan_lines(raw, _hashing_lines(path, digest)))
    except OSError as exc:
        raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    stamp = store.FileStamp(raw.size, st.st_mtime_ns, digest.hexdigest(), raw.ends_with_newline)
    return raw, stamp


def _output(path: str, replacements: dict[int, bytes], stamp: store.FileStamp) -> Iterator[bytes]:
    """The slimmed file, line by line, copied from ``path`` (refuses if it is not the stamped file)."""
    digest = hashlib.sha256()
    pending: list[bytes] = []
    size = 0
    for lineno, (_offset, line) in enumerate(iter_file_lines(path), start=1):
        digest.update(line)
        new = replacements.get(lineno)
        pending.append(line if new is None else new)
        size += len(pending[-1])
        if size >= 1 << 20:
            yield b"".join(pending)
            pending.clear()
            size = 0
    if digest.hexdigest() != stamp.sha256:
        raise SessionChangedError(
            "the file changed since pitools read it (another process is writing to it?); nothing was written",
            path=path,
        )
    if pending:
        yield b"".join(pending)


def slim_file(
    path: str,
    options: SlimOptions,
    *,
    output: str | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    backup: bool = True,
) -> SlimResult:
    """Plan, prove and (unless ``dry_run``) write the slimmed session."""
    import time

    from pitools.core.session.load import parse_json_line

    t0 = time.perf_counter()
    raw, stamp = _read(path)
    session = require_valid(session_from_raw(raw))
    if session.needs_migration:
        raise PitoolsError("a v1/v2 session: run `pitools migrate --in-place` first, then slim it", path=path)
    timings = {"read": time.perf_counter() - t0}
    index = SessionIndex.build(session.entries)
    plan = plan_slim(session.entries, index, options)
    timings["plan"] = time.perf_counter() - t0 - sum(timings.values())
    # Replacements by line number, and the size after.
    by_line = {session.lines[pos]: data for pos, data in plan.replacements.items()}
    bytes_after = raw.size
    for pos, data in plan.replacements.items():
        old_len = raw.lengths[session.positions[pos]]
        had_nl = not (session.lines[pos] == raw.line_count and not raw.ends_with_newline)
        bytes_after += len(data) - old_len - (1 if had_nl else 0)
        if not had_nl:
            by_line[session.lines[pos]] = data[:-1]
            bytes_after -= 1
    result = SlimResult(path, options, plan, raw.size, bytes_after, dry_run=dry_run, timings=timings)
    if not plan.replacements:
        result.violations = []
        return result
    # The proof: what Pi builds before, then after with the new lines as Pi would parse them.
    t1 = time.perf_counter()
    hashes = MessageHashes()
    before = slim_fingerprints(session, index, hashes)
    entries = session.entries
    for pos, data in plan.replacements.items():
        entries[pos] = parse_json_line(data)[0]
        raw.values[session.positions[pos]] = entries[pos]
    after_index = SessionIndex.build(entries)
    after = slim_fingerprints(session, after_index, hashes)
    result.violations = compare_fingerprints(before, after)
    timings["verify"] = time.perf_counter() - t1
    if result.refused or dry_run:
        return result
    del before, after, after_index, index, hashes
    t2 = time.perf_counter()
    if in_place:
        made = store.atomic_replace(path, _output(path, by_line, stamp), expected=stamp, backup=backup)
        result.written = path
        result.backup = str(made) if made else None
    elif output:
        store.write_new(output, _output(path, by_line, stamp))
        result.written = output
    timings["write"] = time.perf_counter() - t2
    return result
