"""The archive index on generated archives whose true totals are known by construction."""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pitools.core.session.load import load
from pitools.core.views.stats import session_stats
from pitools.ops import index as index_mod
from pitools.ops import index_limits
from pitools.ops.archive import archive_scope, updated_index, usage_report
from pitools.ops.queries import SearchQuery, SessionFilter, UsageQuery
from pitools.ops.search import search
from tests.archive_gen import Archive, Writer, private_pi_env

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    agent = tmp_path / "agent"
    cache = tmp_path / "cache"
    env = private_pi_env(tmp_path, monkeypatch)
    return {"agent": agent, "cache": cache, "env": env, "tmp": tmp_path}


def _build(agent: Path) -> tuple[Archive, dict[str, Writer]]:
    """Forks and clones, every usage source, colliding ids, branches and compactions."""
    ar = Archive(agent, seed=7)
    w: dict[str, Writer] = {}
    p = w["parent"] = ar.new("/work/app")
    p.conversation(3)
    first = p.entries[0]["id"]
    p.tool_result("sub-agent ran", tool="subagent", with_usage=True)
    p.usage_entry()
    keep = p.user("zebra quantum marmalade is compacted away later")["id"]
    p.assistant()
    p.compaction(first_kept=p.assistant()["id"])
    p.conversation(2)
    fork_point = p.leaf
    # An abandoned branch from the first entry, with a phrase only there.
    p.branch_from(first)
    p.user("platypus lighthouse only on an abandoned branch")
    abandoned = p.assistant()["id"]
    p.branch_from(fork_point)
    p.branch_summary(from_id=abandoned)
    p.user("narwhal teapot in the current context")
    p.assistant(thinking="secret pelican thinking", tool=("edit", {"path": "src/otter_config.py"}))
    p.write()
    w["keep_id"] = keep  # type: ignore[assignment]
    # A clone of the parent's path, continued: its copied history must not count again.
    c = w["clone"] = ar.fork(p, fork_point)
    c.conversation(2)
    c.write()
    # A fork of the clone (a grandchild): copies the clone's own entries too.
    g = w["grandchild"] = ar.fork(c, c.leaf, cwd="/work/other")  # type: ignore[arg-type]
    g.conversation(1)
    g.write()
    # Two unrelated sessions with the same entry ids, times and usage numbers: both count.
    for name in ("twin_a", "twin_b"):
        t = w[name] = ar.new("/work/twins", id_prefix="c011")
        t.rng = random.Random(99)
        t.clock = 1_770_000_000_000
        t.conversation(2)
        t.write()
    return ar, w


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _check_totals(report: Any, truth: dict[str, Any]) -> None:
    t = report.totals
    assert (t.input, t.output, t.cache_read, t.cache_write, t.records) == (
        truth["input"],
        truth["output"],
        truth["cacheRead"],
        truth["cacheWrite"],
        truth["records"],
    )
    assert _close(t.cost, truth["cost"])


_FILTERS = ("project", "cwd", "session", "since", "until", "timezone")


def _usage_query(**kw: Any) -> UsageQuery:
    """Keyword arguments as the usage query the CLI would build (filters into its SessionFilter)."""
    where = SessionFilter(**{k: kw.pop(k) for k in _FILTERS if k in kw})
    return UsageQuery(where=where, **kw)


def _search_query(text: str, **kw: Any) -> SearchQuery:
    where = SessionFilter(**{k: kw.pop(k) for k in _FILTERS if k in kw})
    for many in ("roles", "tools"):
        if many in kw:
            kw[many] = tuple(kw[many])
    return SearchQuery(text, where=where, **kw)


def _usage(env: dict[str, str], **kw: Any) -> Any:
    scope = archive_scope(env=env)
    warnings: list[str] = []
    index, _ = updated_index(scope, env=env, warn=warnings.append)
    try:
        assert not index.in_memory and warnings == []  # no silent fallback
        tz = {k: kw.pop(k) for k in ("tz", "tz_name") if k in kw}
        return usage_report(index, scope, _usage_query(**kw), **tz)
    finally:
        index.close()


def test_usage_totals_match_the_truth(home: dict[str, Any]) -> None:
    ar, w = _build(home["agent"])
    report = _usage(home["env"], by="session")
    _check_totals(report, ar.truth())
    # The naive sum (every file's getSessionStats) counts the copied history again.
    naive = sum(session_stats(load(x.path, strict=False).session.entries).totals.cost for x in ar.present())
    assert naive > report.totals.cost + 0.01
    assert report.copied_excluded.records > 0
    # Every usage source is counted.
    scope = archive_scope(env=home["env"])
    index, _ = updated_index(scope, env=home["env"])
    sources = {r[0] for r in index.conn.execute("SELECT DISTINCT source FROM usage")}
    index.close()
    assert sources == {"assistant", "toolResult", "compaction", "branch_summary", "usage"}
    # One session's row equals what `pitools inspect` (getSessionStats) reports for it.
    row = next(r for r in report.rows if r.key == str(w["parent"].path))
    stats = session_stats(load(w["parent"].path, strict=False).session.entries).totals
    assert (row.sums.input, row.sums.output, row.sums.cache_read, row.sums.cache_write) == (
        stats.input,
        stats.output,
        stats.cache_read,
        stats.cache_write,
    )
    assert _close(row.sums.cost, stats.cost)
    # The twins collide on every id and time, yet both are counted (no lineage links them).
    twins = [r for r in report.rows if r.key in (str(w["twin_a"].path), str(w["twin_b"].path))]
    assert len(twins) == 2 and twins[0].sums.records == twins[1].sums.records > 0


