"""Provider rules applied to a built request body (``pitools request --check``, ``validate --for-model``).

Each rule has a stable code, a severity, and the source it comes from (provider documentation,
the error text providers return, or an issue where users hit it). A finding names the message
index and the field path the provider would name in its error (``messages.5.content.2.id``).
pi-ai already repairs some things on the way (foreign thinking dropped, cross-provider tool-call
ids rewritten, orphaned calls answered); these rules flag what it leaves for the provider to reject.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.json.record import record_json
from pitools.core.js.value import utf16_len
from pitools.core.request.common import estimate_context_tokens, get

ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
OPENAI_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
ANTHROPIC_MEDIA = ("image/jpeg", "image/png", "image/gif", "image/webp")

ANTHROPIC_TOOL_USE_DOCS = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
ANTHROPIC_THINKING_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
ANTHROPIC_VISION_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/vision"
OPENAI_CHAT_DOCS = "https://platform.openai.com/docs/api-reference/chat/create"
OPENAI_RESPONSES_DOCS = "https://platform.openai.com/docs/api-reference/responses/create"
GEMINI_FC_DOCS = "https://ai.google.dev/gemini-api/docs/function-calling"
PI_9048 = 'Pi #9048 "Anthropic handoff still rejects Codex tool IDs and thinking signatures"'

#: code → (severity, one-line description, source). Stable: JSON output and the README use them.
RULES: dict[str, tuple[str, str, str]] = {
    "tool-id-pattern": (
        "error",
        "a tool call id holds characters the API refuses (Anthropic: ^[a-zA-Z0-9_-]+$)",
        f"{ANTHROPIC_TOOL_USE_DOCS}; {PI_9048}",
    ),
    "tool-id-length": (
        "error",
        "a tool call id is longer than the API allows (Anthropic 64, Chat Completions 40, Responses 64)",
        f'{ANTHROPIC_TOOL_USE_DOCS}; OpenAI 400 "string too long. Expected a string with maximum length '
        f'40" ({OPENAI_CHAT_DOCS})',
    ),
    "duplicate-tool-id": (
        "error",
        "two tool calls in the request share an id",
        f'Anthropic 400 "tool_use ids must be unique" ({ANTHROPIC_TOOL_USE_DOCS})',
    ),
    "tool-result-without-call": (
        "error",
        "a tool result answers no tool call of the assistant turn before it",
        f'Anthropic 400 "unexpected tool_use_id found in tool_result blocks" ({ANTHROPIC_TOOL_USE_DOCS}); '
        f'OpenAI 400 "No tool call found for function call output" ({OPENAI_RESPONSES_DOCS}); {GEMINI_FC_DOCS}',
    ),
    "foreign-thinking-signature": (
        "error",
        "a thinking block kept for this model carries a signature another provider wrote",
        f'Anthropic 400 "Invalid signature in thinking block" ({ANTHROPIC_THINKING_DOCS}); {PI_9048}; '
        "oh-my-pi #6379; opencode #6418; Claude Code #21726",
    ),
    "thinking-missing-in-tool-loop": (
        "error",
        "thinking is on and the request continues a tool loop whose assistant turn does not start with "
        "a thinking block",
        f'Anthropic 400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`" ({ANTHROPIC_THINKING_DOCS})',
    ),
    "missing-thought-signature": (
        "error",
        "Gemini 3+: a function call of the current turn has no thought signature (it came from another model)",
        "https://ai.google.dev/gemini-api/docs/thought-signatures (400 when the current turn's function calls "
        "lack their signature)",
    ),
    "empty-text-block": (
        "error",
        "a text block or part is empty",
        f'Anthropic 400 "text content blocks must be non-empty" ({ANTHROPIC_TOOL_USE_DOCS}); Gemini 400 on empty parts',
    ),
    "empty-message": (
        "error",
        "a message has no content at all",
        'Anthropic 400 "all messages must have non-empty content"; Gemini 400 "contents.parts must not be empty"',
    ),
    "tool-name-pattern": (
        "error",
        "a tool name holds characters or a length the API refuses",
        f"{ANTHROPIC_TOOL_USE_DOCS} (^[a-zA-Z0-9_-]{{1,128}}$); {OPENAI_CHAT_DOCS} (^[a-zA-Z0-9_-]{{1,64}}$)",
    ),
    "image-media-type": (
        "error",
        "an image type the API does not take",
        f"{ANTHROPIC_VISION_DOCS} (JPEG, PNG, GIF, WebP)",
    ),
    "image-too-large": (
        "error",
        "an image is larger than the model's per-image limit (pi-ai's inputLimits)",
        f"{ANTHROPIC_VISION_DOCS}; pi-ai model inputLimits.images.resize.maxBytes",
    ),
    "image-count": (
        "error",
        "more images than the model takes in one request (pi-ai's inputLimits)",
        "pi-ai model inputLimits.images.maxPerRequest",
    ),
    "request-too-large": (
        "error",
        "the JSON body is larger than the API accepts (pi-ai's inputLimits.maxRequestBytes)",
        "pi-ai model inputLimits.maxRequestBytes; Anthropic 413 request_too_large",
    ),
    "context-over-window": (
        "error",
        "Pi's token estimate of the context is over the model's context window",
        'pi-ai estimateContextTokens; Anthropic 400 "prompt is too long"; OpenAI context_length_exceeded',
    ),
    "context-near-window": (
        "warning",
        "Pi's estimate plus the output budget is over the window: pi-ai shrinks max_tokens, replies may be cut short",
        "pi-ai clampMaxTokensToContext",
    ),
}

SEVERITY_ORDER = {"error": 2, "warning": 1, "info": 0}


@dataclass(frozen=True, slots=True)
class RequestFinding:
    code: str
    message: str
    path: str | None = None
    index: int | None = None

    @property
    def severity(self) -> str:
        return RULES[self.code][0]

    @property
    def source(self) -> str:
        return RULES[self.code][2]

    def to_json(self) -> dict[str, Any]:
        return record_json(self, ("code", "severity", "message", "index", "path", "source"))


def _decoded_size(data: Any) -> int:
    if type(data) is not str:
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return (len(data) * 3) // 4


def _looks_foreign_anthropic_signature(signature: Any) -> bool:
    """Anthropic signatures are long base64; JSON (OpenAI reasoning items), pipes or a short value are not."""
    if type(signature) is not str:
        return True
    return (
        signature.startswith("{") or signature.startswith("[") or not BASE64.fullmatch(signature) or len(signature) < 40
    )


def check_request(model: dict[str, Any], payload: dict[str, Any], llm_messages: list[Any]) -> list[RequestFinding]:
    """Every rule for ``model``'s API over ``payload``."""
    api = model.get("api")
    findings: list[RequestFinding] = []
    if api == "anthropic-messages":
        _check_anthropic(model, payload, findings)
    elif api == "openai-completions":
        _check_completions(payload, findings)
    elif api == "openai-responses":
        _check_responses(payload, findings)
    elif api == "google-generative-ai":
        _check_google(model, payload, findings)
    _check_size(model, payload, llm_messages, findings)
    return findings


