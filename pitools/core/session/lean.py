"""The loader's "context" keep policy (``load(path, keep="context")``): Pi's loader rules over
every line, without keeping every parsed entry.

Pi's rules need every line parsed (skipped lines, duplicate ids where the last one wins, the
default leaf, header checks, extra headers), but a command such as ``context`` needs the full
value of only a few entries: the path from the leaf back to the last compaction, the compaction,
and the entries that set the model and the thinking level. Keeping all parsed values costs about
2.5 bytes of Python objects per byte of file, and most of a load's time beyond the bare parse
goes to page faults for them.

:func:`open_lean` reads the file with the same scanner as :func:`~pitools.core.session.lines.read_session`
(same diagnostics), keeps per entry only what the tree and the rules need (id, parentId, type,
line, byte offset and length, a small mark), and keeps a parsed value only while it is recent:
values before the newest compaction's kept range are dropped as the scan goes (entries that are
always small or needed — compactions, labels, model and thinking changes, odd ids — are kept).
A dropped entry is read again from the same open file descriptor and parsed again on demand
(:meth:`LeanIndex.entries_at`), and checked against what the scan recorded.

The result is a :class:`LeanIndex`, one implementation of the loader's index interface
(:class:`~pitools.core.session.index.EntryIndex`; the "all" policy's is
:class:`~pitools.core.session.tree.SessionIndex`): every Pi mirror runs on it unchanged.
Files Pi migrates (v1/v2) and inputs that are not regular files take the "all" policy instead
(:func:`open_lean` returns None).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from pitools.core.js.json.parse import gc_paused, parse_json_line
from pitools.core.js.value import UNDEFINED, js_truthy
from pitools.core.session.findings import Diagnostic
from pitools.core.session.header import accepted_header, extra_header
from pitools.core.session.index import (
    MARK_CRASH,
    MARK_NONE,
    PositionWalks,
    entry_mark,
    mkey,
)
from pitools.core.session.lines import RawSession, stream_session
from pitools.core.session.migrate import CURRENT_VERSION, MigrationReport, effective_version
from pitools.errors import SessionChangedError, SessionParseError

#: Entry types whose parsed value is always kept (small, or needed by every replay).
KEPT_TYPES = frozenset({"compaction", "label", "model_change", "thinking_level_change"})

#: Bytes of entries since the last compaction past which parsed values are kept (see _consume_lean).
KEEP_AFTER_BYTES = 4 << 20

#: Dropped entries closer than this many bytes are read back with one ``pread``.
_READ_GAP = 1 << 16


class _Abandon(Exception):
    """The lean path does not apply (migration needed); the caller loads the full way."""


@dataclass(slots=True, eq=False)
class LeanIndex(PositionWalks):
    """The loader's "keep the recent context" index (:class:`~pitools.core.session.index.EntryIndex`):
    Pi's ``byId`` map and what the tree needs per entry, with values loaded on demand.

    Every list is parallel to the entries (file order, headers excluded), as
    :class:`~pitools.core.session.tree.SessionIndex` is over ``Session.entries``; ``pos_by_id``
    maps an id key (:func:`~pitools.core.session.index.mkey`) to the position of the last
    entry with that id.
    """

    path: str
    lines: list[int]
    offsets: list[int]
    lengths: list[int]
    ids: list[Any]
    parents: list[Any]
    types: list[Any]
    marks: bytearray
    #: The parsed value of each entry, or None where it was dropped (re-read on demand).
    values: list[Any]
    pos_by_id: dict[Any, int] = field(default_factory=dict)
    leaf_id: Any = None
    fd: int | None = None
    rereads: int = 0
    #: Each entry's parent position where the scan could resolve it for good (ids unique,
    #: parent seen before): -1 no parent, -2 resolve through ``pos_by_id``. None: always resolve.
    known_parents: list[int] | None = None
    #: How many entries carry MARK_CRASH (usually none: a settings walk can then stop early).
    crashes: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    def entries_seq(self, positions: list[int]) -> Sequence[Any]:
        """The entries at ``positions`` as a sequence that parses them when read (:class:`LazyEntries`)."""
        return LazyEntries(self, positions)

    # -- values --------------------------------------------------------------------------
    def entry(self, pos: int) -> Any:
        """The parsed entry at ``pos`` (read again from the file if it was dropped)."""
        value = self.values[pos]
        if value is None:
            value = self.entries_at([pos])[0]
        return value

    def entries_at(self, positions: Sequence[int], *, keep: bool = True) -> list[Any]:
        """The parsed entries at ``positions`` (any order), reading dropped ones back in one
        ``pread`` per run of nearby lines; ``keep=False`` does not keep what it reads back."""
        values = self.values
        missing = sorted({p for p in positions if values[p] is None})
        if not missing:
            return [values[p] for p in positions]
        got: dict[int, Any] = {}
        offsets, lengths = self.offsets, self.lengths
        run_start = 0
        with gc_paused():
            for i in range(1, len(missing) + 1):
                if i < len(missing):
                    prev, cur = missing[i - 1], missing[i]
                    if offsets[cur] - offsets[prev] - lengths[prev] <= _READ_GAP:
                        continue
                run = missing[run_start:i]
                base = offsets[run[0]]
                last = run[-1]
                data = self._pread(base, offsets[last] + lengths[last] - base)
                for p in run:
                    at = offsets[p] - base
                    got[p] = self._reparse(p, data[at : at + lengths[p]])
                run_start = i
        self.rereads += len(missing)
        if keep:
            for p, value in got.items():
                values[p] = value
        return [values[p] if values[p] is not None else got[p] for p in positions]

    def _pread(self, offset: int, size: int) -> bytes:
        if self.fd is None:  # pragma: no cover - values are only dropped while the file is open
            raise SessionChangedError("the session file was closed before its entries were read", path=self.path)
        chunks = []
        while size > 0:
            chunk = os.pread(self.fd, size, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _reparse(self, pos: int, data: bytes) -> Any:
        try:
            value, _ = parse_json_line(data)
        except ValueError:
            value = UNDEFINED
        if (
            type(value) is not dict
            or not _same(value.get("id", UNDEFINED), self.ids[pos])
            or not _same(value.get("parentId", UNDEFINED), self.parents[pos])
            or not _same(value.get("type", UNDEFINED), self.types[pos])
        ):
            raise SessionChangedError(
                "the file changed while it was being read (an entry is no longer where it was); run again",
                path=self.path,
                line=self.lines[pos],
            )
        return value

    def forget_values(self) -> None:
        """Let go of every parsed value held (entries are read back from the file if asked for
        again): a caller that has taken what it needs frees that memory as it goes."""
        self.values = [None] * len(self.values)

    def close(self) -> None:
        """Close the file (entries dropped by the scan can no longer be read back)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self) -> None:
        self.close()


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (a is b or a == b)


