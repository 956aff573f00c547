"""The body pi-ai 1.6.0 sends to an OpenAI-compatible Chat Completions API (``api/openai-completions.js``).

Mirrors ``streamSimple`` → ``stream`` → ``buildParams`` → ``convertMessages``/``convertTools``, with
``getCompat`` (detected flags per provider and base URL, overridden by the model's ``compat``).
Grammar-constrained tools (OpenAI's custom tools) are refused rather than guessed.
"""

from __future__ import annotations

import re
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.ops import is_blank, to_string
from pitools.core.js.value import UNDEFINED, js_truthy, slice_head_utf16, utf16_len
from pitools.core.request.common import Notes, RequestError, stringify_member
from pitools.core.request.constrained_sampling import refuse_grammar_tools, resolve_strict, tool_parameters
from pitools.core.request.sanitize_unicode import sanitize_surrogates
from pitools.core.request.simple_options import (
    Budgets,
    StreamOptions,
    openai_budget,
    resolve_sampling_params,
    thinking_budget,
)
from pitools.core.request.text import render_system_message_update, system_message_text
from pitools.core.request.thinking import map_thinking_level, off_effort
from pitools.core.request.tools import clamp_prompt_cache_key, resolve_transcript_tools, short_hash
from pitools.core.request.transcript import current_tools, resolve_transcript
from pitools.core.request.transform_messages import transform_messages

API = "openai-completions"

_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_text")


def detect_compat(model: dict[str, Any]) -> dict[str, Any]:
    """pi-ai ``detectCompat``: flags guessed from the provider and base URL."""
    provider = model.get("provider")
    base = str(model.get("baseUrl") or "")
    zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base or "open.bigmodel.cn" in base
    together = provider == "together" or "api.together.ai" in base or "api.together.xyz" in base
    moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base
    openrouter = provider == "openrouter" or "openrouter.ai" in base
    cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base
    cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base
    nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base
    ant_ling = provider == "ant-ling" or "api.ant-ling.com" in base
    cerebras = provider == "cerebras" or "cerebras.ai" in base
    deepseek = provider == "deepseek" or "deepseek.com" in base.lower()
    grok = provider == "xai" or "api.x.ai" in base
    non_standard = (
        nvidia or cerebras or grok or together or "chutes.ai" in base or deepseek or zai or moonshot
        or provider == "opencode" or "opencode.ai" in base or cf_workers or cf_gateway or ant_ling
    )  # fmt: skip
    use_max_tokens = "chutes.ai" in base or deepseek or moonshot or cf_gateway or together or nvidia or ant_ling or zai
    is_openai = provider == "openai" or "api.openai.com" in base
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": is_openai,
        "supportsReasoningEffort": not (grok or zai or moonshot or together or cf_gateway or nvidia or ant_ling),
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresNonNullAssistantContent": False,
        "requiresToolsWithToolHistory": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": "deepseek" if deepseek else "zai" if zai else "together" if together
        else "ant-ling" if ant_ling else "openrouter" if openrouter else "openai",
        "openRouterRouting": {},
        "vercelGatewayRouting": {},
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        "supportsThinkingTokenBudget": False,
        "thinkingTokenBudgetField": UNDEFINED,
        "supportsStrictMode": False,
        "supportsOpenAIGrammarTools": False,
        "supportsMidConvoSystemMessages": False,
        "supportsMidConvoToolAdditions": False,
        "cacheControlFormat": "anthropic" if provider == "openrouter" and str(model["id"]).startswith("anthropic/") else UNDEFINED,  # noqa: E501
        "supportsLongCacheRetention": not (together or cf_workers or cf_gateway or nvidia or ant_ling),
    }  # fmt: skip


