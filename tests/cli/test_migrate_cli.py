"""pitools migrate: report, --check, -o, --in-place with backup, and refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.golden.test_conformance import GOLDEN

V1 = GOLDEN / "v1-compaction-by-index" / "session.jsonl"
V3 = GOLDEN / "seed-running-example" / "session.jsonl"


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    p = tmp_path / "old.jsonl"
    shutil.copy(V1, p)
    return p


def test_report_writes_nothing(run, v1: Path) -> None:
    before = v1.read_bytes()
    r = run("migrate", v1)
    assert "12 entries given ids" in r.stdout and "nothing written" in r.stdout
    assert v1.read_bytes() == before
    assert list(v1.parent.iterdir()) == [v1]


def test_check(run, v1: Path) -> None:
    assert "migration needed" in run("migrate", v1, "--check", exit_code=1).stdout
    run("migrate", V3, "--check", exit_code=0)


def test_output_file_and_stdout(run, v1: Path, tmp_path: Path) -> None:
    out = tmp_path / "new.jsonl"
    run("migrate", v1, "-o", out)
    to_stdout = run("migrate", v1, "-o", "-").stdout_bytes
    assert out.read_bytes() == to_stdout
    assert json.loads(out.read_bytes().splitlines()[0])["version"] == 3
    run("migrate", v1, "-o", out, exit_code=1)  # never overwrites an existing file


def test_in_place_with_backup(run, v1: Path) -> None:
    before = v1.read_bytes()
    data = json.loads(run("migrate", v1, "--in-place", "--format", "json").stdout)
    assert data["needed"] and data["written"] == str(v1)
    backup = Path(data["backup"])
    assert backup.read_bytes() == before
    assert json.loads(v1.read_bytes().splitlines()[1])["id"] == "00000001"
    again = json.loads(run("migrate", v1, "--in-place", "--format", "json").stdout)
    assert again["needed"] is False and again["written"] is None


def test_in_place_without_backup(run, v1: Path) -> None:
    run("migrate", v1, "--in-place", "--no-backup")
    assert sorted(p.name for p in v1.parent.iterdir()) == ["old.jsonl"]


def test_v3_is_a_no_op(run) -> None:
    assert "nothing to migrate" in run("migrate", V3).stdout


@pytest.mark.parametrize("args", [["--in-place", "--check"], ["-o", "x.jsonl", "--in-place"], ["--no-backup"]])
def test_conflicting_options_are_usage_errors(run, v1: Path, args: list[str]) -> None:
    run("migrate", v1, *args, exit_code=2)


def test_primitive_line_in_v1_is_reported(run, tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text('{"type":"session","id":"x"}\n{"type":"message","message":{"role":"user","content":"a"}}\n42\n')
    r = run("migrate", p, exit_code=1)
    assert ":3:" in r.stderr and "Cannot create property" in r.stderr


def test_output_of_a_v3_file_is_an_identical_copy_and_needs_force_to_replace(run, tmp_path) -> None:
    import os

    from tests.golden.test_conformance import GOLDEN as golden

    source = golden / "gen-s0000_v3" / "session.jsonl"
    out = tmp_path / "copy.jsonl"
    old = os.umask(0o022)
    try:
        r = run("migrate", source, "-o", out)
        assert out.read_bytes() == source.read_bytes()
        assert "wrote an identical copy to" in r.stdout
        assert out.stat().st_mode & 0o777 == 0o644  # as Pi creates files: 0666 minus the umask
        out.write_text("something else\n")
        r = run("migrate", source, "-o", out, exit_code=1)
        assert "pass --force" in r.stderr and out.read_text() == "something else\n"
        run("migrate", source, "-o", out, "--force")
        assert out.read_bytes() == source.read_bytes()
        run("migrate", source, "--force", exit_code=2)
        fork = tmp_path / "clone.jsonl"
        run("clone", source, "-o", fork)
        assert fork.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)
