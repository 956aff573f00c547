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

import orjson

from pitools.core.js.access import get
from pitools.core.js.json.encode import js_stringify_size, size_probe
from pitools.core.js.json.parse import gc_paused
from pitools.core.js.json.record import record_json
from pitools.core.js.value import UNDEFINED, json_kind, utf16_len
from pitools.core.request.estimate import estimate_input_tokens
from pitools.core.request.sanitize_unicode import has_surrogates, sanitize_surrogates

ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
OPENAI_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: Gemini's FunctionDeclaration.name: a letter or underscore first, then also dots, colons and
#: dashes (MCP-style ``fs.read``, ``server:tool``), at most 64 characters.
GEMINI_TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
#: The base64 alphabets, padding left out: the standard one, and Google's (protobuf ``bytes`` in
#: JSON take the URL-safe letters too).
BASE64_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
GOOGLE_BASE64_LETTERS = BASE64_LETTERS + b"-_"
ANTHROPIC_MEDIA = ("image/jpeg", "image/png", "image/gif", "image/webp")
#: The image formats the OpenAI APIs read (others are refused as "an unsupported image").
OPENAI_IMAGE_FORMATS = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: Anthropic's smallest ``budget_tokens``.
ANTHROPIC_MIN_BUDGET = 1024

ANTHROPIC_TOOL_USE_DOCS = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
ANTHROPIC_THINKING_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
ANTHROPIC_VISION_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/vision"
OPENAI_CHAT_DOCS = "https://platform.openai.com/docs/api-reference/chat/create"
OPENAI_RESPONSES_DOCS = "https://platform.openai.com/docs/api-reference/responses/create"
GEMINI_FC_DOCS = "https://ai.google.dev/gemini-api/docs/function-calling"
GEMINI_DECLARATION_DOCS = "https://ai.google.dev/api/caching#FunctionDeclaration"
GEMINI_THINKING_DOCS = "https://ai.google.dev/gemini-api/docs/thinking#set-budget"
OPENAI_VISION_DOCS = "https://platform.openai.com/docs/guides/images-vision"
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
        f"{ANTHROPIC_TOOL_USE_DOCS} (^[a-zA-Z0-9_-]{{1,128}}$); {OPENAI_CHAT_DOCS} (^[a-zA-Z0-9_-]{{1,64}}$); "
        f"{GEMINI_DECLARATION_DOCS} (a letter or _ first, then letters, digits, _ . : -, at most 64)",
    ),
    "tool-arguments-not-object": (
        "error",
        "a tool call's arguments are not a JSON object (a JSON string, an array, a number...): pi-ai passes "
        "them on as they are (Anthropic, Gemini, Chat Completions)",
        'Anthropic 400 "messages.N.content.M.tool_use.input: Input should be a valid dictionary" '
        f"({ANTHROPIC_TOOL_USE_DOCS}); Gemini functionCall.args is a google.protobuf.Struct "
        "(https://ai.google.dev/api/caching#FunctionCall); OpenAI-compatible servers parse function.arguments "
        "into an object (sgl-project/sglang #28035, router-for-me/CLIProxyAPI #5362)",
    ),
    "tool-arguments-lone-surrogate": (
        "error",
        "Anthropic: a tool call's arguments hold a lone UTF-16 surrogate; pi-ai removes them from text and "
        "thinking, not from arguments, and JSON.stringify writes them as \\udXXX escapes",
        'Anthropic 400 "The request body is not valid JSON: no low surrogate in string" '
        "(anthropics/claude-code #3277, #8272); pi-ai sanitizeSurrogates",
    ),
    "image-data-mismatch": (
        "error",
        "an image's bytes are not the format its mimeType names (Anthropic), or no image format the API "
        "reads at all (OpenAI: PNG, JPEG, GIF, WebP)",
        f'Anthropic 400 "Image does not match the provided media type" ({ANTHROPIC_VISION_DOCS}); '
        f'OpenAI 400 "You uploaded an unsupported image" ({OPENAI_VISION_DOCS})',
    ),
    "image-base64-invalid": (
        "error",
        "an image's data is empty or not base64",
        f"{ANTHROPIC_VISION_DOCS} (base64 source); OpenAI 400 on a data URL that is not base64 "
        f'({OPENAI_VISION_DOCS}); Gemini 400 "Base64 decoding failed" on inlineData.data '
        "(https://ai.google.dev/api/caching#Blob)",
    ),
    "thinking-budget-too-small": (
        "error",
        "the thinking budget is below the model's minimum (Anthropic 1024 tokens; Gemini 2.5 Pro 128, "
        "2.5 Flash-Lite 512), e.g. from a small thinkingBudgets setting",
        f'Anthropic 400 "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024" '
        f"({ANTHROPIC_THINKING_DOCS}); {GEMINI_THINKING_DOCS}",
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


def check_request(
    model: dict[str, Any], payload: dict[str, Any], llm_messages: list[Any], input_tokens: float | None = None
) -> list[RequestFinding]:
    """Every rule for ``model``'s API over ``payload`` (``input_tokens``: pi-ai's estimate of
    ``llm_messages`` when the caller has it, :attr:`RequestBuild.input_tokens`; else it is made here)."""
    with gc_paused():  # only acyclic findings and paths are made here (see gc_paused)
        return _check_request(model, payload, llm_messages, input_tokens)


def _check_request(
    model: dict[str, Any], payload: dict[str, Any], llm_messages: list[Any], input_tokens: float | None
) -> list[RequestFinding]:
    api = model.get("api")
    findings: list[RequestFinding] = []
    calls = None
    if api == "anthropic-messages":
        calls = _check_anthropic(model, payload, findings)
    elif api == "openai-completions":
        _check_completions(payload, findings)
    elif api == "openai-responses":
        _check_responses(payload, findings)
    elif api == "google-generative-ai":
        _check_google(model, payload, findings)
    _check_tool_arguments(api, payload, findings, calls)
    probes = _probe_items(api, payload)
    _check_image_data(api, payload, findings, probes)
    _check_thinking_budget(model, payload, findings)
    _check_size(model, payload, llm_messages, input_tokens, findings, probes)
    return findings


def _check_tool_name(
    name: Any, pattern: re.Pattern[str], where: str, out: list[RequestFinding], what: str = "tool"
) -> None:
    """A ``tool-name-pattern`` finding unless ``name`` is a string the provider's ``pattern`` takes."""
    if type(name) is not str or not pattern.fullmatch(name):
        out.append(RequestFinding("tool-name-pattern", f"{what} name {_q(name)} is not ^{pattern.pattern}$", where))


_NO_CALLS: frozenset[Any] = frozenset()


def _check_anthropic(
    model: dict[str, Any], payload: dict[str, Any], out: list[RequestFinding]
) -> list[tuple[int, int, Any]]:
    """The Anthropic rules; returns the body's tool calls as :func:`_tool_calls` lists them (the
    walk over the blocks is made once)."""
    messages = payload.get("messages") or []
    calls: list[tuple[int, int, Any]] = []
    seen_ids: dict[str, tuple[int, int]] = {}
    thinking_on = get(payload.get("thinking"), "type") in ("enabled", "adaptive")
    for t, tool in enumerate(payload.get("tools") or []):
        _check_tool_name(get(tool, "name"), TOOL_NAME, f"tools.{t}.name", out)
    previous_calls: set[Any] | frozenset[Any] = _NO_CALLS
    images = 0
    limits = _image_limits(model)
    good_id = ANTHROPIC_ID.fullmatch
    for i, msg in enumerate(messages):
        content = msg.get("content")
        role = msg.get("role")
        plain = type(msg) is dict  # (_tool_calls reads plain objects only)
        if role == "system":
            if plain and isinstance(content, list):
                calls.extend(
                    (i, b, block.get("input", UNDEFINED))
                    for b, block in enumerate(content)
                    if type(block) is dict and block.get("type") == "tool_use"
                )
            continue
        if isinstance(content, list) and not content:
            out.append(
                RequestFinding("empty-message", f"{role} message {i} has no content blocks", f"messages.{i}.content", i)
            )
        calls_here: set[Any] = set()
        for b, block in enumerate(content if isinstance(content, list) else []):
            # Paths are made only for a finding: most blocks of a long body have none.
            btype = block.get("type", UNDEFINED) if type(block) is dict else UNDEFINED
            if btype == "text":
                if block.get("text", UNDEFINED) == "":
                    out.append(
                        RequestFinding(
                            "empty-text-block",
                            f"message {i} has an empty text block",
                            f"messages.{i}.content.{b}.text",
                            i,
                        )
                    )
            elif btype == "tool_use":
                if plain:
                    calls.append((i, b, block.get("input", UNDEFINED)))
                tid = block.get("id", UNDEFINED)
                calls_here.add(tid)
                if type(tid) is not str or len(tid) > 64 or not good_id(tid):  # else _anthropic_id finds nothing
                    _anthropic_id(tid, f"messages.{i}.content.{b}.id", i, out)
                if type(tid) is str:
                    first = seen_ids.setdefault(tid, (i, b))
                    if first != (i, b):
                        out.append(
                            RequestFinding(
                                "duplicate-tool-id",
                                f"tool_use id {_q(tid)} is also used at messages.{first[0]}.content.{first[1]}.id",
                                f"messages.{i}.content.{b}.id",
                                i,
                            )
                        )
            elif btype == "tool_result":
                tid = block.get("tool_use_id", UNDEFINED)
                if type(tid) is not str or len(tid) > 64 or not good_id(tid):
                    _anthropic_id(tid, f"messages.{i}.content.{b}.tool_use_id", i, out)
                if tid not in previous_calls:
                    out.append(
                        RequestFinding(
                            "tool-result-without-call",
                            f"tool_result for {_q(tid)} follows no tool_use with that id in message {i - 1}",
                            f"messages.{i}.content.{b}.tool_use_id",
                            i,
                        )
                    )
                inner = block.get("content", UNDEFINED)
                if isinstance(inner, list):
                    for k, sub in enumerate(inner):
                        if get(sub, "type") == "image":
                            images += 1
                            _anthropic_image(sub, f"messages.{i}.content.{b}.content.{k}", i, limits, out)
            elif btype == "thinking":
                signature = block.get("signature", UNDEFINED)
                if _looks_foreign_anthropic_signature(signature):
                    out.append(
                        RequestFinding(
                            "foreign-thinking-signature",
                            f"thinking block signature {_q(signature)} is not one Anthropic wrote "
                            "(the message claims this model, but the signature came from elsewhere)",
                            f"messages.{i}.content.{b}.signature",
                            i,
                        )
                    )
            elif btype == "image":
                images += 1
                _anthropic_image(block, f"messages.{i}.content.{b}", i, limits, out)
        previous_calls = calls_here if role == "assistant" else _NO_CALLS
        if isinstance(content, str) and content == "":
            out.append(
                RequestFinding("empty-message", f"{role} message {i} is an empty string", f"messages.{i}.content", i)
            )
    _image_count(images, limits, out)
    if thinking_on:
        convo: list[tuple[int, Any]] = []  # the last two messages that are no system message
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].get("role") != "system":
                convo.insert(0, (i, messages[i]))
                if len(convo) == 2:
                    break
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
    return calls


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
            _check_tool_name(get(decl, "name"), GEMINI_TOOL_NAME, where, out, "function")


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


