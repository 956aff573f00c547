"""``pitools repair`` and ``pitools slim`` on the command line: outputs, schemas, exit codes, writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from pitools import store
from tests.cli.conftest import Run

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"
REPAIR_SCHEMA = json.loads((ROOT / "schemas" / "output" / "repair.schema.json").read_text())
SLIM_SCHEMA = json.loads((ROOT / "schemas" / "output" / "slim.schema.json").read_text())


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    target = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDEN / "repair-torn-fused" / "session.jsonl", target)
    return target


@pytest.mark.parametrize("case", ["repair-fused", "repair-orphan", "repair-no-header", "seed-running-example"])
def test_repair_json_matches_schema(run: Run, case: str) -> None:
    result = run("repair", GOLDEN / case / "session.jsonl", "--dry-run", "--format", "json", exit_code=None)
    data = json.loads(result.stdout)
    jsonschema.validate(data, REPAIR_SCHEMA)
    assert result.exit_code == (0 if data["healthy"] else 1)


def test_repair_dry_run_writes_nothing(run: Run, damaged: Path) -> None:
    before = damaged.read_bytes()
    result = run("repair", damaged, "--dry-run", exit_code=1)  # an orphan remains
    assert "malformed-json (split)" in result.stdout and "dry run: nothing written" in result.stdout
    assert damaged.read_bytes() == before
    assert list(damaged.parent.iterdir()) == [damaged]


def test_repair_in_place_with_backup(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDEN / "repair-crlf" / "session.jsonl", target)
    before = target.read_bytes()
    result = run("repair", target, "--in-place", "--format", "json")
    data = json.loads(result.stdout)
    assert data["healthy"] and data["written"] == str(target)
    assert target.read_bytes() == (GOLDEN / "repair-crlf" / "repaired.jsonl").read_bytes()
    assert Path(data["backup"]).read_bytes() == before
    # A second run finds nothing to do.
    again = json.loads(run("repair", target, "--dry-run", "--format", "json").stdout)
    assert again["fixes"] == [] and again["remaining"] == []


def test_repair_output_and_stdout(run: Run, tmp_path: Path) -> None:
    src = GOLDEN / "repair-bom" / "session.jsonl"
    out = tmp_path / "fixed.jsonl"
    run("repair", src, "-o", out)
    assert out.read_bytes() == (GOLDEN / "repair-bom" / "repaired.jsonl").read_bytes()
    result = run("repair", src, "-o", "-")
    assert result.stdout_bytes == out.read_bytes()
    assert "utf8-bom" in result.stderr
    run("repair", src, "-o", out, exit_code=1)  # never overwrites an existing file


def test_repair_no_header_needs_cwd(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDEN / "repair-no-header" / "session.jsonl", target)
    result = run("repair", target, "--dry-run", exit_code=1)
    assert "--cwd" in result.stdout
    result = run("repair", target, "--cwd", "/work/proj", "-o", tmp_path / "out.jsonl")
    header = json.loads((tmp_path / "out.jsonl").read_bytes().split(b"\n")[0])
    assert header["cwd"] == "/work/proj" and header["type"] == "session"


def test_repair_reattach_is_healthy(run: Run) -> None:
    src = GOLDEN / "repair-orphan" / "session.jsonl"
    run("repair", src, "--dry-run", exit_code=1)
    data = json.loads(run("repair", src, "--dry-run", "--reattach", "--format", "json").stdout)
    assert data["healthy"] and "reattached" in [f["action"] for f in data["fixes"]]


def test_repair_refuses_when_the_file_changed(run: Run, damaged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = store.atomic_replace

    def meddle(path: str, chunks: object, **kw: object) -> object:
        with open(path, "ab") as fh:
            fh.write(b"\n")
        return real(path, chunks, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "atomic_replace", meddle)
    result = run("repair", damaged, "--in-place", "--reattach", exit_code=1)
    assert "changed since pitools read it" in result.stderr


def test_repair_refuses_when_the_invariant_fails(run: Run, damaged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.core.repair import repair as repair_core

    real = repair_core._fix_orphans

    def lose_an_entry(entries: list, plan: object, reattach: bool) -> None:  # type: ignore[type-arg]
        real(entries, plan, reattach)
        victim = entries[0]
        victim.value = dict(victim.value, parentId="elsewhere")
        victim.data = json.dumps(victim.value).encode()

    monkeypatch.setattr(repair_core, "_fix_orphans", lose_an_entry)
    before = damaged.read_bytes()
    result = run("repair", damaged, "--in-place", "--reattach", exit_code=1)
    assert "REFUSED" in result.stdout and damaged.read_bytes() == before


def test_repair_usage_errors(run: Run, damaged: Path) -> None:
    run("repair", damaged, "-o", "x", "--in-place", exit_code=2)
    run("repair", damaged, "--dry-run", "--in-place", exit_code=2)
    run("repair", damaged, "--no-backup", exit_code=2)


def test_repair_unreadable(run: Run, tmp_path: Path) -> None:
    result = run("repair", tmp_path / "missing.jsonl", exit_code=1)
    assert result.stderr.startswith("pitools: ") and len(result.stderr.strip().splitlines()) == 1


# -- slim -------------------------------------------------------------------------------------------


def test_slim_json_matches_schema_and_writes(run: Run, tmp_path: Path) -> None:
    src = GOLDEN / "slim-images" / "original.jsonl"
    out = tmp_path / "small.jsonl"
    result = run("slim", src, "--images", "--thinking", "--tool-output", "2000", "-o", out, "--format", "json")
    data = json.loads(result.stdout)
    jsonschema.validate(data, SLIM_SCHEMA)
    assert data["invariant"]["holds"] and data["bytesSaved"] > 0
    assert out.read_bytes() == (GOLDEN / "slim-images" / "session.jsonl").read_bytes()
    assert out.stat().st_size == data["bytesAfter"]
    human = run("slim", src, "--images", "--dry-run").stdout
    assert "images:" in human and "cost:" in human and "dry run: nothing written" in human


def test_slim_in_place_keeps_backup(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDEN / "slim-compacted" / "original.jsonl", target)
    before = target.read_bytes()
    data = json.loads(
        run("slim", target, "--tool-output", "500", "--thinking", "--in-place", "--format", "json").stdout
    )
    assert target.read_bytes() == (GOLDEN / "slim-compacted" / "session.jsonl").read_bytes()
    assert Path(data["backup"]).read_bytes() == before


def test_slim_nothing_selected_is_a_usage_error(run: Run) -> None:
    run("slim", GOLDEN / "slim-images" / "original.jsonl", exit_code=2)


def test_slim_refuses_files_pi_rejects(run: Run) -> None:
    result = run("slim", GOLDEN / "repair-no-header" / "session.jsonl", "--images", exit_code=1)
    assert result.stderr.startswith("pitools: ")


def test_slim_refuses_when_a_context_would_change(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the plan touched content a leaf's context holds, the check catches it and nothing is written."""
    from pitools.core.repair import slim as slim_core

    def everything(index: object, union: object = None) -> tuple[set[int], int]:
        return set(range(len(index.entries))), 1  # type: ignore[attr-defined]

    monkeypatch.setattr(slim_core, "compacted_away", everything)
    target = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDEN / "slim-images" / "original.jsonl", target)
    before = target.read_bytes()
    result = run("slim", target, "--images", "--in-place", exit_code=1)
    assert "REFUSED" in result.stdout and "refused to write" in result.stderr
    assert target.read_bytes() == before and list(tmp_path.iterdir()) == [target]