def get_compat(model: dict[str, Any]) -> dict[str, Any]:
    detected = detect_compat(model)
    explicit = model.get("compat")
    if not explicit:
        return detected
    out = dict(detected)
    for key, value in explicit.items():
        if value is not None:
            out[key] = value
    if "openRouterRouting" not in explicit or explicit["openRouterRouting"] is None:
        out["openRouterRouting"] = {}
    return out


def normalize_tool_call_id(model: dict[str, Any]) -> Any:
    def normalize(tool_id: Any, _model: dict[str, Any], _msg: dict[str, Any]) -> Any:
        if "|" in tool_id:
            call, _, item = tool_id.partition("|")
            call_id = _BAD_ID_CHARS.sub("_", call)
            item_id = _BAD_ID_CHARS.sub("_", item)
            combined = f"{call_id}_{item_id}" if item_id else call_id
            if utf16_len(combined) <= 40:
                return combined
            digest = short_hash(tool_id)[:8]
            return f"{slice_head_utf16(call_id, max(1, 40 - len(digest) - 1))}_{digest}"
        if model.get("provider") == "openai":
            return slice_head_utf16(tool_id, 40) if utf16_len(tool_id) > 40 else tool_id
        return tool_id

    return normalize


def _is_detail(d: Any) -> bool:
    if type(d) is not dict:
        return False
    if not (nullish_or(d.get("id", UNDEFINED), str) and undef_or(d.get("format", UNDEFINED), str)):
        return False
    index = d.get("index", UNDEFINED)
    if index is not UNDEFINED and type(index) not in (int, float):
        return False
    t = d.get("type")
    if t == "reasoning.summary":
        return type(d.get("summary")) is str
    if t == "reasoning.encrypted":
        return type(d.get("data")) is str
    if t == "reasoning.text":
        return type(d.get("text")) is str and nullish_or(d.get("signature", UNDEFINED), str)
    return False


def nullish_or(v: Any, t: type) -> bool:
    return v is None or v is UNDEFINED or type(v) is t


def undef_or(v: Any, t: type) -> bool:
    return v is UNDEFINED or type(v) is t


def _parse(signature: Any) -> Any:
    if not js_truthy(signature) or type(signature) is not str:
        return UNDEFINED
    try:
        from pitools.core.js.json.parse import parse_json_line

        return parse_json_line(signature.encode("utf-8", "surrogatepass"))[0]
    except ValueError:  # JSON.parse failing means "no details"
        return UNDEFINED


def _reasoning_details(signature: Any) -> Any:
    parsed = _parse(signature)
    if type(parsed) is list and parsed and all(_is_detail(d) for d in parsed):
        return parsed
    return UNDEFINED


def _legacy_detail(signature: Any) -> Any:
    parsed = _parse(signature)
    if (
        _is_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and type(parsed.get("id")) is str
        and parsed["id"]
        and parsed["data"]
    ):
        return parsed
    return UNDEFINED


def convert_tools(tools: list[Any], c: dict[str, Any]) -> list[Any]:
    out = []
    supports_strict = c.get("supportsStrictMode") is not False
    for tool in tools:
        strict = resolve_strict(tool, supports_strict)
        function: dict[str, Any] = {
            "name": get(tool, "name"),
            "description": get(tool, "description"),
            "parameters": tool_parameters(tool, strict),
        }
        if supports_strict:
            function["strict"] = strict if strict is not None else False
        out.append({"type": "function", "function": function})
    return out


def _image_url(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{to_string(get(block, 'mimeType'))};base64,{to_string(get(block, 'data'))}"},
    }


def tool_support(c: dict[str, Any]) -> str:
    """How far tools may change mid-conversation for this compat (``resolveTranscriptTools``'s
    second argument): only additions, and only where system messages may come mid-conversation too;
    the messages and the request's tool list are both resolved with it."""
    return (
        "additions"
        if c.get("supportsMidConvoSystemMessages") is True and c.get("supportsMidConvoToolAdditions") is True
        else "none"
    )


