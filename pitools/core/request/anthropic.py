"""The body pi-ai 1.6.0 sends to the Anthropic Messages API (``api/anthropic-messages.js``).

Mirrors ``streamSimple`` → ``stream`` → ``buildParams`` → ``convertMessages``/``convertTools`` for an
API-key client (``isOAuthToken`` false: an OAuth token changes the system prompt and tool names),
default cache retention (``short``), no extension hooks, and a first request of the process (no
strict-tool downgrade remembered for the session). The message-threads ``thread`` field is added
after ``onPayload``, so like Pi's own payload hook this body never has it.
"""

from __future__ import annotations

import re
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.ops import is_blank, to_string
from pitools.core.js.value import UNDEFINED, js_truthy
from pitools.core.request.common import Notes, compat, compat_flags
from pitools.core.request.constrained_sampling import resolve_strict, tool_parameters
from pitools.core.request.sanitize_unicode import sanitize_surrogates
from pitools.core.request.simple_options import (
    StreamOptions,
    adjust_max_tokens_for_thinking,
    clamp_max_tokens_to_context,
    input_estimate,
    resolve_sampling_params,
)
from pitools.core.request.text import render_system_message_update, system_message_text
from pitools.core.request.transcript import current_tools, initial_system_message, resolve_transcript
from pitools.core.request.transform_messages import split_error_tool_result_images, transform_messages

API = "anthropic-messages"

FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01"
MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
MESSAGE_THREADS_BETA = "message-threads-2026-08-12"

DEFERRED_TOOL_PLACEHOLDER = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}

_STRICT_UNSUPPORTED = frozenset(
    ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "maxItems", "uniqueItems",
     "minContains", "maxContains", "minProperties", "maxProperties"]
)  # fmt: skip
_STRICT_FORMATS = frozenset(
    ["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"]
)

_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_GOOD_ID = re.compile(r"[a-zA-Z0-9_-]+")


def normalize_tool_call_id(tool_id: Any, model: dict[str, Any], message: dict[str, Any]) -> Any:
    """Anthropic tool_use ids must match ``^[a-zA-Z0-9_-]+$``, at most 64 characters."""
    from pitools.core.js.value import slice_head_utf16

    if type(tool_id) is str and len(tool_id) <= 64 and _GOOD_ID.fullmatch(tool_id):
        return tool_id  # already fits: nothing to replace or cut
    return slice_head_utf16(_BAD_ID_CHARS.sub("_", tool_id), 64)


def _anthropic_compat(model: dict[str, Any]) -> dict[str, Any]:
    base_url = str(model.get("baseUrl") or "")
    openrouter = model.get("provider") == "openrouter" or "openrouter.ai" in base_url

    flags = compat_flags(
        model,
        {
            "supportsEagerToolInputStreaming": True,
            "supportsLongCacheRetention": True,
            "supportsCacheControlOnTools": True,
            "supportsTemperature": True,
            "allowEmptySignature": False,
            "supportsStrictTools": False,
            "supportsMidConvoSystemMessages": False,
            "supportsMidConvoToolChanges": False,
            "supportsMessageThreads": "api.anthropic.com" in base_url,
        },
    )
    return {**flags, "openrouter": openrouter}


def _strict_unsupported(key: str, value: Any) -> bool:
    if key in _STRICT_UNSUPPORTED:
        return True
    if key == "minItems":
        return not (type(value) in (int, float) and value in (0, 1))
    if key == "format":
        return type(value) is not str or value not in _STRICT_FORMATS
    return False


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")},
    }