#: Where a body keeps its tool calls when a call is a member of a block (Gemini's
#: ``contents[i].parts[j].functionCall.args``, Chat Completions'
#: ``messages[i].tool_calls[j].function.arguments``): items, blocks, call, arguments.
_CALL_MEMBERS = {
    "google-generative-ai": ("contents", "parts", "functionCall", "args"),
    "openai-completions": ("messages", "tool_calls", "function", "arguments"),
}


def _tool_calls(api: Any, payload: dict[str, Any]) -> tuple[str, list[tuple[int, int, Any]]]:
    """Every tool call in the body: the field path's template (``str.format`` of the item and
    block index) and (item index, block index, arguments value) per call: Anthropic's ``input``
    and Gemini's ``args`` as objects, Chat Completions' ``arguments`` as JSON text. (A path is
    made only for a finding.)"""
    calls: list[tuple[int, int, Any]] = []
    if api == "anthropic-messages":
        for i, msg in enumerate(payload.get("messages") or []):
            content = get(msg, "content")
            if isinstance(content, list):
                for b, block in enumerate(content):
                    if type(block) is dict and block.get("type") == "tool_use":
                        calls.append((i, b, block.get("input", UNDEFINED)))
        return "messages.{}.content.{}.input", calls
    if api in _CALL_MEMBERS:
        items, blocks, member, args = _CALL_MEMBERS[api]
        for i, item in enumerate(payload.get(items) or []):
            listed = get(item, blocks)
            for j, block in enumerate(listed if isinstance(listed, list) else []):
                call = get(block, member)
                if call is not UNDEFINED:
                    calls.append((i, j, get(call, args)))
        return f"{items}.{{}}.{blocks}.{{}}.{member}.{args}", calls
    return "", calls