def _check_tool_name(
    name: Any, pattern: re.Pattern[str], where: str, out: list[RequestFinding], what: str = "tool"
) -> None:
    """A ``tool-name-pattern`` finding unless ``name`` is a string the provider's ``pattern`` takes."""
    if type(name) is not str or not pattern.fullmatch(name):
        out.append(RequestFinding("tool-name-pattern", f"{what} name {_q(name)} is not ^{pattern.pattern}$", where))


def _check_anthropic(model: dict[str, Any], payload: dict[str, Any], out: list[RequestFinding]) -> None:
    messages = payload.get("messages") or []
    seen_ids: dict[str, str] = {}
    thinking_on = get(payload.get("thinking"), "type") in ("enabled", "adaptive")
    for t, tool in enumerate(payload.get("tools") or []):
        _check_tool_name(get(tool, "name"), TOOL_NAME, f"tools.{t}.name", out)
    previous_calls: set[Any] = set()
    images = 0
    limits = _image_limits(model)
    for i, msg in enumerate(messages):
        content = msg.get("content")
        role = msg.get("role")
        if role == "system":
            continue
        if isinstance(content, list) and not content:
            out.append(
                RequestFinding("empty-message", f"{role} message {i} has no content blocks", f"messages.{i}.content", i)
            )
        calls_here: set[Any] = set()
        for b, block in enumerate(content if isinstance(content, list) else []):
            btype = get(block, "type")
            path = f"messages.{i}.content.{b}"
            if btype == "text" and get(block, "text") == "":
                out.append(
                    RequestFinding("empty-text-block", f"message {i} has an empty text block", f"{path}.text", i)
                )
            elif btype == "tool_use":
                tid = get(block, "id")
                calls_here.add(tid)
                _anthropic_id(tid, f"{path}.id", i, out)
                if type(tid) is str:
                    if tid in seen_ids:
                        out.append(
                            RequestFinding(
                                "duplicate-tool-id",
                                f"tool_use id {_q(tid)} is also used at {seen_ids[tid]}",
                                f"{path}.id",
                                i,
                            )
                        )
                    seen_ids.setdefault(tid, f"{path}.id")
            elif btype == "tool_result":
                tid = get(block, "tool_use_id")
                _anthropic_id(tid, f"{path}.tool_use_id", i, out)
                if tid not in previous_calls:
                    out.append(
                        RequestFinding(
                            "tool-result-without-call",
                            f"tool_result for {_q(tid)} follows no tool_use with that id in message {i - 1}",
                            f"{path}.tool_use_id",
                            i,
                        )
                    )
                inner = get(block, "content")
                if isinstance(inner, list):
                    for k, sub in enumerate(inner):
                        if get(sub, "type") == "image":
                            images += 1
                            _anthropic_image(sub, f"{path}.content.{k}", i, limits, out)
            elif btype == "thinking":
                signature = get(block, "signature")
                if _looks_foreign_anthropic_signature(signature):
                    out.append(
                        RequestFinding(
                            "foreign-thinking-signature",
                            f"thinking block signature {_q(signature)} is not one Anthropic wrote "
                            "(the message claims this model, but the signature came from elsewhere)",
                            f"{path}.signature",
                            i,
                        )
                    )
            elif btype == "image":
                images += 1
                _anthropic_image(block, path, i, limits, out)
        previous_calls = calls_here if role == "assistant" else set()
        if isinstance(content, str) and content == "":
            out.append(
                RequestFinding("empty-message", f"{role} message {i} is an empty string", f"messages.{i}.content", i)
            )
    _image_count(images, limits, out)
    if thinking_on:
        convo = [(i, m) for i, m in enumerate(messages) if m.get("role") != "system"]
        if len(convo) >= 2:
            _last_i, last = convo[-1]
            prev_i, prev = convo[-2]
            last_content = last.get("content")
            tool_loop = (
                last.get("role") == "user"
                and isinstance(last_content, list)
                and any(get(b, "type") == "tool_result" for b in last_content)
            )
            if tool_loop and prev.get("role") == "assistant":
                first = (prev.get("content") or [None])[0]
                if get(first, "type") not in ("thinking", "redacted_thinking"):
                    out.append(
                        RequestFinding(
                            "thinking-missing-in-tool-loop",
                            f"thinking is on, message {prev_i} is the assistant turn of an open tool loop and starts "
                            f"with {_q(get(first, 'type'))}, not a thinking block "
                            "(its thinking came from another model and was dropped, or was never signed)",
                            f"messages.{prev_i}.content.0",
                            prev_i,
                        )
                    )