def test_groupings_keep_the_totals(home: dict[str, Any]) -> None:
    ar, _ = _build(home["agent"])
    truth = ar.truth()
    for by in ("day", "week", "month", "model", "provider", "project", "session"):
        report = _usage(home["env"], by=by, breakdown=True, tz=dt.UTC, tz_name="UTC")
        _check_totals(report, truth)
        assert _close(sum(r.sums.cost for r in report.rows), truth["cost"])
        for r in report.rows:
            assert _close(sum(m.cost for m in r.models.values()), r.sums.cost)
    by_project = _usage(home["env"], by="project")
    assert {r.key for r in by_project.rows} == {"/work/app", "/work/other", "/work/twins"}
    since = _usage(home["env"], by="day", since="2026-02-01", tz=dt.UTC, tz_name="UTC")
    assert 0 < since.totals.records < truth["records"]


def test_by_session_every_fork_has_a_row_with_its_own_and_copied_usage(home: dict[str, Any]) -> None:
    """A fork with no usage of its own still gets a row: zeros, and what it copied from its parent.
    Each row's own + copied usage is the file's getSessionStats (what `pitools inspect` shows)."""
    ar, w = _build(home["agent"])
    bare = ar.fork(w["clone"], w["clone"].leaf)  # type: ignore[arg-type]  # /clone, then nothing
    bare.write()
    report = _usage(home["env"], by="session")
    _check_totals(report, ar.truth())  # the copied history still counts once
    rows = {r.key: r for r in report.rows}
    assert set(rows) == {str(x.path) for x in ar.present()}
    row = rows[str(bare.path)]
    assert row.sums.records == 0 and row.sums.cost == 0 and row.copied is not None
    assert row.copied.records == len(bare.origins) > 0
    assert report.rows[-1] is row  # no cost of its own: last
    for x in ar.present():
        r = rows[str(x.path)]
        stats = session_stats(load(x.path, strict=False).session.entries).totals
        assert r.copied is not None
        both = (r.sums.input + r.copied.input, r.sums.output + r.copied.output, r.sums.cost + r.copied.cost)
        assert both[:2] == (stats.input, stats.output) and _close(both[2], stats.cost), x.path
    assert {str(x.path) for x in ar.present() if rows[str(x.path)].copied.records} == {  # type: ignore[union-attr]
        str(w["clone"].path),
        str(w["grandchild"].path),
        str(bare.path),
    }
    assert report.sessions == len(ar.present()) - 1  # sessions with usage of their own
    # Other groupings have no per-row copied part.
    assert all(r.copied is None for r in _usage(home["env"], by="model").rows)


def _settled(*paths: Any) -> None:
    """Date files 10 s back, as files Pi wrote a moment ago: one written in the clock tick an update
    starts is read again by the next update too (pitools.ops.index.racy), which these counts exclude."""
    import time

    then = time.time_ns() - 10_000_000_000
    for path in paths:
        os.utime(path, ns=(then, then))


def test_appended_rewritten_and_deleted_between_runs(home: dict[str, Any]) -> None:
    ar, w = _build(home["agent"])
    env = home["env"]
    _usage(env)
    # Pi appends to the clone: only the new bytes are read.
    c = w["clone"]
    start = len(c.entries)
    c.conversation(2)
    c.usage_entry()
    c.append(start)
    _settled(c.path)
    scope = archive_scope(env=env)
    index, stats = updated_index(scope, env=env)
    index.close()
    assert stats.appended == 1 and stats.reindexed == 0 and stats.added == 0
    assert stats.bytes_read == c.path.stat().st_size - _size_before(c, start)
    _check_totals(_usage(env), ar.truth())
    # A rewrite (an entry removed in the middle, as a repair would): reindexed, not appended.
    t = w["twin_a"]
    gone = t.entries.pop(3)
    t.origins.pop(gone["id"], None)
    t.entries[3]["parentId"] = t.entries[2]["id"]
    t.write()
    _settled(t.path)
    index, stats = updated_index(scope, env=env)
    index.close()
    assert stats.reindexed == 1 and stats.appended == 0
    _check_totals(_usage(env), ar.truth())
    # An append that changes an earlier byte is caught by the tail hash and reindexed.
    g = w["grandchild"]
    data = bytearray(g.path.read_bytes())
    data[-10] = ord("X") if data[-10] != ord("X") else ord("Y")
    g.path.write_bytes(bytes(data) + b"\n")
    _settled(g.path)
    index, stats = updated_index(scope, env=env)
    index.close()
    assert stats.reindexed == 1 and stats.appended == 0
    # Deleting the parent: its clone's copied history now counts there (once).
    w["grandchild"].path.unlink()
    w["parent"].path.unlink()
    index, stats = updated_index(scope, env=env)
    index.close()
    assert stats.removed == 2
    _check_totals(_usage(env), ar.truth())


