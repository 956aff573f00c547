"""The body pi-ai 1.6.0 sends to the OpenAI Responses API (``api/openai-responses.js``, ``-shared.js``).

Mirrors ``streamSimple`` → ``stream`` → ``buildParams`` → ``convertResponsesMessages``/
``convertResponsesTools`` for an API key (``sk-...``; a Sign-in-with-ChatGPT token drops a few
fields) and default cache retention. Grammar-constrained tools are refused rather than guessed.
"""

from __future__ import annotations

import re
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.ops import is_blank, to_string
from pitools.core.js.value import UNDEFINED, js_truthy, slice_head_utf16, utf16_len
from pitools.core.request.common import Notes, RequestError, compat_flags, stringify_member
from pitools.core.request.constrained_sampling import refuse_grammar_tools, resolve_strict, tool_parameters
from pitools.core.request.sanitize_unicode import sanitize_surrogates
from pitools.core.request.simple_options import StreamOptions, openai_budget, resolve_sampling_params
from pitools.core.request.text import render_system_message_update, system_message_text
from pitools.core.request.thinking import map_thinking_level, off_effort
from pitools.core.request.tools import clamp_prompt_cache_key, resolve_transcript_tools, short_hash
from pitools.core.request.transcript import current_tools, resolve_transcript
from pitools.core.request.transform_messages import transform_messages

API = "openai-responses"
TOOL_CALL_PROVIDERS = frozenset(["openai", "openai-codex", "opencode"])
MIN_OUTPUT_TOKENS = 16
CONFIGURATION_UPDATE_REQUEST_EFFORT = "medium"

_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_TRAILING_UNDERSCORES = re.compile(r"_+$")


def get_compat(model: dict[str, Any]) -> dict[str, Any]:
    return compat_flags(
        model,
        {
            "supportsDeveloperRole": True,
            "supportsMidConvoSystemMessages": False,
            "promptCacheKeyMode": "auto",
            "supportsLongCacheRetention": True,
            "supportsStrictMode": False,
            "supportsOpenAIGrammarTools": False,
            "supportsAdditionalTools": False,
            "supportsToolSearch": False,
            "supportsExplicitPromptCacheMode": False,
            "supportsMaxOutputTokens": True,
            "supportsMidConvoEffort": False,
        },
    )


def _prompt_cache_options(c: dict[str, Any], retention: str) -> Any:
    """pi-ai ``getPromptCacheOptions`` for an API key (short or none retention: pitools never sends long)."""
    return {"mode": "explicit"} if c["supportsExplicitPromptCacheMode"] and retention == "none" else UNDEFINED


def tool_support(c: dict[str, Any]) -> str:
    if c["supportsMidConvoSystemMessages"] and c["supportsAdditionalTools"]:
        return "changes"
    return "additions" if c["supportsToolSearch"] else "none"


def _id_part(part: str) -> str:
    sanitized = _BAD_ID_CHARS.sub("_", part)
    if utf16_len(sanitized) > 64:
        sanitized = slice_head_utf16(sanitized, 64)
    return _TRAILING_UNDERSCORES.sub("", sanitized)


def _split(tool_id: str) -> tuple[str, Any]:
    parts = tool_id.split("|")
    return parts[0], (parts[1] if len(parts) > 1 else UNDEFINED)


def convert_tools(tools: list[Any], supports_strict: bool, search_result: bool = False) -> list[Any]:
    out = []
    for tool in tools:
        constrained = resolve_strict(tool, supports_strict)
        strict = constrained if constrained is not None else False
        definition: dict[str, Any] = {
            "type": "function",
            "name": get(tool, "name"),
            "description": get(tool, "description"),
            "parameters": tool_parameters(tool, True if strict is True else None),
        }
        if search_result:
            definition["defer_loading"] = True
        if supports_strict:
            definition["strict"] = strict
        out.append(definition)
    return out


def _text_signature(signature: Any) -> Any:
    if not js_truthy(signature):
        return UNDEFINED
    text = to_string(signature)
    if text.startswith("{"):
        from pitools.core.js.json.parse import parse_json_line

        try:
            parsed = parse_json_line(text.encode("utf-8", "surrogatepass"))[0]
        except ValueError:
            parsed = UNDEFINED
        if type(parsed) is dict and parsed.get("v") == 1 and type(parsed.get("id")) is str:
            if parsed.get("phase") in ("commentary", "final_answer"):
                return {"id": parsed["id"], "phase": parsed["phase"]}
            return {"id": parsed["id"]}
    return {"id": text}


def _tool_result_output(model: dict[str, Any], content: list[Any]) -> Any:
    texts = [get(c, "text") for c in content if get(c, "type") == "text"]
    text = "\n".join("" if t is None or t is UNDEFINED else to_string(t) for t in texts)
    images = [c for c in content if get(c, "type") == "image"]
    has_text = not is_blank(text)
    if not images or "image" not in (model.get("input") or []):
        return sanitize_surrogates(text if has_text else "(see attached image)" if images else "(no tool output)")
    out: list[Any] = []
    if has_text:
        out.append({"type": "input_text", "text": sanitize_surrogates(text)})
    for image in images:
        out.append(
            {
                "type": "input_image",
                "detail": "auto",
                "image_url": f"data:{to_string(get(image, 'mimeType'))};base64,{to_string(get(image, 'data'))}",
            }
        )
    return out


