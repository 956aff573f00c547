"""Anthropic Messages: request body and response parsing.

Mirrors pi-ai's ``anthropic-messages`` provider for a summary: system prompt as a text
block, one user message, ``max_tokens``, thinking settings from :mod:`budget`, no tools and
no ``cache_control`` (Pi disables caching for one-off summaries), without streaming.
"""

from __future__ import annotations

from typing import Any

from pitools.summarize.budget import OutputBudget
from pitools.summarize.errors import (
    ModelLengthError,
    ModelRequestError,
    ModelResponseError,
    ModelToolCallError,
)
from pitools.summarize.textutil import sanitize_surrogates
from pitools.summarize.types import ModelSpec, SummaryRequest
from pitools.summarize.usage import make_usage

ANTHROPIC_VERSION = "2023-06-01"


def build_request(
    spec: ModelSpec, request: SummaryRequest, budget: OutputBudget
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(URL, headers, JSON body) for a summary request."""
    body: dict[str, Any] = {
        "model": spec.model_id,
        "max_tokens": budget.max_tokens,
        "messages": [{"role": "user", "content": [{"type": "text", "text": sanitize_surrogates(request.prompt)}]}],
    }
    if request.system_prompt:
        body["system"] = [{"type": "text", "text": sanitize_surrogates(request.system_prompt)}]
    if budget.thinking == "disabled":
        body["thinking"] = {"type": "disabled"}
    elif budget.thinking == "adaptive":
        body["thinking"] = {"type": "adaptive"}
        if budget.effort:
            body["output_config"] = {"effort": budget.effort}
    elif budget.thinking == "budget":
        body["thinking"] = {"type": "enabled", "budget_tokens": budget.thinking_budget}
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if spec.api_key is not None:
        headers["x-api-key"] = spec.api_key.get_secret_value()
    headers.update(spec.headers)
    # The SDK Pi uses appends /v1/messages to the configured base URL.
    return f"{spec.base_url.rstrip('/')}/v1/messages", headers, body


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def parse_usage(spec: ModelSpec, raw: object) -> dict[str, Any]:
    """Token counts from Anthropic's usage object, priced with the model's cost."""
    if not isinstance(raw, dict):
        return make_usage(0, 0, 0, 0, spec.cost)
    return make_usage(
        _int(raw.get("input_tokens")),
        _int(raw.get("output_tokens")),
        _int(raw.get("cache_read_input_tokens")),
        _int(raw.get("cache_creation_input_tokens")),
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
