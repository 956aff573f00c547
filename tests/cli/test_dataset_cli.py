"""``pitools dataset`` on a generated archive: DuckDB totals equal Pi's stats (forks counted once),
the documented tables and columns, incremental runs, partitions, JSONL, hostile project names.

Expected totals come from Pi's getSessionStats rules (``core/views/stats.py``, checked against
Pi 1.6.0 by the golden suite) over each session's entries, with the entries a fork or clone
copied from an ancestor (``core/views/lineage.py``) left out, so each model call counts once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support import load_script

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"
EXAMPLES = ROOT / "docs" / "duckdb-examples.sql"
Run = Callable[..., Result]

CASES = ["gen-s0000_v3", "gen-s0022_v3", "gen-s0037_v3", "gen-s0006_v2", "seed-running-example", "gen-s0010_v1"]


def _values(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _append_turn(path: Path, n: int) -> None:
    """Append a user prompt and a paid assistant reply to the session's last entry."""
    last = _values(path)[-1]["id"]
    lines = []
    for i in range(n):
        uid, aid = f"u{n}x{i:04d}", f"a{n}x{i:04d}"
        lines.append(
            {
                "type": "message",
                "id": uid,
                "parentId": last,
                "timestamp": f"2026-03-0{1 + i % 9}T10:00:0{i % 10}.000Z",
                "message": {"role": "user", "content": "more", "timestamp": 1772359200000},
            }
        )
        lines.append(
            {
                "type": "message",
                "id": aid,
                "parentId": uid,
                "timestamp": f"2026-03-0{1 + i % 9}T10:00:0{i % 10}.500Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "done"}],
                    "provider": "anthropic",
                    "model": "claude-x",
                    "api": "anthropic-messages",
                    "stopReason": "stop",
                    "usage": {
                        "input": 100 + i,
                        "output": 7,
                        "cacheRead": 1000,
                        "cacheWrite": 3,
                        "totalTokens": 1110 + i,
                        "cost": {"input": 0.1, "output": 0.01, "cacheRead": 0.001, "cacheWrite": 0.0, "total": 0.111},
                    },
                    "timestamp": 1772359200000,
                },
            }
        )
        last = aid
    with path.open("ab") as fh:
        for line in lines:
            fh.write(json.dumps(line).encode() + b"\n")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Golden sessions, a generated long session, and real forks and clones (with own turns)."""
    from click.testing import CliRunner

    from tests.support import PITOOLS

    root = tmp_path_factory.mktemp("archive")
    proj = root / "sessions" / "--home-dev-proj--"
    other = root / "sessions" / "--home-dev-other--"
    proj.mkdir(parents=True)
    other.mkdir(parents=True)
    for case in CASES:
        shutil.copyfile(GOLDEN / case / "session.jsonl", proj / f"{case}.jsonl")
    gen_big = load_script("gen_big")
    (other / "big.jsonl").write_bytes(gen_big.generate(0.3, 7))

    def cli_ok(*args: str) -> None:
        result = CliRunner().invoke(PITOOLS, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output

    src = proj / "gen-s0000_v3.jsonl"
    users = [e for e in _values(src)[1:] if e["type"] == "message" and e["message"]["role"] == "user"]
    cli_ok("fork", str(src), "--at", users[5]["id"], "-o", str(proj / "fork1.jsonl"))
    _append_turn(proj / "fork1.jsonl", 3)
    cli_ok("clone", str(proj / "fork1.jsonl"), "-o", str(proj / "clone-of-fork1.jsonl"))
    _append_turn(proj / "clone-of-fork1.jsonl", 2)
    cli_ok("clone", str(other / "big.jsonl"), "-o", str(other / "big-clone.jsonl"))
    # Not a session: skipped with a warning.
    (proj / "notes.jsonl").write_text('{"hello": "world"}\n')
    return root / "sessions"


def _expected(archive: Path) -> dict[str, Any]:
    """Σ over sessions of Pi's getSessionStats totals, copied fork history left out (and not)."""
    from pitools.core.session.load import load
    from pitools.core.views import lineage
    from pitools.core.views.stats import session_stats

    sessions = {}
    for path in sorted(archive.rglob("*.jsonl")):
        s = load(path, strict=False).session
        if s.valid:
            sessions[lineage.default_canonical(str(path))] = s
    refs = [
        lineage.SessionRef(k, s.header["id"], s.header.get("parentSession"), os.path.dirname(k))
        for k, s in sessions.items()
    ]
    parents = lineage.resolve_parents(refs)
    entries = {k: s.entries for k, s in sessions.items()}
    own = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0, "cost": 0.0}
    every = dict(own)
    copied_total = 0
    for k, s in sessions.items():
        copied = lineage.copied_entry_ids(k, entries, parents)
        copied_total += len(copied)
        for target, chosen in (
            (own, [e for e in s.entries if not (isinstance(e, dict) and e.get("id") in copied)]),
            (every, s.entries),
        ):
            t = session_stats(chosen, strict=False).totals
            target["input"] += t.input
            target["output"] += t.output
            target["cacheRead"] += t.cache_read
            target["cacheWrite"] += t.cache_write
            target["total"] += t.tokens
            target["cost"] += t.cost
    return {"own": own, "every": every, "sessions": len(sessions), "copied": copied_total}


