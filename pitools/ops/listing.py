"""``pitools ls`` over the archive index: summaries of the files that changed are computed again."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pitools.core.views.listing import Listing
from pitools.core.views.listing import list_sessions as _list_sessions
from pitools.ops.archive import archive_scope, updated_index
from pitools.ops.cachedir import cache_dir
from pitools.ops.index import ArchiveIndex
from pitools.ops.index_limits import ProgressFn, WarnFn
from pitools.ops.queries import SORTS, ListQuery

__all__ = ["cache_dir", "list_archive", "list_sessions", "listing_totals", "select_sessions"]


def list_archive(
    query: ListQuery,
    *,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    found_ids: list[str] | None = None,
) -> Listing:
    """``pitools ls``: :func:`list_sessions` for ``query``, filtered, ordered and cut by
    :func:`select_sessions`; ``found_ids`` collects the id of every session found, before the
    query's filters (what a unique id prefix must be unique among)."""

    def select(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if found_ids is not None:
            found_ids.extend(str(s["id"]) for s in found if s.get("id"))
        return select_sessions(found, query)

    return list_sessions(
        cwd=query.cwd,
        session_dir=query.session_dir,
        all_=query.all,
        use_cache=query.use_cache,
        progress=progress,
        warn=warn,
        select=select,
    )


def select_sessions(sessions: list[dict[str, Any]], query: ListQuery) -> list[dict[str, Any]]:
    """Keep the sessions active since ``query.since`` (ISO UTC), order them by ``query.sort``
    (:data:`~pitools.ops.queries.SORTS`; missing values last), keep the first ``query.limit``."""
    if query.since is not None:
        since = query.since
        sessions = [s for s in sessions if (s.get("modified") or "") >= since]
    if query.sort != "activity":  # the listing already comes in Pi's order
        key, descending = SORTS[query.sort]

        def value(s: dict[str, Any]) -> Any:
            v: Any = s
            for part in key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            if key == "name":
                v = s.get("name") or s.get("firstMessage") or ""
                return str(v).casefold()
            return v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None

        present = [s for s in sessions if value(s) is not None]
        missing = [s for s in sessions if value(s) is None]
        sessions = sorted(present, key=value, reverse=descending) + missing
    return sessions[: query.limit] if query.limit is not None else sessions


def list_sessions(
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    all_: bool = False,
    use_cache: bool = True,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    select: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
) -> Listing:
    """``pitools ls``: the summaries of :func:`pitools.core.views.listing.list_sessions`, kept in the index.

    Only files that changed are read again; ``use_cache=False`` reads every file and leaves the
    index alone. The listing gains a totals row (fork/clone history counted once).
    """
    from pitools.core.js.json.parse import parse_json_line
    from pitools.core.session.locate import header_cwd_matches
    from pitools.core.views.listing import _sort_key

    env = os.environ if env is None else env
    if not use_cache:
        plain = _list_sessions(cwd=cwd, env=env, session_dir=session_dir, all_=all_, progress=progress)
        if select is not None:
            plain.sessions = select(plain.sessions)
        return plain
    scope = archive_scope(env=env, session_dir=session_dir, all_=all_, cwd=cwd)
    index, stats = updated_index(scope, env=env, progress=progress, warn=warn)
    choice = scope.choice
    try:
        sid_of: dict[str, int] = {}
        sessions: list[dict[str, Any]] = []
        for r in index.session_rows(scope.folders):
            if r["summary"] is None:
                continue
            summary = parse_json_line(r["summary"])[0]  # orjson first; lone surrogates too
            if all_ or not choice.filter_cwd or header_cwd_matches({"cwd": summary["cwd"]}, scope.cwd, env):
                sid_of[summary["path"]] = r["sid"]
                sessions.append(summary)
        sessions.sort(key=_sort_key, reverse=True)
        if select is not None:
            sessions = select(sessions)
        totals = listing_totals(sessions, index, [sid_of.get(s["path"]) for s in sessions])
    finally:
        index.close()
    return Listing(scope.cwd, all_, choice, scope.folders, sessions, stats.unchanged, totals)


def listing_totals(
    sessions: Sequence[dict[str, Any]], index: ArchiveIndex | None = None, sids: Sequence[int | None] = ()
) -> dict[str, Any]:
    """The ``ls`` totals row: sums of the listed sessions' counts, tokens and cost.

    With the index, tokens and cost count history copied by fork/clone once (``copiedCost`` says
    how much the plain sum of the rows would count twice). ``sids[i]`` is ``sessions[i]``'s index
    id (None when it has none); a fork's or clone's summary gains ``copiedCost``: the part of its
    cost copied from its parent.
    """
    out: dict[str, Any] = {
        "sessions": len(sessions),
        "messageCount": 0,
        "entryCount": 0,
        "fileBytes": 0,
        "tokens": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        "cost": 0,
    }
    for s in sessions:
        out["messageCount"] += s.get("messageCount") or 0
        out["entryCount"] += s.get("entryCount") or 0
        out["fileBytes"] += s.get("fileBytes") or 0
        cost = s.get("cost")
        if type(cost) in (int, float):
            out["cost"] += cost
        tokens = s.get("tokens") or {}
        for k in out["tokens"]:
            v = tokens.get(k)
            if type(v) in (int, float):
                out["tokens"][k] += v
    out["copiedCost"] = 0
    if index is not None and any(s is not None for s in sids):
        index.conn.execute("CREATE TEMP TABLE IF NOT EXISTS listed(sid INTEGER PRIMARY KEY)")
        index.conn.execute("DELETE FROM temp.listed")
        index.conn.executemany("INSERT OR IGNORE INTO temp.listed VALUES(?)", [(s,) for s in sids if s is not None])
        # One pass over the per-session quarter-hour sums (pitools.ops.index_limits.SLOT_MS), not two
        # over every usage record.
        sums = {
            flag: rest
            for flag, *rest in index.conn.execute(
                "SELECT copied, coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0), "
                "coalesce(sum(cache_write), 0), coalesce(sum(cost), 0) "
                "FROM usage_slots WHERE sid IN (SELECT sid FROM temp.listed) GROUP BY copied"
            )
        }
        # Each fork's or clone's share copied from its parent (its row shows it beside its cost).
        copied_of = dict(
            index.conn.execute(
                "SELECT sid, coalesce(sum(cost), 0) FROM usage_slots "
                "WHERE copied = 1 AND sid IN (SELECT sid FROM temp.listed) GROUP BY sid"
            ).fetchall()
        )
        for s, sid in zip(sessions, sids, strict=True):
            if sid is not None and sid in copied_of:
                s["copiedCost"] = copied_of[sid]
        i, o, r, w, c = sums.get(0) or (0, 0, 0, 0, 0)
        copied = (sums.get(1) or (0, 0, 0, 0, 0))[4]
        out["tokens"] = {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "total": i + o + r + w}
        out["cost"] = c
        out["copiedCost"] = copied
    return out