def _content_blocks(content: list[Any]) -> Any:
    if len(content) == 1:  # the usual tool result: one text block, sent as its text
        c = content[0]
        t = c.get("text") if type(c) is dict and c.get("type") != "image" else None
        if type(t) is str:
            return t if t.isascii() else sanitize_surrogates(t)
    for c in content:
        if type(c) is dict and c.get("type") == "image":
            break
    else:  # text only (nearly every tool result): one string
        texts: list[str] = []
        for c in content:
            t = c.get("text") if type(c) is dict else None
            texts.append(t if type(t) is str else "" if t is None or t is UNDEFINED else to_string(t))
        text = texts[0] if len(texts) == 1 else "\n".join(texts)
        return text if text.isascii() else sanitize_surrogates(text)  # (ASCII holds no surrogate)
    blocks: list[Any] = [
        {"type": "text", "text": sanitize_surrogates(b["text"])} if get(b, "type") == "text" else _image(b)
        for b in content
    ]
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def _tool_result(msg: dict[str, Any], content: list[Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": msg.get("toolCallId"),
        "content": _content_blocks(content),
        "is_error": msg.get("isError", UNDEFINED),
    }


def _convert_tools(tools: list[Any], c: dict[str, Any], cache_control: Any) -> list[Any]:
    out = []
    for i, tool in enumerate(tools):
        strict = resolve_strict(tool, bool(c["supportsStrictTools"]), _strict_unsupported)
        schema = tool_parameters(tool, strict)
        schema = schema if type(schema) is dict else {}
        legacy: dict[str, Any] = {
            "type": "object",
            "properties": _or(schema.get("properties", UNDEFINED), {}),
            "required": _or(schema.get("required", UNDEFINED), []),
        }
        for key in ("additionalProperties", "$defs", "definitions"):
            if schema.get(key, UNDEFINED) is not UNDEFINED:
                legacy[key] = schema[key]
        input_schema = {**schema, **legacy} if strict is True else legacy
        definition: dict[str, Any] = {"name": get(tool, "name"), "description": get(tool, "description")}
        if c["supportsEagerToolInputStreaming"]:
            definition["eager_input_streaming"] = True
        if strict is True:
            definition["strict"] = True
        definition["input_schema"] = input_schema
        if cache_control and i == len(tools) - 1:
            definition["cache_control"] = cache_control
        out.append(definition)
    return out


def _or(v: Any, default: Any) -> Any:
    return default if v is None or v is UNDEFINED else v


def adaptive_effort(model: dict[str, Any], level: str) -> str:
    """The ``effort`` pi-ai sends with adaptive thinking: the model's own name for the level
    (``thinkingLevelMap``), else low/medium/high (minimal counts as low, anything above as high)."""
    mapped = (model.get("thinkingLevelMap") or {}).get(level)
    if type(mapped) is str:
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


def build(model: dict[str, Any], messages: list[Any], call: StreamOptions, notes: Notes) -> dict[str, Any]:
    """The payload ``onPayload`` receives for ``streamSimple(model, {messages}, {reasoning,
    sessionId, thinkingBudgets})``."""
    level, session_id, budgets = call.level, call.session_id, call.budgets
    c = _anthropic_compat(model)
    reasoning = None if level == "off" else level
    tokens = call.input_tokens if call.input_tokens is not None else input_estimate(model, messages)
    base_max = clamp_max_tokens_to_context(model, messages, model["maxTokens"], tokens)
    resolve_sampling_params(model, reasoning or "off")  # Anthropic ignores sampling params; kept for parity
    options: dict[str, Any] = {"maxTokens": base_max, "sessionId": session_id}
    if not reasoning:
        options["thinkingEnabled"] = False
    elif compat(model).get("forceAdaptiveThinking") is True:
        options["thinkingEnabled"] = True
        options["effort"] = adaptive_effort(model, reasoning)
    else:
        adjusted, budget = adjust_max_tokens_for_thinking(base_max, model["maxTokens"], reasoning, budgets)
        max_tokens = clamp_max_tokens_to_context(model, messages, adjusted, tokens)
        options["maxTokens"] = max_tokens
        options["thinkingEnabled"] = True
        options["thinkingBudgetTokens"] = min(budget, max(0, max_tokens - 1024))

    context = resolve_transcript(messages, bool(c["supportsMidConvoSystemMessages"]), notes)
    thread_session = call.cache_session_id if c["supportsMessageThreads"] else None
    cache_control = None if call.cache_retention == "none" else {"type": "ephemeral"}
    return _build_params(model, context, options, c, thread_session is not None, notes, cache_control)


def _build_params(
    model: dict[str, Any],
    context: list[Any],
    options: dict[str, Any],
    c: dict[str, Any],
    threads: bool,
    notes: Notes,
    cache_control: dict[str, Any] | None,
) -> dict[str, Any]:
    initial = initial_system_message(context)
    initial_text = system_message_text(initial) if initial else ""
    transformed = transform_messages(context, model, normalize_tool_call_id, notes)
    conversation = transformed[1:] if initial else transformed
    initial_tools = _or(get(initial, "toolsAdded"), []) if initial else []
    native_tool_changes = bool(
        c["supportsMidConvoSystemMessages"] and c["supportsMidConvoToolChanges"] and len(initial_tools) > 0
    )
    level_map = model.get("thinkingLevelMap") or {}
    thinking_disabled = bool(
        model.get("reasoning")
        and options.get("thinkingEnabled") is False
        and level_map.get("off", UNDEFINED) is not None
    )
    mid_effort = compat(model).get("supportsMidConvoEffort") is True
    effort_messages = mid_effort and not thinking_disabled

    def tool_defs(tools: list[Any], cc: Any = None) -> list[Any]:
        return _convert_tools(tools, c, cc)

    converted, levels = _convert_messages(
        conversation,
        cache_control,
        bool(c["allowEmptySignature"]),
        model["provider"] if effort_messages else None,
        tool_defs if native_tool_changes else None,
        notes,
    )
    active_effort = options.get("effort") or "high"
    # a walk of the whole transcript, made once for both uses (native tool changes need it only
    # for some betas, and pi-ai reads it only then)
    # (folded by resolve_transcript, only the first message can be a system message: the rest
    # need no walk)
    tools = (
        None if native_tool_changes else current_tools(context if c["supportsMidConvoSystemMessages"] else context[:1])
    )
    betas = _betas(model, context, tools, options, native_tool_changes, threads, c)
    params: dict[str, Any] = {
        "model": model["id"],
        "messages": _insert_levels(converted, levels, active_effort) if effort_messages else converted,
        "max_tokens": options["maxTokens"],
        "stream": True,
    }
    if betas:
        params["betas"] = betas
    if initial_text:
        block: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(initial_text)}
        if cache_control:
            block["cache_control"] = cache_control
        params["system"] = [block]
    tool_cc = cache_control if c["supportsCacheControlOnTools"] else None
    if native_tool_changes:
        params["tools"] = [*tool_defs(initial_tools, tool_cc), dict(DEFERRED_TOOL_PLACEHOLDER)]
    elif tools:
        params["tools"] = tool_defs(tools, tool_cc)
    if thinking_disabled:
        params["thinking"] = {"type": "disabled"}
    elif effort_messages:
        params["thinking"] = {
            "type": "adaptive",
            "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        }
        params["output_config"] = {"effort": "low"}
    elif model.get("reasoning") and options.get("thinkingEnabled"):
        if compat(model).get("forceAdaptiveThinking") is True:
            params["thinking"] = {"type": "adaptive", "display": "summarized"}
            if options.get("effort"):
                params["output_config"] = {"effort": options["effort"]}
        else:
            params["thinking"] = {
                "type": "enabled",
                "budget_tokens": options.get("thinkingBudgetTokens") or 1024,
                "display": "summarized",
            }
    fallbacks = compat(model).get("allowedFallbackModels")
    if type(fallbacks) is list and fallbacks:
        params["fallbacks"] = [{"model": get(f, "model")} for f in fallbacks]
    return params


def _betas(
    model: dict[str, Any],
    context: list[Any],
    tools: list[Any] | None,
    options: dict[str, Any],
    native: bool,
    threads: bool,
    c: dict[str, Any],
) -> list[str]:
    """The ``betas`` list (``tools``: the transcript's current tools, None when not read yet)."""
    headers = model.get("headers") or {}
    configured: Any = UNDEFINED
    for name, value in headers.items():
        if name.lower() == "anthropic-beta":
            configured = value
    if configured is None:
        return []
    if type(configured) is str:
        seen: dict[str, None] = {}
        for feature in configured.split(","):
            if feature.strip():
                seen.setdefault(feature.strip(), None)
        return list(seen)
    features: list[str] = []
    if (current_tools(context) if tools is None else tools) and not c["supportsEagerToolInputStreaming"]:
        features.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if (
        model.get("reasoning")
        and options.get("thinkingEnabled") is True
        and compat(model).get("forceAdaptiveThinking") is not True
    ):
        features.append(INTERLEAVED_THINKING_BETA)
    fallbacks = compat(model).get("allowedFallbackModels")
    if type(fallbacks) is list and fallbacks:
        features.append(SERVER_SIDE_FALLBACK_BETA)
    if compat(model).get("supportsMidConvoEffort") is True:
        features += [MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA]
    if native:
        features.append(INLINE_TOOLS_BETA)
    if threads:
        features.append(MESSAGE_THREADS_BETA)
    return list(dict.fromkeys(features))


_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _insert_levels(messages: list[Any], levels: dict[int, str], active: str) -> list[Any]:
    out: list[Any] = []
    for i, message in enumerate(messages):
        if i in levels:
            out.append({"role": "system", "content": [], "output_config": {"effort": levels[i]}})
        out.append(message)
    out.append({"role": "system", "content": [], "output_config": {"effort": active}})
    return out


def _convert_messages(
    messages: list[Any],
    cache_control: Any,
    allow_empty_signature: bool,
    managed_provider: str | None,
    tool_defs: Any,
    notes: Notes,
) -> tuple[list[Any], dict[int, str]]:
    params: list[Any] = []
    levels: dict[int, str] = {}
    pending_system: list[Any] = []

    def flush() -> None:
        params.extend(pending_system)
        pending_system.clear()

    # (``messages`` come from transform_messages: plain dicts, so members are read with dict.get)
    i = 0
    n = len(messages)
    while i < n:
        msg = messages[i]
        role = msg.get("role")
        if role == "system":
            text = render_system_message_update(msg)
            blocks: list[Any] = []
            if text:
                blocks.append({"type": "text", "text": sanitize_surrogates(text)})
            if tool_defs is not None:
                added = _or(get(msg, "toolsAdded"), [])
                redefined = {get(t, "name") for t in added}
                for tool in _or(get(msg, "toolsRemoved"), []):
                    if get(tool, "name") in redefined:
                        continue
                    blocks.append(
                        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": get(tool, "name")}}
                    )
                for definition in tool_defs(added):
                    blocks.append(
                        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
                    )
            if blocks:
                pending_system.append({"role": "system", "content": blocks})
        elif role == "user":
            content = msg.get("content")
            if type(content) is str:
                if not is_blank(content):
                    params.append({"role": "user", "content": sanitize_surrogates(content)})
                else:
                    notes.add("empty-user-dropped", "an empty user message is not sent")
            else:
                blocks = [
                    {"type": "text", "text": sanitize_surrogates(b["text"])} if get(b, "type") == "text" else _image(b)
                    for b in content
                ]
                kept = [b for b in blocks if b["type"] != "text" or not is_blank(b["text"])]
                if not kept:
                    notes.add("empty-user-dropped", "a user message with only blank text is not sent")
                else:
                    params.append({"role": "user", "content": kept})
        elif role == "assistant":
            blocks = []
            for block in msg["content"]:
                btype = block.get("type") if type(block) is dict else None
                if btype == "text":
                    if is_blank(block.get("text")):
                        continue
                    text = block["text"]
                    # (ASCII holds no surrogate: the usual text skips the call)
                    blocks.append({"type": "text", "text": text if text.isascii() else sanitize_surrogates(text)})
                elif btype == "thinking":
                    if js_truthy(block.get("redacted")):
                        blocks.append({"type": "redacted_thinking", "data": block.get("thinkingSignature", UNDEFINED)})
                        continue
                    signature = block.get("thinkingSignature", UNDEFINED)
                    has_signature = js_truthy(signature) and not is_blank(signature)
                    thinking = block.get("thinking")
                    if is_blank(thinking) and not has_signature:
                        continue
                    if not has_signature:
                        if allow_empty_signature:
                            blocks.append(
                                {"type": "thinking", "thinking": sanitize_surrogates(thinking), "signature": ""}
                            )
                        else:
                            notes.add("thinking-as-text", "a thinking block without a signature is sent as text", None)
                            blocks.append({"type": "text", "text": sanitize_surrogates(thinking)})
                    else:
                        blocks.append(
                            {
                                "type": "thinking",
                                "thinking": thinking if thinking.isascii() else sanitize_surrogates(thinking),
                                "signature": signature,
                            }
                        )
                elif btype == "toolCall":
                    arguments = block.get("arguments", UNDEFINED)
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": block.get("id"),
                            "name": block.get("name"),
                            "input": {} if arguments is None or arguments is UNDEFINED else arguments,
                        }
                    )
            if not blocks:
                notes.add("empty-assistant-dropped", "an assistant message with nothing to send is left out")
                i += 1
                continue
            flush()
            index = len(params)
            params.append({"role": "assistant", "content": blocks})
            level = msg.get("providerThinkingLevel")
            if (
                managed_provider is not None
                and msg.get("api") == API
                and msg.get("provider") == managed_provider
                and level in _EFFORTS
            ):
                levels[index] = level
        elif role == "toolResult":
            results: list[Any] = []
            error_images: list[Any] = []
            j = i
            while j < n and messages[j].get("role") == "toolResult":
                tool_msg = messages[j]
                is_error = tool_msg.get("isError", UNDEFINED)
                # (only an error result can have its images split off; most are not)
                split = None if is_error is False or is_error is UNDEFINED else split_error_tool_result_images(tool_msg)
                results.append(_tool_result(tool_msg, split["content"] if split else tool_msg["content"]))
                if split:
                    notes.add("error-images-moved", "images of an error tool result moved after the tool results")
                    error_images.append({"type": "text", "text": split["caption"]})
                    error_images.extend(_image(b) for b in split["images"])
                j += 1
            i = j - 1
            params.append({"role": "user", "content": [*results, *error_images]})
        i += 1
    flush()
    if cache_control and params:
        last = params[-1]
        if last["role"] in ("user", "system"):
            content = last["content"]
            if type(content) is list:
                if content:
                    block = content[-1]
                    if get(block, "type") in ("text", "image", "tool_result", "tool_addition", "tool_removal"):
                        content[-1] = {**block, "cache_control": cache_control}
            elif type(content) is str:
                last["content"] = [{"type": "text", "text": content, "cache_control": cache_control}]
    return params, levels
