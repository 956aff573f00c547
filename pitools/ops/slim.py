"""``pitools slim`` as a use case: one streaming read, the plan, the proof, one streaming copy.

Memory and time are what a 1 GB session needs them to be. The first pass parses every line
(the one loader, :func:`~pitools.core.session.load.load`, with slim's own keep policy) and reduces
each entry at once to its slimmed line, if it holds selected content, and to its skeleton; the parsed content
is dropped, so peak memory is the skeletons plus the new lines, not the file. The second pass
copies the file's kept byte ranges in big chunks (the replaced lines are skipped, not read) and
puts the new lines in between, so every untouched line is written back byte for byte.

Between the passes the file must not change: its size, inode, mtime and ctime (which no one can
set back) are compared when the copy starts and ends, and the output is not published
otherwise. ``--in-place`` also hashes the bytes parsed, and :func:`pitools.store.atomic_replace`
refuses unless the file still has that sha256 when it replaces it.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitools import store
from pitools.core.js.json.parse import gc_paused, parse_json_line
from pitools.core.js.json.record import record_json
from pitools.core.js.types import JsonObject
from pitools.core.repair.slim import Candidate, SlimOptions, SlimPlan, plan_from_candidates, skeleton, slim_candidate
from pitools.core.repair.slim_check import check_slim
from pitools.core.session.load import load
from pitools.core.session.loaded import Session
from pitools.errors import PitoolsError, SessionChangedError, SessionParseError

#: Bytes copied per read in the second pass.
_CHUNK = 1 << 20


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

    def to_json(self) -> JsonObject:
        return {
            **record_json(self, ("path", "dry_run", "written", "backup", "bytes_before", "bytes_after")),
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
    session: Session
    #: Candidates by position in ``session.raw.values``.
    candidates: dict[int, Candidate]
    #: The file as found before the read (compared again around the copy).
    stat: os.stat_result
    #: sha256 of the bytes read (only for ``--in-place``: the store compares it before replacing).
    sha256: str | None


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(path: str, options: SlimOptions, *, hash_bytes: bool) -> _Read:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    if stat_mod.S_ISDIR(st.st_mode):
        raise SessionParseError("is a directory, not a session file", path=path)
    if not stat_mod.S_ISREG(st.st_mode):
        # The copy reads the file a second time: a pipe or a device cannot be read twice.
        raise PitoolsError("not a regular file (a pipe, device or socket); slim reads regular files", path=path)
    digest = hashlib.sha256() if hash_bytes else None
    read = 0

    def counted(line: bytes) -> None:
        nonlocal read
        read += len(line)
        if digest is not None:
            digest.update(line)

    candidates: dict[int, Candidate] = {}
    pos = -1

    def reduce(value: Any) -> Any:
        nonlocal pos
        pos += 1
        if pos:  # the first value is the header (or Pi rejects the file)
            cand = slim_candidate(value, options)
            if cand is not None:
                candidates[pos] = cand
            value = skeleton(value, in_place=True)
        return value

    session = load(Path(path), keep=reduce, tap=counted, freeze=False).session
    if read != st.st_size:
        raise SessionChangedError(
            "the file changed while pitools read it (another process is writing to it?); nothing was written",
            path=path,
        )
    return _Read(session, candidates, st, digest.hexdigest() if digest is not None else None)


def _copy(path: str, st: os.stat_result, spans: list[tuple[int, int, bytes]]) -> Iterator[bytes]:
    """The slimmed file: the original's bytes with ``(offset, length)`` spans replaced, in chunks.

    Refuses (before the last chunk, so nothing is published) if the file is not the one read.
    """
    expected = _identity(st)
    changed = SessionChangedError(
        "the file changed since pitools read it (another process is writing to it?); nothing was written",
        path=path,
    )
    with open(path, "rb", buffering=0) as fh:
        if _identity(os.fstat(fh.fileno())) != expected:
            raise changed
        pending: list[bytes] = []
        size = 0
        at = 0

        def copy_to(end: int) -> Iterator[bytes]:
            nonlocal at, size
            while at < end:
                data = fh.read(min(_CHUNK, end - at))
                if not data:
                    raise changed  # shorter than when it was read
                at += len(data)
                pending.append(data)
                size += len(data)
                if size >= _CHUNK:
                    yield b"".join(pending)
                    pending.clear()
                    size = 0

        for offset, length, new in spans:
            yield from copy_to(offset)
            pending.append(new)
            size += len(new)
            at = fh.seek(offset + length)
        yield from copy_to(st.st_size)
        if _identity(os.fstat(fh.fileno())) != expected:
            raise changed
    try:
        now = os.stat(path)
    except OSError:
        raise changed from None
    if _identity(now) != expected:
        raise changed
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
    full_check: bool = False,
) -> SlimResult:
    """Plan, prove and (unless ``dry_run``) write the slimmed session."""
    # Only acyclic values are made (parsed JSON, skeletons, sets of ints): with the cyclic
    # collector on, each collection would rescan every skeleton held.
    with gc_paused():
        return _slim_file(path, options, output, in_place, dry_run, backup, full_check)


def _slim_file(
    path: str,
    options: SlimOptions,
    output: str | None,
    in_place: bool,
    dry_run: bool,
    backup: bool,
    full_check: bool,
) -> SlimResult:
    t0 = time.process_time()
    read = _read(path, options, hash_bytes=in_place and not dry_run)
    session = read.session
    raw = session.raw
    if session.needs_migration:
        raise PitoolsError("a v1/v2 session: run `pitools migrate --in-place` first, then slim it", path=path)
    timings = {"read": time.process_time() - t0}
    t1 = time.process_time()
    positions = session.positions
    by_entry = {k: read.candidates[p] for k, p in enumerate(positions) if p in read.candidates}
    plan = plan_from_candidates(session.entries, by_entry, options)
    timings["plan"] = time.process_time() - t1
    # The replaced spans of the file (a last line without newline stays so), and the size after.
    spans: list[tuple[int, int, bytes]] = []
    bytes_after = raw.size
    for pos in sorted(plan.replacements):
        data = plan.replacements[pos]
        k = session.positions[pos]
        length = raw.lengths[k] + 1  # the line and its "\n" ("\r" is part of lengths)
        if session.lines[pos] == raw.line_count and not raw.ends_with_newline:
            data = data[:-1]
            length -= 1
        spans.append((raw.offsets[k], length, data))
        bytes_after += len(data) - length
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
    result.violations = check_slim(session.entries, plan, after, session.lines, plan.context)
    if full_check and not result.violations:
        result.violations = _full_check(path, read.stat, spans)
    timings["verify"] = time.process_time() - t2
    if result.refused or dry_run:
        return result
    ends_with_newline = raw.ends_with_newline
    del after, session, by_entry, raw
    read.candidates.clear()
    t3 = time.process_time()
    if in_place:
        assert read.sha256 is not None
        stamp = store.FileStamp(read.stat.st_size, read.stat.st_mtime_ns, read.sha256, ends_with_newline)
        made = store.atomic_replace(path, _copy(path, read.stat, spans), expected=stamp, backup=backup)
        result.written = path
        result.backup = str(made) if made else None
    elif output:
        store.write_new(output, _copy(path, read.stat, spans))
        result.written = output
    timings["write"] = time.process_time() - t3
    return result


def _full_check(path: str, st: os.stat_result, spans: list[tuple[int, int, bytes]]) -> list[str]:
    """Replay Pi's context and ``prepareCompaction`` at every leaf on the whole file, before and after."""
    from pitools.core.repair.slim_check import MessageHashes, compare_fingerprints, slim_fingerprints

    with open(path, "rb") as fh:
        data = fh.read(st.st_size)
    before = load(data, strict=False, freeze=False)
    after = load(b"".join(_copy(path, st, spans)), strict=False, freeze=False)
    del data
    hashes = MessageHashes()
    return compare_fingerprints(
        slim_fingerprints(before.session, before.index, hashes),
        slim_fingerprints(after.session, after.index, hashes),
    )
