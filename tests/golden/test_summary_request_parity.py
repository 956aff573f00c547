"""The summarizer's request body is pi-ai 1.6.0's, byte for byte.

``scripts/record_requests.mjs --summaries`` runs Pi's own ``compact()`` and
``generateBranchSummary()`` on golden sessions and captures the body pi-ai builds for each
summarization call (compaction history summary, split-turn prefix summary, branch summary) for
several models and thinking levels, into ``golden/summary-requests.json``. Each payload there is
pi-ai's ``JSON.stringify`` text with the prompt replaced by a token (the prompts are stored once).

pitools resolves each model the way ``compact --apply`` does (``resolve_model``), builds the body
with :func:`pitools.summarize.body.build_body` (the request mirror underneath) and must produce
the same bytes from Pi's recorded prompts. Google's API is not one the HTTP summarizer calls (it
goes through Google's OpenAI-compatible endpoint), so for Google only the request mirror is compared.
End to end, the requests ``compact --apply`` and ``navigate --summarize`` make from the same golden
sessions give the same bytes but for the prompt wording, which is pitools' own.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from pitools.core.js.json.encode import js_stringify
from pitools.core.request.build import build_payload
from pitools.core.request.common import Notes
from pitools.core.request.models import resolve_request_model
from pitools.piconfig.catalog import chat_models
from pitools.summarize import SummaryRequest, resolve_model
from pitools.summarize.body import build_body, summary_level, summary_messages
from pitools.summarize.client import HTTP_APIS, http_request
from tests import support

RECORDING = support.GOLDEN / "summary-requests.json"
ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-test-key-0000",
    "OPENAI_API_KEY": "sk-test-key-0000",
    "GROQ_API_KEY": "gsk-test-key-0000",
    "DEEPSEEK_API_KEY": "sk-test-key-0000",
    "GEMINI_API_KEY": "test-key-0000",
}


@cache
def _recording() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDING.read_text(encoding="utf-8"))
    return data


def _records() -> list[tuple[str, int]]:
    return [
        (case["case"], i)
        for case in _recording()["cases"]
        for i, record in enumerate(case["records"])
        if "payload" in record
    ]


def _expected(case: dict[str, Any], record: dict[str, Any]) -> tuple[str, str]:
    """(prompt, pi-ai's payload text)."""
    prompt = case["prompts"][record["promptIndex"]]
    escaped = (js_stringify(prompt) or '""')[1:-1]
    return prompt, record["payload"].replace(_recording()["promptToken"], escaped)


def _request(prompt: str, requested: str) -> SummaryRequest:
    # pitools passes the session's level (None for off); the body clamps it as Pi's agent has.
    level = None if requested == "off" else requested
    return SummaryRequest(system_prompt=_recording()["systemPrompt"], prompt=prompt, reasoning_level=level)  # type: ignore[arg-type]


def _case(name: str) -> dict[str, Any]:
    return next(c for c in _recording()["cases"] if c["case"] == name)


def test_the_recording_is_pi_ai_1_6_0_and_covers_each_call() -> None:
    data = _recording()
    assert data["piAi"] == "1.6.0"
    records = [r for c in data["cases"] for r in c["records"]]
    assert not [r for r in records if "error" in r]
    assert {r["kind"] for r in records} == {"history", "turnPrefix", "branch"}
    apis = {resolve_request_model(r["model"], chat_models())["api"] for r in records}
    assert apis == {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"}
    assert len(records) == 288


@pytest.mark.parametrize(("name", "index"), _records(), ids=lambda v: str(v))
def test_the_summarizer_body_is_pi_ais(name: str, index: int) -> None:
    case = _case(name)
    record = case["records"][index]
    prompt, expected = _expected(case, record)
    request = _request(prompt, record["requested"])
    pi_model = resolve_request_model(record["model"], chat_models())
    if pi_model["api"] in HTTP_APIS:
        provider, _, model_id = record["model"].partition("/")
        spec = resolve_model(record["model"], session_model=None, env=ENV, use_config=False)
        assert (spec.provider, spec.model_id, spec.api) == (provider, model_id, pi_model["api"])
        got = js_stringify(build_body(spec, request))
    else:
        # The request mirror alone, with Pi's summary context and options.
        level = summary_level(pi_model, request)
        assert level == record["level"]
        messages = summary_messages(request)
        got = js_stringify(build_payload(pi_model, messages, level, None, Notes(), cache_retention="none").body)
    assert got == expected


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "openai/gpt-5", "groq/openai/gpt-oss-120b"])
def test_what_is_sent_is_pi_ais_body_without_streaming(model: str) -> None:
    """The transport changes only what streaming needs: ``stream`` false, no ``stream_options``;
    Anthropic's ``betas`` go in the ``anthropic-beta`` header (as Anthropic's SDK sends them)."""
    case = _case("sample-session")
    record = next(r for r in case["records"] if r["model"] == model and r["requested"] == "medium")
    prompt, expected = _expected(case, record)
    spec = resolve_model(model, session_model=None, env=ENV, use_config=False)
    url, headers, payload = http_request(spec, build_body(spec, _request(prompt, "medium")))
    pi_body = json.loads(expected)
    betas = pi_body.pop("betas", None)
    pi_body["stream"] = False
    pi_body.pop("stream_options", None)
    assert json.loads(payload) == pi_body
    assert list(json.loads(payload)) == list(pi_body)  # same field order
    if betas:
        assert headers["anthropic-beta"] == ",".join(betas)
    suffix = {"anthropic-messages": "/v1/messages", "openai-responses": "/responses"}.get(spec.api, "/chat/completions")
    assert url == spec.base_url.rstrip("/") + suffix


