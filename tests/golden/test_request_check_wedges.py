"""``request --check`` rules on bodies pi-ai 1.6.0 really builds.

``golden/request-wedges/check-cases.json`` (written by ``tests/golden/request_cases.py``) holds small
sessions with the shapes pi-ai passes to the provider unchanged: tool arguments stored as a JSON
string, a lone surrogate inside arguments, image bytes that are not the declared type or no base64,
a thinking budget below the model's minimum, an MCP-style tool name. ``scripts/record_requests.mjs
--check-wedges`` recorded what pi-ai's adapters hand to ``onPayload`` for each
(``check-requests.jsonl``). Each job lists the rule codes the provider's documented behaviour
expects on that body (the sources are in ``RULES``); pitools must find exactly those on pi-ai's body,
and build the same bytes itself.
"""

from __future__ import annotations

import json
from functools import cache, partial
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.parse import parse_json_line
from pitools.core.request.build import build_request
from pitools.core.request.check import RULES, check_request
from pitools.core.request.models import resolve_request_model
from pitools.piconfig.catalog import chat_models
from tests import support

FOLDER = support.GOLDEN / "request-wedges"


@cache
def _cases() -> dict[str, Any]:
    return json.loads((FOLDER / "check-cases.json").read_text(encoding="utf-8"))


@cache
def _records() -> list[dict[str, Any]]:
    data = support.golden_requests(FOLDER.name, "check-requests")
    assert data["piAi"] == "1.6.0"
    return list(data["records"])


def _pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    jobs, records = _cases()["jobs"], _records()
    assert len(jobs) == len(records)
    return list(zip(jobs, records, strict=True))


def _id(pair: tuple[dict[str, Any], dict[str, Any]]) -> str:
    job = pair[0]
    return f"{job['case']}-{job['model']}-{job['thinking']}-{json.dumps(job['settings'], sort_keys=True)}"


def test_the_cases_file_is_what_request_cases_writes() -> None:
    from tests.golden.request_cases import check_wedges

    assert _cases() == json.loads(json.dumps(check_wedges()))


def test_every_new_rule_is_met_on_a_pi_ai_body() -> None:
    expected = {code for job, record in _pairs() if "payload" in record for code in job["expect"]}
    new = {
        "tool-arguments-not-object",
        "tool-arguments-lone-surrogate",
        "image-data-mismatch",
        "image-base64-invalid",
        "thinking-budget-too-small",
    }
    assert new <= expected <= set(RULES)
    # and each API that the rules name
    apis = {resolve_request_model(job["model"], chat_models())["api"] for job, _ in _pairs()}
    assert apis == {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"}


@pytest.mark.parametrize("pair", _pairs(), ids=_id)
def test_rules_on_pi_ais_body(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    job, record = pair
    assert record["case"] == job["case"] and record["model"] == job["model"]
    assert "payload" in record, record.get("error")
    body = parse_json_line(record["payload"].encode("utf-8", "surrogatepass"))[0]
    model = resolve_request_model(job["model"], chat_models())
    assert [f.code for f in check_request(model, body, [])] == job["expect"]


@pytest.mark.parametrize("pair", _pairs(), ids=_id)
def test_pitools_builds_the_same_body(pair: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path) -> None:
    from pitools.core.session.load import load

    job, record = pair
    path = tmp_path / "case.jsonl"
    path.write_text(_cases()["sessions"][job["case"]], encoding="utf-8")
    loaded = load(str(path))
    model = resolve_request_model(job["model"], chat_models())
    build = partial(
        build_request,
        loaded.index,
        loaded.leaf(None),
        (loaded.session.header or {}).get("id"),
        model,
        job["thinking"],
        budgets=job["settings"].get("thinkingBudgets"),
    )
    seen, problem = support.request_mismatch(record, build, _id(pair))
    assert seen and problem is None, problem
    built = build()
    assert [f.code for f in check_request(model, built.payload, built.llm_messages)] == job["expect"]
