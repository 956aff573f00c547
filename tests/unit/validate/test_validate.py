"""``validate_file``: one small hand-written session per check, the golden corpus, and fuzzing."""

from __future__ import annotations

import json
import pickle
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pitools.core import validate as validate_module
from pitools.core.js.json.parse import parse_json_line
from pitools.core.validate import CODES, SEVERITIES, Finding, ValidationReport, validate_file
from pitools.core.validate.structure import Structure
from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"

HEADER: dict[str, Any] = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/work",
}
USAGE: dict[str, Any] = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


class Builder:
    """Builds a valid v3 session entry by entry; each entry's parent defaults to the previous one."""

    def __init__(self, header: dict[str, Any] | None = None) -> None:
        self.lines: list[Any] = [dict(HEADER) if header is None else header]
        self.last: str | None = None
        self.clock = 0

    def add(self, etype: str, eid: str, parent: Any = "<prev>", **fields: Any) -> dict[str, Any]:
        self.clock += 1
        entry = {
            "type": etype,
            "id": eid,
            "parentId": self.last if parent == "<prev>" else parent,
            "timestamp": f"2025-01-01T00:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
            **fields,
        }
        self.lines.append(entry)
        self.last = eid
        return entry

    def message(self, eid: str, message: dict[str, Any], parent: Any = "<prev>") -> dict[str, Any]:
        return self.add("message", eid, parent, message={"timestamp": 1, **message})

    def user(self, eid: str, text: str = "hello", parent: Any = "<prev>") -> dict[str, Any]:
        return self.message(eid, {"role": "user", "content": text}, parent)

    def assistant(self, eid: str, calls: tuple[str, ...] = (), parent: Any = "<prev>", **extra: Any) -> dict[str, Any]:
        content: list[Any] = [{"type": "text", "text": "ok"}]
        content += [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": "a.py"}} for c in calls]
        message = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": USAGE,
            "stopReason": "toolUse" if calls else "stop",
            **extra,
        }
        return self.message(eid, message, parent)

    def result(self, eid: str, call: str, parent: Any = "<prev>") -> dict[str, Any]:
        message = {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": "read",
            "content": [{"type": "text", "text": "data"}],
            "isError": False,
        }
        return self.message(eid, message, parent)

    def write(self, tmp_path: Path, name: str = "s.jsonl") -> Path:
        path = tmp_path / name
        path.write_bytes(b"".join(json.dumps(v).encode() + b"\n" for v in self.lines))
        return path


def conversation() -> Builder:
    """user → assistant (tool call) → tool result → assistant: a clean session."""
    b = Builder()
    b.user("u1")
    b.assistant("a1", calls=("c1",))
    b.result("r1", "c1")
    b.assistant("a2")
    return b


def findings(path: Path, **kwargs: Any) -> list[Finding]:
    return list(validate_file(path, **kwargs).findings)


def codes(path: Path, **kwargs: Any) -> list[str]:
    return [f.code for f in findings(path, **kwargs)]


def only(path: Path, code: str) -> Finding:
    found = [f for f in findings(path) if f.code == code]
    assert len(found) == 1, findings(path)
    return found[0]


# -- the report -----------------------------------------------------------------------------------


def test_clean_session_has_no_findings(tmp_path: Path) -> None:
    report = validate_file(conversation().write(tmp_path))
    assert report.findings == ()
    assert report.counts == {"error": 0, "warning": 0, "info": 0}
    assert not report.failed() and not report.failed("info")


def test_report_is_immutable_picklable_data(tmp_path: Path) -> None:
    b = conversation()
    b.add("mystery", "m1")
    report = validate_file(b.write(tmp_path))
    assert [f.code for f in report.findings] == ["unknown-entry-type"]
    with pytest.raises(AttributeError):
        report.path = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(report)) == report
    assert report.to_json() == {
        "path": str(tmp_path / "s.jsonl"),
        "findings": [
            {
                "code": "unknown-entry-type",
                "severity": "warning",
                "message": report.findings[0].message,
                "line": 6,
                "entryId": "m1",
            }
        ],
        "counts": {"error": 0, "warning": 1, "info": 0},
    }
    assert report.failed("warning") and not report.failed("error")


