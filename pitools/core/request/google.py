"""The body pi-ai 1.6.0 hands the Gemini SDK (``api/google-generative-ai.js``, ``api/google-shared.js``).

Mirrors ``streamSimple`` → ``stream`` → ``buildParams`` → ``convertMessages``/``convertTools``: the
``{model, contents, config}`` object ``onPayload`` receives (the SDK then moves ``config`` into the
REST body's ``generationConfig``/``systemInstruction``/``tools``). No abort signal, so no
``abortSignal`` key.
"""

from __future__ import annotations

import re
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.ops import is_blank, to_string
from pitools.core.js.value import UNDEFINED, js_keys, js_truthy, slice_head_utf16, utf16_len
from pitools.core.request.common import Notes, RequestError
from pitools.core.request.constrained_sampling import resolve_strict, tool_parameters
from pitools.core.request.sanitize_unicode import sanitize_surrogates
from pitools.core.request.simple_options import Budgets, StreamOptions, clamp_max_tokens_to_context
from pitools.core.request.text import system_message_text
from pitools.core.request.thinking import clamp_thinking_level
from pitools.core.request.transcript import current_tools, initial_system_message, resolve_transcript
from pitools.core.request.transform_messages import transform_messages

API = "google-generative-ai"

_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_GEMINI_MAJOR = re.compile(r"gemini(?:-live)?-(\d+)")


def gemini_major(model_id: str) -> int | None:
    m = _GEMINI_MAJOR.match(model_id.lower())
    return int(m.group(1)) if m else None


def requires_tool_call_id(model_id: str) -> bool:
    major = gemini_major(model_id)
    return model_id.startswith("claude-") or model_id.startswith("gpt-oss-") or (major is not None and major >= 3)


def _multimodal_function_response(model_id: str) -> bool:
    major = gemini_major(model_id)
    return major >= 3 if major is not None else True


def uses_thinking_level(model: dict[str, Any]) -> bool:
    """pi-ai ``usesGoogleThinkingLevel``: Gemini 3+/4+ and Gemma 4 take a level, not a budget."""
    mid = str(model["id"]).lower()
    return bool(
        re.search(r"gemini-3(?:\.\d+)?-(?:pro|flash)", mid)
        or re.search(r"gemini-(?:[4-9]|[1-9]\d)", mid)
        or mid in ("gemini-flash-latest", "gemini-flash-lite-latest")
        or re.search(r"gemma-?4", mid)
    )


def resolve_google_level(model: dict[str, Any], level: str) -> str:
    mapped = (model.get("thinkingLevelMap") or {}).get(level)
    resolved = mapped.lower() if type(mapped) is str else level
    if resolved in ("minimal", "low", "medium", "high"):
        return resolved
    raise RequestError(
        f"pi-ai has no Google thinking level for {model['provider']}/{model['id']} at {level} (mapped to "
        f"{mapped!s}); it refuses the request"
    )


def _budget(model: dict[str, Any], level: str, budgets: Budgets | None) -> float:
    """pi-ai ``getGoogleBudget``: the settings' budget for the level, else the model family's."""
    if budgets is not None and level in budgets:
        return budgets[level]
    mid = str(model["id"])
    if "2.5-pro" in mid:
        return {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}[level]
    if "2.5-flash-lite" in mid:
        return {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}[level]
    if "2.5-flash" in mid:
        return {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}[level]
    return -1


def _disabled_config(model: dict[str, Any]) -> dict[str, Any]:
    if not uses_thinking_level(model):
        return {"thinkingBudget": 0}
    fallback = clamp_thinking_level(model, "off")
    if fallback == "off":
        return {"thinkingBudget": 0}
    return {"thinkingLevel": resolve_google_level(model, fallback).upper()}


def _signature(same: bool, signature: Any) -> Any:
    if not same or not js_truthy(signature) or type(signature) is not str:
        return UNDEFINED
    if utf16_len(signature) % 4 != 0 or not _BASE64.fullmatch(signature):
        return UNDEFINED
    return signature


def _blank(text: Any) -> bool:
    return not js_truthy(text) or is_blank(text)


