"""The archive index: one SQLite database (plus FTS5 shards) over every session Pi can see.

Where: ``$PITOOLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/pitools``, else the platform's cache folder
(``~/Library/Caches/pitools`` on macOS, ``~/.cache/pitools`` elsewhere); never inside Pi's agent
folder (a cache dir there is refused and the index kept in memory for the run).

Files: ``index-v<N>.sqlite`` (sessions, entries, usage records and their quarter-hour sums, ls
summaries) and ``index-v<N>.fts<k>.sqlite`` (the contentless full-text tables, and ``texts``:
which row holds each long text already indexed in the shard, keyed by its SHA-256 digest; one
shard per core so that a cold build tokenizes on every core at once). ``N`` is
:data:`SCHEMA_VERSION`: another version's files are ignored and a rebuild starts (deleting the
data files of older versions). An index that is corrupt, or locked past the wait, is rebuilt
(corrupt: in place; locked: in memory for this run) and never fails the user's command.

Updating (:meth:`ArchiveIndex.update`), per session file found by ``ls``'s discovery rules:

* unchanged (size, mtime, inode): nothing is read (:func:`scan`; a run where nothing changed
  stops there, without loading the indexing code);
* grown, with the indexed part intact (it ended with a newline and the hash of its last
  4 KiB still matches): only the new bytes are parsed; the tree facts of the old entries are
  recomputed from their stored skeletons (ids, parents, compaction and edit targets);
* anything else (rewritten by a migration, Pi's label rewrite, ``repair``; a v1/v2 file; a file
  with duplicate or non-string ids): the whole file is indexed again under a new session row id;
* gone: its rows are deleted. Its full-text rows stay behind as dead rows that no query joins
  (SQLite 3.40's contentless FTS5 cannot delete them), counted and vacuumed by a rebuild when
  they outnumber the live ones.

A long text (:data:`pitools.ops.index_rows.DEDUP_MIN` or more) that its shard already holds gets
no full-text row: the entry's ``tref`` names the row with the same text, and search joins
through it (a row whose own entry is gone still serves the others).

Then fork/clone lineage is resolved (:mod:`pitools.core.views.lineage`), the copied history of
every affected session is marked, so usage counts it once, and the usage sums of the sessions
that changed are refreshed (``usage_slots``, ``usage_glob``: see :data:`pitools.ops.index_limits.SLOT_MS`).

Two updaters never interleave: an advisory lock file serialises them (the second waits, then
finds little to do); readers use WAL and a busy timeout.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pitools.ops.cachedir import RACY_COARSE_NS, RACY_NS, SCHEMA_VERSION, cache_dir, is_within
from pitools.ops.index_limits import (
    BUSY_TIMEOUT_MS,
    MAX_SHARDS,
    Changed,
    ProgressFn,
    UpdateStats,
    WarnFn,
)

#: How long a second updater waits for the first one before working in memory instead.
LOCK_WAIT_S = 600.0


def racy(mtime_ns: int, scan_start_ns: int | None) -> bool:
    """Whether a file with this mtime may have been edited in the same clock tick as the last
    update read it (same size, same mtime): it is then read again."""
    if scan_start_ns is None:
        return False
    window = RACY_COARSE_NS if mtime_ns % 1_000_000 == 0 else RACY_NS
    return mtime_ns >= scan_start_ns - window


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
  summary BLOB, scan BLOB
);
CREATE INDEX IF NOT EXISTS sessions_folder ON sessions(folder);
CREATE INDEX IF NOT EXISTS sessions_stat ON sessions(path, folder, size, mtime_ns, ino);
CREATE TABLE IF NOT EXISTS entries(
  sid INTEGER NOT NULL, ord INTEGER NOT NULL,
  eid TEXT, parent TEXT, ts INTEGER, kind TEXT, role TEXT, tools TEXT,
  off INTEGER, len INTEGER,
  leaf_lo INTEGER, leaf_hi INTEGER, in_ctx INTEGER, summarized INTEGER,
  aux TEXT, aux_null INTEGER,
  copied INTEGER NOT NULL DEFAULT 0,
  tref INTEGER,
  PRIMARY KEY(sid, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_tref ON entries(tref) WHERE tref IS NOT NULL;
CREATE TABLE IF NOT EXISTS usage(
  sid INTEGER NOT NULL, ord INTEGER NOT NULL, ts INTEGER,
  provider TEXT, model TEXT,
  input, output, cache_read, cache_write, cost,
  source TEXT,
  copied INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(sid, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_ts ON usage(ts);
CREATE TABLE IF NOT EXISTS usage_slots(
  sid INTEGER NOT NULL, q INTEGER, provider TEXT, model TEXT, copied INTEGER NOT NULL,
  input, output, cache_read, cache_write, cost, n INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_slots_sid ON usage_slots(sid);
CREATE INDEX IF NOT EXISTS usage_slots_q ON usage_slots(q);
CREATE TABLE IF NOT EXISTS usage_glob(
  q INTEGER, provider TEXT, model TEXT, copied INTEGER NOT NULL,
  input, output, cache_read, cache_write, cost, n INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_glob_q ON usage_glob(q);
"""