def _size_before(w: Writer, start: int) -> int:
    import orjson

    return sum(len(orjson.dumps(v)) + 1 for v in (w.header, *w.entries[:start]))


def test_appended_tree_facts_equal_a_cold_build(home: dict[str, Any], tmp_path: Path) -> None:
    ar, w = _build(home["agent"])
    env = home["env"]
    _usage(env)
    p = w["parent"]
    start = len(p.entries)
    p.branch_from(p.entries[5]["id"])  # a new branch: old entries' leaves and context change
    p.conversation(1)
    p.compaction(first_kept=p.leaf)  # type: ignore[arg-type]
    p.append(start)
    scope = archive_scope(env=env)
    index, stats = updated_index(scope, env=env)
    assert stats.appended == 1
    warm = _facts(index, p.path)
    index.close()
    cold_env = dict(env, PITOOLS_CACHE_DIR=str(tmp_path / "cold"))
    index, stats = updated_index(archive_scope(env=cold_env), env=cold_env)
    assert stats.added == len(ar.present())
    assert _facts(index, p.path) == warm
    index.close()


def _facts(index: Any, path: Path) -> list[tuple[Any, ...]]:
    return list(
        index.conn.execute(
            "SELECT e.ord, e.eid, e.leaf_lo, e.leaf_hi, e.in_ctx, e.summarized, e.copied, s.leaves, s.default_pos "
            "FROM entries e JOIN sessions s ON s.sid = e.sid WHERE s.path = ? ORDER BY e.ord",
            (str(path),),
        )
    )


def test_corrupt_index_is_rebuilt(home: dict[str, Any]) -> None:
    ar, _ = _build(home["agent"])
    env = home["env"]
    _usage(env)
    main = Path(home["cache"]) / f"index-v{index_mod.SCHEMA_VERSION}.sqlite"
    assert main.exists()
    for name in os.listdir(home["cache"]):
        if name.endswith("-wal") or name.endswith("-shm"):
            os.unlink(Path(home["cache"]) / name)
    main.write_bytes(b"this is not a database" * 500)
    warnings: list[str] = []
    scope = archive_scope(env=env)
    index, stats = updated_index(scope, env=env, warn=warnings.append)
    try:
        report = usage_report(index, scope)
        assert not index.in_memory and stats.added == len(ar.present())
    finally:
        index.close()
    assert any("rebuild" in m for m in warnings)
    _check_totals(report, ar.truth())


def test_files_of_older_versions_are_removed(home: dict[str, Any]) -> None:
    """A new schema version starts a new index and deletes older versions' data files (not newer ones)."""
    ar, _ = _build(home["agent"])
    env = home["env"]
    cache = Path(home["cache"])
    cache.mkdir(parents=True)
    old = [f"index-v{index_mod.SCHEMA_VERSION - 1}.sqlite", f"index-v{index_mod.SCHEMA_VERSION - 1}.fts0.sqlite-wal"]
    for name in old:
        (cache / name).write_bytes(b"old index" * 100)
    kept = ["index-v1.lock", "notes.txt", "index-vx.sqlite", f"index-v{index_mod.SCHEMA_VERSION + 1}.sqlite"]
    for name in kept:
        (cache / name).write_bytes(b"")
    scope = archive_scope(env=env)
    index, stats = updated_index(scope, env=env)
    try:
        assert stats.added == len(ar.present())
        _check_totals(usage_report(index, scope), ar.truth())
    finally:
        index.close()
    names = set(os.listdir(cache))
    assert not names & set(old)
    assert set(kept) <= names
    assert f"index-v{index_mod.SCHEMA_VERSION}.sqlite" in names


def test_old_schema_version_is_replaced(home: dict[str, Any]) -> None:
    import sqlite3

    ar, _ = _build(home["agent"])
    env = home["env"]
    home["cache"].mkdir(parents=True)
    main = home["cache"] / f"index-v{index_mod.SCHEMA_VERSION}.sqlite"
    db = sqlite3.connect(main)
    db.execute("PRAGMA user_version=999")
    db.close()
    warnings: list[str] = []
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env, warn=warnings.append)
    try:
        assert not index.in_memory and any("schema version 999" in m for m in warnings)
        _check_totals(usage_report(index, scope), ar.truth())
    finally:
        index.close()
    _check_totals(_usage(env), ar.truth())  # and the next run is quiet