class LazyEntries(Sequence[Any]):
    """A read-only sequence of the entries at some positions, parsed on access.

    Stands where a list of entries is expected (``ContextReplay.path``): its length is free,
    iterating reads dropped entries back in batches (and lets them go again).
    """

    __slots__ = ("_index", "_positions")

    def __init__(self, index: LeanIndex, positions: list[int]) -> None:
        self._index = index
        self._positions = positions

    @property
    def positions(self) -> list[int]:
        return self._positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self._index.entries_at(self._positions[i], keep=False)
        return self._index.entries_at([self._positions[i]], keep=False)[0]

    def __iter__(self) -> Iterator[Any]:
        batch = 4096
        for start in range(0, len(self._positions), batch):
            yield from self._index.entries_at(self._positions[start : start + batch], keep=False)

    def __bool__(self) -> bool:
        return bool(self._positions)


@dataclass(slots=True, eq=False)
class LeanSession:
    """What :class:`~pitools.core.session.loaded.Session` tells about a file, with a
    :class:`LeanIndex` instead of the list of entries (only v3 files: nothing to migrate)."""

    path: str
    raw: RawSession
    header: dict[str, Any] | None
    index: LeanIndex
    migration: MigrationReport
    diagnostics: list[Diagnostic]

    @property
    def valid(self) -> bool:
        return self.raw.valid

    @property
    def lines(self) -> list[int]:
        return self.index.lines