def _anthropic_id(tid: Any, path: str, i: int, out: list[RequestFinding]) -> None:
    if type(tid) is not str or not ANTHROPIC_ID.fullmatch(tid):
        out.append(RequestFinding("tool-id-pattern", f"id {_q(tid)} does not match ^[a-zA-Z0-9_-]+$", path, i))
    elif utf16_len(tid) > 64:
        out.append(RequestFinding("tool-id-length", f"id is {utf16_len(tid)} characters; the limit is 64", path, i))


def _image_limits(model: dict[str, Any]) -> dict[str, Any]:
    limits = model.get("inputLimits") or {}
    images = limits.get("images") or {}
    return {
        "maxPerRequest": images.get("maxPerRequest"),
        "maxBytes": (images.get("resize") or {}).get("maxBytes"),
        "maxRequestBytes": limits.get("maxRequestBytes"),
    }


def _anthropic_image(block: Any, path: str, i: int, limits: dict[str, Any], out: list[RequestFinding]) -> None:
    source = get(block, "source")
    media = get(source, "media_type")
    if media not in ANTHROPIC_MEDIA:
        out.append(
            RequestFinding(
                "image-media-type",
                f"image type {_q(media)}; Anthropic takes {', '.join(ANTHROPIC_MEDIA)}",
                f"{path}.source.media_type",
                i,
            )
        )
    _image_size(get(source, "data"), f"{path}.source.data", i, limits, out)