def convert_messages(model: dict[str, Any], messages: list[Any], c: dict[str, Any], notes: Notes) -> list[Any]:
    context = resolve_transcript(messages, bool(c.get("supportsMidConvoSystemMessages")))
    transformed = transform_messages(context, model, normalize_tool_call_id(model), notes)
    _, folded = resolve_transcript_tools(context, tool_support(c))
    instruction_role = "developer" if model.get("reasoning") and c.get("supportsDeveloperRole") else "system"
    params: list[Any] = []
    last_role: Any = None
    system_index = 0
    i = 0
    while i < len(transformed):
        msg = transformed[i]
        role = get(msg, "role")
        if c.get("requiresAssistantAfterToolResult") and last_role == "toolResult" and role == "user":
            params.append({"role": "assistant", "content": "I have processed the tool results."})
        if role == "system":
            added = (
                (get(msg, "toolsAdded") if get(msg, "toolsAdded") not in (None, UNDEFINED) else [])
                if system_index >= folded
                else []
            )
            system_index += 1
            if added:
                params.append({"role": "system", "tools": convert_tools(added, c)})
            text = system_message_text(msg) if i == 0 else render_system_message_update(msg)
            if text:
                params.append({"role": instruction_role, "content": sanitize_surrogates(text)})
        elif role == "user":
            content = msg["content"]
            if type(content) is str:
                params.append({"role": "user", "content": sanitize_surrogates(content)})
            else:
                parts = [
                    {"type": "text", "text": sanitize_surrogates(b["text"])}
                    if get(b, "type") == "text"
                    else _image_url(b)
                    for b in content
                    if get(b, "type") != "text" or utf16_len(b["text"]) > 0
                ]
                if not parts:
                    i += 1
                    continue
                params.append({"role": "user", "content": parts})
        elif role == "assistant":
            out: dict[str, Any] = {
                "role": "assistant",
                "content": ""
                if c.get("requiresAssistantAfterToolResult") or c.get("requiresNonNullAssistantContent")
                else None,
            }
            blocks = msg["content"]
            text_parts = [
                {"type": "text", "text": sanitize_surrogates(b["text"])}
                for b in blocks
                if get(b, "type") == "text" and not is_blank(b["text"])
            ]
            text = "".join(p["text"] for p in text_parts)
            thinking_blocks = [b for b in blocks if get(b, "type") == "thinking"]
            calls = [b for b in blocks if get(b, "type") == "toolCall"]
            signed = next(
                (
                    d
                    for d in (_reasoning_details(get(b, "thinkingSignature")) for b in thinking_blocks)
                    if d is not UNDEFINED
                ),
                UNDEFINED,
            )
            legacy = [d for d in (_legacy_detail(get(b, "thoughtSignature")) for b in calls) if d is not UNDEFINED]
            preserved = signed if signed is not UNDEFINED else (legacy if legacy else UNDEFINED)
            non_empty = [b for b in thinking_blocks if not is_blank(b["thinking"])]
            if non_empty:
                if c.get("requiresThinkingAsText"):
                    joined = "\n\n".join(sanitize_surrogates(b["thinking"]) for b in non_empty)
                    out["content"] = [{"type": "text", "text": joined}, *text_parts]
                else:
                    if text:
                        out["content"] = text
                    if preserved is UNDEFINED:
                        signature = get(non_empty[0], "thinkingSignature")
                        if model.get("provider") == "opencode-go" and signature == "reasoning":
                            signature = "reasoning_content"
                        if js_truthy(signature) and signature in _REASONING_FIELDS:
                            out[signature] = "\n".join(b["thinking"] for b in non_empty)
            elif text:
                out["content"] = text
            if calls:
                out["tool_calls"] = [
                    {
                        "id": call.get("id"),
                        "type": "function",
                        "function": {
                            "name": call.get("name"),
                            "arguments": stringify_member(call.get("arguments", UNDEFINED)),
                        },
                    }
                    for call in calls
                ]
            if preserved is not UNDEFINED:
                out["reasoning_details"] = preserved
            if (
                c.get("requiresReasoningContentOnAssistantMessages")
                and model.get("reasoning")
                and "reasoning_content" not in out
            ):
                out["reasoning_content"] = ""
            content = out["content"]
            has_content = content is not None and len(content) > 0
            if not has_content and "tool_calls" not in out:
                notes.add("empty-assistant-dropped", "an assistant message with nothing to send is left out")
                i += 1
                continue
            params.append(out)
        elif role == "toolResult":
            images: list[Any] = []
            j = i
            while j < len(transformed) and get(transformed[j], "role") == "toolResult":
                tool_msg = transformed[j]
                content = tool_msg["content"]
                texts = [get(b, "text") for b in content if get(b, "type") == "text"]
                text_result = "\n".join("" if t is None or t is UNDEFINED else to_string(t) for t in texts)
                has_images = any(get(b, "type") == "image" for b in content)
                has_text = not is_blank(text_result)
                shown = text_result if has_text else "(see attached image)" if has_images else "(no tool output)"
                result: dict[str, Any] = {
                    "role": "tool",
                    "content": sanitize_surrogates(shown),
                    "tool_call_id": tool_msg.get("toolCallId"),
                }
                if c.get("requiresToolResultName") and js_truthy(tool_msg.get("toolName")):
                    result["name"] = tool_msg["toolName"]
                params.append(result)
                if has_images and "image" in (model.get("input") or []):
                    images.extend(_image_url(b) for b in content if get(b, "type") == "image")
                j += 1
            i = j
            if images:
                notes.add("tool-images-separate", "tool result images follow the tool results as a user message")
                if c.get("requiresAssistantAfterToolResult"):
                    params.append({"role": "assistant", "content": "I have processed the tool results."})
                params.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = role
        i += 1
    return params


