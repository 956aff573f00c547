"""Parity with pi-ai 1.6.0's request bodies: every golden session × four APIs.

The expected bodies are what pi-ai's real adapters handed to ``onPayload`` (recorded by
``scripts/record_requests.mjs`` into ``golden/<case>/requests.jsonl``, nothing sent): at the
default leaf and up to two other leaves, for ten models covering anthropic-messages,
openai-completions, openai-responses and google-generative-ai, at the session's thinking level and
at an explicit one. pitools must produce the same bytes (``JSON.stringify``'s), or fail where pi-ai
failed.
"""

from __future__ import annotations

import json
from functools import cache, partial
from typing import Any

import pytest

from pitools.core.request.build import SUPPORTED_APIS, build_request
from pitools.core.request.models import resolve_request_model
from pitools.errors import PitoolsError
from pitools.piconfig.catalog import chat_models
from tests import support

GOLDEN = support.GOLDEN
CASES = support.golden_request_cases()


pytestmark = pytest.mark.usefixtures("cli_recursion_limit")


@cache
def _recording(case: str) -> dict[str, Any]:
    return support.golden_requests(case)


@cache
def _loaded(case: str) -> Any:
    from pitools.core.session.load import load

    try:
        return load(str(GOLDEN / case / "session.jsonl"))
    except PitoolsError as exc:
        return exc


def test_every_golden_session_is_recorded() -> None:
    sessions = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))
    assert sessions == CASES
    apis: set[str] = set()
    models: set[str] = set()
    for case in CASES:
        for record in _recording(case)["records"]:
            models.add(record["model"])
            apis.add(resolve_request_model(record["model"], chat_models())["api"])
    assert apis == set(SUPPORTED_APIS)
    assert len(models) >= 8
    assert {_recording(c)["piAi"] for c in CASES} == {"1.6.0"}


def _jobs(case: str) -> list[dict[str, Any]]:
    return _recording(case)["records"]


@pytest.mark.parametrize("case", CASES)
def test_request_bodies_match_pi_ai(case: str) -> None:
    loaded = _loaded(case)
    records = _jobs(case)
    if isinstance(loaded, PitoolsError):
        # pitools refuses a file Pi refuses: Pi then recorded nothing (or only failures).
        assert all("payload" not in r for r in records), f"{case}: pitools refused ({loaded}) but pi-ai built bodies"
        return
    mismatches = []
    compared = 0
    for record in records:
        model = resolve_request_model(record["model"], chat_models())
        leaf = record.get("leafArg")
        leaf = loaded.leaf(None) if leaf is None else leaf
        where = f"{case} leaf={record.get('leafArg')} model={record['model']} thinking={record['thinking']}"
        seen, problem = support.request_mismatch(
            record,
            partial(
                build_request, loaded.index, leaf, (loaded.session.header or {}).get("id"), model, record["thinking"]
            ),
            where,
        )
        compared += seen
        if problem is not None:
            mismatches.append(problem)
    assert not mismatches, "\n".join(mismatches[:20])
    assert compared or not any("payload" in r for r in records)


def test_corpus_covers_the_hard_shapes() -> None:
    """The corpus holds what the issue lists, so the parity above means something."""
    text = "".join((GOLDEN / c / "session.jsonl").read_text(encoding="utf-8", errors="replace") for c in CASES)
    for marker in (
        '"type":"model_change"',
        '"thinkingSignature"',
        '"redacted":true',
        '"type":"image"',
        '"type":"compaction"',
        '"type":"branch_summary"',
        '"type":"custom_message"',
        '"role":"bashExecution"',
        '"stopReason":"aborted"',
        '"toolsRemoved"',
        "|fc_",
    ):
        assert marker in text, marker
    wedges = _recording("request-wedges")["records"]
    anthropic = [r for r in wedges if r["model"] == "anthropic/claude-sonnet-4-5" and r.get("leafArg") == "e030"]
    body = json.loads(anthropic[0]["payload"])
    ids = [
        b["id"] for m in body["messages"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    assert any(i.startswith("call_8f2KxQ3vLm9Tz1Rb_fc_") and len(i) == 64 for i in ids), ids
    results = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert any(r["content"] == "No result provided" and r["is_error"] for r in results)
