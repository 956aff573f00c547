"""``pitools index``, ``search`` and ``usage`` on a generated archive: JSON schemas, formats, exit codes."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.archive_gen import Archive, archive_in

ROOT = Path(__file__).resolve().parents[2]
Run = Callable[..., Result]


def _schema(name: str) -> Any:
    return json.loads((ROOT / "schemas" / "output" / f"{name}.schema.json").read_text())


def _validate(name: str, data: Any) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(_schema(name), format_checker=jsonschema.FormatChecker()).validate(data)


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Archive:
    ar = archive_in(tmp_path, monkeypatch, seed=3)
    p = ar.new("/work/app")
    p.conversation(2)
    p.user("hostile \x1b[31mred\x1b[0m \u202eevil text")
    p.assistant("the otter answer")
    p.write()
    c = ar.fork(p, p.leaf)  # type: ignore[arg-type]
    c.conversation(1)
    c.write()
    return ar


def test_index_json(run: Run, archive: Archive) -> None:
    data = json.loads(run("index", "--format", "json").stdout)
    _validate("index", data)
    assert data["update"]["added"] == 2 and data["sessions"] == 2 and data["fts"] is True
    again = json.loads(run("index", "--format", "json").stdout)
    assert again["update"]["unchanged"] == 2 and again["update"]["added"] == 0
    rebuilt = run("index", "--rebuild", "--format", "json")
    assert json.loads(rebuilt.stdout)["update"]["added"] == 2
    assert json.loads(rebuilt.stdout)["update"]["inMemory"] is False and rebuilt.stderr == ""
    assert "2 session files" in run("index").stdout
    run("index", "--all", "--session-dir", "x", exit_code=2)


def test_usage_formats(run: Run, archive: Archive) -> None:
    truth = archive.truth()
    data = json.loads(run("usage", "--by", "model", "--breakdown", "--format", "json").stdout)
    _validate("usage", data)
    assert data["totals"]["records"] == truth["records"]
    assert abs(data["totals"]["cost"] - truth["cost"]) < 1e-9
    assert data["copiedHistory"]["records"] > 0
    for by in ("day", "week", "month", "provider", "project", "session"):
        _validate("usage", json.loads(run("usage", "--by", by, "--format", "json").stdout))
    rows = list(csv.reader(io.StringIO(run("usage", "--by", "day", "--format", "csv").stdout)))
    assert rows[0] == ["key", "input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "records"]
    assert rows[-1][0] == "total" and int(rows[-1][-1]) == truth["records"]
    human = run("usage", "--by", "day", "--timezone", "Europe/Paris").stdout
    assert "total" in human and "█" in human and "Europe/Paris" in human
    assert "\n2 sessions; times in Europe/Paris" in human
    one = run("usage", "--session", str(archive.writers[0].path)).stdout
    assert "\n1 session; times in" in one
    run("usage", "--since", "not a date", exit_code=2)  # a usage error: issue 28
    run("usage", "--timezone", "Mars/Olympus", exit_code=2)
    run("usage", "--by", "year", exit_code=2)


def test_usage_by_session_shows_a_fork_without_usage_of_its_own(run: Run, archive: Archive) -> None:
    parent, clone = archive.writers[0], archive.writers[1]
    bare = archive.fork(clone, clone.leaf)  # type: ignore[arg-type]  # cloned, nothing added
    bare.write()
    data = json.loads(run("usage", "--by", "session", "--format", "json").stdout)
    _validate("usage", data)
    rows = {r["key"]: r for r in data["rows"]}
    assert set(rows) == {str(parent.path), str(clone.path), str(bare.path)}
    row = rows[str(bare.path)]
    assert (row["records"], row["cost"], row["copied"]["records"]) == (0, 0, len(bare.origins))
    assert rows[str(parent.path)]["copied"]["records"] == 0
    assert data["sessions"] == 2 and data["totals"]["records"] == archive.truth()["records"]
    human = run("usage", "--by", "session").stdout
    header, *lines = human.splitlines()
    assert header.split()[-2:] == ["cost", "copied"]
    bare_line = next(line for line in lines if line.startswith(bare.header["id"][:8]))
    assert bare_line.split()[-2:] == ["$0.00", f"${row['copied']['cost']:.2f}"]
    assert "\n3 sessions, 2 with usage of their own; times in" in human
    table = list(csv.reader(io.StringIO(run("usage", "--by", "session", "--format", "csv").stdout)))
    assert table[0][-1] == "copiedCost" and table[-1][0] == "total"
    assert float(table[-1][-1]) == pytest.approx(data["copiedHistory"]["cost"])


def test_search_json_and_safe_human_output(run: Run, archive: Archive) -> None:
    data = json.loads(run("search", "otter answer", "--format", "json").stdout)
    _validate("search", data)
    assert data["count"] == 2  # in the parent and, copied, in the clone
    assert {h["copied"] for h in data["hits"]} == {True, False}
    for hit in data["hits"]:
        # The one command that resumes the hit in Pi: the file itself when the hit is its
        # default leaf, else the branch ending at the hit, cloned first.
        path, eid = hit["session"]["path"], hit["entryId"]
        at_leaf = hit["onCurrentBranch"] and hit["leaves"] == [eid]
        assert hit["commands"][1] == (
            f"pi --session {path}" if at_leaf else f'pi --session "$(pitools clone {path} --leaf {eid})"'
        )
        a, b = hit["highlights"][0]
        assert hit["snippet"][a:b].lower() == "otter"
    out = run("search", "hostile").stdout
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[31mred" in out
    raw = json.loads(run("search", "hostile", "--format", "json").stdout)
    assert "\x1b[31m" in raw["hits"][0]["snippet"]  # JSON keeps the text as it is
    assert json.loads(run("search", "nothing-like-this", "--format", "json").stdout)["hits"] == []
    run("search", "(", "--regex", exit_code=1)
    run("search", "x", "--role", "wizard", exit_code=2)


def test_ls_totals_row(run: Run, archive: Archive) -> None:
    data = json.loads(run("ls", "--all", "--format", "json").stdout)
    _validate("ls", data)
    truth = archive.truth()
    assert abs(data["totals"]["cost"] - truth["cost"]) < 1e-9
    assert data["totals"]["copiedCost"] > 0
    assert abs(sum(s["cost"] for s in data["sessions"]) - truth["cost"] - data["totals"]["copiedCost"]) < 1e-9
    human = run("ls", "--all").stdout
    assert "total" in human and "2 sessions" in human
    assert "totals" not in json.loads(run("ls", "--all", "--no-cache", "--format", "json").stdout)


def test_ls_totals_follow_the_selection(run: Run, archive: Archive) -> None:
    everything = json.loads(run("ls", "--all", "--format", "json").stdout)
    one = json.loads(run("ls", "--all", "--limit", "1", "--format", "json").stdout)
    _validate("ls", one)
    assert one["count"] == 1 and one["totals"]["sessions"] == 1
    assert one["totals"]["entryCount"] == one["sessions"][0]["entryCount"]
    assert one["totals"]["cost"] <= everything["totals"]["cost"]


def test_usage_says_local_time_in_words(run: Run, archive: Archive) -> None:
    # Without TZ the zone is the machine's: "times in local time", never "times in local".
    human = run("usage", "--by", "day", env={"TZ": None}).stdout
    assert "; times in local time" in human


def test_a_search_without_hits_exits_0(run: Run, archive: Archive) -> None:
    # Documented choice (README, --help): no hit is a search that ran; 1 is for one that could not.
    data = json.loads(run("search", "zzqqxxnothing", "--format", "json").stdout)
    assert data["hits"] == [] and data["count"] == 0
    run("search", "zzqqxxnothing")
    assert "No hit still" in run("search", "--help").stdout.replace("\n    ", " ")
