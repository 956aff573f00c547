"""Each finding code's severity follows what Pi 1.6.0 does with the problem.

Pi tolerates it -> info; Pi misbehaves (wrong context, silently ignores something) -> warning;
Pi crashes or drops data -> error. Where a golden file shows Pi's behaviour, the test reads it from
the oracle's recording (``pi.krt20000.json.xz``), never from pitools.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pitools.core.validate import validate_file
from pitools.core.validate.codes import CODES, FIXES, GRADING, PI_BEHAVIOUR, explain
from tests import support

GOLDEN = support.GOLDEN


def recording(case: str) -> dict[str, Any]:
    return json.loads(support.recording_text(GOLDEN / case / "pi.krt20000.json.xz"))


def graded(case: str, code: str) -> list[str]:
    report = validate_file(str(GOLDEN / case / "session.jsonl"))
    severities = [f.severity for f in report.findings if f.code == code]
    assert severities, f"{case} has no {code} finding"
    return severities


def test_every_code_says_what_pi_does() -> None:
    assert PI_BEHAVIOUR.keys() == CODES.keys()
    for code in CODES:
        e = explain(code)
        assert e["piBehaviour"] == PI_BEHAVIOUR[code] and e["grading"] == GRADING[e["severity"]]


def test_readme_table_has_every_code_with_its_grade_and_reason() -> None:
    import re

    readme = (support.ROOT / "docs" / "validate.md").read_text(encoding="utf-8")
    rows = {c: (sev, why) for c, sev, why in re.findall(r"^\| `([a-z0-9-]+)` \| (\w+) \| .* \| (.*) \|$", readme, re.M)}
    for code, info in CODES.items():
        assert rows[code] == (info.severity, PI_BEHAVIOUR[code].replace("|", "\\|")), code


def test_info_codes_say_nothing_needs_fixing() -> None:
    # An info finding is something Pi copes with: its fix must not send the user to edit the file.
    for code, info in CODES.items():
        if info.severity == "info" and code != "needs-migration":
            assert FIXES[code].startswith("nothing needed"), code


def test_empty_file_is_info_because_pi_starts_a_session_in_it() -> None:
    pi = recording("gen-s0029_broken-empty")
    assert pi["emptyFile"] and pi["openError"] is None and "fresh session" in pi["openBehavior"]
    assert graded("gen-s0029_broken-empty", "empty-file") == ["info"]
    assert "nothing is lost" in PI_BEHAVIOUR["empty-file"]


def test_whitespace_only_file_stays_an_error_because_pi_refuses_it() -> None:
    pi = recording("gen-s0043_broken-whitespaceonly")
    assert "not a valid pi session" in pi["openError"]
    assert graded("gen-s0043_broken-whitespaceonly", "missing-header") == ["error"]


def test_unterminated_last_line_is_info_because_pi_reads_it_and_appends_a_newline() -> None:
    case = "gen-s0008_broken-crlf+unterminated"
    pi = recording(case)
    assert pi["loaderAppendedNewline"] and not pi["invalid"]
    last = json.loads((GOLDEN / case / "session.jsonl").read_bytes().splitlines()[-1])
    assert pi["entries"][-1]["id"] == last["id"]  # the unterminated entry is loaded
    assert graded(case, "unterminated-last-line") == ["info"]


def test_falsy_lines_are_info_because_pi_skips_them_and_loses_nothing() -> None:
    case = "gen-s0018_broken-selfparent+nonobject"
    assert not recording(case)["invalid"]
    assert set(graded(case, "falsy-line")) == {"info"}


def test_lines_before_the_header_are_info_because_pi_skips_them() -> None:
    case = "gen-s0021_broken-garbagefirst+secondheader+dupidcycle"
    pi = recording(case)
    assert not pi["invalid"] and pi["header"]["type"] == "session"
    assert graded(case, "header-not-first") == ["info"]
    # The unparsable line itself keeps its own, more serious finding.
    assert graded(case, "malformed-json") == ["error"]


def test_invalid_timestamps_are_info_because_pi_still_builds_the_context() -> None:
    case = "gen-s0040_broken-versionstring+missingid+badtimestamps"
    for leaf in recording(case)["byLeaf"].values():
        assert leaf["contextUsage"]["tokens"] > 0 and not isinstance(leaf["tokenEstimates"], dict)
    assert set(graded(case, "invalid-timestamp")) == {"info"}


def test_branch_summary_with_missing_from_is_info_because_pi_still_sends_it() -> None:
    case = "clone-s0014-labels"
    report = validate_file(str(GOLDEN / case / "session.jsonl"))
    (finding,) = [f for f in report.findings if f.code == "branch-summary-missing-from"]
    assert finding.severity == "info"
    in_context = [leaf for leaf in recording(case)["byLeaf"].values() if finding.entry_id in leaf["contextEntries"]]
    assert in_context


def test_label_with_missing_target_is_info_because_pi_just_records_it() -> None:
    case = "gen-s0021_broken-garbagefirst+secondheader+dupidcycle"
    assert "abad1dea" in recording(case)["labels"]  # Pi keeps the label for the missing id
    assert graded(case, "label-missing-target") == ["info"]


@pytest.mark.parametrize(
    ("code", "severity", "reason"),
    [
        ("tool-call-unanswered", "info", "No result provided"),
        ("line-too-long", "info", "no line limit"),
        ("context-edit-invalid-replacement", "error", "not iterable"),
        ("non-object-line", "error", "context is empty"),
        ("header-version", "warning", "migrated as v1"),
        ("header-version-mismatch", "error", "new id"),
        ("unparsed-line", "error", "RangeError"),
    ],
)
def test_grade_and_reason(code: str, severity: str, reason: str) -> None:
    assert CODES[code].severity == severity and reason in PI_BEHAVIOUR[code]


def test_invalid_edit_replacement_is_an_error_because_pi_throws() -> None:
    case = "gen-s0048_broken-futureversion+badedit"
    errors = [leaf["contextUsage"].get("error", "") for leaf in recording(case)["byLeaf"].values()]
    assert any("not iterable" in e for e in errors)
    assert set(graded(case, "context-edit-invalid-replacement")) == {"error"}


def test_primitive_line_in_v1_file_is_an_error_because_pi_throws() -> None:
    case = "gen-s0045_v1-primitive"
    assert "Cannot create property" in recording(case)["error"]
    assert set(graded(case, "non-object-line")) == {"error"}


def test_non_object_line_is_graded_by_where_pi_meets_it() -> None:
    # First value: Pi rejects the file. Last entry: it is Pi's leaf and the context is empty.
    # Elsewhere in a v3 file: an extra id-less root in /tree, every leaf's path and context as before.
    first = recording("nonobject-first-line")
    assert "not a valid pi session" in first["openError"]
    assert graded("nonobject-first-line", "non-object-line") == ["error"]

    last = recording("nonobject-last-line")
    assert last["leafId"] is None and None in last["roots"]
    assert graded("nonobject-last-line", "non-object-line") == ["error"]

    middle, clean = recording("nonobject-middle-line"), recording("seed-running-example")
    assert middle["leafId"] == clean["leafId"] and middle["leaves"] == clean["leaves"]
    assert None in middle["roots"] and None not in clean["roots"]
    for leaf in clean["leaves"]:
        for key in ("path", "context", "estimatedContextTokens"):
            assert middle["byLeaf"][leaf][key] == clean["byLeaf"][leaf][key], (leaf, key)
    assert graded("nonobject-middle-line", "non-object-line") == ["warning"]


def test_v3_entries_under_a_v1_header_are_an_error_because_pi_re_ids_and_flattens_them() -> None:
    case, clean = recording("header-version-mismatch"), recording("seed-running-example")
    assert case["migrated"] and not clean["migrated"]
    assert len(clean["leaves"]) == 2 and len(case["leaves"]) == 1  # the two branches became one chain
    ids = {e["id"] for e in case["entries"] if isinstance(e, dict)}
    assert not ids & {e["id"] for e in clean["entries"] if isinstance(e, dict)}  # every id replaced
    assert graded("header-version-mismatch", "header-version-mismatch") == ["error"]


@pytest.mark.parametrize("version", [None, 0, 1, "missing"])
def test_header_version_mismatch_for_every_v1_reading(tmp_path, version: Any) -> None:
    lines = (GOLDEN / "seed-running-example" / "session.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    if version == "missing":
        del header["version"]
    else:
        header["version"] = version
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    codes = [f.code for f in validate_file(str(path)).findings]
    assert codes.count("header-version-mismatch") == 1


def test_a_real_v1_file_is_no_mismatch() -> None:
    report = validate_file(str(GOLDEN / "gen-s0002_v1" / "session.jsonl"))
    assert "needs-migration" in {f.code for f in report.findings}
    assert "header-version-mismatch" not in {f.code for f in report.findings}


def test_missing_usage_crashes_context_usage_only_under_a_compaction() -> None:
    # Pi's getContextUsage reads a reply's usage only when a compaction is on the branch: the
    # recording throws at the leaf below the compaction that keeps the reply (a0000005) and not at
    # the leaf below a compaction that keeps only later entries (a0000007).
    case = "parity-usage-missing"
    pi = recording(case)
    assert "totalTokens" in pi["byLeaf"]["a0000005"]["contextUsage"]["error"]
    assert "error" not in pi["byLeaf"]["a0000007"]["contextUsage"]
    assert "reading 'input'" in pi["stats"]["error"]  # getSessionStats throws whatever the branch
    report = validate_file(str(GOLDEN / case / "session.jsonl"))
    crashes = [f for f in report.findings if f.code == "pi-would-crash"]
    assert [(f.line, f.severity) for f in crashes] == [(3, "error"), (3, "error")]
    assert "getSessionStats" in crashes[0].message and "getContextUsage" not in crashes[0].message
    assert "getContextUsage" in crashes[1].message and "compaction on line 5" in crashes[1].message


def test_missing_usage_without_a_compaction_is_no_context_usage_crash(tmp_path: Any) -> None:
    # The same file without its compactions (Pi's recording: a leaf with no compaction on its
    # branch, a0000007's, does not throw): only getSessionStats, which reads every reply, throws.
    lines = (GOLDEN / "parity-usage-missing" / "session.jsonl").read_text().splitlines()
    kept = [line for line in lines if '"type":"compaction"' not in line]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(kept) + "\n")
    messages = [f.message for f in validate_file(str(path)).findings if f.code == "pi-would-crash"]
    assert len(messages) == 1 and "getSessionStats" in messages[0] and "getContextUsage" not in messages[0]
