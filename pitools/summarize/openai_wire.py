"""OpenAI-compatible Chat Completions: parsing the reply to a summary request.

The request body is pi-ai's (:mod:`pitools.summarize.body`); the reply is one JSON object
(``"stream": false``), read the way pi-ai reads the streamed chunks.
"""

from __future__ import annotations

from typing import Any

from pitools.summarize.errors import ModelLengthError, ModelResponseError, ModelToolCallError
from pitools.summarize.types import ModelSpec
from pitools.summarize.usage import make_usage, token_count


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def parse_usage(spec: ModelSpec, raw: object) -> dict[str, Any]:
    """pi-ai ``parseChunkUsage``: cached prompt tokens count as cache reads, not input."""
    if not isinstance(raw, dict):
        return make_usage(0, 0, 0, 0, spec.cost)
    details = raw.get("prompt_tokens_details") if isinstance(raw.get("prompt_tokens_details"), dict) else {}
    assert isinstance(details, dict)
    prompt = token_count(raw.get("prompt_tokens"))
    if details.get("cached_tokens") is not None:
        cache_read = token_count(details.get("cached_tokens"))
    elif raw.get("prompt_cache_hit_tokens") is not None:
        cache_read = token_count(raw.get("prompt_cache_hit_tokens"))
    else:
        cache_read = token_count(raw.get("cached_tokens"))
    cache_write = token_count(details.get("cache_write_tokens"))
    usage = make_usage(
        max(0, prompt - cache_read - cache_write),
        token_count(raw.get("completion_tokens")),
        cache_read,
        cache_write,
        spec.cost,
    )
    if spec.provider == "openrouter" or "openrouter.ai" in spec.base_url:
        _apply_openrouter_cost(usage, raw)
    return usage


def _valid_cost(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _apply_openrouter_cost(usage: dict[str, Any], raw: dict[str, Any]) -> None:
    """Use OpenRouter's billed cost as the total when it is reported (``applyOpenRouterReportedCost``)."""
    cost = raw.get("cost")
    if not _valid_cost(cost):
        return
    assert isinstance(cost, int | float)
    if raw.get("is_byok") is False:
        usage["cost"]["total"] = cost
    elif raw.get("is_byok") is True and isinstance(raw.get("cost_details"), dict):
        details = raw["cost_details"]
        upstream = details.get("upstream_inference_cost")
        if upstream is None:
            prompt_cost = details.get("upstream_inference_prompt_cost")
            completion_cost = details.get("upstream_inference_completions_cost")
            if not (_valid_cost(prompt_cost) and _valid_cost(completion_cost)):
                return
            upstream = prompt_cost + completion_cost
        if _valid_cost(upstream):
            usage["cost"]["total"] = cost + upstream


def parse_response(spec: ModelSpec, data: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(text, usage, stop reason) of a successful reply; raises on length stops and tool calls."""
    label = spec.label
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelResponseError(f"{label}: the reply has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    assert isinstance(message, dict)
    finish = choice.get("finish_reason")
    if message.get("tool_calls") or message.get("function_call") or finish in ("tool_calls", "function_call"):
        raise ModelToolCallError(f"{label}: the model tried to call a tool instead of writing the summary")
    if finish == "length":
        raise ModelLengthError(
            f"{label}: generation hit the token cap and the summary is incomplete (finish_reason length)"
        )
    if finish not in (None, "stop", "end"):
        raise ModelResponseError(f"{label}: the provider stopped with finish_reason {str(finish)[:40]!r}")
    return _content_text(message.get("content")), parse_usage(spec, data.get("usage")), "stop"