def _json_kind(value: Any) -> str:
    """``missing``, ``null``, or the kind with its article (``a string``, ``an array``)."""
    kind = json_kind(value)
    if kind in ("undefined", "null"):
        return "missing" if kind == "undefined" else "null"
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _check_tool_arguments(
    api: Any, payload: dict[str, Any], out: list[RequestFinding], anthropic_calls: list[Any] | None = None
) -> None:
    """Arguments that are no JSON object, and (Anthropic) lone surrogates inside them
    (``anthropic_calls``: the Anthropic body's calls when :func:`_check_anthropic` listed them)."""
    from pitools.core.js.json.parse import parse_json_line

    if anthropic_calls is not None:
        template, calls = "messages.{}.content.{}.input", anthropic_calls
    else:
        template, calls = _tool_calls(api, payload)
    for i, j, value in calls:
        if api == "openai-completions":
            # The body carries JSON.stringify(arguments): a string whose JSON must be an object.
            if type(value) is not str:
                out.append(
                    RequestFinding(
                        "tool-arguments-not-object",
                        f"function.arguments is {_json_kind(value)}",
                        template.format(i, j),
                        i,
                    )
                )
                continue
            try:
                parsed = parse_json_line(value.encode("utf-8", "surrogatepass"))[0]
            except ValueError:
                parsed = UNDEFINED
            if not isinstance(parsed, dict):
                kind = "not JSON" if parsed is UNDEFINED else f"the JSON of {_json_kind(parsed)}"
                out.append(
                    RequestFinding(
                        "tool-arguments-not-object",
                        f"function.arguments {_q(value)} is {kind}, not of an object"
                        + (" (the session stored the arguments as a JSON string)" if type(parsed) is str else ""),
                        template.format(i, j),
                        i,
                    )
                )
            continue
        if not isinstance(value, dict):
            what = "input" if api == "anthropic-messages" else "args"
            hint = " (the session stored the arguments as a JSON string)" if type(value) is str else ""
            out.append(
                RequestFinding(
                    "tool-arguments-not-object",
                    f"{what} is {_json_kind(value)}, not an object{hint}",
                    template.format(i, j),
                    i,
                )
            )
        if api == "anthropic-messages" and not _surrogate_free(value):
            where = _lone_surrogate_at(value, template.format(i, j))
            if where is not None:
                out.append(
                    RequestFinding(
                        "tool-arguments-lone-surrogate",
                        "a string in the tool call's input holds a lone UTF-16 surrogate (a cut emoji or a "
                        "bad escape); Anthropic refuses the whole body as invalid JSON",
                        where,
                        i,
                    )
                )


