"""``pitools heal`` on the two size rules, proven against Pi 1.6.0 and pi-ai 1.6.0 on generated wedges.

The wedges (a 4.8 MB image for Claude, a 26 MB body for Gemini) are too big to commit, so each test
regenerates one from its seed (``tests/golden/heal_generated.py``), checks it is byte for byte the
session that was recorded (a generator that drifts fails here, loudly), heals it as ``--apply`` and
``-o`` do, and compares with the recording in ``golden/heal-<case>/``: the same five checks as
``test_heal.py``, with the long strings of the recordings kept as their SHA-256 and length, and each
body and message list as the SHA-256 of its full text (pitools' full bytes against pi-ai's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.encode import js_stringify, to_json_bytes
from pitools.core.js.json.parse import parse_json_line
from pitools.core.parity import diff_values, oracle_view
from pitools.core.request.build import build_request
from pitools.core.request.check import check_request
from pitools.core.session.load import load
from pitools.ops.request import resolve_model
from tests import support
from tests.golden.heal_cases import assert_only_named_changed, heal_files, plan_for
from tests.golden.heal_generated import GENERATED, GOLDEN, generate, sha256, shrink

HEALED = ("healed.jsonl", "healed-new.jsonl")
#: The size rule each case is about.
RULE = {"heal-image-size": "image-too-large", "heal-request-size": "request-too-large"}

#: Each case generated and healed once per test process (tmp folders from ``tmp_path_factory``).
_FOLDERS: dict[str, Path] = {}


@pytest.fixture
def healed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The case's wedge and both healed files, as pitools writes them today, in a tmp folder
    named after the case."""
    case: str = request.param
    folder = _FOLDERS.get(case)
    if folder is None:
        folder = tmp_path_factory.mktemp("generated") / case
        folder.mkdir()
        generate(case, folder)
        heal_files(folder, GENERATED[case][0])
        _FOLDERS[case] = folder
    return folder


def _facts(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((GOLDEN / folder.name / "generated.json").read_text(encoding="utf-8"))
    return found


def _case(folder: Path) -> str:
    return folder.name


def _records(case: str) -> dict[str, Any]:
    return {r["file"]: r for r in support.golden_requests(case, "heal")["records"]}


def _model(case: str) -> dict[str, Any]:
    return resolve_model(GENERATED[case][0], use_config=False)


def _build(folder: Path, file: str, record: dict[str, Any]) -> Any:
    """pitools' request for ``file`` at Pi's leaf, its body proven to be pi-ai's recorded one byte
    for byte (so the rules run on pi-ai's body, and its messages are Pi's)."""
    loaded = load(str(folder / file))
    sid = (loaded.session.header or {}).get("id")
    built = build_request(loaded.index, record["leaf"], sid, _model(_case(folder)), None)
    data = to_json_bytes(built.payload)
    assert built.thinking_level == record["level"]
    assert (len(data), sha256(data)) == (record["payloadBytes"], record["payloadSha256"]), f"{file}: body differs"
    llm = (js_stringify(built.llm_messages) or "").encode("utf-8", "surrogatepass")
    assert (len(llm), sha256(llm)) == (record["llmBytes"], record["llmSha256"]), f"{file}: messages differ"
    return built


CASES = pytest.mark.parametrize("healed", sorted(GENERATED), indirect=True)


@CASES
def test_the_generator_writes_the_recorded_wedge_and_pitools_heals_it_the_same(healed: Path) -> None:
    facts = _facts(healed)
    source = (healed / "session.jsonl").read_bytes()
    assert (len(source), sha256(source)) == (facts["sessionBytes"], facts["sessionSha256"]), "the generator drifted"
    assert (healed / "healed.jsonl").read_bytes() == source + facts["appended"].encode("utf-8")
    assert sha256((healed / "healed-new.jsonl").read_bytes()) == facts["healedNewSha256"]


@CASES
def test_the_wedge_breaks_the_size_rule_in_pi_ais_own_body(healed: Path) -> None:
    case = _case(healed)
    record = _records(case)["session.jsonl"]
    built = _build(healed, "session.jsonl", record)
    errors = [f.code for f in check_request(_model(case), built.payload, built.llm_messages) if f.severity == "error"]
    assert errors == [RULE[case]] == _facts(healed)["checkCodes"]["session.jsonl"]


@CASES
@pytest.mark.parametrize("file", HEALED)
def test_pi_loads_the_healed_file(healed: Path, file: str) -> None:
    recording = GOLDEN / _case(healed) / file.replace(".jsonl", ".pi.json.xz")
    expected = json.loads(support.recording_text(recording))
    assert "error" not in expected and not expected.get("invalid")
    differences = diff_values(shrink(oracle_view(healed / file)), expected)
    assert not differences, "\n".join(differences)


@CASES
@pytest.mark.parametrize("file", HEALED)
def test_pi_resumes_where_the_dry_run_said_and_sees_what_it_predicted(healed: Path, file: str) -> None:
    case = _case(healed)
    record = _records(case)[file]
    plan = plan_for(healed, file, GENERATED[case][0])
    assert RULE[case] in [f.code for f in plan.before] and plan.after == []
    assert record["leaf"] == plan.new_leaf_id
    llm = (js_stringify(plan.llm_messages) or "").encode("utf-8", "surrogatepass")
    assert (len(llm), sha256(llm)) == (record["llmBytes"], record["llmSha256"])


@CASES
@pytest.mark.parametrize("file", HEALED)
def test_pi_ais_body_after_healing_passes_every_rule(healed: Path, file: str) -> None:
    case = _case(healed)
    record = _records(case)[file]
    built = _build(healed, file, record)
    assert [f.code for f in check_request(_model(case), built.payload, built.llm_messages)] == []


@CASES
@pytest.mark.parametrize("file", HEALED)
def test_the_healed_file_validates_clean(healed: Path, file: str) -> None:
    from pitools.core.validate import validate_file

    assert validate_file(healed / file).findings == ()


@CASES
def test_messages_no_remedy_names_are_unchanged(healed: Path) -> None:
    """As in test_heal.py, on the recorded (shrunk) LLM messages: a long string is its hash there,
    so equal shrunk messages are equal messages."""
    case = _case(healed)
    records = _records(case)
    before_pi = parse_json_line(records["session.jsonl"]["llm"].encode())[0]
    after_pi = parse_json_line(records["healed.jsonl"]["llm"].encode())[0]
    named = {r.entry_id for r in plan_for(healed, "healed.jsonl", GENERATED[case][0]).remedies}
    before, after = load(str(healed / "session.jsonl")), load(str(healed / "healed.jsonl"))
    assert_only_named_changed(named, before, after, before_pi, after_pi)
