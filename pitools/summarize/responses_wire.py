"""OpenAI Responses: parsing the reply to a summary request.

The request body is pi-ai's (:mod:`pitools.summarize.body`); the reply is one response object
(``"stream": false``), read the way pi-ai reads the final ``response.completed`` event: the text
of the ``message`` items, usage with cached and cache-write tokens taken out of the input, and
status ``incomplete`` with reason ``max_output_tokens`` as a length stop.
"""

from __future__ import annotations

from typing import Any

from pitools.summarize.errors import ModelLengthError, ModelResponseError, ModelToolCallError
from pitools.summarize.types import ModelSpec
from pitools.summarize.usage import make_usage, token_count


def parse_usage(spec: ModelSpec, raw: object) -> dict[str, Any]:
    """pi-ai's Responses usage: ``input_tokens`` includes cached and cache-write tokens."""
    usage = raw if isinstance(raw, dict) else {}
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = (token_count(details.get("cached_tokens")), token_count(details.get("cache_write_tokens")))
    uncached = max(0, token_count(usage.get("input_tokens")) - sum(cached))
    return make_usage(uncached, token_count(usage.get("output_tokens")), *cached, spec.cost)


def parse_response(spec: ModelSpec, data: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(text, usage, stop reason) of a successful reply; raises on length stops and tool calls."""
    label = spec.label
    output = data.get("output")
    if not isinstance(output, list):
        raise ModelResponseError(f"{label}: the reply has no output")
    items = [item for item in output if isinstance(item, dict)]
    if any(item.get("type") in ("function_call", "custom_tool_call") for item in items):
        raise ModelToolCallError(f"{label}: the model tried to call a tool instead of writing the summary")
    status = data.get("status")
    details = data.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if status == "incomplete" and reason == "max_output_tokens":
        raise ModelLengthError(
            f"{label}: generation hit the token cap and the summary is incomplete "
            "(status incomplete, max_output_tokens)"
        )
    if status not in (None, "completed", "in_progress", "queued"):
        why = f" ({str(reason)[:40]})" if isinstance(reason, str) else ""
        raise ModelResponseError(f"{label}: the provider stopped with status {str(status)[:40]!r}{why}")
    texts = [
        str(part.get("text", ""))
        for item in items
        if item.get("type") == "message" and isinstance(item.get("content"), list)
        for part in item["content"]
        if isinstance(part, dict) and part.get("type") == "output_text"
    ]
    return "\n".join(texts), parse_usage(spec, data.get("usage")), "stop"