def _has_tool_history(messages: list[Any]) -> bool:
    for msg in messages:
        role = get(msg, "role")
        if role == "toolResult":
            return True
        if role == "assistant" and any(get(b, "type") == "toolCall" for b in msg["content"]):
            return True
    return False


def build(model: dict[str, Any], messages: list[Any], call: StreamOptions, notes: Notes) -> dict[str, Any]:
    """The params ``onPayload`` receives for ``streamSimple(model, {messages}, {reasoning, sessionId})``."""
    level, budgets = call.level, call.budgets
    max_tokens, effort = openai_budget(model, messages, level, call.input_tokens)
    c = get_compat(model)
    context = resolve_transcript(messages, bool(c.get("supportsMidConvoSystemMessages")), notes)
    request_tools, _ = resolve_transcript_tools(context, tool_support(c))
    refuse_grammar_tools(current_tools(context), c.get("supportsOpenAIGrammarTools"))
    out_messages = convert_messages(model, context, c, notes)
    key_mode = c.get("promptCacheKeyMode") or "auto"
    supports_key = key_mode == "enabled" or (key_mode == "auto" and "api.openai.com" in str(model.get("baseUrl") or ""))
    params: dict[str, Any] = {
        "model": model["id"],
        "messages": out_messages,
        "stream": True,
        "prompt_cache_key": clamp_prompt_cache_key(call.cache_session_id) if supports_key else UNDEFINED,
        "prompt_cache_retention": UNDEFINED,
    }
    if c.get("supportsUsageInStreaming") is not False:
        params["stream_options"] = {"include_usage": True}
    if c.get("supportsStore"):
        params["store"] = False
    if max_tokens:
        params["max_tokens" if c.get("maxTokensField") == "max_tokens" else "max_completion_tokens"] = max_tokens
    if request_tools:
        params["tools"] = convert_tools(request_tools, c)
        if c.get("zaiToolStream"):
            params["tool_stream"] = True
    elif c.get("requiresToolsWithToolHistory") and _has_tool_history(context):
        params["tools"] = []
    if c.get("cacheControlFormat") == "anthropic" and call.cache_retention != "none":
        raise RequestError("OpenRouter's Anthropic cache markers are not replayed by pitools")
    if c.get("vllmPriority") is not None and c.get("vllmPriority") is not UNDEFINED:
        params["priority"] = c["vllmPriority"]
    _thinking(model, c, effort, params, budgets)
    routing = c.get("openRouterRouting")
    if (model.get("compat") or {}).get("openRouterRouting"):
        params["provider"] = routing
    gateway = (model.get("compat") or {}).get("vercelGatewayRouting")
    if gateway and (gateway.get("only") or gateway.get("order")):
        params["providerOptions"] = {"gateway": {k: gateway[k] for k in ("only", "order") if gateway.get(k)}}
    sampling = resolve_sampling_params(model, effort or "off")
    if sampling:
        params.update(sampling)
    return params


