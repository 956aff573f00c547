"""The repair plan: each kind of damage, byte-identical untouched lines, and the invariant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pitools.core.repair import REPAIRABLE_CODES
from pitools.core.repair.invariant import check_invariant
from pitools.core.repair.repair import (
    RepairOptions,
    cwd_candidates,
    cwd_from_folder,
    infer_version,
    plan_repair,
    split_fused,
)
from pitools.core.validate.codes import CODES
from tests import support

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'


def entry(eid: str, parent: str | None, text: str = "hi", role: str = "user") -> bytes:
    msg: dict[str, object] = {"role": role, "content": text, "timestamp": 1}
    if role == "assistant":
        msg = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "a",
            "provider": "p",
            "model": "m",
            "usage": support.free_usage(),
            "stopReason": "stop",
            "timestamp": 2,
        }
    e = {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", "message": msg}
    return json.dumps(e, separators=(",", ":")).encode()


def session(*lines: bytes) -> bytes:
    return b"".join(line + b"\n" for line in (HEADER, *lines))


def plan(data: bytes, **kw: object) -> tuple[object, bytes]:
    p = plan_repair(data, RepairOptions(**kw))  # type: ignore[arg-type]
    return p, p.output_bytes()


def codes(p: object) -> list[str]:
    return [f.code for f in p.fixes]  # type: ignore[attr-defined]


def test_repairable_codes_are_validate_codes() -> None:
    assert set(REPAIRABLE_CODES) <= set(CODES)


def test_healthy_file_is_untouched() -> None:
    data = session(entry("a", None), entry("b", "a", role="assistant"))
    p, out = plan(data)
    assert not p.fixes and not p.remaining and out == data


def test_fused_complete_lines_split_byte_identical() -> None:
    a, b = entry("a", None), entry("b", "a", role="assistant")
    p, out = plan(HEADER + b"\n" + a + b + b"\n")
    assert out == session(a, b)
    assert codes(p) == ["malformed-json"] and p.fixes[0].action == "split"


def test_torn_prefix_dropped_and_reported() -> None:
    a, b, c = entry("a", None), entry("b", "a", role="assistant"), entry("c", "b")
    torn = b[: len(b) // 2]
    p, out = plan(session(a, torn + c))
    assert out == session(a, c)
    assert "torn prefix" in p.fixes[0].message
    assert [r.code for r in p.remaining] == ["orphan-entry"]


def test_split_ignores_nested_blocks() -> None:
    b = entry("b", "a", role="assistant")
    torn = b[: b.index(b'"text":"hi"}') + len(b'"text":"hi"}')]  # ends right after a content block
    pieces, rest = split_fused(torn + entry("c", "b"))  # type: ignore[misc]
    assert [json.loads(x)["id"] for x in pieces] == ["c"] and rest == torn


def test_torn_tail_terminated_or_dropped() -> None:
    a, b = entry("a", None), entry("b", "a")
    p, out = plan(session(a) + b)
    assert out == session(a, b) and codes(p) == ["unterminated-last-line"]
    p, out = plan(session(a) + b[:20])
    assert out == session(a) and p.fixes[0].action == "removed"


def test_bom_and_crlf() -> None:
    a = entry("a", None)
    p, out = plan(b"\xef\xbb\xbf" + HEADER + b"\r\n" + a + b"\r\n")
    assert out == session(a)
    assert sorted(codes(p)) == ["crlf-line-endings", "utf8-bom"]


def test_skipped_lines_removed() -> None:
    a = entry("a", None)
    p, out = plan(session(b"", b"  ", a, b"null", b"42", b"{bad"))
    assert out == session(a)
    assert sorted(codes(p)) == ["blank-line", "blank-line", "falsy-line", "malformed-json", "non-object-line"]


def test_header_moved_first() -> None:
    a, b = entry("a", None), entry("b", "a")
    p, out = plan(a + b"\n" + HEADER + b"\n" + b + b"\n")
    assert out == session(a, b) and p.fixes[0].action == "moved"


def test_header_rebuilt_from_file_and_folder_names() -> None:
    a = entry("a", None)
    name = "2026-01-02T03-04-05-678Z_0195f3a2-7c1e-7d4b-9a61-5b2e8c0d4f17.jsonl"
    p, out = plan(a + b"\n", file_name=name, folder_name="--home-me-proj--")
    header = json.loads(out.split(b"\n")[0])
    assert header == {
        "type": "session",
        "version": 3,
        "id": "0195f3a2-7c1e-7d4b-9a61-5b2e8c0d4f17",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "cwd": "/home/me/proj",
    }
    assert p.fixes[0].action == "rebuilt"


def test_header_needs_cwd_outside_a_session_folder() -> None:
    p, _ = plan(entry("a", None) + b"\n", folder_name="tmp")
    assert not p.writable and p.remaining[0].code == "missing-header" and "--cwd" in p.remaining[0].message


def test_cwd_from_folder_names() -> None:
    assert cwd_from_folder("--home-me-proj--") == "/home/me/proj"
    assert cwd_from_folder("sessions") is None
    assert "/home/me-proj" in cwd_candidates("--home-me-proj--")


def test_version_inferred() -> None:
    assert infer_version([{"type": "message", "timestamp": "x"}]) == 1
    assert infer_version([{"type": "message", "id": "a", "message": {"role": "hookMessage"}}]) == 2
    assert infer_version([{"type": "message", "id": "a", "message": {"role": "user"}}]) == 3


def test_duplicate_ids_rename_the_earlier() -> None:
    a, b1, b2 = entry("a", None), entry("b", "a", "old"), entry("b", "a", "new")
    p, out = plan(session(a, b1, b2))
    lines = out.splitlines()
    assert lines[3] == b2 and json.loads(lines[2])["id"] != "b"
    assert codes(p) == ["duplicate-id"] and p.fixes[0].line == 3


def test_self_parent_and_cycle_cut() -> None:
    p, out = plan(session(entry("a", "a")))
    assert json.loads(out.splitlines()[1])["parentId"] is None and codes(p) == ["self-parent"]
    p, out = plan(session(entry("a", "c"), entry("b", "a"), entry("c", "b"), entry("d", "c")))
    parents = [json.loads(x)["parentId"] for x in out.splitlines()[1:]]
    assert parents == [None, "a", "b", "c"] and codes(p) == ["parent-cycle"]


def test_crash_fixes() -> None:
    bad = json.loads(entry("b", "a", role="assistant"))
    bad["message"]["content"] = "plain text"
    p, out = plan(session(entry("a", None), json.dumps(bad).encode()))
    fixed = json.loads(out.splitlines()[2])
    assert fixed["message"]["content"] == [{"type": "text", "text": "plain text"}]
    assert codes(p) == ["pi-would-crash"]
    nomsg = {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:01.000Z"}
    p, out = plan(session(entry("a", None), json.dumps(nomsg).encode()))
    assert json.loads(out.splitlines()[2])["type"] == "custom"


def test_orphans_reported_or_reattached() -> None:
    data = session(entry("a", None), entry("b", "gone"))
    p, out = plan(data)
    assert out == data and [r.code for r in p.remaining] == ["orphan-entry"]
    p, out = plan(data, reattach=True)
    assert json.loads(out.splitlines()[2])["parentId"] == "a" and not p.remaining


def test_unknown_types_and_extra_fields_kept() -> None:
    odd = b'{"type":"weird","id":"w","parentId":"a","timestamp":"2026-01-01T00:00:01.000Z","extra":[1.0,2]}'
    data = session(entry("a", None), odd)
    _, out = plan(data)
    assert out == data


def test_invariant_holds_and_catches_a_lost_entry() -> None:
    a, b = entry("a", None), entry("b", "a", role="assistant")
    damaged = session(a, b, b"{broken")
    p = plan_repair(damaged)
    good = check_invariant(damaged, p.output_bytes(), p.origins(), p.touched, p.removed)
    assert good.holds and good.leaves_compared == 1
    # Drop entry b without saying so: the check must refuse.
    bad_out = session(a)
    bad = check_invariant(damaged, bad_out, p.origins()[:2], p.touched, p.removed)
    assert not bad.holds


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/session.jsonl")), ids=lambda p: p.parent.name)
def test_unchanged_files_skip_the_replay_with_the_same_report(path: Path, tmp_path: Path) -> None:
    """No fix: repair reports the replay's figures without building a second copy of the file."""
    from pitools.ops.repair import repair_file

    data = path.read_bytes()
    plan = plan_repair(data)
    if not plan.writable or plan.changed:
        pytest.skip("repair changes this file")
    assert plan.output_bytes() == data
    full = check_invariant(data, data, plan.origins(), plan.touched, plan.removed)
    target = tmp_path / "s.jsonl"
    target.write_bytes(data)
    fast = repair_file(str(target), dry_run=True).invariant
    assert fast is not None and fast.holds
    assert (fast.entries_before, fast.entries_after) == (full.entries_before, full.entries_after)
    if fast.leaves_compared:  # v3: the fast path
        assert fast.leaves_compared + fast.leaves_restored == full.leaves_compared + full.leaves_restored