def test_cache_inside_pi_folder_is_refused(home: dict[str, Any]) -> None:
    ar, _ = _build(home["agent"])
    inside = home["agent"] / "pitools-cache"
    env = dict(home["env"], PITOOLS_CACHE_DIR=str(inside))
    warnings: list[str] = []
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env, warn=warnings.append)
    try:
        assert index.in_memory
        _check_totals(usage_report(index, scope), ar.truth())
    finally:
        index.close()
    assert not inside.exists() and any("inside Pi's agent folder" in m for m in warnings)


def test_parallel_cold_build_equals_serial(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ar, _w = _build(home["agent"])
    for i in range(10):
        extra = ar.new(f"/work/p{i % 3}")
        extra.conversation(3)
        extra.write()
    monkeypatch.setattr(index_limits, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(index_limits, "PARALLEL_MIN_BYTES", 1)
    env = home["env"]
    scope = archive_scope(env=env)
    index, stats = updated_index(scope, env=env, jobs=2)
    parallel = usage_report(index, scope)
    hits = search(index, scope, SearchQuery("narwhal teapot"))
    index.close()
    assert stats.added == len(ar.present())
    _check_totals(parallel, ar.truth())
    assert [h["entryId"] for h in hits.hits] == [h["entryId"] for h in _search(home["env"], "narwhal teapot").hits]


def _search(env: dict[str, str], text: str, **kw: Any) -> Any:
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env)
    try:
        return search(index, scope, _search_query(text, **kw))
    finally:
        index.close()


_UPDATER = """
import sys
from pitools.ops.archive import archive_scope, updated_index, usage_report
scope = archive_scope()
index, stats = updated_index(scope)
report = usage_report(index, scope)
print(report.totals.records, repr(report.totals.cost), index.in_memory)
"""


def test_two_concurrent_updaters_both_succeed(home: dict[str, Any]) -> None:
    ar, _ = _build(home["agent"])
    for i in range(20):
        extra = ar.new(f"/work/c{i % 4}")
        extra.conversation(4)
        extra.write()
    env = dict(os.environ, **home["env"])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _UPDATER], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    truth = ar.truth()
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        records, cost, in_memory = out.decode().split()
        assert int(records) == truth["records"] and _close(float(cost), truth["cost"])
        assert in_memory == "False", err.decode()
    # The index holds every session once.
    scope = archive_scope(env=home["env"])
    index, stats = updated_index(scope, env=home["env"])
    n = index.conn.execute("SELECT count(*), count(DISTINCT path) FROM sessions").fetchone()
    index.close()
    assert n == (len(ar.present()), len(ar.present())) and stats.unchanged == len(ar.present())


# -- search ---------------------------------------------------------------------------------------


def test_search_finds_planted_phrases_with_their_place(home: dict[str, Any]) -> None:
    _ar, w = _build(home["agent"])
    env = home["env"]
    p = w["parent"]
    by_text = {
        e["message"]["content"]: e
        for e in p.entries
        if e["type"] == "message" and isinstance(e["message"].get("content"), str)
    }
    # In the current context of the parent (and copied into nothing: it came after the fork point).
    res = _search(env, '"narwhal teapot"')
    assert [(h["session"]["path"], h["entryId"]) for h in res.hits] == [
        (str(p.path), by_text["narwhal teapot in the current context"]["id"])
    ]
    hit = res.hits[0]
    assert hit["inContext"] and not hit["summarizedAway"] and hit["onCurrentBranch"] and hit["leaves"] == [p.leaf]
    assert hit["commands"][0].startswith("pitools context ") and hit["commands"][1].startswith("pi --session ")
    # Only on an abandoned branch: reported as such, with that branch's leaf.
    res = _search(env, "platypus lighthouse")
    assert len(res.hits) == 1
    hit = res.hits[0]
    abandoned_user = by_text["platypus lighthouse only on an abandoned branch"]
    assert hit["entryId"] == abandoned_user["id"]
    assert not hit["inContext"] and not hit["onCurrentBranch"] and not hit["summarizedAway"]
    leaf_of_branch = next(e["id"] for e in p.entries if e["parentId"] == abandoned_user["id"])
    assert hit["leaves"] == [leaf_of_branch]
    assert _search(env, "platypus lighthouse", branch="current").hits == []
    assert _search(env, "platypus lighthouse", in_context=True).hits == []
    # Compacted away on the current path; copied into the clone and the grandchild.
    res = _search(env, '"zebra quantum marmalade"')
    places = {h["session"]["path"]: h for h in res.hits}
    assert set(places) == {str(p.path), str(w["clone"].path), str(w["grandchild"].path)}
    assert places[str(p.path)]["summarizedAway"] and not places[str(p.path)]["inContext"]
    assert not places[str(p.path)]["copied"] and places[str(w["clone"].path)]["copied"]
    assert all(h["entryId"] == w["keep_id"] for h in res.hits)  # type: ignore[comparison-overlap]
    # Thinking only with --thinking; tool calls by name and arguments.
    assert _search(env, "pelican").hits == []
    assert len(_search(env, "pelican", thinking=True).hits) == 1
    res = _search(env, "otter_config", tools=["edit"])
    assert len(res.hits) == 1 and res.hits[0]["role"] == "assistant" and res.hits[0]["tools"] == ["edit"]
    assert _search(env, "otter_config", tools=["bash"]).hits == []
    assert _search(env, "otter_config", roles=["user"]).hits == []
    # Regex scans the files instead of the index, with the same places.
    res = _search(env, r"platypus\s+light", regex=True)
    assert [h["entryId"] for h in res.hits] == [abandoned_user["id"]]