def convert_messages(model: dict[str, Any], conversation: list[Any], notes: Notes) -> list[Any]:
    def normalize(tool_id: Any, _model: dict[str, Any], _msg: dict[str, Any]) -> Any:
        if not requires_tool_call_id(model["id"]):
            return tool_id
        return slice_head_utf16(_BAD_ID_CHARS.sub("_", tool_id), 64)

    include_id = requires_tool_call_id(model["id"])
    contents: list[Any] = []
    for msg in transform_messages(conversation, model, normalize, notes):
        role = get(msg, "role")
        if role == "user":
            content = msg["content"]
            if type(content) is str:
                contents.append({"role": "user", "parts": [{"text": sanitize_surrogates(content)}]})
            else:
                parts = [
                    {"text": sanitize_surrogates(b["text"])}
                    if get(b, "type") == "text"
                    else {"inlineData": {"mimeType": get(b, "mimeType"), "data": get(b, "data")}}
                    for b in content
                ]
                if parts:
                    contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            parts = []
            same = msg.get("provider") == model["provider"] and msg.get("model") == model["id"]
            for block in msg["content"]:
                btype = get(block, "type")
                if btype == "text":
                    sig = _signature(same, get(block, "textSignature"))
                    if _blank(block.get("text")) and sig is UNDEFINED:
                        continue
                    part: dict[str, Any] = {"text": sanitize_surrogates(block["text"])}
                    if sig is not UNDEFINED:
                        part["thoughtSignature"] = sig
                    parts.append(part)
                elif btype == "thinking":
                    if same:
                        sig = _signature(same, get(block, "thinkingSignature"))
                        if _blank(block.get("thinking")) and sig is UNDEFINED:
                            continue
                        part = {"thought": True, "text": sanitize_surrogates(block["thinking"])}
                        if sig is not UNDEFINED:
                            part["thoughtSignature"] = sig
                        parts.append(part)
                    else:
                        if _blank(block.get("thinking")):
                            continue
                        parts.append({"text": sanitize_surrogates(block["thinking"])})
                elif btype == "toolCall":
                    sig = _signature(same, get(block, "thoughtSignature"))
                    args = block.get("arguments", UNDEFINED)
                    call: dict[str, Any] = {
                        "name": block.get("name"),
                        "args": {} if args is None or args is UNDEFINED else args,
                    }
                    if include_id:
                        call["id"] = block.get("id")
                    part = {"functionCall": call}
                    if sig is not UNDEFINED:
                        part["thoughtSignature"] = sig
                    parts.append(part)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif role == "toolResult":
            content = msg["content"]
            texts = [get(c, "text") for c in content if get(c, "type") == "text"]
            text_result = "\n".join("" if t is None or t is UNDEFINED else to_string(t) for t in texts)
            images = [c for c in content if get(c, "type") == "image"] if "image" in (model.get("input") or []) else []
            has_text = not is_blank(text_result)
            value = sanitize_surrogates(text_result) if has_text else ("(see attached image)" if images else "")
            image_parts = [{"inlineData": {"mimeType": get(i, "mimeType"), "data": get(i, "data")}} for i in images]
            multimodal = _multimodal_function_response(model["id"])
            response: dict[str, Any] = {
                "name": msg.get("toolName"),
                "response": {"error": value} if js_truthy(msg.get("isError")) else {"output": value},
            }
            if images and multimodal:
                response["parts"] = image_parts
            if include_id:
                response["id"] = msg.get("toolCallId")
            part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
            if images and not multimodal:
                notes.add("tool-images-separate", "tool result images sent as a separate user turn (Gemini < 3)")
                contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *image_parts]})
    return contents


_META = frozenset(["$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "$comment", "$defs", "definitions"])
_NAME_MAPS = frozenset(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"])
_SUBSCHEMAS = frozenset(
    ["additionalProperties", "unevaluatedProperties", "propertyNames", "items", "prefixItems", "additionalItems",
     "unevaluatedItems", "contains", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "contentSchema"]
)  # fmt: skip


def rewrite_const_as_enum(schema: Any, name_map: bool = False) -> Any:
    if type(schema) is list:
        return [rewrite_const_as_enum(item) for item in schema]
    if type(schema) is not dict:
        return schema
    result: dict[str, Any] = {}
    for key in js_keys(schema):
        value = schema[key]
        if name_map or key in _SUBSCHEMAS:
            result[key] = rewrite_const_as_enum(value)
        elif key in _NAME_MAPS:
            result[key] = rewrite_const_as_enum(value, True)
        else:
            result[key] = value
    if not name_map and "const" in result and result.get("enum", UNDEFINED) is UNDEFINED:
        value = result["const"]
        if type(value) is str or (type(value) in (int, float) and type(value) is not bool):
            del result["const"]
            result["enum"] = [value]
    return result


def build(model: dict[str, Any], messages: list[Any], call: StreamOptions, notes: Notes) -> dict[str, Any]:
    """The params ``onPayload`` receives for ``streamSimple(model, {messages}, {reasoning, sessionId})``."""
    level, budgets = call.level, call.budgets
    max_tokens = clamp_max_tokens_to_context(model, messages, model["maxTokens"], call.input_tokens)
    thinking: dict[str, Any]
    reasoning = None if level == "off" else level
    if not reasoning or clamp_thinking_level(model, reasoning) == "off":
        thinking = {"enabled": False}
    else:
        resolved = resolve_google_level(model, clamp_thinking_level(model, reasoning))
        if uses_thinking_level(model):
            thinking = {"enabled": True, "level": resolved.upper()}
        else:
            thinking = {"enabled": True, "budgetTokens": _budget(model, resolved, budgets)}

    context = resolve_transcript(messages, False, notes)
    initial = initial_system_message(context)
    conversation = context[1:] if initial else context
    contents = convert_messages(model, conversation, notes)
    tools = current_tools(context)
    strict_ok = (gemini_major(str(model["id"])) or 0) >= 3
    config: dict[str, Any] = {"maxOutputTokens": max_tokens}
    system = system_message_text(initial) if initial else ""
    if system:
        config["systemInstruction"] = sanitize_surrogates(system)
    if tools:
        declarations = []
        modes = []
        for tool in tools:
            strict = resolve_strict(tool, strict_ok)
            modes.append(strict)
            declarations.append(
                {
                    "name": get(tool, "name"),
                    "description": get(tool, "description"),
                    "parametersJsonSchema": rewrite_const_as_enum(tool_parameters(tool, strict)),
                }
            )
        config["tools"] = [{"functionDeclarations": declarations}]
        if any(m is True for m in modes):
            config["toolConfig"] = {"functionCallingConfig": {"mode": "VALIDATED"}}
    config["automaticContinuation"] = False
    if thinking["enabled"] and model.get("reasoning"):
        tc: dict[str, Any] = {"includeThoughts": True}
        if "level" in thinking:
            tc["thinkingLevel"] = thinking["level"]
        elif "budgetTokens" in thinking:
            tc["thinkingBudget"] = thinking["budgetTokens"]
        config["thinkingConfig"] = tc
    elif model.get("reasoning") and not thinking["enabled"]:
        config["thinkingConfig"] = _disabled_config(model)
    return {"model": model["id"], "contents": contents, "config": config}
