"""scripts/conformance.py without node: it finds every recording, rebuilds the oracle flags each was
made with, and reports differences by field. (The run against other Pi releases needs node and npm;
its result is in the README and the closing note of issue 29.)"""

from __future__ import annotations

from typing import Any

from tests import support
from tests.support import GOLDEN, load_script

conformance = load_script("conformance")


CASES = ["fork-seed-u3", "clone-v1-s0010", "repair-cycle", "slim-images", "sample-session", "gen-s0029_broken-empty"]


def test_every_committed_recording_is_found_with_its_input() -> None:
    found = conformance.recordings(CASES)
    on_disk = {p for case in CASES for p in (GOLDEN / case).glob("*.json.xz")}
    unrunnable = set()
    for path in on_disk:
        recorded = conformance.load_blob(support.recording_text(path))
        if not isinstance(recorded.get("options"), dict):
            unrunnable.add(path)  # a crash recorded instead of output
    assert {r.path for r in found} == on_disk - unrunnable
    for rec in found:
        assert rec.source.is_file(), rec


def test_the_flags_reproduce_the_recorded_options() -> None:
    by_name = {r.label: r for r in conformance.recordings(["fork-seed-u3", "repair-cycle"])}
    assert by_name["fork-seed-u3/source.pi.krt300.json.xz"].args == (
        "--leaf",
        "A4",
        "--keep-recent-tokens",
        "300",
        "--reserve-tokens",
        "16384",
        "--context-window",
        "200000",
    )
    assert by_name["fork-seed-u3/pi.krt2000.json.xz"].args[:3] == ("--all-leaves", "--keep-recent-tokens", "2000")
    original = by_name["repair-cycle/original.pi.json.xz"]
    assert original.source.name == "original.jsonl" and original.args[0] == "--all-leaves"
    source = by_name["fork-seed-u3/source.pi.krt300.json.xz"].source
    assert source != GOLDEN / "fork-seed-u3" / "session.jsonl"


def test_differences_are_reported_by_field() -> None:
    old: dict[str, Any] = {"byLeaf": {"a1": {"path": ["x", "a1"], "compaction": {"tokensBefore": 10}}}, "leafId": "a1"}
    new: dict[str, Any] = {"byLeaf": {"a1": {"path": ["x", "a1"], "compaction": {"tokensBefore": 12}}}, "leafId": "a1"}
    assert conformance.diff(old, old) == []
    ((field, a, b),) = conformance.diff(old, new)
    assert (field, a, b) == ("byLeaf.a1.compaction.tokensBefore", 10, 12)
    assert conformance.field_pattern(field) == "byLeaf.*.compaction.tokensBefore"
    assert conformance.diff({"m": [1, 2]}, {"m": [1, 2, 3]})[0] == ("m.length", 2, 3)
    assert conformance.diff({"k": 1}, {})[0] == ("k", 1, "<missing>")
    assert conformance.diff({"k": 1}, {"k": 1.5}) == [("k", 1, 1.5)]
