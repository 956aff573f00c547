"""pitools branches: the table, the JSON shape, and sessions whose paths loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests import support
from tests.golden.test_conformance import GOLDEN, load_recording

ROOT = support.ROOT
SEED = GOLDEN / "seed-running-example" / "session.jsonl"
GEN = GOLDEN / "gen-s0026_v3" / "session.jsonl"
SCHEMA = json.loads((ROOT / "schemas" / "output" / "branches.schema.json").read_text())
ENV = {"PITOOLS_WIDTH": "120", "NO_COLOR": "1"}


def branches_json(run, path: Path) -> dict[str, Any]:
    data = json.loads(run("branches", path, "--format", "json").stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def test_seed_human(run, snapshot) -> None:
    r = run("branches", SEED, "--color", "never", env=ENV)
    assert r.stderr == ""
    assert r.stdout == snapshot


def test_generated_session_human(run, snapshot) -> None:
    r = run("branches", GEN, "--color", "never", env=ENV)
    assert r.stdout.startswith("Branches · multi line · 5 leaves of 152 entries")
    assert r.stdout == snapshot


def test_seed_json(run) -> None:
    data = branches_json(run, SEED)
    assert (data["defaultLeafId"], data["entryCount"], data["branchCount"]) == ("C1", 14, 2)
    a3, c1 = data["branches"]
    assert a3 == {
        "leafId": "A3",
        "isDefaultLeaf": False,
        "isLeaf": True,
        "entryCount": 6,
        "depth": 5,
        "timestamp": "2026-07-29T09:01:01Z",
        "forkId": "A2",
        "divergentUserId": "U2",
        "divergentPreview": "改成 JWT",
        "leafType": "message",
        "leafRole": "assistant",
        "leafPreview": "JWT 方案已完成",
        "label": None,
        "estimatedContextTokens": 16,
        "error": None,
    }
    assert (c1["leafId"], c1["isDefaultLeaf"], c1["forkId"], c1["divergentUserId"]) == ("C1", True, "A2", "U2B")
    assert (c1["leafType"], c1["leafRole"], c1["estimatedContextTokens"]) == ("compaction", None, 13)


@pytest.mark.parametrize(
    "case",
    [
        "gen-s0000_v3",
        "gen-s0026_v3",
        "gen-s0047_v3",
        "gen-s0036_broken-nomessage+nullcontent",
        "parity-tool-call-input",  # Pi's estimate throws only at the leaf with no usage after the odd call
    ],
)
def test_json_matches_pi_leaves(run, case: str) -> None:
    pi = load_recording(case, 20000)
    data = branches_json(run, GOLDEN / case / "session.jsonl")
    assert [b["leafId"] for b in data["branches"] if b["isLeaf"]] == pi["leaves"]
    assert data["defaultLeafId"] == pi["leafId"]
    for b in data["branches"]:
        rec = pi["byLeaf"][b["leafId"]]
        assert b["entryCount"] == len(rec["path"])
        if "estimatedContextTokens" in rec and "error" not in rec["estimatedContextTokens"]:
            assert b["estimatedContextTokens"] == rec["estimatedContextTokens"]["tokens"]
        else:
            assert b["estimatedContextTokens"] is None and b["error"].startswith("token estimate: TypeError")


def test_labels_are_the_leafs_own(run, tmp_path: Path) -> None:
    lines = SEED.read_text().splitlines()
    lines.append(
        '{"type":"label","id":"L1","parentId":"C1","timestamp":"2026-07-29T09:06:00Z","targetId":"A3","label":"jwt"}'
    )
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    data = branches_json(run, p)
    rows = {b["leafId"]: b for b in data["branches"]}
    # The label entry became the newest leaf (a child of C1); A3 carries the label.
    assert list(rows) == ["A3", "L1"] and rows["L1"]["isDefaultLeaf"]
    assert rows["A3"]["label"] == "jwt" and rows["L1"]["label"] is None
    assert rows["L1"]["entryCount"] == 13 and rows["L1"]["leafType"] == "label"
    human = run("branches", p, "--color", "never", env=ENV).stdout
    assert "jwt" in human


def test_cycle_is_an_error_field(run) -> None:
    path = GOLDEN / "broken-cycle" / "session.jsonl"
    data = branches_json(run, path)
    [b] = data["branches"]
    assert b["leafId"] == "b0000007" and b["entryCount"] is None and b["estimatedContextTokens"] is None
    assert "parentId cycle" in b["error"]
    r = run("branches", path, "--color", "never", env=ENV)
    assert "error: parentId cycle" in r.stdout and "Traceback" not in r.stderr


@pytest.mark.parametrize("case", ["broken-duplicate-ids", "gen-s0021_broken-garbagefirst+secondheader+dupidcycle"])
def test_duplicate_id_loops_do_not_hang(run, case: str) -> None:
    pi = load_recording(case, 20000)
    data = branches_json(run, GOLDEN / case / "session.jsonl")
    for b in data["branches"]:
        assert (b["error"] is not None) == ("error" in pi["byLeaf"][b["leafId"]])
    run("branches", GOLDEN / case / "session.jsonl", "--color", "never", env=ENV)


def test_not_a_session_is_one_line(run) -> None:
    r = run("branches", GOLDEN / "gen-s0029_broken-empty" / "session.jsonl", exit_code=1)
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1


def test_bad_format_is_a_usage_error(run) -> None:
    r = run("branches", SEED, "--format", "yaml", exit_code=2)
    assert "Invalid value for '--format'" in r.stderr
