"""The warm ``pitools search``: answered from the index with the fewest imports possible.

``pitools search WORD`` on a warm index is a few milliseconds of work, so its start-up is what
the user waits for: CPython itself (~10 ms), SQLite's library (~3 ms), and whatever pitools
imports. This path imports neither click, rich, orjson, typing, dataclasses, pathlib nor re, and
none of the indexing code: :func:`run_search` handles the usual invocation (``--format``,
``--limit``, ``--role``, ``--tool``, ``--project``, ``--session``, ``--thinking``,
``--in-context``, ``--branch``) when

* the sessions are where Pi keeps them by default (no ``--session-dir``, no
  ``PI_CODING_AGENT_SESSION_DIR``, no settings file that could set ``sessionDir``),
* the index exists, has this schema version and its shards, no update is half-done and no
  other pitools holds the update lock,
* not one session file was added, changed or removed since it was indexed (the same ``stat``
  comparison :func:`pitools.ops.index.scan` makes), and
* the query has FTS tokens.

Anything else — and any error at all before output starts — returns None and the click command
runs it from the beginning, updating the index, warning, failing as it always does. Its
arguments are read by :func:`parse` from the option table the click command is made from
(:mod:`pitools.cli.archive_options`), and only when they read exactly as click would read them;
help, short options, ``--``, global options and anything doubtful are left to click. Both ways
build the query, check the candidates and shape the hits with the same code
(:mod:`pitools.ops.search_core`), so their output is the same bytes
(``tests/cli/test_fast_search.py`` and ``tests/cli/test_fast_path_cli.py`` run both).
"""

from __future__ import annotations

import os
import sys

from pitools.nodepath import js_join, js_resolve
from pitools.ops.cachedir import RACY_COARSE_NS, RACY_NS, SCHEMA_VERSION, cache_dir, is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from pitools.cli.environment import Environment

#: Options this path does not take (the general path does): they need the zone, Pi's path rules
#: (``--cwd``, ``--session-dir``), or a regular expression.
_GENERAL_ONLY = ("regex", "cwd", "since", "until", "timezone", "session_dir")