def _surrogate_free(value: Any) -> bool:
    """True when no key or string under ``value`` holds a surrogate code point: orjson refuses
    those (they are no UTF-8), so a value it writes needs no walk. False also for anything else
    it refuses (undefined, non-string keys, great depth): :func:`_lone_surrogate_at` decides."""
    try:
        orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError included
        return False
    return True


def _lone_surrogate_at(value: Any, path: str) -> str | None:
    """The path of the first key or string under ``value`` with an unpaired surrogate (a path is
    made only for the one found: each stack entry holds its parent's entry and its own key)."""
    stack: list[tuple[Any, Any]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if type(node) is str:
            if has_surrogates(node) and sanitize_surrogates(node) != node:
                return _joined(where)
        elif isinstance(node, dict):
            items = list(node.items())
            for key, child in reversed(items):
                if type(key) is str and has_surrogates(key) and sanitize_surrogates(key) != key:
                    return _joined((where, key))
                stack.append((child, (where, key)))
        elif isinstance(node, list):
            stack.extend((child, (where, k)) for k, child in reversed(list(enumerate(node))))
    return None


def _joined(where: Any, tail: str | None = None) -> str:
    """``root.key.key`` (``.tail``) from a chain of (parent, key) pairs ending in the root path."""
    keys = [] if tail is None else [tail]
    while type(where) is tuple:
        where, k = where
        keys.append(str(k))
    keys.append(where)
    return ".".join(reversed(keys))


_NO_KEYS: frozenset[str] = frozenset()
#: A key every inline image :func:`_images` finds sits under.
_IMAGE_KEYS = frozenset(("source", "inlineData", "image_url"))

#: ``id(item)`` → :func:`~pitools.core.js.json.encode.size_probe`'s answers for each object or
#: array in the body's list of messages (``input``, ``contents``): may it hold an image, and must
#: its size be measured with the exact writer.
Probes = dict[int, tuple[bool, bool]]


def _items_key(api: Any) -> str:
    """The member holding the body's messages."""
    return {"openai-responses": "input", "google-generative-ai": "contents"}.get(str(api), "messages")


def _probe_items(api: Any, payload: dict[str, Any]) -> Probes:
    """One walk per message for the image search and the size (each would walk it whole)."""
    return {
        id(item): size_probe(item, _IMAGE_KEYS)
        for item in payload.get(_items_key(api)) or []
        if type(item) is dict or type(item) is list
    }


def _images(api: Any, payload: dict[str, Any], probes: Probes | None = None) -> list[tuple[int, str, Any, Any]]:
    """(item index, path of the data, declared type, base64 data) of every inline image in the body.

    Every object is visited (an image may sit anywhere, a tool call's input included), so the walk
    keeps to plain reads and builds a path only for an image it finds: each stack entry holds its
    parent's entry and its own key, joined into ``messages.3.content.1`` on a find. An item whose
    probe (``probes``, else made here) finds no image key is passed over."""
    key = _items_key(api)
    if probes is None:
        probes = _probe_items(api, payload)
    found: list[tuple[int, str, Any, Any]] = []
    path_of = _joined

    for i, item in enumerate(payload.get(key) or []):
        probe = probes.get(id(item))
        if probe is not None and not probe[0]:
            continue
        stack: list[tuple[Any, Any]] = [(item, f"{key}.{i}")]
        pop, push = stack.pop, stack.append
        while stack:
            node, where = pop()
            if isinstance(node, list):
                for k in range(len(node) - 1, -1, -1):
                    child = node[k]
                    if isinstance(child, (dict, list)):
                        push((child, (where, k)))
                continue
            if not isinstance(node, dict):
                continue
            if "source" not in node and "inlineData" not in node and "image_url" not in node:
                # nothing below can match (each find needs one of these keys): straight to the children
                for k, child in reversed(node.items()):
                    if isinstance(child, (dict, list)):
                        push((child, (where, k)))
                continue
            source = node.get("source")
            if node.get("type") == "image" and type(source) is dict and source.get("type") == "base64":
                found.append(
                    (
                        i,
                        path_of(where, "source.data"),
                        source.get("media_type", UNDEFINED),
                        source.get("data", UNDEFINED),
                    )
                )
                continue
            inline = node.get("inlineData")
            if isinstance(inline, dict):
                found.append(
                    (i, path_of(where, "inlineData.data"), inline.get("mimeType"), inline.get("data", UNDEFINED))
                )
                continue
            url = node.get("image_url")
            if url is not None:
                url_tail = "image_url"
                if isinstance(url, dict):
                    url, url_tail = url.get("url"), "image_url.url"
                if type(url) is str and url.startswith("data:"):
                    head, sep, data = url.partition(",")
                    if head.endswith(";base64") and sep:
                        found.append((i, path_of(where, url_tail), head[5 : -len(";base64")], data))
                    continue
            for k, child in reversed(node.items()):
                if isinstance(child, (dict, list)):
                    push((child, (where, k)))
    return found


def _base64_problem(data: Any, google: bool) -> str | None:
    """Why ``data`` is no base64 the API decodes (None: it is). Padding may be left out; Google
    also takes the URL-safe letters."""
    if type(data) is not str:
        return f"is {_json_kind(data)}, not base64 text"
    if not data:
        return "is empty"
    body = data.rstrip("=")
    padding = len(data) - len(body)
    letters = GOOGLE_BASE64_LETTERS if google else BASE64_LETTERS
    # bytes.translate runs in C: an image's megabytes are checked in about a millisecond.
    if not body.isascii() or body.encode("ascii").translate(None, letters):
        bad = next(c for c in body if not c.isascii() or c.encode("ascii") not in letters)
        return f"holds {bad!r}, which is not a base64 character" + (
            " (a data: URL prefix in the data?)" if body.startswith("data:") else ""
        )
    if padding > 2 or len(body) % 4 == 1 or (padding and len(data) % 4):
        return f"has a length ({len(data):,} characters) base64 cannot have"
    return None


def _sniff_image(data: str) -> str | None:
    """The image type the first bytes of valid base64 ``data`` announce (None: none of the four)."""
    head = data[:24].replace("-", "+").replace("_", "/")
    head = head[: len(head) - len(head) % 4]
    try:
        raw = base64.b64decode(head)
    except (binascii.Error, ValueError):
        return None
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw.startswith(b"RIFF") and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _check_image_data(api: Any, payload: dict[str, Any], out: list[RequestFinding], probes: Probes) -> None:
    google = api == "google-generative-ai"
    for i, path, mime, data in _images(api, payload, probes):
        problem = _base64_problem(data, google)
        if problem is not None:
            out.append(RequestFinding("image-base64-invalid", f"the image data {problem}", path, i))
            continue
        sniffed = _sniff_image(data)
        if api == "anthropic-messages" and mime in ANTHROPIC_MEDIA and sniffed != mime:
            what = f"a {sniffed.split('/')[1].upper()} image" if sniffed else "no JPEG, PNG, GIF or WebP image"
            out.append(RequestFinding("image-data-mismatch", f"the block says {mime}, the bytes are {what}", path, i))
        elif api in ("openai-completions", "openai-responses") and sniffed is None:
            out.append(
                RequestFinding(
                    "image-data-mismatch",
                    f"the data URL says {_q(mime)}, the bytes are no PNG, JPEG, GIF or WebP image",
                    path,
                    i,
                )
            )


def _check_thinking_budget(model: dict[str, Any], payload: dict[str, Any], out: list[RequestFinding]) -> None:
    api = model.get("api")
    if api == "anthropic-messages":
        thinking = payload.get("thinking")
        budget = get(thinking, "budget_tokens")
        if get(thinking, "type") == "enabled" and _number(budget) and budget < ANTHROPIC_MIN_BUDGET:
            out.append(
                RequestFinding(
                    "thinking-budget-too-small",
                    f"budget_tokens is {budget:,}; Anthropic takes at least {ANTHROPIC_MIN_BUDGET:,} "
                    "(raise the thinkingBudgets setting for this level)",
                    "thinking.budget_tokens",
                )
            )
    elif api == "google-generative-ai":
        config = get(get(payload, "config"), "thinkingConfig")
        budget = get(config, "thinkingBudget")
        if get(config, "includeThoughts") is not True or not _number(budget) or budget == -1:
            return  # thinking off, or a dynamic budget
        model_id = str(model.get("id"))
        # 2.5 Pro cannot think less than 128 tokens; 2.5 Flash-Lite takes 0 (no thinking) or 512 and up.
        least = 128 if "2.5-pro" in model_id else 512 if "2.5-flash-lite" in model_id else 0
        if budget < least and not (budget == 0 and least == 512):
            out.append(
                RequestFinding(
                    "thinking-budget-too-small",
                    f"thinkingBudget is {budget:,}; {model_id} thinks with at least {least:,} tokens "
                    "(raise the thinkingBudgets setting for this level)",
                    "config.thinkingConfig.thinkingBudget",
                )
            )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_size(
    model: dict[str, Any],
    payload: dict[str, Any],
    llm_messages: list[Any],
    input_tokens: float | None,
    out: list[RequestFinding],
    probes: Probes,
) -> None:
    limits = _image_limits(model)
    if model.get("api") != "anthropic-messages":
        count = _count_images(payload)
        _image_count(count, limits, out)
    max_request = limits.get("maxRequestBytes")
    if max_request:

        def exact(member: Any) -> bool:
            probe = probes.get(id(member))
            return size_probe(member, _NO_KEYS)[1] if probe is None else probe[1]

        size = js_stringify_size(payload, exact=exact)
        if size > max_request:
            out.append(
                RequestFinding(
                    "request-too-large", f"the body is {size:,} bytes; the API takes at most {max_request:,}"
                )
            )
    window = model.get("contextWindow") or 0
    if window > 0:
        tokens = input_tokens if input_tokens is not None else estimate_input_tokens(llm_messages)
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
    """The inline images in a Chat Completions, Responses or Gemini body: the objects holding an
    ``image_url`` (``{"type": "image_url", "image_url": {...}}`` is one image, not two) or an
    ``inlineData`` member, wherever they sit; strings are never searched."""
    count = 0
    stack: list[Any] = [value]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if type(node) is dict:
            if "image_url" in node or "inlineData" in node:
                count += 1
                continue
            for child in node.values():
                if type(child) is dict or type(child) is list:
                    push(child)
        elif type(node) is list:
            for child in node:
                if type(child) is dict or type(child) is list:
                    push(child)
    return count


def _q(value: Any) -> str:
    text = repr(value) if type(value) is not str else value
    if len(text) > 48:
        text = text[:45] + "..."
    return repr(text) if type(value) is str else text


def worst_severity(findings: list[RequestFinding]) -> str | None:
    if not findings:
        return None
    return max((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s])
