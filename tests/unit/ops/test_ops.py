"""The effectful use cases in pitools/ops: each reads through core and writes only through store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pitools.core.session.fork import clone_session
from pitools.core.session.load import load
from pitools.errors import PitoolsError, SessionChangedError
from pitools.ops import listing as ops_listing
from pitools.ops import migrate as ops_migrate
from pitools.ops import newsession
from tests.support import golden_session


def test_migration_plan_stamps_first_and_refuses_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(golden_session("gen-s0002_v1").read_bytes())
    plan = ops_migrate.plan_migration(str(path), in_place=True)
    assert plan.needed and plan.before is not None
    with open(path, "ab") as fh:  # someone writes after pitools read it
        fh.write(b"\n")
    with pytest.raises(SessionChangedError):
        ops_migrate.write_in_place(plan, backup=False)
    fresh = ops_migrate.plan_migration(str(path), in_place=True)
    assert ops_migrate.write_in_place(fresh, backup=False) is None
    assert not ops_migrate.plan_migration(str(path)).needed


def test_migration_copy_never_replaces(tmp_path: Path) -> None:
    plan = ops_migrate.plan_migration(str(golden_session("gen-s0002_v1")))
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"mine\n")
    with pytest.raises(PitoolsError, match="already exists"):
        ops_migrate.write_copy(plan, str(out))
    assert out.read_bytes() == b"mine\n"


def test_new_session_goes_next_to_the_source_and_never_creates_session_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    source = tmp_path / "src" / "s.jsonl"
    source.parent.mkdir()
    source.write_bytes(golden_session("seed-running-example").read_bytes())
    loaded = load(source)
    new = clone_session(loaded, loaded.index.leaf_id)
    written = newsession.write_where_pi_would(new, str(source), None)
    assert Path(written).parent == source.parent
    missing = tmp_path / "configured-but-missing"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(missing))
    with pytest.raises(PitoolsError, match="does not create session folders"):
        newsession.write_where_pi_would(clone_session(loaded, loaded.index.leaf_id), str(source), None)
    assert not missing.exists()


def test_ls_index_writes_only_its_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ls`` keeps its summaries in the archive index: files appear in the cache folder only,
    and the sessions it read are untouched (bytes and mtime)."""
    agent = tmp_path / "agent"
    folder = agent / "sessions" / "--work--"
    folder.mkdir(parents=True)
    session = folder / "s.jsonl"
    session.write_bytes(golden_session("seed-running-example").read_bytes())
    os.utime(session, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    cache = tmp_path / "cache"
    env = {"HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent), "PITOOLS_CACHE_DIR": str(cache)}
    monkeypatch.chdir(tmp_path)
    listing = ops_listing.list_sessions(env=env, all_=True)
    assert [s["path"] for s in listing.sessions] == [str(session)]
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    assert {p for p in after if p not in before} <= {cache, *cache.iterdir()}
    assert session.read_bytes() == golden_session("seed-running-example").read_bytes()
    assert after[session] == before[session] and after[folder] == before[folder]
    # A cache folder that cannot be created costs only speed: the index lives in memory.
    (tmp_path / "blocker").write_text("a file where the cache folder should be")
    warnings: list[str] = []
    blocked = dict(env, PITOOLS_CACHE_DIR=str(tmp_path / "blocker" / "cache"))
    again = ops_listing.list_sessions(env=blocked, all_=True, warn=warnings.append)
    assert again.sessions == listing.sessions and any("in memory" in w for w in warnings)