def open_lean(path: str | os.PathLike[str], on_entry: Callable[[Any], None] | None = None) -> LeanSession | None:
    """Load ``path`` like ``load(path)`` does, keeping entries lean (``load(path, keep="context")``).

    Returns None when the lean path does not apply (the file needs migration, or is not a
    regular file that can be read again): the loader keeps everything instead. ``on_entry``
    is called with each entry's parsed value, in order, before a value is dropped (a caller
    that needs one fact of every entry gets it without parsing the file again). Raises
    :class:`~pitools.errors.SessionParseError` when the file cannot be read.
    """
    spath = os.fspath(path)
    try:
        fd = os.open(spath, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # the full path reports why, in its own words
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        # The scan reads the very file ``fd`` holds (Linux: its /proc alias reopens the same
        # inode), so a file replaced meanwhile cannot give the scan and the re-reads different
        # files; elsewhere it opens the path again, and the checks made on every entry read back
        # would notice a replaced file (SessionChangedError).
        alias = f"/proc/self/fd/{fd}"
        same = os.path.exists(alias)
        try:
            raw, scanned = stream_session(alias if same else spath)
            raw.path = spath
            session = _consume_lean(raw, scanned, spath, fd, on_entry)
        except SessionParseError as exc:
            exc.path = spath
            raise
    except _Abandon:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return session


def _consume_lean(
    raw: RawSession, scanned: Iterator[Any], path: str, fd: int, on_entry: Callable[[Any], None] | None = None
) -> LeanSession:
    lines: list[int] = []
    offsets: list[int] = []
    lengths: list[int] = []
    ids: list[Any] = []
    parents: list[Any] = []
    types: list[Any] = []
    marks = bytearray()
    values: list[Any] = []
    by_id: dict[Any, int] = {}
    parent_pos: list[int] = []
    duplicates = False
    crashes = 0
    extra: list[Diagnostic] = []
    header: Any = None
    # Values are dropped at once while the current stretch since the last compaction is short
    # (freeing each value right away keeps the allocator in the CPU cache: keeping a few hundred
    # entries at a time costs half the parse again); past ``keep_after`` bytes the stretch is
    # long, the context will likely need it all, and it is kept until the next compaction.
    keep_from = 0
    since = 0
    keep_after = KEEP_AFTER_BYTES
    kept_types = KEPT_TYPES
    first = True
    with gc_paused():
        for value, lineno, offset, size in scanned:
            if first:
                first = False
                header = value
                if accepted_header(value) and not effective_version(value.get("version")) >= CURRENT_VERSION:
                    raise _Abandon  # migrated in memory (a NaN version too, as Pi does): the full path
                if not accepted_header(value):
                    # Pi rejects the file; the scan still runs to the end for its diagnostics.
                    for _ in scanned:
                        pass
                    break
                continue
            pos = len(ids)
            if type(value) is dict:
                get = value.get
                etype = get("type", UNDEFINED)
                if etype == "session":
                    extra.append(extra_header(value, lineno, offset))
                    continue
                if on_entry is not None:
                    on_entry(value)
                eid = get("id", UNDEFINED)
                pid = get("parentId", UNDEFINED)
                mark = entry_mark(etype, value)
                if mark == MARK_CRASH:
                    crashes += 1
                # The parent is resolved now when it is already known (the usual case: it came
                # just before); -2 leaves it to the walk (forward reference, odd id type).
                if type(pid) is str:
                    parent = by_id.get(pid, -2) if pid else -1
                else:
                    parent = -2 if js_truthy(pid) else -1
                key = eid if type(eid) is str else mkey(eid)
                if key in by_id:
                    duplicates = True
                by_id[key] = pos
                if etype == "compaction":
                    # A new context starts: what was kept since the previous one is dropped.
                    for i in range(keep_from, pos):
                        if values[i] is not None:
                            t = types[i]
                            if type(ids[i]) is str and not (type(t) is str and t in kept_types):
                                values[i] = None
                    keep_from = pos
                    since = 0
                elif since <= keep_after and type(eid) is str and not (type(etype) is str and etype in kept_types):
                    value = None
                since += size
            else:
                if on_entry is not None:
                    on_entry(value)
                etype = UNDEFINED
                eid = UNDEFINED
                pid = UNDEFINED
                mark = MARK_NONE
                parent = -1
                if UNDEFINED in by_id:
                    duplicates = True
                by_id[UNDEFINED] = pos
            lines.append(lineno)
            offsets.append(offset)
            lengths.append(size)
            ids.append(eid)
            parents.append(pid)
            parent_pos.append(parent)
            types.append(etype)
            marks.append(mark)
            values.append(value)
    diagnostics = list(raw.diagnostics)
    valid = raw.valid
    index = LeanIndex(
        path=path,
        lines=lines if valid else [],
        offsets=offsets if valid else [],
        lengths=lengths if valid else [],
        ids=ids if valid else [],
        parents=parents if valid else [],
        types=types if valid else [],
        marks=marks if valid else bytearray(),
        values=values if valid else [],
        pos_by_id=by_id if valid else {},
        fd=fd,
        # With a duplicate id a parent resolved during the scan may not be Pi's (the last wins).
        known_parents=parent_pos if valid and not duplicates else None,
        crashes=crashes,
    )
    if valid:
        diagnostics.extend(extra)
        index.leaf_id = ids[-1] if ids else None
    report = MigrationReport(version_before=header.get("version") if valid else None)
    return LeanSession(
        path=path,
        raw=raw,
        header=header if valid else None,
        index=index,
        migration=report,
        diagnostics=diagnostics,
    )
