"""Bring the archive index up to date: the file-by-file work behind :meth:`ArchiveIndex.update`."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from pitools.ops import index_limits as _limits
from pitools.ops.index_limits import BUSY_TIMEOUT_MS, MAX_SHARDS, SLOT_MS, Changed, ProgressFn, UpdateStats

if TYPE_CHECKING:
    from multiprocessing.synchronize import Lock

    from pitools.ops.index import ArchiveIndex

from pitools.ops.index_rows import (
    FileRows,
    entry_rows,
    insert_many,
    insert_texts,
    is_regular,
    json_bytes,
    read_appended,
    read_file,
    sql_text,
    tail_hash,
)
from pitools.ops.parallel import can_fork, fork_workers, process_lock

_ENTRY_INSERT = (
    "INSERT OR REPLACE INTO entries(sid, ord, eid, parent, ts, kind, role, tools, off, len, leaf_lo, leaf_hi, "
    "in_ctx, summarized, aux, aux_null, tref) VALUES(" + ",".join("?" * 17) + ")"
)
_USAGE_INSERT = "INSERT OR REPLACE INTO usage VALUES(" + ",".join("?" * 11) + ", 0)"
#: A session's ``usage_slots`` rows from its ``usage`` rows (floor division: SQLite's ``/``
#: truncates toward zero).
_Q = f"CASE WHEN ts >= 0 THEN ts / {SLOT_MS} ELSE -1 - ((-ts - 1) / {SLOT_MS}) END"
SLOT_SELECT = (
    f"SELECT sid, {_Q}, provider, model, copied, sum(input), sum(output), sum(cache_read), "
    "sum(cache_write), sum(cost), count(*) FROM usage"
)
SLOT_GROUPS = "GROUP BY sid, 2, provider, model, copied"
_SESSION_UPDATE = (
    "UPDATE sessions SET pkey=?, size=?, mtime_ns=?, ino=?, indexed_bytes=?, tail_hash=?, regular=?, "
    "valid=?, header_id=?, cwd=?, name=?, parent_session=?, created=?, modified=?, default_leaf=?, "
    "default_pos=?, leaves=?, summary=?, scan=? WHERE sid=?"
)


@dataclass(slots=True)
class _Todo:
    path: str
    folder: str
    st: os.stat_result
    old: tuple[Any, ...] | None  # (sid, size, mtime_ns, ino, indexed_bytes, tail_hash, regular, shard)


class Updater:
    """One update of the index over some session folders (see :mod:`pitools.ops.index`)."""

    def __init__(self, index: ArchiveIndex, stats: UpdateStats, progress: ProgressFn | None, jobs: int | None) -> None:
        self.index = index
        self.conn = index.conn
        self.stats = stats
        self.progress = progress
        self.jobs = jobs if jobs is not None else max(1, min(MAX_SHARDS, os.cpu_count() or 1))
        self.changed: set[int] = set()
        #: Sessions whose ``usage_slots`` rows must be summed again (appended to, gone, or
        #: whose copied flags moved; a recovering run: all).
        self.slots_dirty: set[int] = set()
        #: Sessions stored whole by this run: their ``usage_slots`` rows were written with them
        #: (:func:`store_rows`); only the all-sessions sums still have to take them in.
        self.slots_new: set[int] = set()
        self.real_dirs: dict[str, str] = {}
        #: Sessions stored whole by this run (new row ids: every ``copied`` flag is still 0).
        self.fresh: set[int] = set()
        #: content hash -> search row, per shard (see :func:`insert_texts`)
        self.seen: dict[int, dict[bytes, int]] = {}

    def run(self, changed: Sequence[Changed], gone: Sequence[int], *, recover: bool = False) -> None:
        """Index what :func:`pitools.ops.index.scan` found changed, drop what is gone.

        ``recover``: a previous update stopped before it refreshed lineage and usage sums; they
        are computed again for every session.
        """
        conn = self.conn
        # Until the end: files stored by this run look indexed to the next one, which must
        # still refresh the lineage and the sums if this run does not get there.
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('pending', '1')")
        if recover:
            every = [r[0] for r in conn.execute("SELECT sid FROM sessions")]
            self.changed.update(every)
            self.slots_dirty.update(every)
        full: list[_Todo] = []
        appends: list[_Todo] = []
        for path, folder, st, old in changed:
            todo = _Todo(path, folder, st, old)
            if old is not None and self._appended(todo):
                appends.append(todo)
            else:
                full.append(todo)
        if gone:
            self._delete(gone)
            self.stats.removed += len(gone)
        done = self.stats.unchanged
        total = self.stats.files
        if self.progress is not None and (full or appends):
            self.progress(done, total)
        for todo in appends:
            if not self._append(todo):
                full.append(todo)
                continue
            done += 1
            if self.progress is not None:
                self.progress(done, total)
        if full:
            self._full(full, done, total)
        if self.changed or gone:
            self._lineage()
            self._warn_dead_rows()
        if self.slots_dirty or self.slots_new:
            self._slots()
        conn.execute("DELETE FROM meta WHERE key='pending'")

    # -- appended files --------------------------------------------------------------------------
    def _appended(self, todo: _Todo) -> bool:
        old = todo.old
        assert old is not None
        _sid, _size, _mtime, ino, indexed, digest, regular, _shard = old
        if not regular or ino != todo.st.st_ino or todo.st.st_size <= (indexed or 0):
            return False
        try:
            return bool(tail_hash(todo.path, indexed) == digest)
        except OSError:
            return False

    def _append(self, todo: _Todo) -> bool:
        """Index the bytes appended to ``todo.path``; False when a full reindex is needed instead."""
        from pitools.core.views.entry_tree import tree_facts

        old = todo.old
        assert old is not None
        sid, _size, _mtime, _ino, indexed, _digest, _regular, shard = old
        try:
            new_entries, offsets, lengths, whole = read_appended(todo.path, indexed, todo.st)
        except Exception:
            return False
        if not whole:
            return False
        conn = self.conn
        stored = conn.execute(
            "SELECT eid, parent, kind, role, aux, aux_null, leaf_lo, leaf_hi, in_ctx, summarized "
            "FROM entries WHERE sid=? ORDER BY ord",
            (sid,),
        ).fetchall()
        skel = [_skeleton_of(row) for row in stored]
        old_flags = [row[6:] for row in stored]
        # The stored entries were regular when indexed: only the new ones need checking (their
        # ids against the old ones too).
        if not is_regular(new_entries, 3, True, seen={row[0] for row in stored}):
            return False
        all_entries = [*skel, *new_entries]
        facts = tree_facts(all_entries)
        rows = FileRows(
            todo.path,
            todo.st.st_size,
            todo.st.st_mtime_ns,
            todo.st.st_ino,
            todo.st.st_size,
            tail_hash(todo.path, todo.st.st_size),
            True,
            True,
            None,
            facts.default_leaf,
            facts.leaves,
        )
        entry_rows(sid, new_entries, offsets, lengths, len(skel), facts, rows)
        updates = [
            (facts.leaf_lo[i], facts.leaf_hi[i], int(facts.in_context[i]), int(facts.summarized[i]), sid, i)
            for i in range(len(skel))
            if old_flags[i] != (facts.leaf_lo[i], facts.leaf_hi[i], int(facts.in_context[i]), int(facts.summarized[i]))
        ]
        summary, scan = self._appended_summary(todo, sid, skel, new_entries)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE entries SET leaf_lo=?, leaf_hi=?, in_ctx=?, summarized=? WHERE sid=? AND ord=?", updates
            )
            self._insert_rows(rows, shard)
            conn.execute(
                "UPDATE sessions SET size=?, mtime_ns=?, ino=?, indexed_bytes=?, tail_hash=?, default_leaf=?, "
                "default_pos=?, leaves=?, name=?, modified=?, summary=?, scan=? WHERE sid=?",
                (
                    rows.size,
                    rows.mtime_ns,
                    rows.ino,
                    rows.indexed_bytes,
                    rows.tail_hash,
                    sql_text(rows.default_leaf),
                    _pos(rows),
                    _leaves_json(rows.leaves),
                    sql_text(summary.get("name")),
                    sql_text(summary.get("modified")),
                    json_bytes(summary),
                    scan,
                    sid,
                ),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.stats.appended += 1
        self.stats.bytes_read += todo.st.st_size - indexed
        self.changed.add(sid)
        self.slots_dirty.add(sid)
        return True

    def _appended_summary(
        self, todo: _Todo, sid: int, skel: Sequence[dict[str, Any]], new_entries: Sequence[Any]
    ) -> tuple[dict[str, Any], bytes | None]:
        """``ls``'s summary after an append, and its new scan state: the stored state with only
        the appended values folded in (the whole file is read again only when no usable state
        was stored, e.g. a session the entries table does not hold whole)."""
        from pitools.core.views.listing import (
            finish_scan,
            fold_values,
            resume_scan,
            save_scan,
            summarize_file_scan,
        )

        row = self.conn.execute("SELECT scan FROM sessions WHERE sid=?", (sid,)).fetchone()
        scan = None
        if row is not None and row[0] is not None:
            scan = resume_scan(row[0], ((e["id"], e["parentId"]) for e in skel))
        if scan is None or scan.entries != len(skel):
            summary, scan = summarize_file_scan(todo.path, todo.st, stop=todo.st.st_size)
            self.stats.bytes_read += todo.old[4] if todo.old is not None else 0
            return summary, save_scan(scan) if scan is not None else None
        fold_values(scan, new_entries)
        return finish_scan(todo.path, todo.st, scan), save_scan(scan)

    # -- whole files -------------------------------------------------------------------------------
    def _full(self, todos: list[_Todo], done: int, total: int) -> None:
        conn = self.conn
        shards = self.index.shard_count()
        # New row ids for every file (a rewritten file's old rows go; its FTS rows become dead).
        conn.execute("BEGIN IMMEDIATE")
        try:
            olds = [t.old[0] for t in todos if t.old is not None]
            if olds:
                self._delete(olds, in_tx=True)
            order = sorted(range(len(todos)), key=lambda i: -todos[i].st.st_size)
            loads = [0] * shards
            assigned: list[tuple[int, int]] = [(0, 0)] * len(todos)
            for i in order:
                k = loads.index(min(loads))
                loads[k] += todos[i].st.st_size + 4096
                t = todos[i]
                cur = conn.execute(
                    "INSERT INTO sessions(path, folder, shard, size) VALUES(?, ?, ?, NULL)", (t.path, t.folder, k)
                )
                assert cur.lastrowid is not None
                assigned[i] = (cur.lastrowid, k)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.fresh.update(sid for sid, _k in assigned)
        for t in todos:
            if t.old is None:
                self.stats.added += 1
            else:
                self.stats.reindexed += 1
        work = [(t.path, sid, k, t.st) for t, (sid, k) in zip(todos, assigned, strict=True)]
        total_bytes = sum(t.st.st_size for t in todos)
        parallel = (
            self.jobs > 1
            and not self.index.in_memory
            and len(work) >= _limits.PARALLEL_MIN_FILES
            and total_bytes >= _limits.PARALLEL_MIN_BYTES
            and can_fork()  # the shard workers are forked (they inherit the open index's state)
        )
        if parallel:
            self._parallel(work, done, total)
            return
        with _Batch(self.conn, immediate=True, every=MAIN_COMMIT_BYTES) as batch:
            for path, sid, k, st in work:
                rows = read_file(path, sid, st)
                batch.begin()
                self._store(rows, sid, k, write_text=True)
                batch.wrote(rows.size)
                done += 1
                if self.progress is not None:
                    self.progress(done, total)

    def _parallel(self, work: list[tuple[str, int, int, os.stat_result]], done: int, total: int) -> None:
        """Index on every core: one worker process per group of shards, each storing its own rows.

        Each worker alone writes its shards' search text (so a shard's texts are shared within
        it without races) and then, under a lock that lets one worker at a time write the main
        file, the same files' other rows: this process only reports progress, instead of
        unpickling and storing every row a second time. A file's rows are committed after its
        search rows, so a file that looks indexed is always searchable; a worker that dies
        leaves the files it had not committed looking unindexed (``size`` NULL), and the next
        run indexes them again.
        """
        main_path = self.index.main_path
        assert main_path is not None  # never parallel in memory
        by_shard: dict[int, list[tuple[str, int, os.stat_result]]] = {}
        for path, sid, k, st in work:
            by_shard.setdefault(k, []).append((path, sid, st))
        groups: list[list[tuple[str | None, int, list[tuple[str, int, os.stat_result]]]]] = [
            [] for _ in range(min(self.jobs, len(by_shard)))
        ]
        for i, (k, items) in enumerate(sorted(by_shard.items())):
            groups[i % len(groups)].append((self.index.shard_path(k), k, items))
        worker = partial(_shard_worker, fts=self.index.fts, main_path=main_path, lock=process_lock())
        for _one_file in fork_workers(worker, groups):
            done += 1  # one more file read (its rows are stored with its worker's batch)
            if self.progress is not None:
                self.progress(done, total)
        for _path, sid, _k, st in work:
            self.stats.bytes_read += st.st_size
            self.changed.add(sid)
            self.slots_new.add(sid)

    def _pkey(self, path: str) -> str:
        return _pkey(path, self.real_dirs)

    def _store(self, rows: FileRows, sid: int, shard: int, *, write_text: bool) -> None:
        """Write one file's rows (inside the caller's transaction, see :class:`_Batch`)."""
        if write_text and self.index.fts:
            insert_texts(self.conn, f"s{shard}.", rows, self.seen.setdefault(shard, {}))
        store_rows(self.conn, rows, sid, self._pkey(rows.path))
        self.stats.bytes_read += rows.size
        self.changed.add(sid)
        self.slots_new.add(sid)

    def _insert_rows(self, rows: FileRows, shard: int) -> None:
        conn = self.conn
        if self.index.fts:
            insert_texts(conn, f"s{shard}.", rows, self.seen.setdefault(shard, {}))
        insert_many(conn, _ENTRY_INSERT, rows.entries)
        insert_many(conn, _USAGE_INSERT, rows.usage)

    def _delete(self, sids: Iterable[int], *, in_tx: bool = False) -> None:
        conn = self.conn
        sids = list(sids)
        if not in_tx:
            conn.execute("BEGIN IMMEDIATE")
        try:
            dead = 0
            self.slots_dirty.update(sids)
            for sid in sids:
                dead += conn.execute("SELECT count(*) FROM entries WHERE sid=?", (sid,)).fetchone()[0]
                conn.execute("DELETE FROM entries WHERE sid=?", (sid,))
                conn.execute("DELETE FROM usage WHERE sid=?", (sid,))
                conn.execute("DELETE FROM sessions WHERE sid=?", (sid,))
            conn.execute("UPDATE meta SET value=CAST(value AS INTEGER)+? WHERE key='deadRows'", (dead,))
            if not in_tx:
                conn.execute("COMMIT")
        except BaseException:
            if not in_tx:
                conn.execute("ROLLBACK")
            raise

    # -- lineage -------------------------------------------------------------------------------------
    def _lineage(self) -> None:
        from pitools.core.js.json.parse import parse_json_line
        from pitools.core.views.lineage import SessionRef, ancestors, copied_keys, descendants, resolve_parents

        conn = self.conn
        refs: list[SessionRef] = []
        sid_of: dict[str, int] = {}
        old_parent: dict[int, Any] = {}
        for sid, pkey, path, hid, parent, parent_sid in conn.execute(
            "SELECT sid, pkey, path, header_id, parent_session, parent_sid FROM sessions"
        ):
            key = pkey or path
            sid_of[key] = sid
            old_parent[sid] = parent_sid
            refs.append(
                SessionRef(key, hid, parse_json_line(parent)[0] if parent is not None else None, os.path.dirname(path))
            )
        parents = resolve_parents(refs)
        key_of = {sid: key for key, sid in sid_of.items()}
        new_parent = {sid_of[k]: (sid_of[p] if p is not None else None) for k, p in parents.items()}
        moved = {sid for sid, p in new_parent.items() if p != old_parent.get(sid)}
        touched = (self.changed | moved) & set(new_parent)
        # A session whose parent changed (new, rewritten under a new row id, or deleted: its
        # history then counts in the child) is rechecked with everything below it.
        affected = descendants([key_of[s] for s in touched], parents)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE sessions SET parent_sid=? WHERE sid=?", [(p, s) for s, p in new_parent.items() if s in moved]
            )
            cache: dict[int, set[tuple[Any, Any]]] = {}

            def keys_of(sid: int) -> set[tuple[Any, Any]]:
                if sid not in cache:
                    rows = conn.execute("SELECT eid, ts FROM entries WHERE sid=? AND eid IS NOT NULL", (sid,))
                    cache[sid] = set(rows)
                return cache[sid]

            for key in affected:
                sid = sid_of[key]
                lineage = [sid_of[a] for a in ancestors(key, parents)]
                if not lineage:
                    if sid not in self.fresh:  # a session stored whole by this run has no flag set
                        conn.execute("UPDATE entries SET copied=0 WHERE sid=? AND copied=1", (sid,))
                        conn.execute("UPDATE usage SET copied=0 WHERE sid=? AND copied=1", (sid,))
                        self.slots_dirty.add(sid)
                    continue
                own = list(
                    conn.execute("SELECT ord, eid, ts, copied FROM entries WHERE sid=? AND eid IS NOT NULL", (sid,))
                )
                copied = copied_keys({(e, t) for _o, e, t, _c in own}, [keys_of(a) for a in lineage])
                # Only the flags that change are written (and then the usage rows follow them).
                flags = [(f, sid, o) for o, e, t, c in own if (f := 1 if (e, t) in copied else 0) != c]
                if not flags:
                    continue
                self.slots_dirty.add(sid)  # its sums split copied from own records differently now
                conn.executemany("UPDATE entries SET copied=? WHERE sid=? AND ord=?", flags)
                conn.execute(
                    "UPDATE usage SET copied=(SELECT e.copied FROM entries e "
                    "WHERE e.sid=usage.sid AND e.ord=usage.ord) WHERE sid=?",
                    (sid,),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _slots(self) -> None:
        """Sum ``usage`` into ``usage_slots`` again for the sessions whose records changed, then
        refresh ``usage_glob`` where those sessions and the new ones have (or had) records."""
        conn = self.conn
        dirty = self.slots_dirty
        new = self.slots_new - dirty
        total = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        glob = (
            "INSERT INTO usage_glob SELECT q, provider, model, copied, sum(input), sum(output), "
            "sum(cache_read), sum(cache_write), sum(cost), sum(n) FROM usage_slots {where} "
            "GROUP BY q, provider, model, copied"
        )
        conn.execute("BEGIN IMMEDIATE")
        try:
            slots: set[Any] = set()
            if len(dirty) * 4 >= total:
                conn.execute("DELETE FROM usage_slots")
                conn.execute(f"INSERT INTO usage_slots {SLOT_SELECT} {SLOT_GROUPS}")
            else:
                # The all-sessions sums change only in the quarter hours these sessions had or have.
                for sid in sorted(dirty):
                    slots.update(r[0] for r in conn.execute("SELECT DISTINCT q FROM usage_slots WHERE sid=?", (sid,)))
                    conn.execute("DELETE FROM usage_slots WHERE sid=?", (sid,))
                    conn.execute(f"INSERT INTO usage_slots {SLOT_SELECT} WHERE sid=? {SLOT_GROUPS}", (sid,))
                    slots.update(r[0] for r in conn.execute("SELECT DISTINCT q FROM usage_slots WHERE sid=?", (sid,)))
            if len(dirty | new) * 4 >= total:
                conn.execute("DELETE FROM usage_glob")
                conn.execute(glob.format(where=""))
            else:
                for sid in sorted(new):
                    slots.update(r[0] for r in conn.execute("SELECT DISTINCT q FROM usage_slots WHERE sid=?", (sid,)))
                if None in slots:
                    slots.discard(None)
                    conn.execute("DELETE FROM usage_glob WHERE q IS NULL")
                    conn.execute(glob.format(where="WHERE q IS NULL"))
                ordered = sorted(slots)
                for i in range(0, len(ordered), 500):
                    chunk = ordered[i : i + 500]
                    marks = ",".join("?" * len(chunk))
                    conn.execute(f"DELETE FROM usage_glob WHERE q IN ({marks})", chunk)
                    conn.execute(glob.format(where=f"WHERE q IN ({marks})"), chunk)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        dirty.clear()
        self.slots_new.clear()

    def _warn_dead_rows(self) -> None:
        """Say when dead full-text rows (deleted or rewritten sessions) outnumber live ones."""
        conn = self.conn
        dead = int(conn.execute("SELECT value FROM meta WHERE key='deadRows'").fetchone()[0])
        live = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        if dead < 50_000 or dead < live:
            return
        self.stats.warnings.append(f"{dead} stale search rows: the next `pitools index --rebuild` reclaims them")


#: The indexing process (when it indexes alone) commits after about this many bytes of session
#: files: one commit per file would rewrite the same B-tree pages a thousand times.
MAIN_COMMIT_BYTES = 64 << 20


class _Batch:
    """One write transaction over many files, committed every ``every`` bytes (None: at the end)."""

    def __init__(self, conn: sqlite3.Connection, *, immediate: bool, every: int | None) -> None:
        self.conn = conn
        self.immediate = immediate
        self.every = every
        self.pending = 0

    def begin(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE" if self.immediate else "BEGIN")

    def wrote(self, size: int) -> None:
        self.pending += size
        if self.every is not None and self.pending >= self.every:
            self.commit()

    def commit(self) -> None:
        self.pending = 0
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def __enter__(self) -> _Batch:
        return self

    def __exit__(self, kind: object, _exc: object, _tb: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.rollback()


def _pos(rows: FileRows) -> int | None:
    """Where the default leaf is in the session's leaf order (None: it is not a leaf)."""
    if rows.default_leaf is None:
        return None
    try:
        return rows.leaves.index(rows.default_leaf)
    except ValueError:
        return None


