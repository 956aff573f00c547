"""pi-ai's ``transformMessages`` (``src/api/transform-messages.ts``, ``dist/api/transform-messages.js``).

The clean-up every adapter runs on the LLM messages first: images replaced by placeholders for a
model without vision, thinking blocks and signatures of another model dropped, tool call ids
rewritten to the API's pattern, a synthetic result for an unanswered tool call, errored or aborted
assistant turns left out. Each change that reaches the wire is recorded as a :class:`Note`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.ops import is_blank, to_string
from pitools.core.js.value import UNDEFINED, js_truthy
from pitools.core.request.common import Notes, RequestError, short_repr

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
ERROR_TOOL_IMAGE_PLACEHOLDER = "(image attached after the tool results)"


def _replace_images(content: list[Any], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if get(block, "type") == "image":
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = get(block, "text") == placeholder
    return result


def split_error_tool_result_images(msg: dict[str, Any]) -> dict[str, Any] | None:
    """pi-ai ``splitErrorToolResultImages``: images of an error tool result move after the results."""
    if not js_truthy(msg.get("isError", UNDEFINED)):
        return None
    content = msg["content"]
    images = [b for b in content if get(b, "type") == "image"]
    if not images:
        return None
    return {
        "content": _replace_images(content, ERROR_TOOL_IMAGE_PLACEHOLDER),
        "caption": f"Images from the error result of tool call {to_string(msg.get('toolCallId'))} ({to_string(msg.get('toolName'))}):",  # noqa: E501
        "images": images,
    }


def transform_messages(
    messages: list[Any],
    model: dict[str, Any],
    normalize_tool_call_id: Callable[[str, dict[str, Any], dict[str, Any]], str] | None,
    notes: Notes | None = None,
) -> list[Any]:
    """pi-ai ``transformMessages``: the cross-provider clean-up every adapter runs first."""
    notes = notes if notes is not None else Notes()
    id_map: dict[str, str] = {}
    # After this every message is a plain dict: the loops below read members with dict.get
    # (``None`` where JavaScript sees ``undefined`` is the same to every comparison they make).
    normalized = [
        m if type(m) is dict and (c := m.get("content")) is not None and c is not UNDEFINED else {**m, "content": []}
        for m in messages
    ]
    vision = "image" in (model.get("input") or [])
    if not vision:
        downgraded: list[Any] = []
        for i, msg in enumerate(normalized):
            role = get(msg, "role")
            if role == "user" and type(msg["content"]) is list:
                new = _replace_images(msg["content"], NON_VISION_USER_IMAGE_PLACEHOLDER)
            elif role == "toolResult":
                new = _replace_images(_as_list(msg["content"]), NON_VISION_TOOL_IMAGE_PLACEHOLDER)
            else:
                downgraded.append(msg)
                continue
            if any(get(b, "type") == "image" for b in _as_list(msg["content"])):
                notes.add("image-omitted", "images replaced by a placeholder: the model does not take images", i)
            downgraded.append({**msg, "content": new})
        normalized = downgraded

    transformed: list[Any] = []
    provider, api, model_id = model["provider"], model["api"], model["id"]
    for i, msg in enumerate(normalized):
        role = msg.get("role")
        if role in ("system", "user"):
            transformed.append(msg)
            continue
        if role == "toolResult":
            new_id = id_map.get(msg.get("toolCallId"))  # type: ignore[arg-type]
            if new_id and new_id != msg.get("toolCallId"):
                transformed.append({**msg, "toolCallId": new_id})
            else:
                transformed.append(msg)
            continue
        if role == "assistant":
            same = msg.get("provider") == provider and msg.get("api") == api and msg.get("model") == model_id
            content: list[Any] = []
            dropped_thinking = 0
            for block in _as_list(msg["content"]):
                btype = block.get("type") if type(block) is dict else None
                if btype == "thinking":
                    if not same:
                        dropped_thinking += 1
                        continue
                    if js_truthy(block.get("redacted")) or js_truthy(block.get("thinkingSignature")):
                        content.append(block)
                        continue
                    thinking = block.get("thinking")
                    if not js_truthy(thinking) or is_blank(thinking):
                        continue
                    content.append(block)
                elif btype == "text":
                    content.append(block if same else {"type": "text", "text": block.get("text", UNDEFINED)})
                elif btype == "toolCall":
                    call = block
                    if not same and js_truthy(call.get("thoughtSignature")):
                        call = {k: v for k, v in call.items() if k != "thoughtSignature"}
                    if not same and normalize_tool_call_id is not None:
                        old = call.get("id")
                        new_id = normalize_tool_call_id(old, model, msg)
                        if new_id != old:
                            id_map[old] = new_id
                            call = {**call, "id": new_id}
                            notes.add(
                                "tool-call-id-rewritten",
                                f"tool call id {short_repr(old)} rewritten to {short_repr(new_id)} "
                                "(the API's id pattern)",
                                i,
                            )
                    content.append(call)
                else:
                    content.append(block)
            if dropped_thinking:
                notes.add(
                    "thinking-dropped",
                    f"{dropped_thinking} thinking block(s) from "
                    f"{to_string(msg.get('provider'))}/{to_string(msg.get('model'))} dropped "
                    "(signatures are only valid for the model that wrote them)",
                    i,
                )
            transformed.append({**msg, "content": content})
            continue
        transformed.append(msg)

    result: list[Any] = []
    pending: list[Any] = []
    answered: set[Any] = set()
    held: list[Any] = []

    def close() -> None:
        nonlocal pending, answered
        if pending:
            for call in pending:
                if call.get("id") not in answered:
                    notes.add(
                        "synthetic-tool-result",
                        f"tool call {short_repr(call.get('id'))} ({to_string(call.get('name'))}) had no result: "
                        "'No result provided' inserted",
                    )
                    result.append(
                        {
                            "role": "toolResult",
                            "toolCallId": call.get("id"),
                            "toolName": call.get("name"),
                            "content": [{"type": "text", "text": "No result provided"}],
                            "isError": True,
                            "timestamp": 0,
                        }
                    )
            pending = []
            answered = set()
        result.extend(held)
        held.clear()

    for msg in transformed:
        role = msg.get("role")
        if role == "assistant":
            if pending or held:  # (close() does nothing else: most turns skip the call)
                close()
            if msg.get("stopReason") in ("error", "aborted"):
                notes.add(
                    "assistant-skipped",
                    f"an assistant message that ended with '{msg.get('stopReason')}' is not replayed",
                )
                continue
            calls: list[Any] = []
            for b in msg["content"]:
                if type(b) is dict and b.get("type") == "toolCall":
                    calls.append(b)
            if calls:
                pending = calls
                answered = set()
            result.append(msg)
        elif role == "toolResult":
            answered.add(msg.get("toolCallId"))
            result.append(msg)
        elif role == "system":
            if pending:
                held.append(msg)
            else:
                result.append(msg)
        elif role == "user":
            if pending or held:
                close()
            result.append(msg)
        else:
            result.append(msg)
    close()
    return result


def _as_list(v: Any) -> list[Any]:
    if type(v) is list:
        return v
    raise RequestError(f"a message's content is {type(v).__name__}, not a list: pi-ai would throw here")