def _compaction_requests(name: str, keep: int) -> dict[str, SummaryRequest]:
    from pitools.core.compaction.plan import summary_inputs
    from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
    from pitools.core.session.load import load

    loaded = load(str(support.golden_session(name)))
    leaf = _case(name)["leaf"]
    prep = prepare_compaction(loaded.index.get_branch(leaf), CompactionSettings(keep_recent_tokens=keep))
    assert prep is not None
    return {r.kind: r for r in summary_inputs(loaded, leaf, prep)}


def _branch_request(name: str, target: str, context_window: int) -> SummaryRequest:
    from pitools.core.compaction.branch import plan_navigation, summary_request, token_budget
    from pitools.core.session.load import load

    loaded = load(str(support.golden_session(name)))
    budget = token_budget(context_window, 16384)  # generateBranchSummary's default reserveTokens
    plan = plan_navigation(loaded.index, _case(name)["leaf"], target, budget)
    request: SummaryRequest = summary_request(loaded.index, plan)
    return request


def _with_own_wording(case: dict[str, Any], record: dict[str, Any], request: SummaryRequest) -> str:
    """pi-ai's payload with pitools' prompts in place of Pi's: pitools words its instructions and
    system prompt itself (the conversation it serializes is Pi's; ``tests/unit/compaction`` checks
    that part against the oracle), so only those two strings may differ."""
    payload = record["payload"].replace(_recording()["promptToken"], (js_stringify(request.prompt) or '""')[1:-1])
    pi_system = (js_stringify(_recording()["systemPrompt"]) or '""')[1:-1]
    assert payload.count(pi_system) == 1
    return payload.replace(pi_system, (js_stringify(request.system_prompt) or '""')[1:-1])


@pytest.mark.parametrize("name", [c["case"] for c in _recording()["cases"]])
def test_what_compact_and_navigate_build_is_pi_ais_body(name: str) -> None:
    """End to end: the request pitools makes from the golden session gives pi-ai's bytes, but for
    the wording of the instructions and of the system prompt, which are pitools' own."""
    case = _case(name)
    checked = 0
    for record in case["records"]:
        if record["model"] not in ("anthropic/claude-sonnet-4-5", "openai/gpt-5", "deepseek/deepseek-v4-pro"):
            continue
        spec = resolve_model(record["model"], session_model=None, env=ENV, use_config=False)
        if record["kind"] == "branch":
            request = _branch_request(name, record["target"], spec.context_window)
        else:
            request = _compaction_requests(name, record["keepRecentTokens"])[record["kind"]]
        level = None if record["requested"] == "off" else record["requested"]
        request = request.model_copy(update={"reasoning_level": level})
        assert js_stringify(build_body(spec, request)) == _with_own_wording(case, record, request)
        checked += 1
    assert checked >= 9