def test_codes_table_is_kebab_case_with_known_severities() -> None:
    for code, info in CODES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code), code
        assert info.severity in SEVERITIES
        assert info.summary


def test_loader_codes_are_in_the_table_with_the_same_severity() -> None:
    # Every Diagnostic the loader and session layer can emit, read from their source.
    session = ROOT / "pitools/core/session"
    source = "".join((session / name).read_text() for name in ("lines.py", "header.py", "loaded.py"))
    emitted = re.findall(r'(?:Diagnostic|flag)\(\s*"([a-z0-9-]+)",\s*(ERROR|WARNING|INFO)', source)
    assert len(emitted) >= 16
    for code, severity in emitted:
        assert code in CODES, code
        assert CODES[code].severity == severity.lower(), code


def test_findings_are_sorted_by_line(tmp_path: Path) -> None:
    b = conversation()
    b.add("mystery", "m1")
    b.lines.insert(2, "not json")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in b.lines) + "\n")
    lines = [f.line for f in findings(path)]
    assert lines == sorted(lines)


# -- filters --------------------------------------------------------------------------------------


def test_select_ignore_and_min_severity(tmp_path: Path) -> None:
    b = conversation()
    b.add("mystery", "m1")  # warning
    b.user("u9", parent=None)  # info: multiple-roots
    b.add("label", "l1", targetId="nope", label="x")  # warning
    path = b.write(tmp_path)
    assert sorted(codes(path)) == ["label-missing-target", "multiple-roots", "unknown-entry-type"]
    assert codes(path, select=["multiple-roots"]) == ["multiple-roots"]
    assert sorted(codes(path, ignore=["multiple-roots"])) == ["label-missing-target", "unknown-entry-type"]
    assert "multiple-roots" not in codes(path, min_severity="warning")
    assert codes(path, min_severity="error") == []


def test_unknown_codes_and_severities_are_caller_errors(tmp_path: Path) -> None:
    path = conversation().write(tmp_path)
    with pytest.raises(ValueError, match="no-such-code"):
        validate_file(path, select=["no-such-code"])
    with pytest.raises(ValueError, match="severity"):
        validate_file(path, min_severity="fatal")


# -- reading the file -----------------------------------------------------------------------------


