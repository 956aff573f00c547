"""OpenAI-compatible Chat Completions: request body and response parsing.

The request mirrors what pi-ai's ``openai-completions`` provider sends for a summary (system
and one user message, no tools, no prompt-cache fields), without streaming. Compat
detection (which max-tokens field, how to ask for reasoning) follows its ``detectCompat``,
overridable per model with ``compat`` in ``models.json``.
"""

from __future__ import annotations

from typing import Any

from pitools.summarize.budget import OutputBudget
from pitools.summarize.errors import ModelLengthError, ModelResponseError, ModelToolCallError
from pitools.summarize.providers import BUILTIN_PROVIDERS
from pitools.summarize.textutil import sanitize_surrogates
from pitools.summarize.types import ModelSpec, SummaryRequest
from pitools.summarize.usage import make_usage


def _is_openai(spec: ModelSpec) -> bool:
    return spec.provider == "openai" or "api.openai.com" in spec.base_url


def _hosts(spec: ModelSpec, *names: str) -> bool:
    return spec.provider in names


def _detect(spec: ModelSpec) -> dict[str, Any]:
    """The subset of pi-ai's ``detectCompat`` that matters for a tool-less request."""
    url = spec.base_url.lower()
    zai = _hosts(spec, "zai", "zai-coding-cn") or "api.z.ai" in url or "open.bigmodel.cn" in url
    together = _hosts(spec, "together") or "api.together.ai" in url or "api.together.xyz" in url
    moonshot = _hosts(spec, "moonshotai", "moonshotai-cn") or "api.moonshot." in url
    openrouter = _hosts(spec, "openrouter") or "openrouter.ai" in url
    cf_gateway = _hosts(spec, "cloudflare-ai-gateway") or "gateway.ai.cloudflare.com" in url
    nvidia = _hosts(spec, "nvidia") or "integrate.api.nvidia.com" in url
    ant_ling = _hosts(spec, "ant-ling") or "api.ant-ling.com" in url
    deepseek = _hosts(spec, "deepseek") or "deepseek.com" in url
    grok = _hosts(spec, "xai") or "api.x.ai" in url
    uses_max_tokens = "chutes.ai" in url or deepseek or moonshot or cf_gateway or together or nvidia or ant_ling or zai
    if uses_max_tokens:
        field = "max_tokens"
    elif _is_openai(spec) or spec.provider in BUILTIN_PROVIDERS:
        field = "max_completion_tokens"
    else:
        # pitools' own choice for servers Pi knows nothing about (llama.cpp, Ollama, vLLM,
        # LM Studio...): the older field every OpenAI-compatible server accepts. Pi would send
        # max_completion_tokens; set compat.maxTokensField in models.json to change it.
        field = "max_tokens"
    if deepseek:
        thinking_format = "deepseek"
    elif zai:
        thinking_format = "zai"
    elif together:
        thinking_format = "together"
    elif ant_ling:
        thinking_format = "ant-ling"
    elif openrouter:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"
    return {
        "maxTokensField": field,
        "supportsDeveloperRole": _is_openai(spec),
        "supportsReasoningEffort": not (grok or zai or moonshot or together or cf_gateway or nvidia or ant_ling),
        "thinkingFormat": thinking_format,
    }


def compat(spec: ModelSpec) -> dict[str, Any]:
    """Detected compat flags, overridden by the model's explicit ``compat``."""
    return {**_detect(spec), **{k: v for k, v in spec.compat.items() if v is not None}}


def _mapped(spec: ModelSpec, level: str) -> str:
    # `thinkingLevelMap?.[level] ?? level`: null and missing both fall back to the level.
    value = (spec.thinking_level_map or {}).get(level)
    return value if isinstance(value, str) else level


def _off_allowed(spec: ModelSpec) -> bool:
    levels = spec.thinking_level_map or {}
    return "off" not in levels or levels["off"] is not None