_SHARD_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, content='', detail=none);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_thinking USING fts5(body, content='', detail=none);
CREATE TABLE IF NOT EXISTS texts(h BLOB PRIMARY KEY, r INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO fts(fts, rank) VALUES('hashsize', 16777216);
INSERT INTO fts_thinking(fts_thinking, rank) VALUES('hashsize', 16777216)
"""


# -- where ---------------------------------------------------------------------------------------


def inside_pi_folders(folder: str, env: Mapping[str, str]) -> bool:
    """Whether ``folder`` is Pi's agent folder or inside it (where pitools must not write)."""
    from pitools.core.session.locate import agent_dir

    return is_within(folder, agent_dir(env))


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
                # Opened under the updaters' lock: two processes never create, or throw away and
                # rebuild, the files at the same time (the lock is held for an instant when no
                # update runs).
                with self.updating():
                    if not os.path.exists(self.main_path or ""):
                        self._remove_old_versions()
                    try:
                        return self._open_on_disk(want_shards)
                    except (sqlite3.DatabaseError, OSError) as exc:
                        if _is_locked(exc):
                            raise
                        self.warn(f"index unusable ({_short(exc)}); rebuilding it")
                        self._remove_files()
                        self.rebuilt = True
                        return self._open_on_disk(want_shards)
            except (sqlite3.DatabaseError, OSError, IndexUnavailableError) as exc:
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
                # WAL first, then the schema in one transaction: a new shard is created with a
                # few writes instead of a synced rollback journal per statement (~0.3 s).
                conn.execute(f"PRAGMA s{k}.synchronous=NORMAL")
                conn.execute(f"PRAGMA s{k}.journal_mode=WAL")
                ready = conn.execute(f"SELECT count(*) FROM s{k}.sqlite_master WHERE name='texts'").fetchone()
                if self.fts and not ready[0]:
                    self._create_shard(conn, k)
            self._check_seals(conn, shards)
            # Touch every table once: a corrupt file fails here, not in the user's query.
            conn.execute("SELECT count(*) FROM meta").fetchone()
            conn.execute("SELECT sid FROM sessions LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    # -- seals: a full-text shard changed by anything but pitools is checked before it is queried --
    def _stamp(self, k: int) -> str | None:
        path = self.shard_path(k)
        try:
            st = os.stat(path) if path else None
        except OSError:
            return None
        return None if st is None else f"{st.st_size}:{st.st_mtime_ns}"

    def _check_seals(self, conn: sqlite3.Connection, shards: int) -> None:
        """A shard whose size or mtime differs from what the last update left is verified
        (``quick_check`` and FTS5's own ``integrity-check``) before any query reads it: FTS5 fed
        damaged pages can abort the whole process inside SQLite. A damaged shard raises
        ``DatabaseError``, which rebuilds the index. A warm open only stats the files."""
        if not self.fts:
            return
        changed = []
        for k in range(shards):
            row = conn.execute("SELECT value FROM meta WHERE key=?", (f"seal{k}",)).fetchone()
            if row is None or row[0] != self._stamp(k):
                changed.append(k)
        if not changed:
            return
        for k in changed:
            verdict = conn.execute(f"PRAGMA s{k}.quick_check").fetchall()
            if verdict != [("ok",)]:
                raise sqlite3.DatabaseError(f"full-text shard {k} is damaged ({str(verdict[0][0])[:100]})")
            for table in ("fts", "fts_thinking"):
                conn.execute(f"INSERT INTO s{k}.{table}({table}) VALUES('integrity-check')")
        self.seal(conn)

    def seal(self, conn: sqlite3.Connection | None = None) -> None:
        """Record each shard's size and mtime after pitools wrote it (the WAL folded in first)."""
        if self.folder is None or not self.fts:
            return
        conn = conn or self.conn
        stamps = []
        for k in range(self.shard_count(conn)):
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"PRAGMA s{k}.wal_checkpoint(TRUNCATE)").fetchall()
            stamps.append((f"seal{k}", self._stamp(k)))
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", stamps)

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
                    self._create_shard(conn, k)

    def _create_shard(self, conn: sqlite3.Connection, k: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _SHARD_SCHEMA.strip().split(";\n"):
                if stmt.strip():
                    conn.execute(_in_shard(stmt, k))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def shard_count(self, conn: sqlite3.Connection | None = None) -> int:
        row = (conn or self.conn).execute("SELECT value FROM meta WHERE key='shards'").fetchone()
        return max(1, int(row[0])) if row else 1

    def _remove_files(self) -> None:
        if not self.folder:
            return
        prefix = f"index-v{SCHEMA_VERSION}."
        for name in os.listdir(self.folder):
            # The lock file stays: other processes may be waiting on it.
            if name.startswith(prefix) and not name.endswith(".lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(self.folder, name))

    def _remove_old_versions(self) -> None:
        """Delete the data files of older schema versions (their lock files stay: tiny, maybe held).

        Only older ones: an older pitools sharing this cache (another install) then rebuilds its
        own files once and leaves ours alone, instead of the two deleting each other's index."""
        if not self.folder:
            return
        for name in os.listdir(self.folder):
            version, dot, _rest = name.removeprefix("index-v").partition(".")
            if (
                name.startswith("index-v")
                and dot
                and version.isdigit()
                and int(version) < SCHEMA_VERSION
                and not name.endswith(".lock")
            ):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.folder, name))

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def discard(self) -> None:
        """Close and delete this index's files (a damaged index found while querying it)."""
        self.close()
        with self.updating():
            self._remove_files()

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

    # -- update --------------------------------------------------------------------------------
    def update(
        self,
        folders: Sequence[str],
        *,
        progress: ProgressFn | None = None,
        jobs: int | None = None,
    ) -> UpdateStats:
        """Bring the sessions of ``folders`` up to date (see the module docstring)."""
        import time

        stats = UpdateStats(in_memory=self.in_memory, rebuilt=self.rebuilt)
        with self.updating():
            started = time.time_ns()
            row = self.conn.execute("SELECT value FROM meta WHERE key='scanStartNs'").fetchone()
            last_start = int(row[0]) if row is not None and str(row[0]).isdigit() else None
            changed, gone = scan(self.conn, [os.path.abspath(f) for f in folders], stats, last_start_ns=last_start)
            # An update that stopped half-way (killed, power cut) leaves its files looking indexed
            # but their lineage and usage sums not yet refreshed: the next run finishes that.
            pending = self.conn.execute("SELECT 1 FROM meta WHERE key='pending'").fetchone() is not None
            if changed or gone or pending:  # a warm run stops here, without loading the indexing code
                from pitools.ops.index_update import Updater

                Updater(self, stats, progress, jobs).run(changed, gone, recover=pending)
                self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('scanStartNs', ?)", (str(started),))
                self.seal()
        return stats

    def rebuild(self) -> None:
        """Forget everything (the next update is a cold build)."""
        with self.updating():
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM sessions")
            conn.execute("DELETE FROM entries")
            conn.execute("DELETE FROM usage")
            conn.execute("DELETE FROM usage_slots")
            conn.execute("DELETE FROM usage_glob")
            conn.execute("UPDATE meta SET value='0' WHERE key='deadRows'")
            conn.execute("COMMIT")
            if self.fts:
                for k in range(self.shard_count()):
                    for table in ("fts", "fts_thinking"):
                        # A contentless table cannot DELETE; 'delete-all' empties it.
                        conn.execute(f"INSERT INTO s{k}.{table}({table}) VALUES('delete-all')")
                    conn.execute(f"DELETE FROM s{k}.texts")
            if not self.in_memory:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("VACUUM")
                    for k in range(self.shard_count()):
                        conn.execute(f"VACUUM s{k}")
                self.seal()

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


def scan(
    conn: sqlite3.Connection, folders: Sequence[str], stats: UpdateStats, *, last_start_ns: int | None = None
) -> tuple[list[Changed], list[int]]:
    """Session files of ``folders`` (``ls``'s rules) that changed since indexed, and sids of gone ones.

    One ``stat`` per file: a file whose size, mtime and inode match its row is not opened, unless
    it is :func:`racy` (modified just before the last update started, ``last_start_ns``: an edit in
    the same clock tick as that read keeps size and mtime; such a file is read again). This
    runs before every warm ``search``/``usage``/``ls``, so the loop stays lean: one query reads
    what the comparison needs for every session at once, paths are joined by concatenation,
    and the full rows are read only for the (usually zero) files that changed or went away.
    """
    from stat import S_ISREG

    wanted = set(folders)
    known: dict[str, tuple[int, int, int, int]] = {}
    for path, folder, sid, size, mtime_ns, ino in conn.execute(
        "SELECT path, folder, sid, size, mtime_ns, ino FROM sessions"
    ):
        if folder in wanted:
            known[path] = (size, mtime_ns, ino, sid)
    changed: list[Changed] = []
    seen: set[str] = set()
    stat = os.stat
    files = unchanged = 0
    for folder in folders:
        try:
            names = [n for n in os.listdir(folder) if n.endswith(".jsonl")]
        except OSError:
            continue
        # libuv's readdir order (byte order), as pitools.core.session.locate.session_files.
        names.sort(key=lambda n: n.encode("utf-8", "surrogateescape"))
        prefix = folder if folder.endswith(os.sep) else folder + os.sep  # = os.path.join(folder, name)
        for name in names:
            path = prefix + name
            try:
                st = stat(path)
            except OSError:
                continue
            if not S_ISREG(st.st_mode):
                continue
            seen.add(path)
            files += 1
            old = known.get(path)
            if (
                old is not None
                and old[0] == st.st_size
                and old[1] == st.st_mtime_ns
                and old[2] == st.st_ino
                and not racy(st.st_mtime_ns, last_start_ns)
            ):
                unchanged += 1
                continue
            changed.append((path, folder, st, None))
    stats.files += files
    stats.unchanged += unchanged
    gone = [old[3] for path, old in known.items() if path not in seen]
    if changed:
        rows = _session_rows(conn, [c[0] for c in changed if c[0] in known])
        changed = [(path, folder, st, rows.get(path)) for path, folder, st, _ in changed]
    return changed, gone


def _session_rows(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """The sessions rows (sid, size, mtime_ns, ino, indexed_bytes, tail_hash, regular, shard) of ``paths``."""
    out: dict[str, tuple[Any, ...]] = {}
    for path in paths:
        row = conn.execute(
            "SELECT path, sid, size, mtime_ns, ino, indexed_bytes, tail_hash, regular, shard "
            "FROM sessions WHERE path=?",
            (path,),
        ).fetchone()
        if row is not None:
            out[row[0]] = row[1:]
    return out


def _in_shard(stmt: str, k: int) -> str:
    """A shard-schema statement aimed at the attached shard ``s<k>``."""
    return stmt.replace("IF NOT EXISTS ", f"IF NOT EXISTS s{k}.").replace("INSERT INTO ", f"INSERT INTO s{k}.")


def _is_locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


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