def _image_size(data: Any, path: str, i: int, limits: dict[str, Any], out: list[RequestFinding]) -> None:
    max_bytes = limits.get("maxBytes")
    size = _decoded_size(data)
    if max_bytes and size > max_bytes:
        out.append(
            RequestFinding(
                "image-too-large", f"image is {size:,} bytes; the model takes at most {max_bytes:,}", path, i
            )
        )


def _image_count(count: int, limits: dict[str, Any], out: list[RequestFinding]) -> None:
    most = limits.get("maxPerRequest")
    if most and count > most:
        out.append(RequestFinding("image-count", f"{count} images; the model takes at most {most} per request"))


def _check_completions(payload: dict[str, Any], out: list[RequestFinding]) -> None:
    messages = payload.get("messages") or []
    for t, tool in enumerate(payload.get("tools") or []):
        _check_tool_name(get(get(tool, "function"), "name"), OPENAI_TOOL_NAME, f"tools.{t}.function.name", out)
    open_calls: set[Any] = set()
    seen: dict[str, str] = {}
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "assistant":
            open_calls = set()
            for c, call in enumerate(msg.get("tool_calls") or []):
                cid = get(call, "id")
                path = f"messages.{i}.tool_calls.{c}.id"
                open_calls.add(cid)
                if type(cid) is str and utf16_len(cid) > 40:
                    out.append(
                        RequestFinding(
                            "tool-id-length", f"tool call id is {utf16_len(cid)} characters; OpenAI allows 40", path, i
                        )
                    )
                if type(cid) is str:
                    if cid in seen:
                        out.append(
                            RequestFinding(
                                "duplicate-tool-id", f"tool call id {_q(cid)} is also used at {seen[cid]}", path, i
                            )
                        )
                    seen.setdefault(cid, path)
        elif role == "tool":
            if get(msg, "tool_call_id") not in open_calls:
                out.append(
                    RequestFinding(
                        "tool-result-without-call",
                        f"tool message for {_q(get(msg, 'tool_call_id'))} follows no assistant tool_calls entry with "
                        "that id",
                        f"messages.{i}.tool_call_id",
                        i,
                    )
                )
        else:
            open_calls = set()
            content = msg.get("content")
            if isinstance(content, list):
                for b, part in enumerate(content):
                    if get(part, "type") == "text" and get(part, "text") == "":
                        out.append(
                            RequestFinding(
                                "empty-text-block",
                                f"message {i} has an empty text part",
                                f"messages.{i}.content.{b}.text",
                                i,
                            )
                        )


def _check_responses(payload: dict[str, Any], out: list[RequestFinding]) -> None:
    calls: set[Any] = set()
    for i, item in enumerate(payload.get("input") or []):
        itype = get(item, "type")
        if itype == "function_call":
            cid = get(item, "call_id")
            calls.add(cid)
            if type(cid) is str and utf16_len(cid) > 64:
                out.append(
                    RequestFinding(
                        "tool-id-length",
                        f"call_id is {utf16_len(cid)} characters; the limit is 64",
                        f"input.{i}.call_id",
                        i,
                    )
                )
        elif itype == "function_call_output" and get(item, "call_id") not in calls:
            out.append(
                RequestFinding(
                    "tool-result-without-call",
                    f"function_call_output for {_q(get(item, 'call_id'))} has no function_call before it",
                    f"input.{i}.call_id",
                    i,
                )
            )
    for t, tool in enumerate(payload.get("tools") or []):
        _check_tool_name(get(tool, "name"), OPENAI_TOOL_NAME, f"tools.{t}.name", out)


