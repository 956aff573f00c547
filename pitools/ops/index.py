"""The archive index: one SQLite database (plus FTS5 shards) over every session Pi can see.

Where: ``$PITOOLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/pitools``, else the platform's cache folder
(``~/Library/Caches/pitools`` on macOS, ``~/.cache/pitools`` elsewhere); never inside Pi's agent
folder (a cache dir there is refused and the index kept in memory for the run).

Files: ``index-v<N>.sqlite`` (sessions, entries, usage records, ls summaries) and
``index-v<N>.fts<k>.sqlite`` (the contentless full-text tables; one per shard so that a cold
build tokenizes on every core at once). ``N`` is :data:`SCHEMA_VERSION`: another version's files
are ignored and a rebuild starts. An index that is corrupt, or locked past the wait, is rebuilt
(corrupt: in place; locked: in memory for this run) and never fails the user's command.

Updating (:meth:`ArchiveIndex.update`), per session file found by ``ls``'s discovery rules:

* unchanged (size, mtime, inode): nothing is read;
* grown, with the indexed part intact (it ended with a newline and the hash of its last
  4 KiB still matches): only the new bytes are parsed; the tree facts of the old entries are
  recomputed from their stored skeletons (ids, parents, compaction and edit targets);
* anything else (rewritten by a migration, Pi's label rewrite, ``repair``; a v1/v2 file; a file
  with duplicate or non-string ids): the whole file is indexed again under a new session row id;
* gone: its rows are deleted. Its full-text rows stay behind as dead rows that no query joins
  (SQLite 3.40's contentless FTS5 cannot delete them), counted and vacuumed by a rebuild when
  they outnumber the live ones.

Then fork/clone lineage is resolved (:mod:`pitools.core.views.lineage`) and the copied history
of every affected session is marked, so usage counts it once.

Two updaters never interleave: an advisory lock file serialises them (the second waits, then
finds little to do); readers use WAL and a busy timeout.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat as stat_mod
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from pitools.ops.index_rows import (
    FileRows,
    entry_rows,
    is_regular,
    read_appended,
    read_file,
    tail_hash,
)

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000
#: How long a second updater waits for the first one before working in memory instead.
LOCK_WAIT_S = 600.0
#: Fewer files than this (or fewer bytes) are indexed in this process.
PARALLEL_MIN_FILES = 8
PARALLEL_MIN_BYTES = 8 << 20
MAX_SHARDS = 4

ProgressFn = Callable[[int, int], None]
WarnFn = Callable[[str], None]

_MAIN_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions(
  sid INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT NOT NULL UNIQUE,
  folder TEXT NOT NULL,
  pkey TEXT,
  size INTEGER, mtime_ns INTEGER, ino INTEGER,
  indexed_bytes INTEGER, tail_hash BLOB, regular INTEGER, valid INTEGER,
  shard INTEGER NOT NULL,
  header_id TEXT, cwd TEXT, name TEXT, parent_session TEXT, parent_sid INTEGER,
  created TEXT, modified TEXT,
  default_leaf TEXT, default_pos INTEGER, leaves BLOB,
  summary BLOB
);
CREATE INDEX IF NOT EXISTS sessions_folder ON sessions(folder);
CREATE TABLE IF NOT EXISTS entries(
  sid INTEGER NOT NULL, ord INTEGER NOT NULL,
  eid TEXT, parent TEXT, ts INTEGER, kind TEXT, role TEXT, tools TEXT,
  off INTEGER, len INTEGER,
  leaf_lo INTEGER, leaf_hi INTEGER, in_ctx INTEGER, summarized INTEGER,
  aux TEXT, aux_null INTEGER,
  copied INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(sid, ord)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage(
  sid INTEGER NOT NULL, ord INTEGER NOT NULL, ts INTEGER,
  provider TEXT, model TEXT,
  input, output, cache_read, cache_write, cost,
  source TEXT,
  copied INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(sid, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_ts ON usage(ts);
"""

_SHARD_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, content='', detail=none);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_thinking USING fts5(body, content='', detail=none);
"""


# -- where ---------------------------------------------------------------------------------------


def cache_dir(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """``$PITOOLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/pitools``, else the platform's cache folder."""
    explicit = env.get("PITOOLS_CACHE_DIR")
    if explicit:
        return explicit
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "pitools")
    home = env.get("HOME") or os.path.expanduser("~")
    if platform == "darwin":
        return os.path.join(home, "Library", "Caches", "pitools")
    if platform == "win32" and env.get("LOCALAPPDATA"):
        return os.path.join(env["LOCALAPPDATA"], "pitools", "Cache")
    return os.path.join(home, ".cache", "pitools")


