"""scripts/golden_store.py: pi-ai's request recordings are stored as JSON lines git can delta."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from pitools.core.js.json.encode import to_json_bytes
from tests import support

store = support.load_script("golden_store")


def test_no_gzip_recording_is_left_under_golden() -> None:
    left = [str(p.relative_to(support.ROOT)) for p in store.leftovers()]
    assert not left, f"run scripts/golden_store.py --convert: {left[:5]}"


@pytest.mark.parametrize(("case", "name"), [("sample-session", "requests"), ("request-wedges", "check-requests")])
def test_a_gzip_recording_converts_to_the_same_lines_and_value(case: str, name: str, tmp_path: Path) -> None:
    stored = support.GOLDEN / case / f"{name}.jsonl"
    recording = store.read_recording(stored)
    # What record_requests.mjs wrote before: JSON.stringify of the whole recording, gzipped.
    legacy = tmp_path / f"{name}.json.gz"
    legacy.write_bytes(gzip.compress(to_json_bytes(recording)))
    assert store.read_recording(legacy) == recording
    assert store.stored(tmp_path, name) == legacy
    converted = store.convert(legacy)
    assert converted.read_bytes() == stored.read_bytes()
    assert not legacy.exists() and store.stored(tmp_path, name) == converted


def test_a_file_that_is_not_a_recording_is_refused_and_kept(tmp_path: Path) -> None:
    bad = tmp_path / "requests.json.gz"
    bad.write_bytes(gzip.compress(b'{"records": 1}'))
    with pytest.raises(SystemExit, match="not a recording"):
        store.convert(bad)
    assert bad.exists() and not (tmp_path / "requests.jsonl").exists()


def test_check_names_what_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "case").mkdir()
    shutil.copy(support.GOLDEN / "sample-session" / "requests.jsonl", tmp_path / "case" / "requests.jsonl")
    monkeypatch.setattr(store, "GOLDEN", tmp_path)
    assert store.main(["--check"]) == 0
    (tmp_path / "case" / "requests-settings.json.gz").write_bytes(gzip.compress(b"{}"))
    assert store.main(["--check"]) == 1
    assert "requests-settings.json.gz is gzip" in capsys.readouterr().out