def test_missing_file_and_directory_are_unreadable(tmp_path: Path) -> None:
    assert codes(tmp_path / "absent.jsonl") == ["unreadable-file"]
    assert codes(tmp_path) == ["unreadable-file"]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty-file"),
        (b'{"type":"message","id":"a"}\n', "missing-header"),
        (b'{"type":"session","id":5}\n', "invalid-header"),
        (json.dumps(HEADER).encode() + b"\n{oops\n", "malformed-json"),
        (json.dumps(HEADER).encode() + b"\n[1]\n", "non-object-line"),
        (json.dumps(HEADER).encode() + b"\n" + json.dumps(HEADER).encode() + b"\n", "extra-header"),
    ],
)
def test_loader_diagnostics_become_findings(tmp_path: Path, data: bytes, code: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    assert code in codes(path)


def test_torn_tail(tmp_path: Path) -> None:
    path = conversation().write(tmp_path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert codes(path) == ["unterminated-last-line"]


# -- header ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "reads_as"), [("3", "as v3"), (4, "as v3"), (2.5, "v2"), ("x", "not a number")])
def test_header_version(tmp_path: Path, version: Any, reads_as: str) -> None:
    b = conversation()
    b.lines[0]["version"] = version
    f = only(b.write(tmp_path), "header-version")
    assert f.severity == "warning" and f.line == 1 and reads_as in f.message


def test_header_fields(tmp_path: Path) -> None:
    b = conversation()
    del b.lines[0]["cwd"]
    b.lines[0]["timestamp"] = "yesterday"
    b.lines[0]["parentSession"] = 7
    found = {f.code: f.message for f in findings(b.write(tmp_path))}
    assert "`cwd`" in found["missing-field"]
    assert "`parentSession`" in found["invalid-field"]
    assert "yesterday" in found["invalid-timestamp"]


@pytest.mark.parametrize(("version", "steps"), [(None, "v1-to-v2"), (2, "v2-to-v3")])
def test_needs_migration(tmp_path: Path, version: Any, steps: str) -> None:
    b = Builder()
    if version is None:
        del b.lines[0]["version"]
    else:
        b.lines[0]["version"] = version
    b.user("u1")
    f = only(b.write(tmp_path), "needs-migration")
    assert f.severity == "info" and steps in f.message


def test_v1_file_with_a_bare_primitive_crashes_pi(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}\n42\n')
    found = {f.code: f for f in findings(path)}
    assert found["pi-would-crash"].line == 2
    assert "Cannot create property 'id' on number '42'" in found["pi-would-crash"].message


# -- entry shapes ---------------------------------------------------------------------------------


def test_missing_and_invalid_fields(tmp_path: Path) -> None:
    b = conversation()
    del b.lines[1]["message"]["timestamp"]
    b.add("model_change", "mc", provider=5, modelId="m")
    b.message("u2", {"role": "user", "content": [{"type": "text", "text": 3}]})
    found = findings(b.write(tmp_path))
    assert [(f.code, f.line, f.entry_id) for f in found] == [
        ("missing-field", 2, "u1"),
        ("invalid-field", 6, "mc"),
        ("invalid-field", 7, "u2"),
    ]
    assert "`message.timestamp` is required" in found[0].message
    assert "`provider` should be a string (got 5)" in found[1].message
    assert "`message.content[0].text` should be a string" in found[2].message


def test_union_alternatives_are_merged(tmp_path: Path) -> None:
    b = conversation()
    b.lines[1]["message"]["content"] = 5
    f = only(b.write(tmp_path), "invalid-field")
    assert "`message.content` should be a string or an array (got 5)" in f.message


def test_field_findings_are_capped_per_entry(tmp_path: Path) -> None:
    b = conversation()
    b.add("usage", "x1")  # kind, provider, model and usage all missing; the rest are fine
    b.add("usage", "x2", kind=1, provider=2, model=3, usage=4, note=5, timestamp=6, extra="kept")
    field_codes = ("missing-field", "invalid-field")
    problems = [f for f in findings(b.write(tmp_path)) if f.entry_id == "x2" and f.code in field_codes]
    assert len(problems) == validate_module.MAX_FIELD_FINDINGS_PER_ENTRY
    assert "more field problem" in problems[-1].message


def test_invalid_timestamp(tmp_path: Path) -> None:
    b = conversation()
    b.lines[2]["timestamp"] = "not a date"
    b.lines[3]["timestamp"] = "2025-01-01T00:00:03+02:00"  # valid ISO 8601, just not Pi's own form
    f = only(b.write(tmp_path), "invalid-timestamp")
    assert f.line == 3 and f.severity == "info"  # Pi falls back (see test_grades.py)


def test_pi_format_with_non_ascii_digits_is_not_a_date(tmp_path: Path) -> None:
    # "\u0663" is ARABIC-INDIC DIGIT THREE: a regex \d digit, but new Date() gives Invalid Date.
    b = conversation()
    b.lines[2]["timestamp"] = "2025-0\u0663-01T00:00:03.000Z"
    f = only(b.write(tmp_path), "invalid-timestamp")
    assert f.line == 3


def test_unknown_entry_type_and_message_role(tmp_path: Path) -> None:
    b = conversation()
    b.add("bookmark", "bm")
    b.message("n1", {"role": "notification", "content": "x"})
    path = b.write(tmp_path)
    assert only(path, "unknown-entry-type").entry_id == "bm"
    assert only(path, "unknown-message-role").entry_id == "n1"
    assert not validate_file(path).failed()


# -- the tree -------------------------------------------------------------------------------------


def test_duplicate_id(tmp_path: Path) -> None:
    b = conversation()
    b.user("u1")
    f = only(b.write(tmp_path), "duplicate-id")
    assert (f.line, f.entry_id, f.severity) == (6, "u1", "error")
    assert "line 2" in f.message


def test_orphan_entry(tmp_path: Path) -> None:
    b = conversation()
    b.user("u2", parent="gone")
    f = only(b.write(tmp_path), "orphan-entry")
    assert (f.line, f.entry_id) == (6, "u2") and "gone" in f.message


def test_parent_cycle(tmp_path: Path) -> None:
    b = conversation()
    b.lines[1]["parentId"] = "a2"  # u1 -> a2 -> r1 -> a1 -> u1
    f = only(b.write(tmp_path), "parent-cycle")
    assert f.line == 2 and "loop forever" in f.message
    assert "self-parent" not in codes(b.write(tmp_path))


def test_self_parent(tmp_path: Path) -> None:
    b = conversation()
    b.user("me", parent="me")
    path = b.write(tmp_path)
    assert only(path, "self-parent").entry_id == "me"
    assert "parent-cycle" not in codes(path)


def test_multiple_roots(tmp_path: Path) -> None:
    b = conversation()
    b.user("u2", parent=None)
    f = only(b.write(tmp_path), "multiple-roots")
    assert f.severity == "info" and f.line == 6 and "lines 2, 6" in f.message


# -- references -----------------------------------------------------------------------------------


def compaction(b: Builder, eid: str, first_kept: Any = "<omit>", parent: Any = "<prev>") -> None:
    fields: dict[str, Any] = {"summary": "s", "tokensBefore": 100}
    if first_kept != "<omit>":
        fields["firstKeptEntryId"] = first_kept
    b.add("compaction", eid, parent, **fields)


def test_compaction_references(tmp_path: Path) -> None:
    b = conversation()
    compaction(b, "c-ok", "a1")
    compaction(b, "c-none", "c-none")  # retain-none: its own id
    compaction(b, "c-absent")
    compaction(b, "c-dangling", "nowhere")
    b.user("side", parent="u1")
    compaction(b, "c-off", "a2", parent="side")
    found = [(f.code, f.entry_id) for f in findings(b.write(tmp_path))]
    assert found == [
        ("compaction-missing-first-kept", "c-absent"),
        ("compaction-missing-first-kept", "c-dangling"),
        ("compaction-first-kept-off-path", "c-off"),
    ]


def test_compaction_without_first_kept_is_not_also_a_missing_field(tmp_path: Path) -> None:
    b = conversation()
    compaction(b, "c1")
    assert codes(b.write(tmp_path)) == ["compaction-missing-first-kept"]


def test_context_edit_checks(tmp_path: Path) -> None:
    b = conversation()
    b.add("context_edit", "e-ok", targetId="a1", replacement={"content": "shorter"})
    b.add("context_edit", "e-null", targetId="r1", replacement=None)
    b.add("context_edit", "e-missing", targetId="ghost", replacement=None)
    b.add("label", "lab", targetId="a1", label="x")
    b.add("context_edit", "e-label", targetId="lab", replacement={"content": "x"})
    b.user("side", parent="u1")
    b.add("context_edit", "e-off", targetId="a2", replacement=None)
    found = [(f.code, f.entry_id) for f in findings(b.write(tmp_path))]
    assert found == [
        ("context-edit-missing-target", "e-missing"),
        ("context-edit-not-editable", "e-label"),
        ("context-edit-off-branch", "e-off"),
    ]


def test_context_edit_null_on_a_non_editable_entry_still_hides_it(tmp_path: Path) -> None:
    b = conversation()
    compaction(b, "c1", "a1")
    b.add("context_edit", "e1", targetId="c1", replacement=None)
    f = only(b.write(tmp_path), "context-edit-not-editable")
    assert "still hides it" in f.message


def test_context_edit_of_a_custom_role_message_is_refused_but_applied(tmp_path: Path) -> None:
    """appendContextEdit refuses a message entry whose role is "custom", yet projectContextEntry
    replaces the content of any custom-role message (the oracle on this session shows "REPLACED" in
    Pi 1.6.0's context)."""
    b = conversation()
    b.message("c1", {"role": "custom", "customType": "x", "content": "ORIGINAL", "display": True})
    b.add("context_edit", "e1", targetId="c1", replacement={"content": "REPLACED"})
    f = only(b.write(tmp_path), "context-edit-not-editable")
    assert "custom message" in f.message and "still applies the replacement" in f.message


@pytest.mark.parametrize("replacement", ["just a string", {}, {"content": 5}, "<omit>"])
def test_invalid_replacement_crashes_pi_when_applied(tmp_path: Path, replacement: Any) -> None:
    b = conversation()
    fields = {} if replacement == "<omit>" else {"replacement": replacement}
    b.add("context_edit", "e1", targetId="a2", **fields)
    found = [(f.code, f.line) for f in findings(b.write(tmp_path))]
    assert found == [("context-edit-invalid-replacement", 6), ("pi-would-crash", 6)]


def test_label_and_branch_summary_targets(tmp_path: Path) -> None:
    b = conversation()
    b.add("label", "l1", targetId="nobody", label="x")
    b.add("branch_summary", "b1", fromId="nobody", summary="s")
    b.add("branch_summary", "b2", fromId="root", summary="s")  # Pi writes "root" for a null leaf
    b.add("branch_summary", "b3", fromId="a1", summary="s")
    found = [(f.code, f.entry_id) for f in findings(b.write(tmp_path))]
    assert found == [("label-missing-target", "l1"), ("branch-summary-missing-from", "b1")]


# -- conversation ---------------------------------------------------------------------------------


def test_tool_result_without_call(tmp_path: Path) -> None:
    b = conversation()
    b.result("r9", "c-unknown")
    b.user("side", parent="u1")
    b.result("r10", "c1")  # c1 was called on another branch only
    found = [(f.code, f.entry_id) for f in findings(b.write(tmp_path))]
    assert found == [("tool-result-without-call", "r9"), ("tool-result-without-call", "r10")]


def test_tool_call_unanswered_unless_final_turn(tmp_path: Path) -> None:
    b = conversation()
    b.user("u2")
    b.assistant("a3", calls=("c2", "c3"))
    b.result("r2", "c2")
    b.user("u3")  # c3 never answered, and the conversation went on
    b.assistant("a4", calls=("c4",))  # the final turn: c4 may still be running
    f = only(b.write(tmp_path), "tool-call-unanswered")
    assert (f.entry_id, f.severity) == ("a3", "info") and '"c3"' in f.message  # pi-ai answers it


def _orphan() -> Builder:
    """A result whose call is gone (r9, under a1's turn), then the conversation goes on."""
    b = conversation()
    b.user("u2")
    b.result("r9", "c-gone")
    b.assistant("a3")
    return b


def test_an_orphan_a_context_edit_takes_out_is_no_longer_reported(tmp_path: Path) -> None:
    """What ``pitools heal --apply`` writes: the raw result stays in the file, but Pi's projection
    applies the edit at every leaf whose context holds it, so no provider sees the orphan."""
    b = _orphan()
    b.add("context_edit", "x1", targetId="r9", replacement=None)
    assert findings(b.write(tmp_path)) == []
    b.user("u3")  # the conversation goes on below the edit: still covered
    assert findings(b.write(tmp_path, "later.jsonl")) == []


def test_an_orphan_stays_reported_where_a_leaf_misses_the_edit(tmp_path: Path) -> None:
    b = _orphan()
    b.add("context_edit", "x1", targetId="r9", replacement=None)
    b.user("u4", parent="a3")  # a second leaf below the orphan, without the edit
    assert codes(b.write(tmp_path)) == ["tool-result-without-call"]
    b = _orphan()
    b.user("side", parent="u2")
    b.add("context_edit", "x1", targetId="r9", replacement=None)  # on a branch that does not hold r9
    assert codes(b.write(tmp_path, "other-branch.jsonl")) == ["tool-result-without-call", "context-edit-off-branch"]
    b = _orphan()
    b.add("context_edit", "x1", targetId="r9", replacement={"content": "still a result"})  # keeps its toolCallId
    assert codes(b.write(tmp_path, "replaced.jsonl")) == ["tool-result-without-call"]
    b = _orphan()
    b.add("context_edit", "x1", targetId="r9", replacement=None)
    b.add("context_edit", "x2", targetId="r9", replacement={"content": "back"})  # the latest edit wins
    assert codes(b.write(tmp_path, "restored.jsonl")) == ["tool-result-without-call"]


def test_an_edited_out_orphan_in_a_file_out_of_order(tmp_path: Path) -> None:
    """The same rule when a parent comes after its child in the file (the depth-first walk)."""
    b = _orphan()
    b.add("context_edit", "x1", targetId="r9", replacement=None)
    b.lines[2], b.lines[3] = b.lines[3], b.lines[2]  # a1 after its child r1
    assert findings(b.write(tmp_path)) == []
    b.user("u4", parent="a3")
    assert codes(b.write(tmp_path, "two-leaves.jsonl")) == ["tool-result-without-call"]


def test_unanswered_calls_an_edit_turns_into_text_are_not_reported(tmp_path: Path) -> None:
    b = conversation()
    b.user("u2")
    b.assistant("a3", calls=("c2",))
    b.user("u3")
    assert codes(b.write(tmp_path)) == ["tool-call-unanswered"]
    b.add("context_edit", "x1", targetId="a3", replacement={"content": [{"type": "text", "text": "[tool call]"}]})
    assert codes(b.write(tmp_path, "text.jsonl")) == []
    calls = [{"type": "toolCall", "id": "c2", "name": "read", "arguments": {}}]
    b.add("context_edit", "x2", targetId="a3", replacement={"content": calls})  # calls again: reported
    assert codes(b.write(tmp_path, "calls.jsonl")) == ["tool-call-unanswered"]


def _sent_by_pi(case: str) -> set[str]:
    """The tool results and tool-calling assistant turns Pi 1.6.0 sends at some leaf of a golden
    case (its recorded LLM messages), by entry id: what validate must still report."""
    lines = [json.loads(line) for line in support.golden_session(case).read_text().splitlines()[1:]]
    by_call = {e["message"]["toolCallId"]: e["id"] for e in lines if e["type"] == "message"
               and e["message"]["role"] == "toolResult"}  # fmt: skip
    by_call_turn = {b["id"]: e["id"] for e in lines if e["type"] == "message" for b in e["message"]["content"]
                    if isinstance(b, dict) and b.get("type") == "toolCall"}  # fmt: skip
    sent: set[str] = set()
    for view in support.golden_recording(case)["byLeaf"].values():
        for m in view["llmMessages"]:
            if m["role"] == "toolResult":
                sent.add(by_call[m["toolCallId"]])
            elif m["role"] == "assistant":
                sent.update(by_call_turn[b["id"]] for b in m["content"] if b.get("type") == "toolCall")
    return sent


@pytest.mark.parametrize("shuffled", [False, True], ids=["file-order", "parents-later"])
def test_an_edit_above_its_target_takes_it_out_as_pi_does(tmp_path: Path, shuffled: bool) -> None:
    """golden/validate-edit-above: context edits written *above* their target (Pi's
    appendContextEdit never does that, a hand-made file may). Pi's projection gathers the edits of
    the whole context, so such an edit applies, unless a compaction between them drops the edit
    and keeps the target, or a later edit puts the target back. What is still reported is exactly
    what Pi sends at some leaf (the recorded LLM messages); each such edit is still off its branch."""
    path = support.golden_session("validate-edit-above")
    if shuffled:  # every entry after its children: the depth-first walk, with the same answer
        head, *rest = path.read_bytes().splitlines(keepends=True)
        path = tmp_path / "reversed.jsonl"
        path.write_bytes(b"".join([head, *reversed(rest)]))
    found = findings(path)
    pairing = {f.entry_id for f in found if f.code in ("tool-result-without-call", "tool-call-unanswered")}
    assert pairing == _sent_by_pi("validate-edit-above") == {"rB", "rD", "rF"}
    assert sorted(f.entry_id for f in found if f.code == "context-edit-off-branch") == sorted(
        ["xA", "xB", "xC", "xD", "xE", "xF", "xG"]
    )


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("heal-*/healed*.jsonl")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_golden_healed_file_validates_clean(path: Path) -> None:
    """``pitools heal``'s own output (golden/heal-*): Pi's projection takes every orphan and every
    call turned into text out, so nothing is left to report."""
    assert findings(path) == []


def test_tool_calls_of_aborted_replies_need_no_answer(tmp_path: Path) -> None:
    b = conversation()
    b.assistant("a3", calls=("c2",), stopReason="aborted")
    b.user("u2")
    assert codes(b.write(tmp_path)) == []


def test_tool_call_answered_on_one_branch_is_answered(tmp_path: Path) -> None:
    b = conversation()
    b.user("u2")
    b.assistant("a3", calls=("c2",))
    b.result("r2", "c2")
    b.user("u3")
    b.user("retry", parent="a3")  # another branch from a3 without the result
    assert codes(b.write(tmp_path)) == []


def test_timestamp_backwards(tmp_path: Path) -> None:
    b = conversation()
    b.lines[3]["timestamp"] = "2024-12-31T23:59:59.000Z"
    b.lines[4]["timestamp"] = "2025-01-01T01:00:00+05:00"  # 2024-12-31T20:00Z: before its parent too
    found = [(f.code, f.entry_id) for f in findings(b.write(tmp_path))]
    assert found == [("timestamp-backwards", "r1"), ("timestamp-backwards", "a2")]
    assert all(f.severity == "info" for f in findings(b.write(tmp_path)))


@pytest.mark.parametrize("parents_first", [True, False], ids=["file-order-walk", "depth-first-walk"])
def test_a_label_older_than_its_parent_is_how_pi_clones_write_it(tmp_path: Path, parents_first: bool) -> None:
    """Pi's createBranchedSession re-creates labels after the copied path with the time each was
    set: not timestamp-backwards. A message older than its parent still is."""
    b = conversation()
    b.add("label", "l1", targetId="u1", label="start")["timestamp"] = "2024-06-01T00:00:00.000Z"
    b.user("u2")
    b.user("u3")["timestamp"] = "2024-06-01T00:00:00.000Z"  # a message: still reported
    if not parents_first:  # a child before its parent in the file: the depth-first walk
        b.lines.insert(1, b.lines.pop())
    found = [(f.code, f.entry_id) for f in findings(b.write(tmp_path))]
    assert found == [("timestamp-backwards", "u3")]


# -- Pi crashes -----------------------------------------------------------------------------------


def test_message_entry_without_message(tmp_path: Path) -> None:
    b = conversation()
    b.add("message", "m1")
    f = only(b.write(tmp_path), "pi-would-crash")
    assert "reading 'role'" in f.message and "getSessionStats" in f.message
    assert codes(b.write(tmp_path)) == ["pi-would-crash"]  # not also a missing-field


@pytest.mark.parametrize(("content", "error"), [("text", "flatMap"), (None, "not iterable"), (7, "not iterable")])
def test_assistant_content_not_an_array(tmp_path: Path, content: Any, error: str) -> None:
    b = conversation()
    b.lines[4]["message"]["content"] = content
    f = only(b.write(tmp_path), "pi-would-crash")
    assert error in f.message and f.entry_id == "a2"
    assert "invalid-field" not in codes(b.write(tmp_path))


def test_assistant_without_usage(tmp_path: Path) -> None:
    b = conversation()
    del b.lines[4]["message"]["usage"]
    f = only(b.write(tmp_path), "pi-would-crash")
    assert "reading 'input'" in f.message and "getSessionStats" in f.message


def test_session_name_that_is_not_a_string(tmp_path: Path) -> None:
    b = conversation()
    b.add("session_info", "n1", name=42)
    f = only(b.write(tmp_path), "pi-would-crash")
    assert "getSessionName" in f.message


def test_a_failing_check_becomes_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Structure, "references", broken)
    f = only(conversation().write(tmp_path), "internal-check-error")
    assert "boom" in f.message and f.severity == "error"


# -- the golden corpus ----------------------------------------------------------------------------

# Cases with Pi's recording (a case being added may not have one yet).
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/pi.krt20000.json.xz") if (p.parent / "session.jsonl").exists())


@cache
def golden_report(case: str) -> ValidationReport:
    return validate_file(GOLDEN / case / "session.jsonl")


@cache
def recorded_pi_errors(case: str) -> tuple[str, ...]:
    """``TypeError``s Pi threw anywhere in its recorded run (cycles and timeouts are not crashes)."""
    # The loader's parser and an iterative walk: golden/hostile-deep-nesting nests 1,500 deep.
    data, _ = parse_json_line(support.recording_text(GOLDEN / case / "pi.krt20000.json.xz"))
    out: list[str] = []
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            error = value.get("error")
            if isinstance(error, str) and error != "cycle" and not error.startswith("timeout"):
                out.append(error)
            stack.extend(reversed(value.values()))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return tuple(out)


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("broken-cycle", "parent-cycle"),
        ("broken-orphan", "orphan-entry"),
        ("broken-duplicate-ids", "duplicate-id"),
        ("broken-missing-header", "missing-header"),
        ("broken-torn-tail", "unterminated-last-line"),
        ("broken-malformed-lines", "malformed-json"),
        ("gen-s0002_v1", "needs-migration"),
        ("v2-hook-message", "needs-migration"),
        ("gen-s0018_broken-selfparent+nonobject", "self-parent"),
        ("gen-s0018_broken-selfparent+nonobject", "non-object-line"),
        ("gen-s0023_broken-badheaderid", "invalid-header"),
        ("gen-s0029_broken-empty", "empty-file"),
        ("gen-s0033_broken-bom", "utf8-bom"),
        ("gen-s0036_broken-nomessage+nullcontent", "pi-would-crash"),
        ("gen-s0040_broken-versionstring+missingid+badtimestamps", "header-version"),
        ("gen-s0040_broken-versionstring+missingid+badtimestamps", "invalid-timestamp"),
        ("gen-s0040_broken-versionstring+missingid+badtimestamps", "missing-field"),
        ("gen-s0045_v1-primitive", "pi-would-crash"),
        ("gen-s0048_broken-futureversion+badedit", "context-edit-invalid-replacement"),
    ],
)
def test_golden_broken_cases(case: str, code: str) -> None:
    assert code in {f.code for f in golden_report(case).findings}


