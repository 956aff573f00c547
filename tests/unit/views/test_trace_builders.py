"""Pure builders behind export otlp/atif: edge cases a golden session may not hold."""

from __future__ import annotations

from typing import Any

import pytest

from pitools.core.views.atif import branch_trajectory
from pitools.core.views.otel import branch_trace

HEADER = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w/p"}
USAGE = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 7, "cost": {"total": 0.5}}


def _branch() -> list[dict[str, Any]]:
    return [
        {
            "type": "message",
            "id": "u",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "message",
            "id": "a",
            "parentId": "u",
            "timestamp": "2026-01-01T00:00:05.000Z",
            "message": {
                "role": "assistant",
                "provider": "google",
                "model": "gemini-x",
                "stopReason": "toolUse",
                "usage": USAGE,
                "timestamp": 1767225602000,  # started at 00:00:02
                "content": [
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"cmd": "ls"}},
                    {"type": "toolCall", "id": "c2", "name": "read", "arguments": "not an object"},
                ],
            },
        },
        {
            "type": "message",
            "id": "r1",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:09.000Z",
            "message": {"role": "toolResult", "toolCallId": "c1", "content": "boom", "isError": True},
        },
        {
            "type": "message",
            "id": "r9",
            "parentId": "r1",
            "timestamp": "not a time",
            "message": {"role": "toolResult", "toolCallId": "nope", "content": "orphan"},
        },
    ]


def test_otel_spans_timings_errors_and_cache_accounting() -> None:
    trace = branch_trace(HEADER, _branch())
    root, chat, t1, t2 = trace.spans
    assert (root.start_ms, root.end_ms) == (1767225601000, 1767225609000)
    assert (chat.start_ms, chat.end_ms) == (1767225602000, 1767225605000)
    assert chat.attributes["gen_ai.provider.name"] == "gcp.gemini" and chat.attributes["pi.provider"] == "google"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 117
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_call"]
    assert (t1.start_ms, t1.end_ms, t1.error) == (1767225605000, 1767225609000, "the tool reported an error")
    assert t2.attributes["pi.tool.result_missing"] is True and t2.end_ms == t2.start_ms
    assert root.attributes["gen_ai.usage.input_tokens"] == 117
    # Copied history keeps its spans (marked) but leaves the root's totals.
    copied = branch_trace(HEADER, _branch(), copied={"u", "a"})
    assert copied.spans[1].attributes["pi.copied_context"] is True
    assert copied.spans[0].attributes["gen_ai.usage.input_tokens"] == 0
    assert copied.trace_id == trace.trace_id and len({s.span_id for s in trace.spans}) == 4


def test_atif_orphan_result_and_non_object_arguments() -> None:
    atif = pytest.importorskip("atif")
    data = branch_trajectory(HEADER, _branch(), copied={"u"})
    trajectory = atif.Trajectory.model_validate(data)
    user, agent, orphan = trajectory.steps
    assert user.is_copied_context is True and agent.is_copied_context is None
    assert agent.tool_calls[1].arguments == {"_value": "not an object"}
    assert [r.source_call_id for r in agent.observation.results] == ["c1"]
    assert orphan.source == "system" and orphan.observation.results[0].source_call_id is None
    assert orphan.timestamp is None  # the entry's time does not parse
    assert agent.metrics.prompt_tokens == 117 and agent.metrics.cached_tokens == 100
