"""pitools.testing.PiSession: the documents it returns are the CLI's, and they say what Pi says.

The expected Pi values come from the golden recordings (the reference oracle's output), never from
pitools: context paths, context entries and messages at several leaves, the compaction plan's cut.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pitools.testing import PiSession, PiSessionError
from tests import support
from tests.support import golden_session

CASES = ["sample-session", "reference-written", "seed-running-example", "gen-s0001_v3", "gen-s0022_v3"]


def recording(case: str, krt: int = 20000) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(support.recording_text(golden_session(case).parent / f"pi.krt{krt}.json.xz"))
    return data


def leaves(case: str) -> list[str]:
    rec = recording(case)
    return [leaf for leaf in rec["byLeaf"] if "error" not in rec["byLeaf"][leaf]]


@pytest.mark.parametrize("case", CASES)
def test_context_matches_pi_at_every_leaf(case: str) -> None:
    rec = recording(case)
    session = PiSession(golden_session(case))
    for leaf in leaves(case):
        ours = session.context(leaf=leaf)
        pi = rec["byLeaf"][leaf]
        assert ours["leafId"] == leaf
        assert ours["path"] == pi["path"]
        assert ours["contextEntries"] == pi["contextEntries"]
        assert ours["thinkingLevel"] == pi["context"]["thinkingLevel"]
        assert ours["model"] == pi["context"]["model"]
        assert ours["messages"] == pi["context"]["messages"]
        assert ours["tokenEstimates"] == pi["tokenEstimates"]


@pytest.mark.parametrize("case", CASES)
def test_context_is_what_the_command_prints(case: str, run: Any) -> None:
    path = golden_session(case)
    printed = orjson.loads(run("context", path, "--format", "json").stdout_bytes)
    assert PiSession(path).context() == printed


def test_context_takes_every_kind_of_leaf_reference() -> None:
    session = PiSession(golden_session("sample-session"))
    by_id = session.context(leaf="61f0c3a9")
    assert session.context(leaf="61f0c3") == by_id  # unique prefix
    labelled = session.context(leaf="tests-green")  # a label
    assert labelled["leafId"] == "4d61a9e0"
    line8 = orjson.loads(golden_session("sample-session").read_bytes().splitlines()[7])["id"]
    assert session.context(leaf="L8")["leafId"] == line8  # an entry by its line in the file


@pytest.mark.parametrize("krt", [20000, 2000, 300])
def test_plan_matches_pi(krt: int) -> None:
    case = "reference-written"
    pi = recording(case, krt)
    default = pi["leafId"]
    plan = PiSession(golden_session(case)).plan(keep_recent_tokens=krt, context_window=200000)
    expected = pi["byLeaf"][default]["compaction"]
    if expected is None:
        assert plan["preparation"] is None
    else:
        prep = plan["preparation"]
        assert prep["firstKeptEntryId"] == expected["firstKeptEntryId"]
        assert prep["tokensBefore"] == expected["tokensBefore"]
        assert prep["isSplitTurn"] == expected["isSplitTurn"]
    assert plan["config"]["agentDir"] is None  # nothing machine-specific without use_config


def test_plan_is_the_dry_run_document(run: Any) -> None:
    path = golden_session("gen-s0001_v3")
    printed = orjson.loads(run("compact", path, "--dry-run", "--no-config", "--format", "json").stdout_bytes)
    assert PiSession(path).plan() == printed


def test_tree_is_pi_tree() -> None:
    case = "sample-session"
    pi = recording(case)
    tree = PiSession(golden_session(case)).tree(filter="all")
    assert tree["leafId"] == pi["leafId"]
    seen: list[str] = []

    def walk(nodes: list[dict[str, Any]]) -> None:
        for node in nodes:
            seen.append(node["id"])
            seen.extend(link["id"] for link in node.get("chain", []))
            walk(node.get("children", []))

    walk(tree["roots"])
    assert tree["entryCount"] == pi["entryCount"]
    assert len(seen) == tree["shownCount"] == len(set(seen))
    assert set(seen) <= {e["id"] for e in pi["entries"]}


def test_validate_reports_findings_with_lines() -> None:
    result = PiSession(golden_session("broken-orphan")).validate()
    assert not result.ok
    assert result.codes == ["orphan-entry"]
    (finding,) = result.errors
    assert finding.line == 7
    assert finding.entry_id == "b0000005"


def test_assert_valid_lists_each_error_as_code_path_line_message() -> None:
    path = golden_session("broken-orphan")
    with pytest.raises(AssertionError) as info:
        PiSession(path).assert_valid()
    message = str(info.value)
    assert f"orphan-entry {path}:7 parentId gone0000 matches no entry" in message


def test_assert_valid_passes_a_clean_session_and_strict_fails_on_warnings(tmp_path: Path) -> None:
    clean = PiSession(golden_session("sample-session"))
    assert clean.assert_valid().findings == []
    warned = golden_session("gen-s0048_broken-futureversion+badedit")
    result = PiSession(warned).validate(ignore=("context-edit-invalid-replacement", "pi-would-crash"))
    assert result.ok and "header-version" in result.codes
    with pytest.raises(AssertionError, match="header-version"):
        PiSession(warned).assert_valid(strict=True, ignore=("context-edit-invalid-replacement", "pi-would-crash"))


def test_refusals_raise_with_the_cli_message(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(PiSessionError) as info:
        PiSession(missing).context()
    assert info.value.exit_code == 1
    assert "nope.jsonl" in str(info.value)
    with pytest.raises(PiSessionError) as info:
        PiSession(golden_session("sample-session")).context(leaf="zzzz-no-such-entry")
    assert info.value.exit_code in (1, 2)
    assert "zzzz-no-such-entry" in str(info.value)


def test_reading_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(golden_session("gen-s0002_v1").read_bytes())  # a v1 file Pi would rewrite
    before = path.read_bytes()
    session = PiSession(path)
    session.validate()
    session.context()
    session.plan()
    session.tree()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