@pytest.mark.parametrize("case", CASES)
def test_golden_case(case: str) -> None:
    """No check ever fails on the corpus, and pitools flags a Pi crash exactly where Pi crashed."""
    report = golden_report(case)
    found = {f.code for f in report.findings}
    assert "internal-check-error" not in found, report.findings
    assert ("pi-would-crash" in found) == bool(recorded_pi_errors(case)), recorded_pi_errors(case)
    if re.fullmatch(r"gen-s\d+_v[123]", case):
        # Sessions from the reference generator that Pi handles: at most warnings (it plants
        # dangling references, off-path compactions and the like on purpose).
        assert report.counts["error"] == 0, [f for f in report.findings if f.severity == "error"]


def test_a_clean_golden_session_has_no_findings() -> None:
    assert golden_report("gen-s0012_v3").findings == ()


# -- fuzzing --------------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_ID = st.sampled_from(["a", "b", "c", "d", None, 1, ""])
_ENTRY = st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "compaction", "context_edit", "label", "branch_summary", "custom", "x"])},
    optional={
        "id": _ID,
        "parentId": _ID,
        "timestamp": st.sampled_from(["2025-01-01T00:00:00.000Z", "2024-01-01", "bad", 5]),
        "message": st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "toolResult", "system", "custom", "odd"])},
            optional={"content": _JSON, "usage": _JSON, "toolCallId": _ID, "stopReason": _JSON},
        )
        | _JSON,
        "targetId": _ID,
        "firstKeptEntryId": _ID,
        "replacement": _JSON,
        "fromId": _ID,
        "summary": _JSON,
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    report = validate_file(path)
    assert "internal-check-error" not in {f.code for f in report.findings}, report.findings


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(_ENTRY | _JSON, max_size=8), version=st.sampled_from([3, 3, 2, None, "3"]))
def test_arbitrary_session_like_lines_never_break_a_check(tmp_path: Path, entries: list[Any], version: Any) -> None:
    header = dict(HEADER, version=version)
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in [header, *entries]) + "\n")
    report = validate_file(path)
    assert "internal-check-error" not in {f.code for f in report.findings}, report.findings