#: A worker commits after about this many bytes of session files: first its shard's search
#: rows (fewer, larger full-text segments; a bounded write-ahead log), then the same files' rows
#: in the main file (one transaction, under the lock the workers share).
WORKER_COMMIT_BYTES = 128 << 20


def _shard_worker(
    group: list[tuple[str | None, int, list[tuple[str, int, os.stat_result]]]],
    send: Callable[[Any], None],
    *,
    fts: bool,
    main_path: str,
    lock: Lock,
) -> None:
    """Worker process (:func:`pitools.ops.parallel.fork_workers`): index the files of some
    shards and store all their rows; ``send`` s a 1 per file read."""
    main = sqlite3.connect(main_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        main.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        main.execute("PRAGMA synchronous=NORMAL")
        real_dirs: dict[str, str] = {}
        for shard_path, _k, items in group:
            _index_shard(main, shard_path, fts, items, lock, real_dirs, send)
    finally:
        main.close()


def _index_shard(
    main: sqlite3.Connection,
    shard_path: str | None,
    fts: bool,
    items: list[tuple[str, int, os.stat_result]],
    lock: Lock,
    real_dirs: dict[str, str],
    send: Callable[[Any], None],
) -> None:
    conn = None
    if fts and shard_path:
        conn = sqlite3.connect(shard_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous=NORMAL")
    seen: dict[bytes, int] = {}
    # This worker alone writes the shard: when it starts empty (a cold build), ``seen`` knows
    # every long text in it and a new one needs no lookup.
    complete = conn is not None and conn.execute("SELECT 1 FROM texts LIMIT 1").fetchone() is None
    pending: list[tuple[FileRows, int]] = []
    pending_bytes = 0

    def flush(wait: bool) -> None:
        """Commit the pending files: their search rows, then their other rows.

        Without ``wait``, a worker that finds the other one writing the main file keeps going
        and tries again after its next file, instead of idling on the lock.
        """
        nonlocal pending_bytes
        if not pending:
            return
        if not lock.acquire(block=wait):
            return
        try:
            if conn is not None and conn.in_transaction:
                conn.execute("COMMIT")  # the search rows first: see Updater._parallel
            main.execute("BEGIN IMMEDIATE")
            try:
                for rows, sid in pending:
                    store_rows(main, rows, sid, _pkey(rows.path, real_dirs))
                main.execute("COMMIT")
            except BaseException:
                main.execute("ROLLBACK")
                raise
        finally:
            lock.release()
        pending.clear()
        pending_bytes = 0

    try:
        for path, sid, st in items:
            rows = read_file(path, sid, st)
            if conn is not None:
                if not conn.in_transaction:
                    conn.execute("BEGIN IMMEDIATE")
                insert_texts(conn, "", rows, seen, complete=complete)
            else:
                rows.texts = []
                rows.thinking = []
            pending.append((rows, sid))
            pending_bytes += st.st_size
            send(1)
            if pending_bytes >= WORKER_COMMIT_BYTES:
                flush(wait=pending_bytes >= 4 * WORKER_COMMIT_BYTES)
        flush(wait=True)
    finally:
        if conn is not None:
            conn.close()


def store_rows(conn: sqlite3.Connection, rows: FileRows, sid: int, pkey: str) -> None:
    """Write a file's entry, usage and session rows into the main file (inside the caller's
    transaction; its search text is written first, by the caller)."""
    summary = rows.summary if rows.summary is not None else _summary(rows.path)
    header = rows.header or {}
    text = sql_text
    parent = header.get("parentSession")
    insert_many(conn, _ENTRY_INSERT, rows.entries)
    insert_many(conn, _USAGE_INSERT, rows.usage)
    if rows.usage:  # with its records, so that the end of the update sums only the new ones
        conn.execute(f"INSERT INTO usage_slots {SLOT_SELECT} WHERE sid=? {SLOT_GROUPS}", (sid,))
    conn.execute(
        _SESSION_UPDATE,
        (
            pkey,
            rows.size,
            rows.mtime_ns,
            rows.ino,
            rows.indexed_bytes,
            rows.tail_hash,
            int(rows.regular),
            int(rows.valid),
            text(header.get("id")) if type(header.get("id")) is str else None,
            text(summary.get("cwd")),
            text(summary.get("name")),
            json_bytes(parent) if parent is not None else None,
            text(summary.get("created")),
            text(summary.get("modified")),
            text(rows.default_leaf),
            _pos(rows),
            _leaves_json(rows.leaves),
            json_bytes(summary),
            rows.scan,
            sid,
        ),
    )


def _pkey(path: str, real_dirs: dict[str, str]) -> str:
    """``default_canonical(path)``, resolving each folder once (not every file's every part)."""
    import stat as stat_mod

    from pitools.core.views.lineage import default_canonical

    folder, name = os.path.split(path)
    real = real_dirs.get(folder)
    if real is None:
        real = real_dirs[folder] = default_canonical(folder)
    try:
        if not stat_mod.S_ISLNK(os.lstat(path).st_mode):
            return os.path.join(real, name)  # realpath of a non-link is its folder's realpath + name
    except OSError:
        pass
    return default_canonical(path)


def _leaves_json(leaves: list[str]) -> bytes:
    """The leaf ids as JSON, each as the entries table stores it (:func:`sql_text`), so that
    search finds a leaf whose id held a lone surrogate under the same text as its entry row."""
    try:
        return orjson.dumps(leaves)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate
        return orjson.dumps([sql_text(leaf) for leaf in leaves])


def _summary(path: str) -> dict[str, Any]:
    from pitools.core.views.listing import summarize_file

    return summarize_file(path)


def _skeleton_of(row: Sequence[Any]) -> dict[str, Any]:
    eid, parent, kind, role, aux, aux_null = row[:6]
    out: dict[str, Any] = {"type": kind, "id": eid, "parentId": parent}
    if kind == "message":
        out["message"] = {"role": role}
    elif kind == "compaction" and aux is not None:
        out["firstKeptEntryId"] = aux
    elif kind == "context_edit":
        if aux is not None:
            out["targetId"] = aux
        out["replacement"] = None if aux_null else True
    return out