def _incremental_notice(unavailable: dict[str, None]) -> str:
    notice = (
        "This is an incremental tools update. Previously declared tools remain available unless explicitly marked "
        "unavailable. A tool declared again here is available again, and its latest definition replaces "
        "the earlier one."
    )
    return f"{notice}\nStill unavailable: {', '.join(unavailable)}." if unavailable else notice


def convert_messages(
    model: dict[str, Any], messages: list[Any], c: dict[str, Any], config_effort: Any, notes: Notes
) -> list[Any]:
    context = resolve_transcript(messages, c["supportsMidConvoSystemMessages"])
    provider_ok = model["provider"] in TOOL_CALL_PROVIDERS

    def normalize(tool_id: Any, _model: dict[str, Any], source: dict[str, Any]) -> Any:
        if not provider_ok or "|" not in tool_id:
            return _id_part(tool_id)
        call_id, item_id = _split(tool_id)
        foreign = source.get("provider") != model["provider"] or source.get("api") != model["api"]
        if foreign:
            item = "fc_" + short_hash(to_string(item_id))
            item = slice_head_utf16(item, 64)
        else:
            item = _id_part(to_string(item_id))
        if not item.startswith("fc_"):
            item = _id_part("fc_" + item)
        return f"{_id_part(call_id)}|{item}"

    transformed = transform_messages(context, model, normalize, notes)
    support = tool_support(c)
    _, folded = resolve_transcript_tools(context, support)
    instruction_role = (
        "developer"
        if model.get("reasoning") and (model.get("compat") or {}).get("supportsDeveloperRole") is not False
        else "system"
    )
    out: list[Any] = []
    declared_additional = False
    unavailable: dict[str, None] = {}
    strict_ok = bool(c["supportsStrictMode"])

    def tool_additions(message: Any, seed: str) -> None:
        nonlocal declared_additional
        tools = get(message, "toolsAdded")
        tools = tools if type(tools) is list else []
        for tool in tools:
            unavailable.pop(get(tool, "name"), None)
        if not tools:
            return
        if support == "changes":
            if declared_additional:
                out.append({"role": instruction_role, "content": _incremental_notice(unavailable)})
            declared_additional = True
            out.append({"type": "additional_tools", "role": "developer", "tools": convert_tools(tools, strict_ok)})
            return
        if support != "additions":
            return
        names = [to_string(get(t, "name")) for t in tools]
        call_id = f"pi_tool_load_{short_hash(f'{seed}:' + ','.join(names))}"
        out.append(
            {
                "type": "tool_search_call",
                "call_id": call_id,
                "execution": "client",
                "status": "completed",
                "arguments": {"query": " ".join(names), "limit": len(names)},
            }
        )
        out.append(
            {
                "type": "tool_search_output",
                "call_id": call_id,
                "execution": "client",
                "status": "completed",
                "tools": convert_tools(tools, strict_ok, search_result=True),
            }
        )

    msg_index = 0
    source_index = 0
    system_index = 0
    for msg in transformed:
        role = get(msg, "role")
        leading = source_index == 0 and role == "system"
        source_index += 1
        if role == "system":
            anchors = system_index >= folded
            system_index += 1
            if anchors:
                tool_additions(msg, f"system:{msg_index}")
            parts = [system_message_text(msg) if leading else render_system_message_update(msg)]
            if anchors:
                added_tools = get(msg, "toolsAdded")
                added = {get(t, "name") for t in (added_tools if type(added_tools) is list else [])}
                removed_tools = get(msg, "toolsRemoved")
                removed = [
                    to_string(get(t, "name"))
                    for t in (removed_tools if type(removed_tools) is list else [])
                    if get(t, "name") not in added
                ]
                if removed:
                    parts.append(
                        "The following tools are no longer available. Do not call them:\n"
                        + "\n".join(f"- {name}" for name in removed)
                    )
                for name in removed:
                    unavailable[name] = None
            text = "\n\n".join(p for p in parts if p)
            if text:
                out.append({"role": instruction_role, "content": sanitize_surrogates(text)})
        elif role == "user":
            content = msg["content"]
            if type(content) is str:
                out.append({"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(content)}]})
            else:
                items = [
                    {"type": "input_text", "text": sanitize_surrogates(b["text"])}
                    if get(b, "type") == "text"
                    else {
                        "type": "input_image",
                        "detail": "auto",
                        "image_url": f"data:{to_string(get(b, 'mimeType'))};base64,{to_string(get(b, 'data'))}",
                    }
                    for b in content
                ]
                if not items:
                    continue
                out.append({"role": "user", "content": items})
        elif role == "assistant":
            output: list[Any] = []
            same_provider_api = msg.get("provider") == model["provider"] and msg.get("api") == model["api"]
            same_model = same_provider_api and msg.get("model") == model["id"]
            different_model = same_provider_api and msg.get("model") != model["id"]
            text_index = 0
            for block in msg["content"]:
                btype = get(block, "type")
                if btype == "thinking":
                    signature = get(block, "thinkingSignature")
                    if js_truthy(signature):
                        from pitools.core.js.json.parse import parse_json_line

                        try:
                            output.append(parse_json_line(to_string(signature).encode("utf-8", "surrogatepass"))[0])
                        except ValueError:
                            raise RequestError(
                                "a thinking block's signature is not JSON: pi-ai's JSON.parse throws and the request "
                                "fails"
                            ) from None
                elif btype == "text":
                    parsed = _text_signature(get(block, "textSignature"))
                    fallback = f"msg_pi_{msg_index}" if text_index == 0 else f"msg_pi_{msg_index}_{text_index}"
                    text_index += 1
                    msg_id: Any = parsed.get("id") if type(parsed) is dict else UNDEFINED
                    if not js_truthy(msg_id):
                        msg_id = fallback
                    elif utf16_len(to_string(msg_id)) > 64:
                        msg_id = f"msg_{short_hash(to_string(msg_id))}"
                    item: dict[str, Any] = {
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "output_text",
                                "text": sanitize_surrogates(block["text"]),
                                "annotations": [],
                            }
                        ],
                        "status": "completed",
                        "id": msg_id,
                        "phase": get(parsed, "phase"),
                    }
                    output.append(item)
                elif btype == "toolCall":
                    call_id, item_id = _split(to_string(block.get("id")))
                    if different_model or not (type(item_id) is str and item_id.startswith("fc_")):
                        item_id = UNDEFINED
                    call: dict[str, Any] = {
                        "type": "function_call",
                        "id": item_id,
                        "call_id": call_id,
                        "name": block.get("name"),
                        "arguments": stringify_member(block.get("arguments", UNDEFINED)),
                    }
                    if same_model and block.get("namespace", UNDEFINED) is not UNDEFINED:
                        call["namespace"] = block["namespace"]
                    output.append(call)
            if not output:
                continue
            level = msg.get("providerThinkingLevel", UNDEFINED)
            if config_effort is not None and same_model and level is not UNDEFINED:
                out.append({"type": "configuration_update", "reasoning": {"effort": level}})
            out.extend(output)
        elif role == "toolResult":
            call_id, _ = _split(to_string(msg.get("toolCallId")))
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": _tool_result_output(model, msg["content"]),
                }
            )
        if not leading:
            msg_index += 1
    if config_effort is not None:
        out.append({"type": "configuration_update", "reasoning": {"effort": config_effort}})
    return out