def _check_google(model: dict[str, Any], payload: dict[str, Any], out: list[RequestFinding]) -> None:
    _check_thought_signatures(model, payload, out)
    pending = 0
    for i, content in enumerate(payload.get("contents") or []):
        parts = get(content, "parts")
        if not isinstance(parts, list) or not parts:
            out.append(RequestFinding("empty-message", f"contents {i} has no parts", f"contents.{i}.parts", i))
            continue
        calls = sum(1 for p in parts if "functionCall" in p)
        responses = sum(1 for p in parts if "functionResponse" in p)
        if responses and responses > pending:
            out.append(
                RequestFinding(
                    "tool-result-without-call",
                    f"contents {i} answers {responses} function call(s) but the turn before made {pending}",
                    f"contents.{i}.parts",
                    i,
                )
            )
        pending = calls if get(content, "role") == "model" else 0
    tools = get(get(payload, "config"), "tools")
    for t, group in enumerate(tools if isinstance(tools, list) else []):
        for d, decl in enumerate(get(group, "functionDeclarations") or []):
            where = f"config.tools.{t}.functionDeclarations.{d}.name"
            _check_tool_name(get(decl, "name"), OPENAI_TOOL_NAME, where, out, "function")


def _check_thought_signatures(model: dict[str, Any], payload: dict[str, Any], out: list[RequestFinding]) -> None:
    """Gemini 3+ validates the signatures of the current turn: the contents after the last user text."""
    from pitools.core.request.google import gemini_major

    if (gemini_major(str(model.get("id"))) or 0) < 3:
        return
    contents = payload.get("contents") or []
    start = 0
    for i, content in enumerate(contents):
        parts = get(content, "parts")
        if (
            get(content, "role") == "user"
            and isinstance(parts, list)
            and any("text" in p for p in parts if isinstance(p, dict))
        ):
            start = i + 1
    for i in range(start, len(contents)):
        content = contents[i]
        parts = get(content, "parts")
        if get(content, "role") != "model" or not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            if isinstance(part, dict) and "functionCall" in part:
                if "thoughtSignature" not in part:
                    out.append(
                        RequestFinding(
                            "missing-thought-signature",
                            f"contents {i}: the function call {_q(get(get(part, 'functionCall'), 'name'))} "
                            "of the current turn carries no thoughtSignature",
                            f"contents.{i}.parts.{j}",
                            i,
                        )
                    )
                break  # only the first function call of a step carries the signature


def _check_size(
    model: dict[str, Any], payload: dict[str, Any], llm_messages: list[Any], out: list[RequestFinding]
) -> None:
    limits = _image_limits(model)
    if model.get("api") != "anthropic-messages":
        count = _count_images(payload)
        _image_count(count, limits, out)
    max_request = limits.get("maxRequestBytes")
    if max_request:
        size = len((js_stringify(payload) or "").encode("utf-8", "surrogatepass"))
        if size > max_request:
            out.append(
                RequestFinding(
                    "request-too-large", f"the body is {size:,} bytes; the API takes at most {max_request:,}"
                )
            )
    window = model.get("contextWindow") or 0
    if window > 0:
        tokens = estimate_context_tokens(llm_messages)
        if tokens > window:
            out.append(
                RequestFinding("context-over-window", f"Pi estimates {tokens:,.0f} tokens; the window is {window:,}")
            )
        elif tokens + 4096 + model.get("maxTokens", 0) > window:
            out.append(
                RequestFinding(
                    "context-near-window",
                    f"Pi estimates {tokens:,.0f} tokens; with the {model.get('maxTokens', 0):,}-token output cap "
                    f"that passes the {window:,} window",
                )
            )


def _count_images(value: Any) -> int:
    text = js_stringify(value) or ""
    return text.count('"inlineData"') + text.count('"image_url"')


def _q(value: Any) -> str:
    text = repr(value) if type(value) is not str else value
    if len(text) > 48:
        text = text[:45] + "..."
    return repr(text) if type(value) is str else text


def worst_severity(findings: list[RequestFinding]) -> str | None:
    if not findings:
        return None
    return max((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s])
