"""Migration: the written file loads to Pi's migrated entries; migration is idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.js.value import js_to_number
from pitools.core.parity import diff_values
from pitools.core.session.load import load
from pitools.core.session.migrate import migrate_values
from pitools.core.session.migrate_file import migrated_lines
from tests import support
from tests.golden.test_conformance import CASES, GOLDEN, load_recording

#: The cases Pi migrated on load (from the collection index: collecting parses no recording).
LEGACY = [c for c in CASES if support.recording_outline(c).get("migrated")]


def test_golden_has_legacy_cases() -> None:
    assert len(LEGACY) >= 5


@pytest.mark.parametrize("case", LEGACY)
def test_written_file_loads_to_pis_migrated_entries(case: str, tmp_path: Path) -> None:
    expected = load_recording(case, 20000)
    session = load(GOLDEN / case / "session.jsonl", strict=False).session
    out = tmp_path / "migrated.jsonl"
    out.write_bytes(b"".join(migrated_lines(session)))
    again = load(out, strict=False).session
    assert not again.migration.needed  # idempotent: a migrated file needs nothing more
    assert again.header is not None and again.header["version"] in (3, expected["header"]["version"])
    from pitools.core.js.json.encode import jsonable

    assert diff_values(jsonable(again.entries), expected["entries"]) == []
    assert diff_values(jsonable(again.header), expected["header"]) == []


@pytest.mark.parametrize("case", LEGACY)
def test_unparsed_lines_are_kept(case: str, tmp_path: Path) -> None:
    src = (GOLDEN / case / "session.jsonl").read_bytes().split(b"\n")
    session = load(GOLDEN / case / "session.jsonl", strict=False).session
    written = b"".join(migrated_lines(session)).split(b"\n")
    unparsed = [line for line in src if line.strip() and not _parses(line)]
    for line in unparsed:
        assert line in written


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("3", 3.0),
        (" 2 ", 2.0),
        ("", 0.0),
        ("0x10", 16.0),
        (True, 1.0),
        (None, 0.0),
        ([3], 3.0),
        ("1e1", 10.0),
    ],
)
def test_version_compares_as_javascript_numbers(value: object, number: float) -> None:
    assert js_to_number(value) == number


def test_non_number_version_is_nan() -> None:
    assert js_to_number("abc") != js_to_number("abc")


entry_st = st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "compaction", "label", "custom"])},
    optional={
        "message": st.fixed_dictionaries({"role": st.sampled_from(["user", "hookMessage", "assistant"])}),
        "firstKeptEntryIndex": st.one_of(st.integers(-2, 12), st.text(max_size=2)),
        "id": st.text(max_size=4),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([None, 1, 2, 3, "3", "x"]), st.lists(entry_st, max_size=10))
def test_migration_is_idempotent(version: object, entries: list[dict]) -> None:
    header: dict = {"type": "session", "id": "h"}
    if version is not None:
        header["version"] = version
    once, _ = migrate_values([header, *entries])
    twice, report = migrate_values(once)
    if once[0].get("version") == 3:
        assert twice == once
        assert not report.steps