def build(model: dict[str, Any], messages: list[Any], call: StreamOptions, notes: Notes) -> dict[str, Any]:
    """The params ``onPayload`` receives for ``streamSimple(model, {messages}, {reasoning, sessionId})``
    (the Responses adapter sends no thinking budget)."""
    level = call.level
    max_tokens, effort = openai_budget(model, messages, level, call.input_tokens)
    c = get_compat(model)
    level_map = model.get("thinkingLevelMap") or {}
    config_effort: Any = None
    if c["supportsMidConvoEffort"] and effort:
        config_effort = map_thinking_level(level_map, effort)
    context = resolve_transcript(messages, c["supportsMidConvoSystemMessages"], notes)
    refuse_grammar_tools(current_tools(context), c["supportsOpenAIGrammarTools"])
    request_tools, _ = resolve_transcript_tools(context, tool_support(c))
    items = convert_messages(model, context, c, config_effort, notes)
    send_key = c["promptCacheKeyMode"] != "disabled"
    params: dict[str, Any] = {
        "model": model["id"],
        "input": items,
        "stream": True,
        "prompt_cache_key": clamp_prompt_cache_key(call.cache_session_id) if send_key else UNDEFINED,
        "prompt_cache_retention": UNDEFINED,
        "prompt_cache_options": _prompt_cache_options(c, call.cache_retention),
        "store": False,
    }
    if max_tokens and c["supportsMaxOutputTokens"]:
        params["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if request_tools:
        params["tools"] = convert_tools(request_tools, bool(c["supportsStrictMode"]))
    if model.get("reasoning"):
        if effort:
            params["reasoning"] = {
                "effort": map_thinking_level(level_map, effort)
                if config_effort is None
                else CONFIGURATION_UPDATE_REQUEST_EFFORT,
                "summary": "auto",
            }
            params["include"] = ["reasoning.encrypted_content"]
        elif model["provider"] != "github-copilot" and level_map.get("off", UNDEFINED) is not None:
            params["reasoning"] = {"effort": off_effort(level_map)}
        if model["provider"] == "xai":
            params["include"] = ["reasoning.encrypted_content"]
    sampling = resolve_sampling_params(model, effort or "off")
    if sampling:
        params.update(sampling)
    return params
