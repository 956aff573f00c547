"""``pitools heal`` proven against Pi 1.6.0 and pi-ai 1.6.0 (recordings in ``golden/heal-*``).

For each case: the wedge's pi-ai body breaks provider rules; ``healed.jsonl`` (the wedge plus the
``context_edit`` entries ``--apply`` appends) and ``healed-new.jsonl`` (``-o``) are what pitools
writes today; Pi loads both (the oracle, every leaf, matches pitools); Pi's default leaf is the
healed one; Pi's LLM messages there equal pitools' dry-run prediction; pi-ai's body for the target
passes every ``--check`` rule; and every message of an entry no remedy names is unchanged.
The expected values are Pi's and pi-ai's recordings (``make golden``); none comes from pitools.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.json.parse import parse_json_line
from pitools.core.parity import diff_values, oracle_view
from pitools.core.request.check import check_request
from pitools.core.session.load import load
from pitools.ops.request import resolve_model
from tests import support
from tests.golden.heal_cases import CASES, GOLDEN, assert_only_named_changed, heal_files, plan_for

HEALED = ("healed.jsonl", "healed-new.jsonl")


def _records(case: str) -> dict[str, Any]:
    data = support.golden_requests(case, "heal")
    return {r["file"]: r for r in data["records"]}


def _model(case: str) -> dict[str, Any]:
    return resolve_model(CASES[case], use_config=False)


def _plan(case: str, file: str) -> Any:
    """pitools' dry-run plan for the file that was healed (for -o: the clone with ids rewritten)."""
    return plan_for(GOLDEN / case, file, CASES[case])


@pytest.mark.parametrize("case", sorted(CASES))
def test_healed_files_are_what_pitools_writes(case: str, tmp_path: Path) -> None:
    shutil.copyfile(GOLDEN / case / "session.jsonl", tmp_path / "session.jsonl")
    heal_files(tmp_path, CASES[case])
    for name in HEALED:
        assert (tmp_path / name).read_bytes() == (GOLDEN / case / name).read_bytes(), name


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_wedge_breaks_the_rules_in_pi_ais_own_body(case: str) -> None:
    record = _records(case)["session.jsonl"]
    payload = parse_json_line(record["payload"].encode())[0]
    errors = [f for f in check_request(_model(case), payload, []) if f.severity == "error"]
    assert errors


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("file", HEALED)
def test_pi_loads_the_healed_file(case: str, file: str) -> None:
    expected = json.loads(support.recording_text(GOLDEN / case / file.replace(".jsonl", ".pi.json.xz")))
    assert "error" not in expected and not expected.get("invalid")
    differences = diff_values(oracle_view(GOLDEN / case / file), expected)
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("file", HEALED)
def test_pi_resumes_where_the_dry_run_said_and_sees_what_it_predicted(case: str, file: str) -> None:
    record = _records(case)[file]
    plan = _plan(case, file)
    assert record["leaf"] == plan.new_leaf_id
    assert record["llm"] == js_stringify(plan.llm_messages)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("file", HEALED)
def test_pi_ais_body_after_healing_passes_every_rule(case: str, file: str) -> None:
    record = _records(case)[file]
    payload = parse_json_line(record["payload"].encode())[0]
    llm = parse_json_line(record["llm"].encode())[0]
    assert [f.code for f in check_request(_model(case), payload, llm)] == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_messages_no_remedy_names_are_unchanged(case: str) -> None:
    """Pi's LLM messages before and after ``--apply``, entry by entry: an entry no remedy names
    contributes the same bytes (pitools' mapping of messages to entries, proven above to give
    Pi's very messages)."""
    before_pi = parse_json_line(_records(case)["session.jsonl"]["llm"].encode())[0]
    after_pi = parse_json_line(_records(case)["healed.jsonl"]["llm"].encode())[0]
    plan = _plan(case, "healed.jsonl")
    named = {r.entry_id for r in plan.remedies}
    before = load(str(GOLDEN / case / "session.jsonl"))
    after = load(str(GOLDEN / case / "healed.jsonl"))
    assert_only_named_changed(named, before, after, before_pi, after_pi)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("file", ("session.jsonl", *HEALED))
def test_pitools_builds_pi_ais_body_for_every_file(case: str, file: str) -> None:
    """The body the dry run checks is pi-ai's, byte for byte (so its findings are the provider's)."""
    from pitools.core.request.build import build_request

    record = _records(case)[file]
    loaded = load(str(GOLDEN / case / file))
    sid = (loaded.session.header or {}).get("id")
    compared, problem = support.request_mismatch(
        record, lambda: build_request(loaded.index, record["leaf"], sid, _model(case), None), f"{case}/{file}"
    )
    assert compared and problem is None, problem
