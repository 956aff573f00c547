"""The pytest plugin as a project that uses pitools meets it: pytest run on throwaway projects.

Nothing is registered by hand: the plugin loads through its ``pytest11`` entry point, as it does for
anyone who installs pitools. The snapshot a run writes is checked against Pi's own recording.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests import support
from tests.support import ROOT, golden_session

EXAMPLE = ROOT / "examples" / "pytest-project"


def copy_example(pytester: pytest.Pytester) -> Path:
    for item in EXAMPLE.iterdir():
        if item.name in ("__pycache__", ".pytest_cache"):
            continue
        target = pytester.path / item.name
        if item.is_dir():
            shutil.copytree(item, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(item, target)
    return pytester.path


def pi_recording(case: str, krt: int = 20000) -> dict[str, Any]:
    blob = support.recording_text(golden_session(case).parent / f"pi.krt{krt}.json.xz")
    data: dict[str, Any] = orjson.loads(blob)
    return data


def test_the_plugin_is_registered_by_its_entry_point() -> None:
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "pitools"]
    assert entry.value == "pitools.testing.plugin"


def test_the_example_session_is_the_golden_sample() -> None:
    # So the Pi recordings of golden/sample-session say what the example's snapshots must hold.
    assert (EXAMPLE / "sessions" / "bugfix.jsonl").read_bytes() == golden_session("sample-session").read_bytes()


def test_the_example_project_passes_as_committed(pytester: pytest.Pytester) -> None:
    copy_example(pytester)
    result = pytester.runpytest("-p", "no:randomly", "--snapshot-warn-unused")
    # 6 tests in tests/ + one validate item for sessions/bugfix.jsonl.
    result.assert_outcomes(passed=7)


def test_the_committed_snapshots_hold_pi_context() -> None:
    pi = pi_recording("sample-session")
    snapshots = EXAMPLE / "tests" / "__snapshots__" / "test_sessions"
    default = json.loads((snapshots / "test_context_at_the_default_leaf.json").read_text())
    side = json.loads((snapshots / "test_context_on_the_side_branch.json").read_text())
    for doc, leaf in ((default, pi["leafId"]), (side, "61f0c3a9")):
        assert doc["leafId"] == leaf
        assert doc["contextEntries"] == pi["byLeaf"][leaf]["contextEntries"]
        assert doc["messages"] == pi["byLeaf"][leaf]["context"]["messages"]
        assert doc["tokenEstimates"] == pi["byLeaf"][leaf]["tokenEstimates"]
    plan = json.loads((snapshots / "test_compaction_plan.json").read_text())
    pi_plan = pi_recording("sample-session", 300)["byLeaf"][pi["leafId"]]["compaction"]
    assert plan["preparation"]["firstKeptEntryId"] == pi_plan["firstKeptEntryId"]
    assert plan["preparation"]["tokensBefore"] == pi_plan["tokensBefore"]


def test_snapshots_are_written_readably_and_then_hold(pytester: pytest.Pytester) -> None:
    root = copy_example(pytester)
    shutil.rmtree(root / "tests" / "__snapshots__")
    pytester.runpytest("-p", "no:randomly", "--snapshot-update").assert_outcomes(passed=7)
    written = root / "tests" / "__snapshots__" / "test_sessions" / "test_context_at_the_default_leaf.json"
    text = written.read_text(encoding="utf-8")
    # One value a line, in pitools' key order.
    assert text.startswith('{\n  "pi": "1.6.0",\n  "leafId": "39b7f4d0",\n  "path": [\n')
    assert text == (EXAMPLE / "tests" / "__snapshots__" / "test_sessions" / written.name).read_text(encoding="utf-8")
    markdown = written.with_name("test_context_as_markdown.md").read_text(encoding="utf-8")
    assert "parseDuration" in markdown
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=7)


def test_a_changed_message_fails_its_snapshot_and_shows_which(pytester: pytest.Pytester) -> None:
    root = copy_example(pytester)
    session = root / "sessions" / "bugfix.jsonl"
    text = session.read_text(encoding="utf-8")
    assert text.count("Nice. Should") == 1
    session.write_text(text.replace("Nice. Should", "Great. Should"), encoding="utf-8")
    result = pytester.runpytest("-p", "no:randomly", "-k", "default_leaf or markdown")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*Great. Should*"])


def write_sessions(root: Path) -> None:
    (root / "sessions").mkdir()
    shutil.copy(golden_session("sample-session"), root / "sessions" / "good.jsonl")
    shutil.copy(golden_session("broken-orphan"), root / "sessions" / "orphan.jsonl")


def test_validate_option_makes_one_item_per_file(pytester: pytest.Pytester) -> None:
    write_sessions(pytester.path)
    result = pytester.runpytest("--pi-sessions-validate", "sessions/*.jsonl", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*sessions/good.jsonl::pitools-validate PASSED*",
            "*sessions/orphan.jsonl::pitools-validate FAILED*",
            "*pitools validate fails on *orphan.jsonl:*",
            "*error: orphan-entry *orphan.jsonl:7 parentId gone0000 matches no entry*",
        ]
    )


def test_validate_items_obey_k_and_the_ini_setting(pytester: pytest.Pytester) -> None:
    write_sessions(pytester.path)
    pytester.makeini("[pytest]\npi_sessions_validate =\n    sessions/*.jsonl\n")
    pytester.runpytest("-k", "good").assert_outcomes(passed=1)
    pytester.runpytest().assert_outcomes(passed=1, failed=1)


def test_strict_fails_on_warnings(pytester: pytest.Pytester) -> None:
    (pytester.path / "s").mkdir()
    # A session whose only finding is a warning: a header version from the future (Pi reads it as v3).
    lines = golden_session("sample-session").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["version"] = 4
    lines[0] = json.dumps(header, ensure_ascii=False, separators=(",", ":"))
    (pytester.path / "s" / "w.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pytester.runpytest("--pi-sessions-validate", "s/*.jsonl").assert_outcomes(passed=1)
    result = pytester.runpytest("--pi-sessions-validate", "s/*.jsonl", "--pi-sessions-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*warning: header-version *w.jsonl:1 version 4*"])


def test_a_glob_that_matches_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--pi-sessions-validate", "nowhere/*.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no file matches 'nowhere/[*].jsonl'*"])


def test_fixture_reports_a_missing_file_clearly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_missing(pi_session):
            pi_session("sessions/none.jsonl").context()
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*pi_session: no such session file: *none.jsonl*"])


def test_assert_valid_message_in_a_user_test(pytester: pytest.Pytester) -> None:
    write_sessions(pytester.path)
    pytester.makepyfile(
        """
        def test_orphan(pi_session):
            pi_session("sessions/orphan.jsonl").assert_valid()
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: *orphan.jsonl: 1 finding(s) pitools validate fails on:*"])
