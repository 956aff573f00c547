"""Anthropic Messages: parsing the reply to a summary request.

The request body is pi-ai's (:mod:`pitools.summarize.body`); the reply is one JSON message
(``"stream": false``).
"""

from __future__ import annotations

from typing import Any

from pitools.summarize.errors import (
    ModelLengthError,
    ModelRequestError,
    ModelResponseError,
    ModelToolCallError,
)
from pitools.summarize.types import ModelSpec
from pitools.summarize.usage import make_usage, token_count


def parse_usage(spec: ModelSpec, raw: object) -> dict[str, Any]:
    """Token counts from Anthropic's usage object, priced with the model's cost."""
    if not isinstance(raw, dict):
        return make_usage(0, 0, 0, 0, spec.cost)
    return make_usage(
        token_count(raw.get("input_tokens")),
        token_count(raw.get("output_tokens")),
        token_count(raw.get("cache_read_input_tokens")),
        token_count(raw.get("cache_creation_input_tokens")),
        spec.cost,
    )


def parse_response(spec: ModelSpec, data: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(text, usage, stop reason) of a successful reply; raises on length stops and tool calls."""
    label = spec.label
    content = data.get("content")
    if not isinstance(content, list):
        raise ModelResponseError(f"{label}: the reply has no content")
    stop = data.get("stop_reason")
    if stop == "tool_use" or any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
        raise ModelToolCallError(f"{label}: the model tried to call a tool instead of writing the summary")
    if stop in ("max_tokens", "model_context_window_exceeded"):
        raise ModelLengthError(
            f"{label}: generation hit the token cap and the summary is incomplete (stop_reason {stop})"
        )
    if stop == "refusal":
        raise ModelRequestError(f"{label}: the model refused to write the summary")
    if stop not in (None, "end_turn", "stop_sequence", "pause_turn"):
        raise ModelResponseError(f"{label}: the provider stopped with stop_reason {str(stop)[:40]!r}")
    text = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return text, parse_usage(spec, data.get("usage")), "stop"