def test_slim_full_check_replays_and_agrees(run: Run, tmp_path: Path) -> None:
    src = GOLDEN / "slim-images" / "original.jsonl"
    args = ("--images", "--thinking", "--tool-output", "2000", "--format", "json")
    quick = json.loads(run("slim", src, *args, "-o", tmp_path / "a.jsonl").stdout)
    full = json.loads(run("slim", src, *args, "--full-check", "-o", tmp_path / "b.jsonl").stdout)
    jsonschema.validate(full, SLIM_SCHEMA)
    assert quick["invariant"]["check"] == "structural" and full["invariant"]["check"] == "full"
    assert quick["invariant"]["holds"] and full["invariant"]["holds"]
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    human = run("slim", src, "--images", "--full-check", "--dry-run").stdout
    assert "(replayed before and after)" in human


@pytest.mark.parametrize("mode", ["-o", "--in-place"])
def test_slim_refuses_when_the_file_changes_while_it_runs(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Pi appending while slim plans: the copy would not be what was checked, so nothing is written."""
    from pitools.ops import slim as slim_ops

    target = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDEN / "slim-images" / "original.jsonl", target)
    appended = target.read_bytes() + target.read_bytes().splitlines(keepends=True)[-1]
    real = slim_ops.plan_from_candidates

    def plan_then_append(*args: object, **kwargs: object) -> object:
        plan = real(*args, **kwargs)  # type: ignore[arg-type]
        target.write_bytes(appended)
        return plan

    monkeypatch.setattr(slim_ops, "plan_from_candidates", plan_then_append)
    out = tmp_path / "small.jsonl"
    extra = (mode, out) if mode == "-o" else (mode,)
    result = run("slim", target, "--images", *extra, exit_code=1)
    assert "changed since pitools read it" in result.stderr
    assert target.read_bytes() == appended
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_slim_refuses_a_pipe(run: Run, tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    result = run("slim", fifo, "--images", "--dry-run", exit_code=1)
    assert result.stderr.startswith("pitools: ") and "not a regular file" in result.stderr