def test_search_filters_and_order(home: dict[str, Any]) -> None:
    _ar, w = _build(home["agent"])
    env = home["env"]
    everything = _search(env, "index", limit=0)
    stamps = [h["timestamp"] for h in everything.hits]
    # Grouped by session; inside a session, newest first.
    seen: list[str] = []
    for h in everything.hits:
        if not seen or seen[-1] != h["session"]["path"]:
            assert h["session"]["path"] not in seen
            seen.append(h["session"]["path"])
    assert len(seen) > 2 and all(isinstance(s, str) for s in stamps)
    only = _search(env, "index", project="twins", limit=0)
    assert {h["session"]["cwd"] for h in only.hits} == {"/work/twins"}
    one = _search(env, "index", session=str(w["clone"].path), limit=0)
    assert {h["session"]["path"] for h in one.hits} == {str(w["clone"].path)}
    limited = _search(env, "index", limit=3)
    assert len(limited.hits) == 3 and limited.truncated


def test_offset_pieces_cut_days_like_the_zone() -> None:
    """Local days across daylight-saving changes equal Python's own conversion, to the second."""
    from zoneinfo import ZoneInfo

    from pitools.core.views.usage_report import offset_pieces

    rng = random.Random(5)
    for name in ("Europe/Paris", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "UTC"):
        tz = ZoneInfo(name)
        lo, hi = 1_735_689_600, 1_798_761_600  # 2025-01-01 .. 2027-01-01
        pieces = offset_pieces(tz, lo, hi)
        probes = [rng.randint(lo, hi) for _ in range(300)] + [start for start, _ in pieces[1:]]
        probes += [start - 1 for start, _ in pieces[1:]]
        for t in probes:
            offset = [off for start, off in pieces if start <= t][-1]
            local = dt.datetime.fromtimestamp(t, dt.UTC) + dt.timedelta(seconds=offset)
            assert local.date() == dt.datetime.fromtimestamp(t, tz).date(), (name, t)
        if name == "Europe/Paris":
            assert len(pieces) == 5  # four changes in two years


def test_days_in_a_time_zone(home: dict[str, Any]) -> None:
    """A record at 23:30 UTC belongs to the next day in Paris (UTC+1 in winter, +2 in summer)."""
    from zoneinfo import ZoneInfo

    ar = Archive(home["agent"], seed=1)
    w = ar.new("/work/tz")
    for stamp in ("2026-03-28T23:30:00.000Z", "2026-07-01T21:59:00.000Z", "2026-07-01T22:01:00.000Z"):
        w.clock = int(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000) - 1_000
        w.rng = random.Random(0)
        w.usage_entry()
        w.entries[-1]["timestamp"] = stamp
    w.write()
    utc = _usage(home["env"], by="day", tz=dt.UTC, tz_name="UTC")
    assert [r.key for r in utc.rows] == ["2026-03-28", "2026-07-01"]
    paris = _usage(home["env"], by="day", tz=ZoneInfo("Europe/Paris"), tz_name="Europe/Paris")
    assert [(r.key, r.sums.records) for r in paris.rows] == [("2026-03-29", 1), ("2026-07-01", 1), ("2026-07-02", 1)]
    weeks = _usage(home["env"], by="week", tz=ZoneInfo("Europe/Paris"), tz_name="Europe/Paris")
    assert [r.key for r in weeks.rows] == ["2026-W13", "2026-W27"]


