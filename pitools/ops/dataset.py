"""``pitools dataset``: session files → Parquet (or JSONL) tables, incrementally and in row batches.

Layout of OUTDIR: ``<table>/[<partition>/]s-<hash of the session key>.<ext>``, one file per session
and table, so a changed session rewrites only its own files; ``_pitools_dataset.json`` (the
manifest) records, per session, the file's size, mtime and SHA-256, the SHA-256 of each ancestor
whose entries decided its ``copied`` flags, and the files written. A session is rewritten when its
file changed (size or mtime differ and the SHA-256 too), when an ancestor changed, or when the
format, partitioning or table schema changed; files of sessions no longer among the inputs are
removed (the dataset mirrors its inputs).

Memory: a session is parsed once (pitools' loader holds it as Python values), and its rows go to
the writers in batches of ``BATCH_ROWS``: no table of a session is ever whole in Arrow memory.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pitools import store
from pitools.core.datasets.tables import SCHEMA_VERSION, TABLES, Column
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.types import Entry
from pitools.errors import MissingExtraError, PitoolsError

MANIFEST = "_pitools_dataset.json"
BATCH_ROWS = 8192
MISSING = "Parquet output needs pyarrow: pip install 'pi-session-tools[dataset]' (or use --format jsonl)"


@dataclass(slots=True)
class DatasetReport:
    sessions: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    bytes_read: int = 0
    seconds: float = 0.0


# -- discovery -------------------------------------------------------------------------------------


def discover(inputs: Iterable[str], exclude: str | None = None) -> list[str]:
    """Session files among ``inputs``: files as given, directories searched for ``*.jsonl``.

    Nothing under ``exclude`` (the output folder, whose JSONL tables are not sessions) is taken.
    """
    out: list[str] = []
    seen: set[str] = set()
    skip = os.path.realpath(exclude) + os.sep if exclude else None
    for item in inputs:
        if os.path.isdir(item):
            found: list[str] = []
            for folder, dirs, files in os.walk(item):
                dirs.sort()
                found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".jsonl"))
            candidates = found
        elif os.path.exists(item):
            candidates = [item]
        else:
            raise PitoolsError("no such file or directory", path=item)
        for path in candidates:
            real = os.path.realpath(path)
            if skip is not None and real.startswith(skip):
                continue
            if real not in seen and os.path.isfile(real):
                seen.add(real)
                out.append(path)
    return out


# -- partitions ------------------------------------------------------------------------------------

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def hive_value(text: str | None) -> str:
    """A partition folder value: Hive-style percent-encoding, so session text never names a path."""
    if not text:
        return "__HIVE_DEFAULT_PARTITION__"
    encoded = "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8", "replace")) for c in text)
    if len(encoded) > 120:
        encoded = encoded[:100] + "~" + hashlib.sha256(encoded.encode()).hexdigest()[:16]
    return encoded


def partition_dir(partition_by: str | None, created_ms: int | None, project: str | None) -> str:
    if partition_by == "day":
        if created_ms is None:
            return "day=__HIVE_DEFAULT_PARTITION__"
        import datetime as dt

        try:
            day = dt.datetime.fromtimestamp(created_ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):
            day = "__HIVE_DEFAULT_PARTITION__"
        return f"day={day}"
    if partition_by == "project":
        return f"project_dir={hive_value(project)}"
    return ""


# -- writers ---------------------------------------------------------------------------------------


def _arrow_schema(columns: list[Column]) -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("ms", tz="UTC"),
    }
    return pa.schema([pa.field(c.name, types[c.type]) for c in columns])


class ParquetSink:
    """Rows in, Parquet row groups out, ``BATCH_ROWS`` at a time."""

    def __init__(self, path: str, columns: list[Column]) -> None:
        import pyarrow.parquet as pq

        self.schema = _arrow_schema(columns)
        self.rows: list[dict[str, Any]] = []
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.rows:
            # Arrow converts the row dicts in C++ (faster than appending column by column here).
            self.writer.write_batch(pa.RecordBatch.from_pylist(self.rows, schema=self.schema))
            self.rows = []

    def close(self) -> None:
        self.flush()
        self.writer.close()


class JsonlSink:
    """Rows in, one JSON object a line out (timestamps as ISO 8601 UTC text), through a buffered file."""

    def __init__(self, path: str, columns: list[Column]) -> None:
        self.fh = open(path, "wb", buffering=1 << 20)  # noqa: SIM115 - closed in close()
        self.times = [c.name for c in columns if c.type == "timestamp"]

    def add(self, row: dict[str, Any]) -> None:
        from pitools.core.views.isotime import iso_utc

        for name in self.times:
            if row[name] is not None:
                row[name] = iso_utc(row[name])
        self.fh.write(to_json_bytes(row) + b"\n")

    def close(self) -> None:
        self.fh.close()


# -- the run ---------------------------------------------------------------------------------------


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _load_manifest(outdir: str) -> dict[str, Any]:
    try:
        with open(os.path.join(outdir, MANIFEST), "rb") as fh:
            data = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def session_file_stem(key: str) -> str:
    return "s-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def build_dataset(
    inputs: Iterable[str],
    outdir: str,
    *,
    format_: str = "parquet",
    partition_by: str | None = None,
    jobs: int | None = None,
    warn: Callable[[str], None] = lambda _m: None,
) -> DatasetReport:
    """Write (or bring up to date) the dataset of ``inputs`` in ``outdir``.

    ``jobs`` worker processes write sessions side by side (None or 1: this process alone; each
    worker holds one parsed session, so memory grows with ``jobs``).
    """
    from pitools.core.session.header import read_session_header
    from pitools.core.views import lineage

    if format_ == "parquet":
        try:
            import pyarrow
            import pyarrow.parquet  # noqa: F401
        except ImportError as exc:
            raise MissingExtraError(MISSING) from exc
    started = time.perf_counter()
    report = DatasetReport()
    paths = discover(inputs, exclude=outdir)
    old = _load_manifest(outdir)
    settings = {"schemaVersion": SCHEMA_VERSION, "format": format_, "partitionBy": partition_by}
    same_settings = all(old.get(k) == v for k, v in settings.items())
    old_sessions: dict[str, Any] = old.get("sessions", {}) if same_settings else {}
    if not same_settings:  # another layout: every old file goes
        for info in (old.get("sessions") or {}).values():
            for rel in info.get("files", ()) if isinstance(info, dict) else ():
                _remove(outdir, rel)

    # Pass 1: headers and file stamps; which files changed. A file whose size and mtime match but
    # that was racy when the last run read it (modified in the same clock tick: an in-place edit
    # right after that read keeps both; pitools.ops.index.racy) is hashed again. Only such files
    # carry a "racyRead" mark, so the manifest of settled files stays the same bytes run to run.
    from pitools.ops.index import racy

    scan_started = time.time_ns()
    refs: list[lineage.SessionRef] = []
    info_by_key: dict[str, dict[str, Any]] = {}
    path_by_key: dict[str, str] = {}
    for path in paths:
        header = read_session_header(path)
        if header is None:
            report.skipped.append((path, "not a Pi session (no session header)"))
            continue
        key = lineage.default_canonical(path)
        if key in path_by_key:
            continue
        st = os.stat(key)
        prev = old_sessions.get(key)
        info = {"path": path, "size": st.st_size, "mtimeNs": st.st_mtime_ns}
        if (
            isinstance(prev, dict)
            and prev.get("size") == st.st_size
            and prev.get("mtimeNs") == st.st_mtime_ns
            and prev.get("racyRead") is not True
        ):
            info["sha256"] = prev.get("sha256")
        else:
            info["sha256"] = _sha256(key)
        info["changed"] = not isinstance(prev, dict) or prev.get("sha256") != info["sha256"]
        info["racyRead"] = racy(st.st_mtime_ns, scan_started)
        info_by_key[key] = info
        path_by_key[key] = path
        refs.append(lineage.SessionRef(key, header.get("id"), header.get("parentSession"), os.path.dirname(key)))
    parents = lineage.resolve_parents(refs)
    parent_keys = set(parents.values())

    # Pass 2: rewrite what changed (or whose ancestors changed), each fork family parent first so
    # a child finds its ancestors' entry keys in the cache instead of reading them again.
    new_sessions: dict[str, Any] = {}
    todo: list[tuple[str, list[str], list[list[str]]]] = []
    for ref in _family_order(refs, parents):
        key = ref.key
        info = info_by_key[key]
        chain = lineage.ancestors(key, parents)
        signature = [[a, info_by_key[a]["sha256"]] for a in chain]
        prev = old_sessions.get(key)
        if not info["changed"] and isinstance(prev, dict) and prev.get("lineage") == signature:
            report.unchanged += 1
            report.sessions += 1
            new_sessions[key] = {**prev, "path": info["path"], "mtimeNs": info["mtimeNs"]}
            new_sessions[key].pop("racyRead", None)
            if info["racyRead"]:
                new_sessions[key]["racyRead"] = True
        else:
            todo.append((key, chain, signature))
    common = (parents, parent_keys, outdir, format_, partition_by)
    work = [(key, info_by_key[key]["path"], chain, info_by_key[key]["size"]) for key, chain, _ in todo]
    signatures = {key: signature for key, _, signature in todo}
    for (key, _path, _chain, _size), outcome in _run(work, common, jobs):
        info = info_by_key[key]
        prev = old_sessions.get(key)
        if isinstance(outcome, str):  # the session could not be loaded
            report.skipped.append((info["path"], outcome))
            if isinstance(prev, dict):
                for rel in prev.get("files", ()):
                    _remove(outdir, rel)
            continue
        files, rows = outcome
        if isinstance(prev, dict):
            for rel in set(prev.get("files", ())) - set(files):
                _remove(outdir, rel)
        for table, n in rows.items():
            report.rows[table] += n
        report.written += 1
        report.sessions += 1
        report.bytes_read += info["size"]
        new_sessions[key] = {
            "path": info["path"],
            "size": info["size"],
            "mtimeNs": info["mtimeNs"],
            "sha256": info["sha256"],
            "lineage": signatures[key],
            "files": files,
        }
        if info["racyRead"]:
            new_sessions[key]["racyRead"] = True
    for key, prev in old_sessions.items():
        if key not in new_sessions and isinstance(prev, dict):
            for rel in prev.get("files", ()):
                _remove(outdir, rel)
            report.removed += 1
    _sweep_strays(outdir, new_sessions)
    manifest = {**settings, "sessions": new_sessions}
    with store.replace_output(os.path.join(outdir, MANIFEST)) as tmp, open(tmp, "wb") as fh:
        fh.write(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    for path, reason in report.skipped:
        warn(f"{path}: skipped: {reason}")
    report.seconds = time.perf_counter() - started
    return report


#: Entry keys of recently written sessions, per process (a fork family's parent is written first).
_KEY_CACHE: dict[str, set[Any]] = {}
Outcome = tuple[list[str], dict[str, int]] | str


def _write_one(item: tuple[str, str, list[str], int], common: tuple[Any, ...]) -> Outcome:
    key, path, chain, size = item
    parents, parent_keys, outdir, format_, partition_by = common
    try:
        return _write_session(key, path, chain, parents, parent_keys, outdir, format_, partition_by, size)
    except PitoolsError as exc:
        return exc.message


def _run(
    work: list[tuple[str, str, list[str], int]], common: tuple[Any, ...], jobs: int | None
) -> Iterable[tuple[tuple[str, str, list[str], int], Outcome]]:
    """Each item's outcome, written in this process or by a pool of worker processes.

    The workers are spawned, never forked (``threaded_work``): a fork of a process whose Arrow
    thread pools are running can deadlock. Results come back as they finish; files are written
    by the workers themselves.
    """
    from functools import partial

    from pitools.ops.parallel import map_processes

    jobs = max(1, min(jobs or 1, len(work)))
    if jobs == 1:
        _KEY_CACHE.clear()
    for i, outcome in map_processes(partial(_write_one, common=common), work, jobs, threaded_work=True):
        yield work[i], outcome


def _family_order(refs: list[Any], parents: dict[str, str | None]) -> list[Any]:
    """``refs`` depth-first from each lineage root (discovery order otherwise kept)."""
    by_key = {r.key: r for r in refs}
    children: dict[str, list[str]] = {}
    for r in refs:
        parent = parents.get(r.key)
        if parent is not None:
            children.setdefault(parent, []).append(r.key)
    out: list[Any] = []
    seen: set[str] = set()
    for r in refs:
        if r.key in seen:
            continue
        # Climb to the top of this session's family (a parentSession loop stops the climb).
        top = r.key
        climbed = {top}
        while (up := parents.get(top)) is not None and up not in climbed:
            climbed.add(up)
            top = up
        stack = [top]
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            out.append(by_key[key])
            stack.extend(reversed(children.get(key, ())))
    return out


#: The table files this module writes (``session_file_stem`` plus an extension).
_TABLE_FILE = re.compile(r"s-[0-9a-f]{20}\.(?:jsonl|parquet)")


def _sweep_strays(outdir: str, sessions: dict[str, Any]) -> None:
    """Remove table files (and temp files) no session of the new manifest lists.

    A run that is killed writes the manifest last, so the tables it had written are listed
    nowhere; if one of those sessions is gone from the inputs by the next run, nothing else would
    ever remove its rows, and queries over ``<table>/**`` would still count them. Only names this
    module makes, inside the table folders, are touched.
    """
    kept = {rel for info in sessions.values() if isinstance(info, dict) for rel in info.get("files", ())}
    for table in TABLES:
        for folder, _dirs, names in os.walk(os.path.join(outdir, table)):
            rel_folder = os.path.relpath(folder, outdir).replace(os.sep, "/")
            for name in names:
                if name.endswith(".pitools-tmp") and name.startswith(".") and ".pid" in name:
                    store.clean_stale_temps(os.path.join(folder, name[1:].split(".pid", 1)[0]))
                elif _TABLE_FILE.fullmatch(name) and f"{rel_folder}/{name}" not in kept:
                    _remove(outdir, f"{rel_folder}/{name}")


def _remove(outdir: str, rel: Any) -> None:
    # The manifest could have been edited: only ever delete inside OUTDIR's table folders.
    if type(rel) is not str or rel.startswith(("/", "\\")) or ".." in rel.replace("\\", "/").split("/"):
        return
    parts = rel.split("/")
    if parts[0] not in TABLES:
        return
    store.remove_output(os.path.join(outdir, rel))
    if len(parts) == 3:  # <table>/<partition>/<file>: drop the partition folder once empty
        store.remove_empty_dir(os.path.join(outdir, parts[0], parts[1]))


def _copied_ids(
    key: str, entries: list[Entry], chain: list[str], key_cache: dict[str, set[Any]], has_children: bool
) -> set[str]:
    from pitools.core.session.load import load
    from pitools.core.views import lineage

    if not chain and not has_children:
        return set()  # nothing to compare, and no later session will ask for this one's keys
    held: list[set[Any]] = []
    for ancestor in chain:
        keys = key_cache.get(ancestor)
        if keys is None:
            try:
                session = load(Path(ancestor), strict=False, freeze=False).session
                keys = lineage.entry_keys(session.entries) if session.valid else set()
            except Exception:  # a damaged ancestor copies nothing
                keys = set()
            if len(key_cache) >= 8:
                key_cache.clear()
            key_cache[ancestor] = keys
        held.append(keys)
    own = lineage.entry_keys(entries)
    copied = {eid for eid, _ in lineage.copied_keys(own, held)}
    if has_children:
        key_cache[key] = own  # a child later in the run needs this session's keys
    return copied


def _write_session(
    key: str,
    path: str,
    chain: list[str],
    parents: dict[str, str | None],
    parent_keys: set[str | None],
    outdir: str,
    format_: str,
    partition_by: str | None,
    size: int,
) -> tuple[list[str], dict[str, int]]:
    import contextlib

    from pitools.core.datasets.rows import SessionMeta, project_of, session_rows
    from pitools.core.session.load import load
    from pitools.core.views.branch_common import entry_ms

    loaded = load(Path(key), freeze=False)
    session, index = loaded.session, loaded.index
    copied = _copied_ids(key, session.entries, chain, _KEY_CACHE, key in parent_keys)
    header = session.header or {}
    part = partition_dir(partition_by, entry_ms(header), project_of(header.get("cwd")))
    stem = session_file_stem(key)
    ext = "parquet" if format_ == "parquet" else "jsonl"
    rels = {t: "/".join(x for x in (t, part, f"{stem}.{ext}") if x) for t in TABLES}
    meta = SessionMeta(
        key=key,
        path=path,
        file_bytes=size,
        copied=copied,
        parent_key=parents.get(key),
        lineage_root=chain[-1] if chain else key,
    )
    rows = dict.fromkeys(TABLES, 0)
    sink_type: Any = ParquetSink if format_ == "parquet" else JsonlSink
    with contextlib.ExitStack() as stack:
        sinks = {}
        for table, columns in TABLES.items():
            tmp = stack.enter_context(store.replace_output(os.path.join(outdir, rels[table])))
            sinks[table] = sink_type(tmp, columns)
        try:
            for table, row in session_rows(session, index, meta):
                sinks[table].add(row)
                rows[table] += 1
        finally:
            for sink in sinks.values():
                sink.close()
    return list(rels.values()), rows