def inside_pi_folders(folder: str, env: Mapping[str, str]) -> bool:
    """Whether ``folder`` is Pi's agent folder or inside it (where pitools must not write)."""
    from pitools.core.session.locate import agent_dir

    here = os.path.realpath(folder)
    pi = os.path.realpath(agent_dir(env))
    return here == pi or here.startswith(pi.rstrip(os.sep) + os.sep)


def fts5_available() -> bool:
    try:
        db = sqlite3.connect(":memory:")
        try:
            db.execute("CREATE VIRTUAL TABLE t USING fts5(x, content='', detail=none)")
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return True


# -- results of an update --------------------------------------------------------------------------


@dataclass(slots=True)
class UpdateStats:
    files: int = 0
    unchanged: int = 0
    added: int = 0
    appended: int = 0
    reindexed: int = 0
    removed: int = 0
    bytes_read: int = 0
    in_memory: bool = False
    rebuilt: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "unchanged": self.unchanged,
            "added": self.added,
            "appended": self.appended,
            "reindexed": self.reindexed,
            "removed": self.removed,
            "bytesRead": self.bytes_read,
            "inMemory": self.in_memory,
            "rebuilt": self.rebuilt,
        }


# -- the index ---------------------------------------------------------------------------------------


class IndexUnavailableError(Exception):
    """The on-disk index cannot be used right now (locked, read-only, corrupt twice)."""


