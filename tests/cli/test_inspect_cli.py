"""pitools inspect: values from Pi's recorded stats, leaves and labels."""

from __future__ import annotations

import json

import pytest

from pitools.core.parity import diff_values
from tests.golden.test_conformance import GOLDEN, load_recording


@pytest.mark.parametrize("case", ["gen-s0000_v3", "gen-s0013_broken-orphan+dupids", "v2-hook-message", "gen-s0006_v2"])
def test_json_agrees_with_pi(run, case: str) -> None:
    pi = load_recording(case, 20000)
    data = json.loads(run("inspect", GOLDEN / case / "session.jsonl", "--format", "json").stdout)
    assert [leaf["id"] for leaf in data["leaves"]] == pi["leaves"]
    assert data["roots"] == pi["roots"]
    assert data["defaultLeaf"] == pi["leafId"]
    assert data["uniqueIds"] == pi["entryCount"]
    assert data["name"] == pi["sessionName"]
    assert data["needsMigration"] == pi["migrated"]
    assert {k: v["label"] for k, v in data["labels"].items()} == {k: v["label"] for k, v in pi["labels"].items()}
    stats = {k: v for k, v in data["stats"].items() if k != "piError"}
    assert diff_values(stats, {k: v for k, v in pi["stats"].items() if k != "sessionId"}) == []
    assert diff_values(data["usageBreakdown"], pi["usageBreakdown"]) == []


def test_stats_where_pi_would_throw_are_flagged(run) -> None:
    data = json.loads(run("inspect", GOLDEN / "seed-running-example" / "session.jsonl", "--format", "json").stdout)
    assert "error" in load_recording("seed-running-example", 20000)["stats"]
    assert "piError" in data["stats"]
    assert data["stats"]["assistantMessages"] == 6


def test_human(run, snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN)  # a relative path: the output must not depend on the checkout's location
    r = run("inspect", "gen-s0000_v3/session.jsonl", "--color", "never", env={"PITOOLS_WIDTH": "120"})
    assert r.stdout == snapshot


def test_rejected_file(run) -> None:
    r = run("inspect", GOLDEN / "broken-missing-header" / "session.jsonl", exit_code=1)
    assert r.stderr.startswith("pitools: ") and "Traceback" not in r.stderr


SCHEMA = json.loads((GOLDEN.parent / "schemas" / "output" / "inspect.schema.json").read_text())


@pytest.mark.parametrize("case", sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl")))
def test_json_matches_its_schema_on_every_golden_session(run, case: str) -> None:
    import jsonschema

    r = run("inspect", GOLDEN / case / "session.jsonl", "--format", "json", exit_code=None)
    if r.exit_code == 1:  # refused (e.g. a byte order mark, or where Pi throws): one line, no JSON
        assert r.stdout == "" and r.stderr.startswith("pitools: ") and r.stderr.count("\n") == 1
        return
    assert r.exit_code == 0, r.stderr
    jsonschema.validate(json.loads(r.stdout), SCHEMA)


def test_schema_is_strict(run) -> None:
    import jsonschema

    data = json.loads(run("inspect", GOLDEN / "gen-s0000_v3" / "session.jsonl", "--format", "json").stdout)
    jsonschema.validate(data, SCHEMA)
    for broken in ({**data, "extra": 1}, {k: v for k, v in data.items() if k != "leaves"}, {**data, "fileBytes": -1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)


def test_a_session_on_stdin_is_named_dash(run) -> None:
    # `inspect -` names the session as the user gave it, never the private spool file.
    seed = GOLDEN / "seed-running-example" / "session.jsonl"
    result = run("inspect", "-", input=seed.read_bytes())
    assert "file              - (stdin) (2,470 bytes, 15 lines)" in result.stdout
    assert "pitools-stdin" not in result.stdout
    data = json.loads(run("inspect", "-", "--format", "json", input=seed.read_bytes()).stdout)
    assert data["path"] == "-"


def test_messages_about_a_session_on_stdin_name_it_dash(run) -> None:
    seed = GOLDEN / "seed-running-example" / "session.jsonl"
    r = run("context", "-", "--leaf", "nope", input=seed.read_bytes(), exit_code=1)
    assert r.stderr.startswith("pitools: -: --leaf 'nope' matches no entry") and "pitools-stdin" not in r.stderr
    broken = GOLDEN / "broken-orphan" / "session.jsonl"
    r = run("validate", "-", input=broken.read_bytes(), exit_code=1)
    assert r.stdout.startswith("-:7: error orphan-entry") and "pitools-stdin" not in r.stdout
