"""The body of a summary request, built by the one request builder (:mod:`pitools.core.request`).

Pi writes a summary with ``completeSimple(model, normalizeContext({systemPrompt, messages: [one
user message]}), {reasoning, cacheRetention: "none", sessionId})`` (``completeSummarization`` in
``compaction.js``; branch summaries the same way). So the body is exactly what the request mirror
builds for that context: the system prompt as the leading system message, the prompt as one user
text message, the agent's thinking level (already clamped to the model, ``off`` when the model does
not reason), no ``thinkingBudgets`` and no caching. With caching off the session id reaches no
field of the body, so none is passed.

Only the transport differs from pi-ai: it streams, pitools does not (see :mod:`client`).
"""

from __future__ import annotations

from typing import Any

from pitools.core.request.build import build_payload
from pitools.core.request.common import Notes
from pitools.core.request.thinking import clamp_thinking_level
from pitools.summarize.types import ModelSpec, SummaryRequest


def request_model(spec: ModelSpec, max_tokens: int | None = None) -> dict[str, Any]:
    """pi-ai's model object for ``spec``, with the API pitools calls it through.

    ``max_tokens`` (an explicit cap) stands in for the model's output limit.
    """
    model: dict[str, Any] = {
        "id": spec.model_id,
        "provider": spec.provider,
        "api": spec.api,
        "baseUrl": spec.base_url,
        "reasoning": spec.reasoning,
        "input": ["text"],
        "contextWindow": spec.context_window,
        "maxTokens": spec.max_tokens if max_tokens is None else max_tokens,
    }
    if spec.thinking_level_map is not None:
        model["thinkingLevelMap"] = dict(spec.thinking_level_map)
    if spec.compat:
        model["compat"] = dict(spec.compat)
    return model


def summary_messages(request: SummaryRequest) -> list[dict[str, Any]]:
    """``normalizeContext({systemPrompt, messages})``: the system message (when there is a prompt)
    and the prompt as one user text message."""
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt, "timestamp": 0})
    messages.append({"role": "user", "content": [{"type": "text", "text": request.prompt}], "timestamp": 0})
    return messages


def summary_level(model: dict[str, Any], request: SummaryRequest) -> str:
    """The ``reasoning`` option Pi passes: the session's level clamped to the model as Pi's agent
    holds it, only for a reasoning model and a level other than off (``createSummarizationOptions``)."""
    if not model.get("reasoning"):
        return "off"
    return clamp_thinking_level(model, request.reasoning_level or "off")


def build_body(spec: ModelSpec, request: SummaryRequest) -> dict[str, Any]:
    """The body pi-ai builds for this summary request (its ``onPayload`` value).

    May hold ``UNDEFINED`` values; serialize it with :func:`pitools.core.js.json.encode.js_stringify`.
    """
    model = request_model(spec, request.max_tokens)
    notes = Notes()
    return build_payload(
        model, summary_messages(request), summary_level(model, request), None, notes, cache_retention="none"
    ).body