def run_search(args: Sequence[str], env: Environment) -> int | None:
    """``pitools search ARGS`` on a warm index; None when the general path must run it.

    Errors while writing the output are the caller's (:func:`pitools.cli.main` runs this under
    the one error handler); any error before output starts means "let the general path run it".
    """
    kw = parse(args)
    if kw is None or any(kw[k] for k in _GENERAL_ONLY):
        return None
    try:
        data = warm_search(kw, env.environ)
    except KeyboardInterrupt:
        raise
    except Exception:
        # The general path reports (or works around: a corrupt index is rebuilt) whatever this
        # was, --debug included; this path never fails a command the general path would run.
        return None
    if data is None:
        return None
    if kw["format_"] != "json":
        if plain_stdout(env):
            from pitools.render.search_hits import plain, segments

            text = plain(segments(data))
            if text is not None:
                env.stdout.write(text)  # main() made the stream safe, as the output layer does
                return 0
        from pitools.cli.output import output_for
        from pitools.render.archive import render_search

        render_search(output_for(env).console(), data)
        return 0
    from pitools.ops.search_core import NotPlain, dumps

    try:
        payload = dumps(data) + b"\n"
    except NotPlain:
        from pitools.core.js.json.encode import to_json_bytes

        payload = to_json_bytes(data) + b"\n"
    env.stdout.flush()
    buffer = getattr(env.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (an embedding program's StringIO)
        env.stdout.write(payload.decode("utf-8", "backslashreplace"))
        env.stdout.flush()
    else:
        buffer.write(payload)
        buffer.flush()
    return 0


def parse(args: Sequence[str]) -> dict[str, Any] | None:
    """``search``'s ``args`` as the click command's keyword arguments, or None when click must
    read them: only known long options (``--opt value``, ``--opt=value``), flags, valid choices,
    whole numbers in range, and exactly one QUERY."""
    from pitools.cli.archive_options import table

    params = table("search")
    options = {p.name: p for p in params if p.kind != "argument"}
    values: dict[str, Any] = {p.dest: p.default for p in options.values()}
    multiple: dict[str, list[str]] = {}
    query: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            query.append(arg)
            continue
        if not arg.startswith("--") or arg == "--":
            return None  # short options (-h), a lone "-", the end-of-options marker
        key, eq, value = arg.partition("=")
        opt = options.get(key)
        if opt is None:
            return None
        if opt.kind == "flag":
            if eq:
                return None
            values[opt.dest] = True
            continue
        if not eq:
            if i >= len(args) or args[i].startswith("-"):
                return None
            value = args[i]
            i += 1
        if opt.choices is not None and value not in opt.choices:
            return None
        converted: Any = value
        if opt.min_int is not None:
            # [0-9]+ only (str.isdigit alone also takes other scripts' digits and superscripts)
            if not (value.isascii() and value.isdigit()) or int(value) < opt.min_int:
                return None
            converted = int(value)
        if opt.kind == "multiple":
            multiple.setdefault(opt.dest, []).append(value)
        else:
            values[opt.dest] = converted
    for dest, items in multiple.items():
        values[dest] = tuple(items)
    if len(query) != 1:
        return None
    values["query"] = query[0]
    return values


def plain_stdout(env: Environment) -> bool:
    """Whether the general path's output layer would give stdout neither colour nor a width
    (``Output.from_environment()``'s rules without ``--color``/``--width``: this path takes no
    global option): then human output is plain text, written without rich."""
    if env.environ.get("PITOOLS_WIDTH"):
        return False  # a width: rich's rules (left to the output layer)
    try:
        if env.stdout.isatty():
            return False  # a terminal has a width
    except (AttributeError, ValueError, OSError):
        pass  # the output layer reads a failing isatty as "not a terminal"
    from pitools.cli.colour import wants_color

    return not wants_color("auto", False, env.environ)


def warm_search(kw: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any] | None:
    """The search's JSON object, or None when this path does not apply (see the module docstring)."""
    from pitools.ops import search_core

    if sys.platform == "win32":
        return None  # Pi's paths there are win32 paths: the general path knows them
    folders = session_folders(env)
    if folders is None:
        return None
    cache = cache_dir(env)
    if _inside(cache, env):
        return None
    main = os.path.join(cache, f"index-v{SCHEMA_VERSION}.sqlite")
    if not os.path.isfile(main):
        return None
    terms = search_core.parse_terms(kw["query"])
    fts = search_core.fts_query([t.text for t in terms])
    if fts is None:
        return None
    conn = _connect(main)
    try:
        shards = _open(conn, cache)
        if shards is None or not _unchanged(conn, cache, folders):
            return None
        where, params = search_core.filters(
            folders,
            kw["roles"],
            kw["tools"],
            kw["in_context"],
            kw["branch"],
            project=kw["project"],
            session=kw["session"],
        )
        sql, named = search_core.fts_sql(where, params, shards, kw["thinking"], fts)
        hits, truncated, _ = search_core.collect(conn.execute(sql, named), terms, kw["thinking"], kw["limit"])
    finally:
        conn.close()
    return search_core.result_json(kw["query"], "fts", hits, truncated)


# -- where the sessions are ---------------------------------------------------------------------


def session_folders(env: Mapping[str, str]) -> list[str] | None:
    """The folders ``archive_scope(all_=True)`` covers, in the case where that is every folder
    under Pi's default ``sessions`` directory; None in any other case (a configured session
    directory, a ``~`` or ``file://`` agent dir, a settings file that may set ``sessionDir``)."""
    if env.get("PI_CODING_AGENT_SESSION_DIR"):
        return None
    here = os.getcwd()
    agent = env.get("PI_CODING_AGENT_DIR")
    if agent:
        if agent.startswith("~") or agent.startswith("file:"):
            return None  # normalizePath would rewrite it: the general path's rules
    elif "HOME" in env:
        agent = js_join(env["HOME"], ".pi", "agent")
    else:
        return None
    for settings in (
        js_join(js_resolve(agent, here), "settings.json"),
        js_join(js_resolve(here, here), ".pi", "settings.json"),
    ):
        if _may_set_session_dir(settings):
            return None
    root = js_join(agent, "sessions")
    found: list[tuple[bytes, str]] = []
    try:
        with os.scandir(root) as it:
            for entry in it:
                try:
                    if entry.is_dir() or entry.is_symlink():
                        found.append((entry.name.encode("utf-8", "surrogateescape"), entry.path))
                except OSError:
                    continue
    except OSError:
        return []
    found.sort()
    return [os.path.abspath(path) for _, path in found]


def _may_set_session_dir(path: str) -> bool:
    """Whether the settings file at ``path`` might hold a ``sessionDir`` key (spelled out or escaped).

    An unreadable or missing file holds none (Pi reads it as ``{}``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return b"sessionDir" in data or b"\\u" in data


# -- the index ----------------------------------------------------------------------------------------


def _inside(folder: str, env: Mapping[str, str]) -> bool:
    """:func:`pitools.ops.index.inside_pi_folders` for the agent dirs :func:`session_folders` accepts."""
    return is_within(folder, env.get("PI_CODING_AGENT_DIR") or js_join(env.get("HOME", ""), ".pi", "agent"))


def _connect(path: str) -> Any:
    # The C module itself: the ``sqlite3`` package adds ``datetime`` and ``collections.abc`` for
    # its default adapters, which a search never uses (~1.5 ms of start-up).
    try:
        from _sqlite3 import connect
    except ImportError:  # pragma: no cover - an interpreter without the C module's connect
        from sqlite3 import connect
    return connect(path, timeout=30.0, isolation_level=None)


def _open(conn: Any, cache: str) -> int | None:
    """Attach the shards of a ready index: their number, or None (not this version, not ready)."""
    version, shards_text, pending = conn.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT value FROM meta WHERE key='shards'), "
        "EXISTS(SELECT 1 FROM meta WHERE key='pending')"
    ).fetchone()
    if version != SCHEMA_VERSION or shards_text is None or pending:
        return None  # another version, not created yet, or an update stopped half-way
    shards = max(1, int(shards_text))
    seals = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'seal%'").fetchall())
    for k in range(shards):
        path = os.path.join(cache, f"index-v{SCHEMA_VERSION}.fts{k}.sqlite")
        # A shard changed since pitools last wrote it is verified by the general path first
        # (ArchiveIndex._check_seals): FTS5 reading damaged pages can abort the process.
        try:
            st = os.stat(path)
        except OSError:
            return None
        if seals.get(f"seal{k}") != f"{st.st_size}:{st.st_mtime_ns}":
            return None
        conn.execute("ATTACH DATABASE ? AS ?", (path, f"s{k}"))
    ready = " + ".join(f"(SELECT count(*) FROM s{k}.sqlite_master WHERE name='texts')" for k in range(shards))
    if conn.execute(f"SELECT {ready}").fetchone()[0] != shards:
        return None
    return shards


def _unchanged(conn: Any, cache: str, folders: list[str]) -> bool:
    """Whether every session file of ``folders`` is indexed as it is now, and no indexed one is gone.

    :func:`pitools.ops.index.scan`'s comparison (regular ``*.jsonl`` files; size, mtime, inode),
    made under the updaters' lock as an update makes it; the lock being held by another process
    means an update is running: the general path waits for it.
    """
    import fcntl

    try:
        fd = os.open(os.path.join(cache, f"index-v{SCHEMA_VERSION}.lock"), os.O_RDWR)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        try:
            if conn.execute("SELECT 1 FROM meta WHERE key='pending'").fetchone() is not None:
                return False
            return _on_disk(folders) == _indexed(conn, folders) and not _racy(conn, folders)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _indexed(conn: Any, folders: list[str]) -> set[str]:
    """``path|size|mtime_ns|inode`` of every indexed session of ``folders`` (one string from SQLite,
    cheaper than a row each; a path holding a newline splits and simply compares unequal)."""
    if not folders:
        return set()
    marks = ",".join("?" * len(folders))
    text = conn.execute(
        "SELECT group_concat(path || '|' || size || '|' || mtime_ns || '|' || ino, char(10)) "
        f"FROM sessions WHERE +folder IN ({marks})",
        folders,
    ).fetchone()[0]
    return set(text.split("\n")) if text else set()


def _racy(conn: Any, folders: list[str]) -> bool:
    """A session modified just before the last update started: the general path reads it again
    (:func:`pitools.ops.index.racy`: an edit in that clock tick keeps size and mtime)."""
    row = conn.execute("SELECT value FROM meta WHERE key='scanStartNs'").fetchone()
    if row is None or not folders:
        return False
    start = int(row[0])
    marks = ",".join("?" * len(folders))
    # Whole-millisecond mtimes (a coarse file system) get the wide window, the rest the narrow one.
    found = conn.execute(
        f"SELECT 1 FROM sessions WHERE +folder IN ({marks}) AND "
        "mtime_ns >= ? - (CASE WHEN mtime_ns % 1000000 = 0 THEN ? ELSE ? END) LIMIT 1",
        [*folders, start, RACY_COARSE_NS, RACY_NS],
    ).fetchone()
    return found is not None


def _on_disk(folders: list[str]) -> set[str]:
    """The same strings for the session files now in ``folders``."""
    out: set[str] = set()
    add = out.add
    stat = os.stat
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        prefix = folder if folder.endswith(os.sep) else folder + os.sep
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            path = prefix + name
            try:
                st = stat(path)
            except OSError:
                continue
            if st.st_mode & 0o170000 == 0o100000:  # S_ISREG
                add(f"{path}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}")
    return out