def _queries(outdir: Path) -> dict[str, str]:
    text = EXAMPLES.read_text().replace("'pi-dataset/", f"'{outdir.as_posix()}/")
    prelude, *named = re.split(r"^-- name: ", text, flags=re.M)
    out = {"_prelude": prelude}
    for block in named:
        name, _, sql = block.partition("\n")
        out[name.strip()] = sql
    return out


def _run_examples(outdir: Path) -> dict[str, list[tuple[Any, ...]]]:
    queries = _queries(outdir)
    con = duckdb.connect()
    con.execute(queries.pop("_prelude"))
    return {name: con.execute(sql).fetchall() for name, sql in queries.items()}


@pytest.fixture(scope="module")
def dataset(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from tests.support import PITOOLS

    out = tmp_path_factory.mktemp("ds") / "pi-dataset"
    result = CliRunner().invoke(PITOOLS, ["dataset", str(archive), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 1, result.output  # notes.jsonl is skipped
    assert "notes.jsonl: skipped: not a Pi session" in result.stderr
    return out


def test_duckdb_totals_equal_pi_stats_with_forks_counted_once(archive: Path, dataset: Path) -> None:
    expected = _expected(archive)
    assert expected["copied"] > 0  # the archive really has copied history
    results = _run_examples(dataset)
    ((i, o, cr, cw, total, cost),) = results["totals"]
    own = expected["own"]
    assert (i, o, cr, cw, total) == (own["input"], own["output"], own["cacheRead"], own["cacheWrite"], own["total"])
    assert cost == pytest.approx(own["cost"], rel=1e-9)
    # Without the WHERE, each fork's copied history is counted again: Pi's per-session stats summed.
    con = duckdb.connect()
    every = con.execute(
        f"SELECT sum(total_tokens), sum(cost) FROM read_parquet('{dataset.as_posix()}/usage/**/*.parquet')"
    ).fetchone()
    assert every[0] == expected["every"]["total"] > own["total"]
    assert every[1] == pytest.approx(expected["every"]["cost"], rel=1e-9)
    sessions = con.execute(
        f"SELECT count(*), sum(own_total_tokens) FROM read_parquet('{dataset.as_posix()}/sessions/**/*.parquet')"
    ).fetchone()
    assert sessions == (expected["sessions"], own["total"])


def test_every_example_query_runs_and_answers(dataset: Path) -> None:
    results = _run_examples(dataset)
    assert set(results) == {
        "totals",
        "cost_by_model_per_month",
        "longest_sessions",
        "most_failing_tools",
        "context_before_compaction",
        "fork_families",
    }
    for name, rows in results.items():
        assert rows, name
    by_month_cost = sum(r[5] for r in results["cost_by_model_per_month"])
    assert by_month_cost == pytest.approx(results["totals"][0][5], abs=1e-3)
    assert any(r[2] > 0 for r in results["most_failing_tools"])
    assert all(r[4] is not None and r[4] > 0 for r in results["context_before_compaction"])
    families = results["fork_families"]
    assert max(r[1] for r in families) == 3  # gen-s0000 → fork1 → clone-of-fork1


def test_tables_have_the_documented_columns(dataset: Path) -> None:
    from pitools.core.datasets.tables import TABLES

    arrow = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    for table, columns in TABLES.items():
        files = sorted((dataset / table).rglob("*.parquet"))
        assert files, table
        schema = pq.read_schema(files[0])
        assert schema.names == [c.name for c in columns]
        for col in columns:
            got = schema.field(col.name).type
            if col.type == "timestamp":
                assert pa.types.is_timestamp(got) and got.tz == "UTC"
            else:
                assert got == arrow[col.type], (table, col.name)


def test_entry_flags_match_the_core(archive: Path, dataset: Path) -> None:
    """Default branch, context and compacted flags agree with Pi's path and context replay."""
    from pitools.core.context.build import context_entries_from_path
    from pitools.core.session.load import load
    from pitools.core.views import lineage

    path = archive / "--home-dev-proj--" / "gen-s0022_v3.jsonl"
    key = lineage.default_canonical(str(path))
    loaded = load(str(path))
    branch = loaded.index.session_path(loaded.index.leaf_id)
    ctx = {e["id"] for e in context_entries_from_path(branch)}
    on = {e["id"] for e in branch}
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT entry_id, on_default_branch, in_context, compacted, line FROM "
        f"read_parquet('{dataset.as_posix()}/entries/**/*.parquet') WHERE session_key = ? ORDER BY line",
        [key],
    ).fetchall()
    assert len(rows) == len(loaded.session.entries)
    assert {r[0] for r in rows if r[1]} == on
    assert {r[0] for r in rows if r[2]} == ctx
    assert {r[0] for r in rows if r[3]} == on - ctx
    assert [r[4] for r in rows] == loaded.session.lines


def test_incremental_rewrites_only_what_changed(archive: Path, tmp_path: Path, run: Run) -> None:
    work = tmp_path / "sessions"
    shutil.copytree(archive, work)
    (work / "--home-dev-proj--" / "notes.jsonl").unlink()
    out = tmp_path / "ds"
    first = run("dataset", str(work), "-o", str(out))
    n = int(re.search(r"(\d+) written", first.stderr).group(1))  # type: ignore[union-attr]
    again = run("dataset", str(work), "-o", str(out))
    assert f"{n:,} sessions in" in again.stderr and "0 written" in again.stderr and f"{n} unchanged" in again.stderr
    # Touched but identical: the SHA-256 says unchanged.
    big = work / "--home-dev-other--" / "big.jsonl"
    os.utime(big, ns=(1, 1))
    assert "0 written" in run("dataset", str(work), "-o", str(out)).stderr
    # A parent gains a turn: it and its descendants are rewritten (their copied flags may change).
    _append_turn(work / "--home-dev-proj--" / "fork1.jsonl", 1)
    assert "2 written" in run("dataset", str(work), "-o", str(out)).stderr
    # A session disappears: its files go.
    manifest = json.loads((out / "_pitools_dataset.json").read_text())
    key = str((work / "--home-dev-other--" / "big-clone.jsonl").resolve())
    files = manifest["sessions"][key]["files"]
    assert all((out / f).exists() for f in files)
    (work / "--home-dev-other--" / "big-clone.jsonl").unlink()
    assert "1 removed" in run("dataset", str(work), "-o", str(out)).stderr
    assert not any((out / f).exists() for f in files)
    # Same totals as a fresh build of the same inputs.
    fresh = tmp_path / "fresh"
    run("dataset", str(work), "-o", str(fresh))
    (a,), (b,) = _run_examples(out)["totals"], _run_examples(fresh)["totals"]
    assert a[:5] == b[:5] and a[5] == pytest.approx(b[5], rel=1e-12)


@pytest.mark.slow
def test_partitions_and_jsonl(archive: Path, tmp_path: Path, run: Run) -> None:
    by_day = tmp_path / "by-day"
    run("dataset", str(archive), "-o", str(by_day), "--partition-by", "day", exit_code=1)
    days = {p.name for p in (by_day / "usage").iterdir()}
    assert days and all(re.fullmatch(r"day=\d{4}-\d{2}-\d{2}", d) for d in days)
    by_project = tmp_path / "by-project"
    run("dataset", str(archive), "-o", str(by_project), "--partition-by", "project", exit_code=1)
    projects = {p.name for p in (by_project / "sessions").iterdir()}
    assert {"project_dir=proj", "project_dir=repo", "project_dir=x%20y"} <= projects  # cwd /..../x y
    as_jsonl = tmp_path / "jsonl"
    run("dataset", str(archive), "-o", str(as_jsonl), "--format", "jsonl", exit_code=1)
    totals = {d: _run_examples(d)["totals"] for d in (by_day, by_project)}
    assert totals[by_day][0][:5] == totals[by_project][0][:5]
    con = duckdb.connect()
    jsonl_total = con.execute(
        f"SELECT sum(total_tokens) FROM read_json_auto('{as_jsonl.as_posix()}/usage/*.jsonl') WHERE NOT copied"
    ).fetchone()[0]
    assert jsonl_total == totals[by_day][0][4]
    # Changing the layout removes the old files.
    run("dataset", str(archive), "-o", str(by_day), exit_code=1)
    assert not any(p.name.startswith("day=") for p in (by_day / "usage").iterdir())


def test_hostile_cwd_stays_inside_outdir(tmp_path: Path, run: Run) -> None:
    src = tmp_path / "in"
    src.mkdir()
    header = {"type": "session", "version": 3, "id": "h1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/x/../.."}
    text = json.dumps(header) + "\n"
    (src / "a.jsonl").write_text(text)
    header2 = {**header, "id": "h2", "cwd": "/tmp/../../etc/passwd\x00/ü"}
    (src / "b.jsonl").write_text(json.dumps(header2) + "\n")
    out = tmp_path / "out"
    run("dataset", str(src), "-o", str(out), "--partition-by", "project")
    made = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert made and all(p.split("/")[1].startswith("project_dir=") for p in made)
    assert all(".." not in p.split("/") for p in made)
    assert {p.split("/")[1] for p in made} == {"project_dir=%2E%2E", "project_dir=%C3%BC"}


def test_row_batches_stream(archive: Path, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    import pitools.ops.dataset as ops

    monkeypatch.setattr(ops, "BATCH_ROWS", 64)
    out = tmp_path / "small-batches"
    run("dataset", str(archive / "--home-dev-other--"), "-o", str(out))
    files = [pq.ParquetFile(p).metadata for p in (out / "entries").glob("*.parquet")]
    biggest = max(files, key=lambda m: m.num_rows)
    assert biggest.num_rows > 64 and biggest.num_row_groups == -(-biggest.num_rows // 64)


def test_missing_pyarrow_is_one_line(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name.startswith("pyarrow"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # type: ignore[arg-type]
    result = run("dataset", str(GOLDEN / "seed-running-example"), "-o", str(tmp_path / "o"), exit_code=1)
    assert (
        result.stderr
        == "pitools: Parquet output needs pyarrow: pip install 'pi-session-tools[dataset]' (or use --format jsonl)\n"
    )


def test_duckdb_totals_equal_pitools_usage_json(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive generator of the index tests (true totals known by construction) → dataset →
    DuckDB: the same totals as `pitools usage --format json`, and as the generator's truth."""
    from tests.archive_gen import Archive, private_pi_env

    private_pi_env(tmp_path, monkeypatch)
    ar = Archive(tmp_path / "agent", seed=18)
    parent = ar.new("/work/app")
    parent.conversation(4)
    parent.tool_result("sub-agent ran", tool="subagent", with_usage=True)
    parent.usage_entry()
    parent.compaction(first_kept=parent.assistant()["id"])
    parent.conversation(2)
    fork_point = parent.leaf
    parent.branch_from(parent.entries[0]["id"])
    abandoned = parent.assistant()["id"]
    parent.branch_from(fork_point)
    parent.branch_summary(from_id=abandoned)
    parent.conversation(1)
    parent.write()
    clone = ar.fork(parent, fork_point)
    clone.conversation(2)
    clone.write()
    grandchild = ar.fork(clone, clone.leaf, cwd="/work/other")  # type: ignore[arg-type]
    grandchild.conversation(1)
    grandchild.write()
    other = ar.new("/work/twins")
    other.conversation(3)
    other.write()

    usage = json.loads(run("usage", "--format", "json", "--by", "session").stdout)["totals"]
    out = tmp_path / "pi-dataset"
    run("dataset", str(ar.sessions_root), "-o", str(out))
    ((i, o, cr, cw, total, cost),) = _run_examples(out)["totals"]
    assert (i, o, cr, cw, total) == (
        usage["input"],
        usage["output"],
        usage["cacheRead"],
        usage["cacheWrite"],
        usage["totalTokens"],
    )
    assert cost == pytest.approx(usage["cost"], rel=1e-9)
    truth = ar.truth()
    assert (i, o, cost) == (truth["input"], truth["output"], pytest.approx(truth["cost"], rel=1e-9))
    records = (
        duckdb.connect()
        .execute(f"SELECT count(*) FROM read_parquet('{out.as_posix()}/usage/**/*.parquet') WHERE NOT copied")
        .fetchone()[0]
    )
    assert records == usage["records"] == truth["records"]


def test_outdir_inside_the_input_folder_is_not_read_back(tmp_path: Path, run: Run) -> None:
    src = tmp_path / "sessions"
    src.mkdir()
    shutil.copyfile(GOLDEN / "seed-running-example" / "session.jsonl", src / "a.jsonl")
    out = src / "tables"
    run("dataset", str(src), "-o", str(out), "--format", "jsonl")
    again = run("dataset", str(src), "-o", str(out), "--format", "jsonl")
    assert "1 session in" in again.stderr and "0 skipped" in again.stderr
    rows = [json.loads(line) for line in (out / "messages").glob("*.jsonl").__next__().read_text().splitlines()]
    assert rows[0]["timestamp"] == "2026-07-29T09:00:01.000Z" and rows[0]["role"] == "user"


def test_hostile_file_names_are_not_printed_raw(tmp_path: Path, run: Run) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "evil\x1b[31m.jsonl").write_text('{"not": "a session"}\n')
    result = run("dataset", str(src), "-o", str(tmp_path / "o"), "--format", "jsonl", exit_code=1)
    assert "\x1b" not in result.stderr and "evil\\x1b[31m.jsonl: skipped" in result.stderr


@pytest.mark.slow
def test_worker_processes_write_the_same_tables(archive: Path, tmp_path: Path, run: Run) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    run("dataset", str(archive), "-o", str(one), "-j", "1", exit_code=1)
    run("dataset", str(archive), "-o", str(two), "-j", "2", exit_code=1)
    con = duckdb.connect()
    for table in ("sessions", "entries", "messages", "tool_calls", "compactions", "usage"):
        query = "SELECT * FROM read_parquet('{}/" + table + "/*.parquet') ORDER BY ALL"
        assert (
            con.execute(query.format(one.as_posix())).fetchall() == con.execute(query.format(two.as_posix())).fetchall()
        )
    manifest = [json.loads((d / "_pitools_dataset.json").read_text())["sessions"] for d in (one, two)]
    assert manifest[0] == manifest[1]