def _thinking(
    model: dict[str, Any], c: dict[str, Any], effort: str | None, params: dict[str, Any], budgets: Budgets | None
) -> None:
    fmt = c.get("thinkingFormat")
    level_map = model.get("thinkingLevelMap") or {}
    reasoning = bool(model.get("reasoning"))

    def mapped(level: str) -> Any:
        return map_thinking_level(level_map, level)

    if fmt in ("chat-template", "baseten", "qwen-chat-template") and reasoning:
        raise RequestError(f"the {fmt} thinking format is not replayed by pitools")
    if fmt == "zai" and reasoning:
        params["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and c.get("supportsReasoningEffort"):
            value = level_map.get(effort, UNDEFINED)
            value = effort if value is UNDEFINED else value
            if type(value) is str:
                params["reasoning_effort"] = value
    elif fmt == "qwen" and reasoning:
        params["enable_thinking"] = bool(effort)
        if effort and c.get("supportsReasoningEffort"):
            value = mapped(effort)
            if type(value) is str:
                params["reasoning_effort"] = value
    elif fmt == "deepseek" and reasoning:
        if effort:
            params["thinking"] = {"type": "enabled"}
        elif level_map.get("off", UNDEFINED) is not None:
            params["thinking"] = {"type": "disabled"}
        if effort and c.get("supportsReasoningEffort"):
            params["reasoning_effort"] = mapped(effort)
    elif fmt == "openrouter" and reasoning:
        if effort:
            params["reasoning"] = {"effort": mapped(effort)}
        elif level_map.get("off", UNDEFINED) is not None:
            params["reasoning"] = {"effort": off_effort(level_map)}
    elif fmt == "ant-ling" and reasoning and effort:
        value = level_map.get(effort)
        if type(value) is str:
            params["reasoning"] = {"effort": value}
    elif fmt == "together" and reasoning:
        params["reasoning"] = {"enabled": bool(effort)}
        if effort and c.get("supportsReasoningEffort"):
            params["reasoning_effort"] = mapped(effort)
    elif fmt == "string-thinking" and reasoning:
        if effort:
            params["thinking"] = mapped(effort)
        elif level_map.get("off", UNDEFINED) is not None:
            params["thinking"] = off_effort(level_map)
    elif effort and reasoning and c.get("supportsReasoningEffort"):
        params["reasoning_effort"] = mapped(effort)
    elif not effort and reasoning and c.get("supportsReasoningEffort"):
        off = level_map.get("off")
        if type(off) is str:
            params["reasoning_effort"] = off
    field = c.get("thinkingTokenBudgetField")
    if field in (None, UNDEFINED):
        field = "thinking_token_budget" if c.get("supportsThinkingTokenBudget") else None
    if field and effort and reasoning:
        ceiling = params.get("max_tokens", params.get("max_completion_tokens", model["maxTokens"]))
        budget = min(thinking_budget(effort, budgets), max(0, ceiling - 1024))
        if budget > 0:
            params[field] = budget