def _reasoning_fields(spec: ModelSpec, flags: dict[str, Any], effort: str | None) -> dict[str, Any]:
    """Body fields asking for (or turning off) reasoning, per Pi's ``thinkingFormat``."""
    if not spec.reasoning:
        return {}
    fmt = flags.get("thinkingFormat", "openai")
    supports_effort = bool(flags.get("supportsReasoningEffort", True))
    levels = spec.thinking_level_map or {}
    out: dict[str, Any] = {}
    if fmt == "zai":
        out["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and supports_effort:
            value = levels.get(effort, effort)
            if isinstance(value, str):
                out["reasoning_effort"] = value
    elif fmt == "qwen":
        out["enable_thinking"] = bool(effort)
        if effort and supports_effort:
            out["reasoning_effort"] = _mapped(spec, effort)
    elif fmt == "qwen-chat-template":
        out["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "deepseek":
        if effort:
            out["thinking"] = {"type": "enabled"}
        elif _off_allowed(spec):
            out["thinking"] = {"type": "disabled"}
        if effort and supports_effort:
            out["reasoning_effort"] = _mapped(spec, effort)
    elif fmt == "openrouter":
        if effort:
            out["reasoning"] = {"effort": _mapped(spec, effort)}
        elif _off_allowed(spec):
            off = levels.get("off")
            out["reasoning"] = {"effort": off if isinstance(off, str) else "none"}
    elif fmt == "ant-ling":
        value = levels.get(effort) if effort else None
        if isinstance(value, str):
            out["reasoning"] = {"effort": value}
    elif fmt == "together":
        out["reasoning"] = {"enabled": bool(effort)}
        if effort and supports_effort:
            out["reasoning_effort"] = _mapped(spec, effort)
    elif fmt == "string-thinking":
        if effort:
            out["thinking"] = _mapped(spec, effort)
        elif _off_allowed(spec):
            off = levels.get("off")
            out["thinking"] = off if isinstance(off, str) else "none"
    elif fmt == "openai":
        if effort and supports_effort:
            out["reasoning_effort"] = _mapped(spec, effort)
        elif not effort and supports_effort and isinstance(levels.get("off"), str):
            out["reasoning_effort"] = levels["off"]
    # "chat-template" and "baseten" need per-model template arguments; not supported, so
    # such models run with their server-side default.
    return out


def build_request(
    spec: ModelSpec, request: SummaryRequest, budget: OutputBudget
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(URL, headers, JSON body) for a summary request."""
    flags = compat(spec)
    role = "developer" if spec.reasoning and flags.get("supportsDeveloperRole") else "system"
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": role, "content": sanitize_surrogates(request.system_prompt)})
    messages.append({"role": "user", "content": sanitize_surrogates(request.prompt)})
    body: dict[str, Any] = {"model": spec.model_id, "messages": messages, "stream": False}
    body[str(flags.get("maxTokensField") or "max_tokens")] = budget.max_tokens
    if _is_openai(spec):
        body["store"] = False
    body.update(_reasoning_fields(spec, flags, budget.reasoning_effort))
    headers = {"content-type": "application/json", "accept": "application/json"}
    if spec.api_key is not None:
        headers["authorization"] = f"Bearer {spec.api_key.get_secret_value()}"
    headers.update(spec.headers)
    return f"{spec.base_url.rstrip('/')}/chat/completions", headers, body


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def parse_usage(spec: ModelSpec, raw: object) -> dict[str, Any]:
    """pi-ai ``parseChunkUsage``: cached prompt tokens count as cache reads, not input."""
    if not isinstance(raw, dict):
        return make_usage(0, 0, 0, 0, spec.cost)
    details = raw.get("prompt_tokens_details") if isinstance(raw.get("prompt_tokens_details"), dict) else {}
    assert isinstance(details, dict)
    prompt = _int(raw.get("prompt_tokens"))
    if details.get("cached_tokens") is not None:
        cache_read = _int(details.get("cached_tokens"))
    elif raw.get("prompt_cache_hit_tokens") is not None:
        cache_read = _int(raw.get("prompt_cache_hit_tokens"))
    else:
        cache_read = _int(raw.get("cached_tokens"))
    cache_write = _int(details.get("cache_write_tokens"))
    usage = make_usage(
        max(0, prompt - cache_read - cache_write),
        _int(raw.get("completion_tokens")),
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