def test_without_fts5_search_scans(home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python whose SQLite lacks FTS5 still searches (by scanning), with the same hits."""
    _ar, w = _build(home["agent"])
    with_fts = _search(home["env"], "platypus lighthouse")
    monkeypatch.setattr(index_mod, "fts5_available", lambda: False)
    env = dict(home["env"], PITOOLS_CACHE_DIR=str(home["tmp"] / "nofts"))
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env)
    try:
        assert not index.fts
        result = search(index, scope, SearchQuery("platypus lighthouse"))
    finally:
        index.close()
    assert result.mode == "scan"
    assert [(h["session"]["path"], h["entryId"], h["leaves"]) for h in result.hits] == [
        (h["session"]["path"], h["entryId"], h["leaves"]) for h in with_fts.hits
    ]
    assert with_fts.mode == "fts" and result.hits and result.hits[0]["session"]["path"] == str(w["parent"].path)


def _long_output(word: str) -> str:
    """A tool output long enough to be indexed once per shard (index_rows.DEDUP_MIN)."""
    from pitools.ops.index_rows import DEDUP_MIN

    filler = " ".join(f"line{i} of the same file" for i in range(DEDUP_MIN // 10))
    return f"{filler} {word} {filler}"


@pytest.mark.parametrize("parallel", [False, True])
def test_repeated_long_texts_are_indexed_once_and_all_found(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    """One full-text row per distinct long text; search still finds every entry holding it."""
    ar = Archive(home["agent"], seed=3)
    same = _long_output("quokkaunique")
    a = ar.new("/work/a")
    a.conversation(1)
    first = a.tool_result(same, tool="read")["id"]
    a.conversation(1)
    again = a.tool_result(same, tool="read")["id"]  # the same file read twice
    a.conversation(1)
    a.write()
    b = ar.new("/work/b")  # an unrelated session reading the same file
    b.conversation(1)
    other = b.tool_result(same, tool="read")["id"]
    b.write()
    clone = ar.fork(a, a.leaf)  # copies both reads
    clone.conversation(1)
    clone.write()
    for i in range(6):  # enough files for the parallel build
        extra = ar.new(f"/work/x{i}")
        extra.conversation(2)
        extra.write()
    if parallel:
        monkeypatch.setattr(index_limits, "PARALLEL_MIN_FILES", 2)
        monkeypatch.setattr(index_limits, "PARALLEL_MIN_BYTES", 1)
    env = home["env"]
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env, jobs=2 if parallel else 1)
    try:
        shards = index.shard_count()
        rows = sum(index.conn.execute(f"SELECT count(*) FROM s{k}.texts").fetchone()[0] for k in range(shards))
        shared = index.conn.execute("SELECT count(*) FROM entries WHERE tref IS NOT NULL").fetchone()[0]
        found = search(index, scope, SearchQuery("quokkaunique", limit=0))
    finally:
        index.close()
    # Five entries hold the text; each shard holding any of them indexes it once.
    assert 1 <= rows <= shards and shared == 5 - rows
    places = sorted((h["session"]["path"], h["entryId"], h["copied"]) for h in found.hits)
    assert places == sorted(
        [
            (str(a.path), first, False),
            (str(a.path), again, False),
            (str(b.path), other, False),
            (str(clone.path), first, True),
            (str(clone.path), again, True),
        ]
    )
    # The session whose entry owns the shared row goes: the others are still found.
    a.path.unlink()
    left = _search(env, "quokkaunique", limit=0)
    assert sorted((h["session"]["path"], h["entryId"]) for h in left.hits) == sorted(
        [(str(b.path), other), (str(clone.path), first), (str(clone.path), again)]
    )
    # Appended to a session: a repeated text there joins the existing row.
    start = len(b.entries)
    b.tool_result(same, tool="read")
    b.append(start)
    assert len(_search(env, "quokkaunique", limit=0).hits) == 4


def _rows(report: Any) -> list[tuple[Any, ...]]:
    return [
        (r.key, r.sums.input, r.sums.output, r.sums.cache_read, r.sums.cache_write, r.sums.records, r.sums.cost)
        for r in report.rows
    ]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu"])
def test_quarter_hour_sums_give_the_records_answer(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    """``usage`` reads usage_slots when that is exact: every report equals the one from the records."""
    from zoneinfo import ZoneInfo

    from pitools.ops import archive

    ar, w = _build(home["agent"])
    # Appended and deleted sessions keep the sums in step.
    start = len(w["clone"].entries)
    w["clone"].conversation(2)
    w["clone"].append(start)
    _usage(home["env"])
    w["twin_b"].path.unlink()
    tz = dt.UTC if zone == "UTC" else ZoneInfo(zone)
    used: list[str] = []
    real = archive._usage_source

    def spy(*a: Any, **kw: Any) -> Any:
        src = real(*a, **kw)
        used.append(src.table)
        return src

    cases: list[dict[str, Any]] = [
        {"by": by, "breakdown": True} for by in ("day", "week", "month", "model", "provider", "project", "session")
    ]
    cases += [{"by": "day", "since": "2026-02-01"}, {"by": "month", "until": "2026-02"}, {"by": "day", "since": "3d"}]
    cases += [{"by": "day", "project": "twins"}, {"by": "model", "session": str(w["clone"].path)}]
    covers = archive._covers_index
    whole: list[bool] = []
    for kw in cases:
        used.clear()
        whole.clear()
        monkeypatch.setattr(archive, "_usage_source", spy)
        monkeypatch.setattr(archive, "_covers_index", lambda *a: whole.append(covers(*a)) or whole[-1])
        fast = _usage(home["env"], tz=tz, tz_name=zone, **kw)
        monkeypatch.setattr(archive, "_usage_source", lambda *a, **k: archive._RECORDS)
        slow = _usage(home["env"], tz=tz, tz_name=zone, **kw)
        # The all-sessions sums serve reports over the whole archive without per-session rows.
        plain = not ({"project", "session"} & set(kw)) and kw["by"] not in ("project", "session")
        assert whole == ([True] if plain and kw.get("since") != "3d" else []), kw
        assert [r[:-1] for r in _rows(fast)] == [r[:-1] for r in _rows(slow)], kw
        assert all(_close(a[-1], b[-1]) for a, b in zip(_rows(fast), _rows(slow), strict=True)), kw
        assert (fast.totals.records, fast.sessions) == (slow.totals.records, slow.sessions)
        # Dates fall on quarter hours, so only "3d ago" needs the records.
        assert used == ["usage" if kw.get("since") == "3d" else "usage_slots"], kw
    _check_totals(_usage(home["env"]), ar.truth())


def test_session_keys_resolve_links_like_realpath(tmp_path: Path) -> None:
    """The index resolves each folder once; the key still equals realpath's for links and plain files."""
    from pitools.core.views.lineage import default_canonical
    from pitools.ops.index_limits import UpdateStats
    from pitools.ops.index_update import Updater

    real = tmp_path / "real"
    real.mkdir()
    (real / "a.jsonl").write_text("{}\n")
    (tmp_path / "elsewhere.jsonl").write_text("{}\n")
    (real / "link.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    (tmp_path / "linked").symlink_to(real)
    index = index_mod.ArchiveIndex(None)
    try:
        updater = Updater(index, UpdateStats(), None, 1)
        for path in [
            real / "a.jsonl",
            real / "link.jsonl",
            tmp_path / "linked" / "a.jsonl",
            tmp_path / "linked" / "link.jsonl",
            real / "missing.jsonl",
        ]:
            assert updater._pkey(str(path)) == default_canonical(str(path)), path
    finally:
        index.close()


@pytest.mark.parametrize("step", ["_lineage", "_slots"])
def test_an_update_stopped_half_way_is_finished_by_the_next(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """Files stored before a crash look indexed; the next run still refreshes lineage and sums."""
    from pitools.ops.index_update import Updater

    ar, _w = _build(home["agent"])
    env = home["env"]

    def crash(self: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Updater, step, crash)
    scope = archive_scope(env=env)
    with pytest.raises(KeyboardInterrupt):
        updated_index(scope, env=env)
    monkeypatch.undo()
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    index, stats = updated_index(scope, env=env)
    index.close()
    assert stats.unchanged == len(ar.present())  # nothing read again
    report = _usage(env, by="session")
    _check_totals(report, ar.truth())  # copied history once, sums complete
    index, _ = updated_index(scope, env=env)
    try:
        assert index.conn.execute("SELECT count(*) FROM meta WHERE key='pending'").fetchone()[0] == 0
    finally:
        index.close()


@pytest.mark.parametrize("per_file", [False, True], ids=["one-batch", "batch-per-file"])
def test_a_worker_failing_mid_build_leaves_nothing_half_indexed(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, per_file: bool
) -> None:
    """A worker stores a file's rows only after its search rows are committed: after a worker
    fails, every file that looks indexed is searchable, and the next run indexes the others."""
    import sqlite3

    from pitools.ops import index_update

    ar = Archive(home["agent"], seed=4)
    word_of: dict[str, str] = {}
    for i in range(10):
        s = ar.new(f"/work/w{i % 2}")
        s.conversation(2)
        s.user(f"wombat{i} marker")
        s.write()
        word_of[str(s.path)] = f"wombat{i}"
    monkeypatch.setattr(index_limits, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(index_limits, "PARALLEL_MIN_BYTES", 1)
    if per_file:  # each worker commits (search rows, then the other rows) after every file
        monkeypatch.setattr(index_update, "WORKER_COMMIT_BYTES", 1)
    real = index_update.insert_texts
    calls = [0]
    parent = os.getpid()

    def failing(*a: Any, **kw: Any) -> None:
        calls[0] += 1
        if calls[0] == 3 and os.getpid() != parent:  # in a worker: its shard's transaction is lost
            raise OSError("disk gone")
        real(*a, **kw)

    monkeypatch.setattr(index_update, "insert_texts", failing)
    env = home["env"]
    scope = archive_scope(env=env)
    index, stats = updated_index(scope, env=env, jobs=2)  # falls back to memory for this run
    index.close()
    assert stats.in_memory
    # What the failed run left on disk: files whose rows are committed, each with its search row.
    db = sqlite3.connect(home["cache"] / f"index-v{index_mod.SCHEMA_VERSION}.sqlite")
    try:
        stored = list(db.execute("SELECT sid, shard, path FROM sessions WHERE size IS NOT NULL"))
        for k in range(2):
            shard = home["cache"] / f"index-v{index_mod.SCHEMA_VERSION}.fts{k}.sqlite"
            db.execute("ATTACH DATABASE ? AS ?", (str(shard), f"s{k}"))
        for sid, shard, path in stored:
            query = f"SELECT rowid FROM s{shard}.fts WHERE fts MATCH ?"
            rows = [r[0] >> index_limits.ROWID_SHIFT for r in db.execute(query, (word_of[path],))]
            assert rows == [sid], path
    finally:
        db.close()
    # With a commit per file, a worker committed its first two files before it failed (the
    # other one may have been stopped earlier); with one batch, no file was committed.
    assert len(stored) >= 2 if per_file else stored == []
    monkeypatch.setattr(index_update, "insert_texts", real)
    index, stats = updated_index(scope, env=env, jobs=2)
    try:
        assert not stats.in_memory and stats.unchanged == len(stored)  # only committed files look indexed
        found = {h["session"]["path"] for h in search(index, scope, SearchQuery("marker", limit=0)).hits}
    finally:
        index.close()
    assert found == {str(w.path) for w in ar.present()}
    _check_totals(_usage(env), ar.truth())


def test_usage_sums_follow_small_changes_in_a_larger_archive(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One session appended to and one deleted among many: the sums are refreshed in place, exactly."""
    from pitools.ops import archive

    ar, w = _build(home["agent"])
    extras = []
    for i in range(14):
        extra = ar.new(f"/work/e{i % 3}")
        extra.conversation(3)
        extra.write()
        extras.append(extra)
    env = home["env"]
    _usage(env)
    start = len(w["clone"].entries)
    w["clone"].conversation(3)  # the grandchild below it is rechecked too
    w["clone"].usage_entry()
    w["clone"].append(start)
    extras[5].path.unlink()
    for by in ("day", "model", "month"):
        fast = _usage(env, by=by, tz=dt.UTC, tz_name="UTC")
        monkeypatch.setattr(archive, "_usage_source", lambda *a, **k: archive._RECORDS)
        slow = _usage(env, by=by, tz=dt.UTC, tz_name="UTC")
        monkeypatch.undo()
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert [r[:-1] for r in _rows(fast)] == [r[:-1] for r in _rows(slow)], by
        assert all(_close(a[-1], b[-1]) for a, b in zip(_rows(fast), _rows(slow), strict=True)), by
    _check_totals(_usage(env), ar.truth())
    # The refreshed all-sessions sums equal sums made from scratch.
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env)
    try:
        conn = index.conn
        kept = sorted(conn.execute("SELECT q, provider, model, copied, input, output, n FROM usage_glob"))
        fresh = sorted(
            conn.execute(
                "SELECT q, provider, model, copied, sum(input), sum(output), sum(n) FROM usage_slots "
                "GROUP BY q, provider, model, copied"
            )
        )
    finally:
        index.close()
    assert kept == fresh


def _stored_sums_are_exact(env: dict[str, str]) -> None:
    """``usage_slots`` equals sums made from scratch over ``usage``, ``usage_glob`` over the slots."""
    from pitools.ops.index_update import SLOT_GROUPS, SLOT_SELECT

    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env)
    try:
        conn = index.conn
        slots = sorted(conn.execute("SELECT * FROM usage_slots"), key=repr)
        fresh = sorted(conn.execute(f"{SLOT_SELECT} {SLOT_GROUPS}"), key=repr)
        glob = sorted(conn.execute("SELECT * FROM usage_glob"), key=repr)
        fresh_glob = sorted(
            conn.execute(
                "SELECT q, provider, model, copied, sum(input), sum(output), sum(cache_read), sum(cache_write), "
                "sum(cost), sum(n) FROM usage_slots GROUP BY q, provider, model, copied"
            ),
            key=repr,
        )
    finally:
        index.close()
    assert slots == fresh and slots
    assert glob == fresh_glob


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_sums_stored_with_each_file_stay_exact_across_updates(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    """A file's quarter-hour sums are written with its rows; the end of an update adds them to the
    all-sessions sums and re-sums only the sessions whose copied flags moved."""
    if parallel:
        monkeypatch.setattr(index_limits, "PARALLEL_MIN_FILES", 2)
        monkeypatch.setattr(index_limits, "PARALLEL_MIN_BYTES", 1)
    ar, w = _build(home["agent"])
    extras = []
    for i in range(12):
        extra = ar.new(f"/work/s{i % 3}")
        extra.conversation(3)
        extra.write()
        extras.append(extra)
    env = home["env"]
    _stored_sums_are_exact(env)  # cold build (forks' flags set after their sums were stored)
    _check_totals(_usage(env), ar.truth())
    # One new fork among many: the all-sessions sums take it in incrementally.
    fork = ar.fork(w["parent"], w["parent"].entries[5]["id"])
    fork.conversation(2)
    fork.write()
    _stored_sums_are_exact(env)
    _check_totals(_usage(env), ar.truth())
    # An append (with a usage entry), a rewrite and a deletion.
    start = len(extras[1].entries)
    extras[1].conversation(2)
    extras[1].usage_entry()
    extras[1].append(start)
    extras[2].conversation(1)
    extras[2].write()
    extras[3].path.unlink()
    _stored_sums_are_exact(env)
    _check_totals(_usage(env), ar.truth())
