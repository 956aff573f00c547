"""Turn one session file (or the part appended to it) into the archive index's rows.

Runs in the indexing process or in a worker process of a cold build; reads the file through the
same loader and tree core as every other command, writes nothing itself.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pitools.core.js.types import Entry, JsValue
from pitools.ops.index_limits import ROWID_SHIFT
from pitools.ops.search_core import as_stored

if TYPE_CHECKING:  # the loader and tree core load only when a file is indexed (warm runs skip them)
    import sqlite3

    from pitools.core.views.entry_tree import TreeFacts

#: Bytes at the end of the indexed part whose hash proves the prefix unchanged on the next run.
TAIL_BYTES = 4096
#: Search indexes at most this much text per entry: the head and the tail of longer ones (long
#: tool outputs, file contents). Tokenizing is what a cold build spends most of its time on
#: (SQLite's FTS5 takes in ~10 MB/s per core here); ``search --regex`` scans the full text.
TEXT_HEAD = 8 * 1024
TEXT_TAIL = 2 * 1024
#: Texts at least this long are indexed once per shard, whatever entry holds them: the same tool
#: output read again, a file shown twice, and every entry a fork or clone copied from its parent
#: share one full-text row (the entry's ``tref`` points at it). Shorter texts cost less to
#: tokenize than to hash and look up.
DEDUP_MIN = 1024
MAX_ORD = (1 << ROWID_SHIFT) - 1

EntryRow = tuple[Any, ...]
UsageRow = tuple[Any, ...]


@dataclass(slots=True)
class FileRows:
    """Everything the index stores for one session file."""

    path: str
    size: int
    mtime_ns: int
    ino: int
    indexed_bytes: int
    tail_hash: bytes
    regular: bool
    valid: bool
    header: dict[str, Any] | None
    default_leaf: Any
    leaves: list[str]
    entries: list[EntryRow] = field(default_factory=list)
    usage: list[UsageRow] = field(default_factory=list)
    #: (search row id, text, content hash or None, index of the entry's row in ``entries``)
    texts: list[tuple[int, str, bytes | None, int]] = field(default_factory=list)
    thinking: list[tuple[int, str]] = field(default_factory=list)
    error: str | None = None
    #: ``ls``'s summary of the file (:func:`pitools.core.views.listing.summarize_file`).
    summary: dict[str, Any] | None = None
    #: The summary's scan state, for a regular file (:func:`pitools.core.views.listing.save_scan`):
    #: an append folds only the new values into it instead of reading the whole file again.
    scan: bytes | None = None


def tail_hash(path: str, end: int) -> bytes:
    """SHA-1 of the ``TAIL_BYTES`` before ``end`` (the indexed part's last bytes)."""
    start = max(0, end - TAIL_BYTES)
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    return hashlib.sha1(data, usedforsecurity=False).digest()


def text_key(text: str) -> bytes | None:
    """The content key of a text worth sharing (see :data:`DEDUP_MIN`), else None.

    The whole SHA-256 digest: session text may be written by an attacker, and a key short enough
    to collide on purpose (a 64-bit hash takes ~2^32 tries) would let one text take another's
    full-text row, so that search never finds the entry holding the other. Equal keys are
    trusted to mean equal texts, hence a collision-resistant hash (SHA-256 rather than BLAKE2b:
    with the SHA extensions of current CPUs it hashes about twice as fast).
    """
    if len(text) < DEDUP_MIN:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def cap_text(text: str) -> str:
    if len(text) <= TEXT_HEAD + TEXT_TAIL:
        return text
    return text[:TEXT_HEAD] + "\n" + text[-TEXT_TAIL:]


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MS = _dt.timedelta(milliseconds=1)


def ts_ms(entry: Entry) -> int | None:
    """The entry's time in Unix milliseconds (see :func:`pitools.core.views.usage.entry_time`)."""
    from pitools.core.js.date import js_date_ms
    from pitools.core.views.usage import entry_time

    if type(entry) is not dict:
        return None
    iso = entry_time(entry)
    if iso is None:
        return None
    # Date#toISOString's shape, the form Pi writes: Python's C parser reads it ten times faster
    # than the JavaScript Date parser below, with the same result (a cold build meets it on
    # every entry); anything it refuses (hour 24, a 31st of April, other forms) goes there.
    if len(iso) == 24 and iso[23] == "Z" and iso[19] == "." and iso[10] == "T":
        try:
            return (_dt.datetime.fromisoformat(iso) - _EPOCH) // _MS
        except ValueError:
            pass
    ms = js_date_ms(iso)
    return int(ms) if ms == ms else None


def is_regular(
    entries: Sequence[Entry], version: Any, ends_with_newline: bool, *, seen: set[str] | None = None
) -> bool:
    """Whether later appends may be indexed alone: a v3 file of string ids, no duplicates, whole lines.

    ``seen``: the ids of earlier entries already known regular (it is added to).
    """
    if version != 3 or not ends_with_newline:
        return False
    if seen is None:
        seen = set()
    for entry in entries:
        if type(entry) is not dict:
            return False
        eid, pid = entry.get("id"), entry.get("parentId")
        if type(eid) is not str or eid in seen or not (pid is None or type(pid) is str):
            return False
        etype = entry.get("type")
        if etype == "message" and type(entry.get("message")) is not dict:
            return False  # Pi's context code throws on it: the stored skeleton would hide that
        # The skeleton is stored as SQLite text, where a lone surrogate becomes U+FFFD
        # (sql_text): an append would then link new entries to ids that no longer match.
        aux = entry.get("firstKeptEntryId") if etype == "compaction" else entry.get("targetId")
        for text in (eid, pid, etype, aux):
            if type(text) is str and not text.isascii() and sql_text(text) is not text:
                return False
        seen.add(eid)
    return True


def entry_rows(
    sid: int,
    entries: Sequence[Entry],
    offsets: Sequence[int],
    lengths: Sequence[int],
    first_ord: int,
    facts: TreeFacts,
    out: FileRows,
    *,
    with_text: bool = True,
) -> None:
    """Append the rows of ``entries`` (numbered from ``first_ord``) to ``out``."""
    from pitools.core.views.search_text import entry_text
    from pitools.core.views.usage import entry_usage_fields

    base = sid << ROWID_SHIFT
    fromiso, epoch, ms = _dt.datetime.fromisoformat, _EPOCH, _MS
    # Locals: this loop runs once per entry of the archive in a cold build.
    leaf_lo, leaf_hi, in_context, summarized = facts.leaf_lo, facts.leaf_hi, facts.in_context, facts.summarized
    entries_out, usage_out, texts_out, thinking_out = out.entries, out.usage, out.texts, out.thinking
    for k, entry in enumerate(entries):
        ord_ = first_ord + k  # facts are over the whole session: ord_ indexes them
        if ord_ > MAX_ORD:
            break
        # ts_ms(entry), with its common case (toISOString's shape) inline: it runs per entry.
        t: int | None = None
        iso = entry.get("timestamp") if type(entry) is dict else None
        if type(iso) is str and len(iso) == 24 and iso[23] == "Z" and iso[19] == "." and iso[10] == "T":
            try:
                t = (fromiso(iso) - epoch) // ms
            except ValueError:
                t = ts_ms(entry)
        else:
            t = ts_ms(entry)
        aux: Any = None
        aux_null = 0
        role: str | None = None
        tools: str | None = None
        eid = parent = etype = None
        if type(entry) is dict:
            etype = entry.get("type")
            if etype == "compaction":
                aux = entry.get("firstKeptEntryId")
            elif etype == "context_edit":
                aux = entry.get("targetId")
                aux_null = 1 if entry.get("replacement", 0) is None else 0
            message = entry.get("message")
            if etype == "message" and type(message) is dict:
                got = message.get("role")
                role = got if type(got) is str else None
            eid, parent = entry.get("id"), entry.get("parentId")
        if with_text:
            text = entry_text(entry)
            if text.role is not None:
                role = text.role
            if text.tools:
                tools = "\x1f".join(dict.fromkeys(text.tools))
            if text.parts:
                body = cap_text(text.text)
                texts_out.append((base | ord_, body, text_key(body), len(entries_out)))
            if text.thinking:
                thinking_out.append((base | ord_, cap_text(text.thinking_text)))
        entries_out.append(
            (
                sid,
                ord_,
                eid if type(eid) is str else None,
                parent if type(parent) is str else None,
                t,
                etype if type(etype) is str else None,
                role,
                tools,
                offsets[k],
                lengths[k],
                leaf_lo[ord_],
                leaf_hi[ord_],
                int(in_context[ord_]),
                int(summarized[ord_]),
                aux if type(aux) is str else None,
                aux_null,
                None,  # tref: set when the text is already indexed under another entry
            )
        )
        fields = entry_usage_fields(entry)
        if fields is not None:
            usage_out.append((sid, ord_, t, *fields))


def read_file(path: str, sid: int, st: os.stat_result) -> FileRows:
    """Index a whole file: load (and migrate) it like Pi, then every entry's rows."""
    from pathlib import Path

    from pitools.core.js.json.parse import gc_paused
    from pitools.core.session.load import load
    from pitools.core.views.entry_tree import tree_facts
    from pitools.core.views.listing import finish_scan, save_scan, scan_values, summarize_file
    from pitools.errors import PitoolsError

    size = st.st_size
    out = FileRows(path, size, st.st_mtime_ns, st.st_ino, size, b"", False, False, None, None, [])
    try:
        with gc_paused():
            session = load(Path(path), strict=False, freeze=False).session
            out.tail_hash = tail_hash(path, size)
    except (PitoolsError, OSError, RecursionError) as exc:
        out.summary = summarize_file(path, st)
        out.error = str(exc)
        return out
    # ``ls``'s summary from the values just parsed (a migrated file's values changed: reread).
    scan = scan_values(session.raw.values) if session.valid and not session.needs_migration else None
    out.summary = finish_scan(path, st, scan) if scan is not None else summarize_file(path, st)
    if not session.valid or session.header is None:
        return out
    out.valid = True
    out.header = session.header
    entries = session.entries
    raw = session.raw
    offsets = [raw.offsets[p] for p in session.positions]
    lengths = [raw.lengths[p] for p in session.positions]
    facts = tree_facts(entries)
    out.default_leaf = facts.default_leaf if type(facts.default_leaf) is str else None
    out.leaves = facts.leaves
    out.regular = is_regular(entries, session.header.get("version"), raw.ends_with_newline)
    if out.regular and scan is not None:
        out.scan = save_scan(scan)
    entry_rows(sid, entries, offsets, lengths, 0, facts, out)
    return out


def read_appended(path: str, start: int, st: os.stat_result) -> tuple[list[Any], list[int], list[int], bool]:
    """Values appended to a file after byte ``start`` (a line boundary): entries, offsets, lengths, ok.

    ``ok`` is False when the part holds something only a full reindex handles (a second header,
    a torn last line).
    """
    from pathlib import Path

    from pitools.core.js.json.parse import gc_paused
    from pitools.core.session.load import load

    raw, values = load(Path(path), keep="none", start=start, stop=st.st_size, finish=False)
    entries: list[Any] = []
    offsets: list[int] = []
    lengths: list[int] = []
    with gc_paused():
        for value, _line, offset, length in values:
            if type(value) is dict and value.get("type") == "session":
                return [], [], [], False
            entries.append(value)
            offsets.append(offset)
            lengths.append(length)
    return entries, offsets, lengths, raw.ends_with_newline


def insert_texts(
    conn: sqlite3.Connection, prefix: str, rows: FileRows, seen: dict[bytes, int], *, complete: bool = False
) -> None:
    """Write ``rows``' search text into a shard (``prefix``: ``""`` or ``"s<k>."``).

    A long text already indexed in this shard (``seen``, then the shard's ``texts`` table) gets
    no row of its own: its entry's ``tref`` names the row holding the same text. Search checks
    every candidate against the file, so a shared row never yields a wrong hit. ``complete``:
    ``seen`` holds every text of the shard (it was empty when this process started writing it
    alone, as in a cold build's worker), so a text missing from it is not looked up.
    """
    fresh: list[tuple[int, str]] = []
    keys: list[tuple[bytes, int]] = []
    lookup = f"SELECT r FROM {prefix}texts WHERE h=?"
    for rid, body, key, pos in rows.texts:
        if key is None:
            fresh.append((rid, body))
            continue
        ref = seen.get(key)
        if ref is None and not complete:
            got = conn.execute(lookup, (key,)).fetchone()
            if got is not None:
                ref = seen[key] = got[0]
        if ref is None:
            seen[key] = rid
            fresh.append((rid, body))
            keys.append((key, rid))
        else:
            row = rows.entries[pos]
            rows.entries[pos] = (*row[:-1], ref)
    conn.executemany(f"INSERT INTO {prefix}fts(rowid, body) VALUES(?, ?)", _utf8_rows(fresh))
    conn.executemany(f"INSERT OR IGNORE INTO {prefix}texts(h, r) VALUES(?, ?)", keys)
    conn.executemany(f"INSERT INTO {prefix}fts_thinking(rowid, body) VALUES(?, ?)", _utf8_rows(rows.thinking))
    rows.texts = []
    rows.thinking = []


def _utf8_rows(rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``rows`` with texts SQLite can take: a lone surrogate (JSON allows ``"\\ud800"``, and
    session text may be hostile) becomes U+FFFD instead of failing the whole update. Search
    checks every hit against the file, so the replaced character only changes what the
    full-text table can match."""
    out = rows
    for i, (rid, body) in enumerate(rows):
        try:
            body.encode("utf-8")
        except UnicodeEncodeError:
            if out is rows:
                out = list(rows)
            out[i] = (rid, as_stored(body))
    return out


def json_bytes(value: JsValue) -> bytes:
    """``value`` as JSON for the index: orjson's bytes, or (for a lone surrogate, which session
    text may hold and orjson refuses) ``JSON.stringify``'s escaped form. Read it back with
    :func:`pitools.core.js.json.parse.parse_json_line`."""
    import orjson

    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        from pitools.core.js.json.encode import to_json_bytes

        return to_json_bytes(value)


def insert_many(conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """``conn.executemany(sql, rows)`` for ``INSERT OR REPLACE`` rows; when a string holds a lone
    surrogate (a hostile or broken session: sqlite3 cannot encode it, and one such file would fail
    every ``ls``, ``usage`` and ``search`` of the archive) the rows are stored again with
    :func:`sql_text` on every field. Replacing is idempotent, so the rows the first try stored
    before it failed are simply written again; the common case pays nothing."""
    try:
        conn.executemany(sql, rows)
    except UnicodeEncodeError:
        conn.executemany(sql, [tuple(sql_text(v) for v in row) for row in rows])


def sql_text(value: JsValue) -> Any:
    """``value`` as SQLite can bind it: a string with a lone surrogate gets U+FFFD in its place
    (sqlite3 refuses to encode it, which would fail the whole update); anything else as is."""
    if type(value) is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return as_stored(value)
    return value
