"""golden/collection-index.json: what collecting the suite reads of Pi's recordings, committed so
that a fresh clone parses none of them. Stale means some filter would see an old recording."""

from __future__ import annotations

import json

import pytest

from tests import support


def test_the_index_covers_every_recording_at_its_current_content() -> None:
    index = json.loads(support.INDEX.read_bytes())
    assert index["fields"] == support.index_fields(), "the index keeps other fields: run `make golden-index`"
    recordings = index["recordings"]
    stale = [
        key
        for path in support.recording_paths()
        if (entry := recordings.get(key := f"{path.parent.name}/{path.name}")) is None
        or entry["sha256"] != support._digest(path.read_bytes())
    ]
    gone = sorted(set(recordings) - {f"{p.parent.name}/{p.name}" for p in support.recording_paths()})
    assert not stale and not gone, f"run `make golden-index`: stale {stale[:5]}, gone {gone[:5]}"


@pytest.mark.parametrize("case", ["sample-session", "clone-s0022-compactions", "hostile-deep-nesting"])
@pytest.mark.parametrize("krt", [20000, 2000])
def test_an_entry_is_what_the_recording_gives(case: str, krt: int) -> None:
    entry = json.loads(support.INDEX.read_bytes())["recordings"][f"{case}/pi.krt{krt}.json.xz"]
    assert entry["outline"] == support.record_outline(support.golden_recording(case, krt))


def test_a_filter_reading_a_field_the_index_leaves_out_fails_loudly() -> None:
    outline = support.recording_outline("sample-session")
    with pytest.raises(KeyError, match="make golden-index"):
        outline.get("entries")
    view = next(iter(outline["byLeaf"].values()))
    assert isinstance(view.get("path"), list)
    with pytest.raises(KeyError, match="VIEW_FIELDS"):
        _ = "context" in view