class ArchiveIndex:
    """An open index: ``conn`` is the main database with the shards attached as ``s0``, ``s1``, …"""

    def __init__(self, folder: str | None, *, shards: int | None = None, warn: WarnFn | None = None) -> None:
        self.folder = folder
        self.warn = warn or (lambda _msg: None)
        self.fts = fts5_available()
        self.in_memory = folder is None
        self.rebuilt = False
        self._lock_fd: int | None = None
        want = shards or max(1, min(MAX_SHARDS, os.cpu_count() or 1))
        self.conn = self._open(want)

    # -- opening ---------------------------------------------------------------------------
    @property
    def main_path(self) -> str | None:
        return os.path.join(self.folder, f"index-v{SCHEMA_VERSION}.sqlite") if self.folder else None

    def shard_path(self, k: int) -> str | None:
        return os.path.join(self.folder, f"index-v{SCHEMA_VERSION}.fts{k}.sqlite") if self.folder else None

    def _connect(self, path: str | None) -> sqlite3.Connection:
        conn = sqlite3.connect(path or ":memory:", timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if path:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _open(self, want_shards: int) -> sqlite3.Connection:
        if self.folder is not None:
            try:
                os.makedirs(self.folder, mode=0o700, exist_ok=True)
                return self._open_on_disk(want_shards)
            except (sqlite3.DatabaseError, OSError) as exc:
                if not _is_locked(exc):
                    self.warn(f"index unusable ({_short(exc)}); rebuilding it")
                    try:
                        self._remove_files()
                        self.rebuilt = True
                        return self._open_on_disk(want_shards)
                    except (sqlite3.DatabaseError, OSError) as exc2:
                        exc = exc2
                self.warn(f"index not available ({_short(exc)}); indexing in memory for this run")
        self.folder = None
        self.in_memory = True
        conn = self._connect(None)
        self._create(conn, 1)
        return conn

    def _open_on_disk(self, want_shards: int) -> sqlite3.Connection:
        conn = self._connect(self.main_path)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
            if version == 0:
                self._create(conn, want_shards)  # a warm open writes nothing
            shards = self.shard_count(conn)
            for k in range(shards):
                conn.execute("ATTACH DATABASE ? AS ?", (self.shard_path(k), f"s{k}"))
                ready = conn.execute(f"SELECT count(*) FROM s{k}.sqlite_master WHERE name='fts_thinking'").fetchone()
                if self.fts and not ready[0]:
                    for stmt in _SHARD_SCHEMA.strip().split(";\n"):
                        if stmt.strip():
                            conn.execute(stmt.replace("IF NOT EXISTS ", f"IF NOT EXISTS s{k}."))
                conn.execute(f"PRAGMA s{k}.journal_mode=WAL")
                conn.execute(f"PRAGMA s{k}.synchronous=NORMAL")
            # Touch every table once: a corrupt file fails here, not in the user's query.
            conn.execute("SELECT count(*) FROM meta").fetchone()
            conn.execute("SELECT sid FROM sessions LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _create(self, conn: sqlite3.Connection, want_shards: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _MAIN_SCHEMA.strip().split(";\n"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('shards', ?)", (str(want_shards),))
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('deadRows', '0')")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if self.folder is None:
            for k in range(self.shard_count(conn)):
                conn.execute("ATTACH DATABASE ':memory:' AS ?", (f"s{k}",))
                if self.fts:
                    for stmt in _SHARD_SCHEMA.strip().split(";\n"):
                        if stmt.strip():
                            conn.execute(stmt.replace("IF NOT EXISTS ", f"IF NOT EXISTS s{k}."))

    def shard_count(self, conn: sqlite3.Connection | None = None) -> int:
        row = (conn or self.conn).execute("SELECT value FROM meta WHERE key='shards'").fetchone()
        return max(1, int(row[0])) if row else 1

    def _remove_files(self) -> None:
        if not self.folder:
            return
        prefix = f"index-v{SCHEMA_VERSION}."
        for name in os.listdir(self.folder):
            if name.startswith(prefix):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(self.folder, name))

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        self._unlock()

    # -- the updaters' lock ----------------------------------------------------------------------
    @contextlib.contextmanager
    def updating(self) -> Iterator[None]:
        """Hold the update lock (a second process waits for the first)."""
        if self.folder is None:
            yield
            return
        lock = os.path.join(self.folder, f"index-v{SCHEMA_VERSION}.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - non-POSIX: SQLite's own locking only
                yield
                return
            import time

            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise IndexUnavailableError("another pitools process is still updating the index") from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- update --------------------------------------------------------------------------------
    def update(
        self,
        folders: Sequence[str],
        *,
        progress: ProgressFn | None = None,
        jobs: int | None = None,
    ) -> UpdateStats:
        """Bring the sessions of ``folders`` up to date (see the module docstring)."""
        stats = UpdateStats(in_memory=self.in_memory, rebuilt=self.rebuilt)
        with self.updating():
            _Updater(self, stats, progress, jobs).run([os.path.abspath(f) for f in folders])
        return stats

    def rebuild(self) -> None:
        """Forget everything (the next update is a cold build)."""
        with self.updating():
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM sessions")
            conn.execute("DELETE FROM entries")
            conn.execute("DELETE FROM usage")
            conn.execute("UPDATE meta SET value='0' WHERE key='deadRows'")
            conn.execute("COMMIT")
            if self.fts:
                for k in range(self.shard_count()):
                    for table in ("fts", "fts_thinking"):
                        # A contentless table cannot DELETE; 'delete-all' empties it.
                        conn.execute(f"INSERT INTO s{k}.{table}({table}) VALUES('delete-all')")
            if not self.in_memory:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("VACUUM")
                    for k in range(self.shard_count()):
                        conn.execute(f"VACUUM s{k}")

    # -- small readers ---------------------------------------------------------------------------
    def session_rows(self, folders: Sequence[str] | None = None) -> list[sqlite3.Row]:
        self.conn.row_factory = sqlite3.Row
        try:
            if folders is None:
                return list(self.conn.execute("SELECT * FROM sessions"))
            out: list[sqlite3.Row] = []
            for folder in folders:
                out.extend(self.conn.execute("SELECT * FROM sessions WHERE folder=?", (os.path.abspath(folder),)))
            return out
        finally:
            self.conn.row_factory = None


def _is_locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


# -- the update itself -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Todo:
    path: str
    folder: str
    st: os.stat_result
    old: tuple[Any, ...] | None  # (sid, size, mtime_ns, ino, indexed_bytes, tail_hash, regular, shard)


class _Updater:
    def __init__(self, index: ArchiveIndex, stats: UpdateStats, progress: ProgressFn | None, jobs: int | None) -> None:
        self.index = index
        self.conn = index.conn
        self.stats = stats
        self.progress = progress
        self.jobs = jobs if jobs is not None else max(1, min(MAX_SHARDS, os.cpu_count() or 1))
        self.changed: set[int] = set()
        self.removed_any = False

    def run(self, folders: Sequence[str]) -> None:
        from pitools.core.session.locate import session_files

        conn = self.conn
        known: dict[str, tuple[Any, ...]] = {}
        for folder in folders:
            for row in conn.execute(
                "SELECT path, sid, size, mtime_ns, ino, indexed_bytes, tail_hash, regular, shard "
                "FROM sessions WHERE folder=?",
                (folder,),
            ):
                known[row[0]] = row[1:]
        full: list[_Todo] = []
        appends: list[_Todo] = []
        seen: set[str] = set()
        for folder in folders:
            for path in session_files(folder):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                if not stat_mod.S_ISREG(st.st_mode):
                    continue
                seen.add(path)
                self.stats.files += 1
                old = known.get(path)
                if old is not None and (old[1], old[2], old[3]) == (st.st_size, st.st_mtime_ns, st.st_ino):
                    self.stats.unchanged += 1
                    continue
                todo = _Todo(path, folder, st, old)
                if old is not None and self._appended(todo):
                    appends.append(todo)
                else:
                    full.append(todo)
        gone = [known[p][0] for p in known if p not in seen]
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
            self._maybe_compact()

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
        conn = self.conn
        skel = [
            _skeleton_of(row)
            for row in conn.execute(
                "SELECT eid, parent, kind, role, aux, aux_null, leaf_lo, leaf_hi, in_ctx, summarized "
                "FROM entries WHERE sid=? ORDER BY ord",
                (sid,),
            )
        ]
        old_flags = [
            tuple(r)
            for r in conn.execute(
                "SELECT leaf_lo, leaf_hi, in_ctx, summarized FROM entries WHERE sid=? ORDER BY ord", (sid,)
            )
        ]
        if not whole or not is_regular([*skel, *new_entries], 3, True):
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
        summary = _summary(todo.path)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE entries SET leaf_lo=?, leaf_hi=?, in_ctx=?, summarized=? WHERE sid=? AND ord=?", updates
            )
            self._insert_rows(rows, shard)
            conn.execute(
                "UPDATE sessions SET size=?, mtime_ns=?, ino=?, indexed_bytes=?, tail_hash=?, default_leaf=?, "
                "default_pos=?, leaves=?, name=?, modified=?, summary=? WHERE sid=?",
                (
                    rows.size,
                    rows.mtime_ns,
                    rows.ino,
                    rows.indexed_bytes,
                    rows.tail_hash,
                    rows.default_leaf,
                    _pos(rows),
                    orjson.dumps(rows.leaves),
                    summary.get("name"),
                    summary.get("modified"),
                    orjson.dumps(summary),
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
        return True

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
            and len(work) >= PARALLEL_MIN_FILES
            and total_bytes >= PARALLEL_MIN_BYTES
            and _can_fork()
        )
        if parallel:
            results = self._parallel(work, done, total)
        else:
            results = []
            for path, sid, k, st in work:
                rows = read_file(path, sid, st)
                self._store(rows, sid, k, write_text=True)
                done += 1
                if self.progress is not None:
                    self.progress(done, total)
            return
        for rows, sid, k in results:
            self._store(rows, sid, k, write_text=False)

    def _parallel(self, work: list[tuple[str, int, int, os.stat_result]], done: int, total: int) -> list[Any]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        by_shard: dict[int, list[tuple[str, int, os.stat_result]]] = {}
        for path, sid, k, st in work:
            by_shard.setdefault(k, []).append((path, sid, st))
        # Batches keep every shard's writer busy while results stream back to this process.
        batches: list[tuple[int, list[tuple[str, int, os.stat_result]]]] = []
        for k, items in by_shard.items():
            size = max(1, min(32, len(items) // 8))
            batches.extend((k, items[i : i + size]) for i in range(0, len(items), size))
        results: list[Any] = []
        ctx = multiprocessing.get_context("fork")
        workers = min(self.jobs, len(by_shard))
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures = {
                pool.submit(_index_batch, self.index.shard_path(k), self.index.fts, items): (k, len(items))
                for k, items in batches
            }
            for future in as_completed(futures):
                k, n = futures[future]
                for sid, rows in future.result():
                    results.append((rows, sid, k))
                done += n
                if self.progress is not None:
                    self.progress(done, total)
        return results

    def _store(self, rows: FileRows, sid: int, shard: int, *, write_text: bool) -> None:
        from pitools.core.views.lineage import default_canonical

        summary = rows.summary if rows.summary is not None else _summary(rows.path)
        header = rows.header or {}
        parent = header.get("parentSession")
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if write_text:
                self._insert_rows(rows, shard)
            else:
                self._insert_rows(rows, shard, text=False)
            conn.execute(
                "UPDATE sessions SET pkey=?, size=?, mtime_ns=?, ino=?, indexed_bytes=?, tail_hash=?, regular=?, "
                "valid=?, header_id=?, cwd=?, name=?, parent_session=?, created=?, modified=?, default_leaf=?, "
                "default_pos=?, leaves=?, summary=? WHERE sid=?",
                (
                    default_canonical(rows.path),
                    rows.size,
                    rows.mtime_ns,
                    rows.ino,
                    rows.indexed_bytes,
                    rows.tail_hash,
                    int(rows.regular),
                    int(rows.valid),
                    header.get("id") if type(header.get("id")) is str else None,
                    summary.get("cwd"),
                    summary.get("name"),
                    orjson.dumps(parent) if parent is not None else None,
                    summary.get("created"),
                    summary.get("modified"),
                    rows.default_leaf,
                    _pos(rows),
                    orjson.dumps(rows.leaves),
                    orjson.dumps(summary),
                    sid,
                ),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.stats.bytes_read += rows.size
        self.changed.add(sid)

    def _insert_rows(self, rows: FileRows, shard: int, *, text: bool = True) -> None:
        conn = self.conn
        conn.executemany("INSERT OR REPLACE INTO entries VALUES(" + ",".join("?" * 16) + ", 0)", rows.entries)
        conn.executemany("INSERT OR REPLACE INTO usage VALUES(" + ",".join("?" * 11) + ", 0)", rows.usage)
        if text and self.index.fts:
            conn.executemany(f"INSERT INTO s{shard}.fts(rowid, body) VALUES(?, ?)", rows.texts)
            conn.executemany(f"INSERT INTO s{shard}.fts_thinking(rowid, body) VALUES(?, ?)", rows.thinking)

    def _delete(self, sids: Iterable[int], *, in_tx: bool = False) -> None:
        conn = self.conn
        sids = list(sids)
        if not in_tx:
            conn.execute("BEGIN IMMEDIATE")
        try:
            dead = 0
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
        self.removed_any = True

    # -- lineage -------------------------------------------------------------------------------------
    def _lineage(self) -> None:
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
                SessionRef(key, hid, orjson.loads(parent) if parent is not None else None, os.path.dirname(path))
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
                    conn.execute("UPDATE entries SET copied=0 WHERE sid=? AND copied=1", (sid,))
                    conn.execute("UPDATE usage SET copied=0 WHERE sid=? AND copied=1", (sid,))
                    continue
                own = list(conn.execute("SELECT ord, eid, ts FROM entries WHERE sid=? AND eid IS NOT NULL", (sid,)))
                copied = copied_keys({(e, t) for _o, e, t in own}, [keys_of(a) for a in lineage])
                flags = [(1 if (e, t) in copied else 0, sid, o) for o, e, t in own]
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

    def _maybe_compact(self) -> None:
        """Vacuum the full-text shards when dead rows (deleted or rewritten sessions) dominate."""
        conn = self.conn
        dead = int(conn.execute("SELECT value FROM meta WHERE key='deadRows'").fetchone()[0])
        live = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        if dead < 50_000 or dead < live:
            return
        self.stats.warnings.append(f"{dead} stale search rows: the next `pitools index --rebuild` reclaims them")


def _pos(rows: FileRows) -> int | None:
    """Where the default leaf is in the session's leaf order (None: it is not a leaf)."""
    if rows.default_leaf is None:
        return None
    try:
        return rows.leaves.index(rows.default_leaf)
    except ValueError:
        return None


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _index_batch(
    shard_path: str | None, fts: bool, items: list[tuple[str, int, os.stat_result]]
) -> list[tuple[int, FileRows]]:
    """Worker: index files, write their search text into the shard, return the other rows."""
    out = [read_file(path, sid, st) for path, sid, st in items]
    if fts and shard_path:
        conn = sqlite3.connect(shard_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            for rows in out:
                conn.executemany("INSERT INTO fts(rowid, body) VALUES(?, ?)", rows.texts)
                conn.executemany("INSERT INTO fts_thinking(rowid, body) VALUES(?, ?)", rows.thinking)
            conn.execute("COMMIT")
        finally:
            conn.close()
    for rows in out:
        rows.texts = []
        rows.thinking = []
    return [(sid, rows) for (_p, sid, _s), rows in zip(items, out, strict=True)]


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


def open_index(
    env: Mapping[str, str] | None = None, *, warn: WarnFn | None = None, in_memory: bool = False
) -> ArchiveIndex:
    """The user's index (in memory when asked, or when the cache folder is inside Pi's folders)."""
    env = os.environ if env is None else env
    folder: str | None = None if in_memory else cache_dir(env)
    if folder is not None and inside_pi_folders(folder, env):
        if warn:
            warn(f"cache folder {folder} is inside Pi's agent folder; keeping the index in memory")
        folder = None
    return ArchiveIndex(folder, warn=warn)
