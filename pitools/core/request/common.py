"""What every provider adapter of pi-ai 1.6.0 shares before it builds a body.

Mirrors ``utils/transcript.js`` (``resolveTranscript``), ``api/transform-messages.js``
(``transformMessages``), ``utils/estimate.js`` (``estimateContextTokens``), ``api/simple-options.js``
(``buildBaseOptions``, ``clampMaxTokensToContext``, ``adjustMaxTokensForThinking``), the
thinking-level helpers of ``models.js`` and ``api/constrained-sampling.js``. Every function is pure;
messages stay plain dicts in pi-ai's shape. A step that changes what the provider receives records
a :class:`Note` so the human view can say which transformation applied and why.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pitools.core.context.messages import content_text, get_current_system_message, get_current_tools
from pitools.core.js.json.encode import js_stringify
from pitools.core.js.value import UNDEFINED, js_keys, js_truthy, utf16_len
from pitools.errors import PitoolsError


def stringify_member(value: Any) -> Any:
    """``JSON.stringify(value)`` as a member of an object pi-ai builds: ``undefined`` (a tool call
    stored without ``arguments``) stays undefined, so the key is left out of the body, not null."""
    text = js_stringify(value)
    return UNDEFINED if text is None else text


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
ERROR_TOOL_IMAGE_PLACEHOLDER = "(image attached after the tool results)"


class RequestError(PitoolsError):
    """The request cannot be built (unsupported API, unknown model, a context pi-ai would throw on)."""


@dataclass(slots=True)
class Note:
    """One transformation pi-ai applied on the way to the wire (for the human view and JSON notes)."""

    code: str
    message: str
    index: int | None = None  # index into Pi's LLM message list, when it concerns one message


@dataclass(slots=True)
class Notes:
    items: list[Note] = field(default_factory=list)

    def add(self, code: str, message: str, index: int | None = None) -> None:
        self.items.append(Note(code, message, index))


def get(obj: Any, key: str) -> Any:
    """``obj?.[key]`` for plain JSON values (UNDEFINED when absent or not an object)."""
    return obj.get(key, UNDEFINED) if type(obj) is dict else UNDEFINED


def nullish(v: Any) -> bool:
    return v is None or v is UNDEFINED


def compat(model: dict[str, Any]) -> dict[str, Any]:
    c = model.get("compat")
    return c if type(c) is dict else {}


def compat_flags(model: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The model's ``compat`` flags over ``defaults``: pi-ai's ``compat.x ?? default``, a key at a time."""
    c = compat(model)
    return {name: default if (v := c.get(name)) is None else v for name, default in defaults.items()}


# ---------------------------------------------------------------------------------------------- text


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """pi-ai ``sanitizeSurrogates``: drop unpaired UTF-16 surrogates (pairs are one code point here)."""
    if not _LONE_SURROGATE.search(text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        o = ord(ch)
        if 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(ch + text[i + 1])  # a pair kept as two halves stays a pair
            i += 2
            continue
        if not 0xD800 <= o <= 0xDFFF:
            out.append(ch)
        i += 1
    return "".join(out)


def join_surrogate_pairs(text: str) -> str:
    """``text`` with each paired high/low surrogate joined into the character it encodes, so it
    can be encoded as UTF-8 (run :func:`sanitize_surrogates` first: lone ones become U+FFFD)."""
    if not _LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def js_trim_empty(text: Any) -> bool:
    """``text.trim().length === 0`` (JavaScript's whitespace set)."""
    return type(text) is str and _JS_WS.fullmatch(text) is not None


_JS_WS = re.compile(r"[\s\ufeff\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*")


def system_message_text(message: Any) -> str:
    """pi-ai ``getSystemMessageText``: content followed by the sections, blank-line separated."""
    parts = [content_text(get(message, "content"))]
    sections = get(message, "sections")
    if type(sections) is dict:
        for key in js_keys(sections):
            if sections[key] is not None:
                parts.append(str(sections[key]))
    return "\n\n".join(p for p in parts if p)


def render_system_message_update(message: Any) -> str:
    """pi-ai ``renderSystemMessageUpdate``: a later system message as a request-time text."""
    parts: list[str] = []
    text = content_text(get(message, "content"))
    if text:
        parts.append(text)
    sections = get(message, "sections")
    if type(sections) is dict:
        for name in js_keys(sections):
            value = sections[name]
            if value is None:
                parts.append(f'Removed system prompt section "{name}".')
            else:
                parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)


# --------------------------------------------------------------------------------------- transcript


def resolve_transcript(messages: list[Any], supports_mid_convo_system: bool, notes: Notes | None = None) -> list[Any]:
    """pi-ai ``resolveTranscript``: keep later system messages, or fold them all into the first."""
    if supports_mid_convo_system:
        return messages
    systems = sum(1 for m in messages if get(m, "role") == "system")
    head = get_current_system_message(messages)
    rest = [m for m in messages if get(m, "role") != "system"]
    if notes is not None and systems > 1:
        notes.add(
            "system-collapsed",
            f"{systems} system messages folded into one leading system prompt (the API has no "
            "mid-conversation system messages)",
        )
    return [head, *rest] if head else rest


def initial_system_message(messages: list[Any]) -> Any:
    return messages[0] if messages and get(messages[0], "role") == "system" else None


def current_tools(messages: list[Any]) -> list[Any]:
    return get_current_tools(messages)


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
        "caption": f"Images from the error result of tool call {_s(msg.get('toolCallId'))} ({_s(msg.get('toolName'))}):",  # noqa: E501
        "images": images,
    }


def _s(v: Any) -> str:
    from pitools.core.js.ops import to_string

    return to_string(v)


def transform_messages(
    messages: list[Any],
    model: dict[str, Any],
    normalize_tool_call_id: Callable[[str, dict[str, Any], dict[str, Any]], str] | None,
    notes: Notes | None = None,
) -> list[Any]:
    """pi-ai ``transformMessages``: the cross-provider clean-up every adapter runs first."""
    notes = notes if notes is not None else Notes()
    id_map: dict[str, str] = {}
    normalized = [({**m, "content": []} if nullish(get(m, "content")) else m) for m in messages]
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
    for i, msg in enumerate(normalized):
        role = get(msg, "role")
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
            same = (
                msg.get("provider") == model["provider"]
                and msg.get("api") == model["api"]
                and msg.get("model") == model["id"]
            )
            content: list[Any] = []
            dropped_thinking = 0
            for block in _as_list(msg["content"]):
                btype = get(block, "type")
                if btype == "thinking":
                    if not same:
                        dropped_thinking += 1
                        continue
                    if js_truthy(get(block, "redacted")) or js_truthy(get(block, "thinkingSignature")):
                        content.append(block)
                        continue
                    thinking = get(block, "thinking")
                    if not js_truthy(thinking) or js_trim_empty(thinking):
                        continue
                    content.append(block)
                elif btype == "text":
                    content.append(block if same else {"type": "text", "text": block.get("text", UNDEFINED)})
                elif btype == "toolCall":
                    call = block
                    if not same and js_truthy(get(call, "thoughtSignature")):
                        call = {k: v for k, v in call.items() if k != "thoughtSignature"}
                    if not same and normalize_tool_call_id is not None:
                        old = call.get("id")
                        new_id = normalize_tool_call_id(old, model, msg)
                        if new_id != old:
                            id_map[old] = new_id
                            call = {**call, "id": new_id}
                            notes.add(
                                "tool-call-id-rewritten",
                                f"tool call id {_short(old)} rewritten to {_short(new_id)} (the API's id pattern)",
                                i,
                            )
                    content.append(call)
                else:
                    content.append(block)
            if dropped_thinking:
                notes.add(
                    "thinking-dropped",
                    f"{dropped_thinking} thinking block(s) from {_s(msg.get('provider'))}/{_s(msg.get('model'))} "
                    "dropped "
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
                        f"tool call {_short(call.get('id'))} ({_s(call.get('name'))}) had no result: "
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
        role = get(msg, "role")
        if role == "assistant":
            close()
            if msg.get("stopReason") in ("error", "aborted"):
                notes.add(
                    "assistant-skipped",
                    f"an assistant message that ended with '{msg.get('stopReason')}' is not replayed",
                )
                continue
            calls = [b for b in msg["content"] if get(b, "type") == "toolCall"]
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


def _short(v: Any) -> str:
    text = _s(v)
    return repr(text if len(text) <= 24 else text[:21] + "...")


# ----------------------------------------------------------------------------------------- estimate

_CHARS_PER_TOKEN = 3.5
_IMAGE_CHARS = 4800


def _safe_stringify_len(value: Any) -> int:
    text = js_stringify(value)
    return utf16_len("undefined" if text is None else text)


def _content_chars(content: Any) -> int:
    if type(content) is str:
        return utf16_len(content)
    chars = 0
    for block in content:
        chars += utf16_len(block.get("text", "")) if get(block, "type") == "text" else _IMAGE_CHARS
    return chars


def _text_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / _CHARS_PER_TOKEN)


def _tools_tokens(tools: Any) -> int:
    if not tools or type(tools) is not list:
        return 0
    return math.ceil(_safe_stringify_len(tools) / _CHARS_PER_TOKEN)


def estimate_message_tokens(message: Any) -> int:
    role = get(message, "role")
    if role == "system":
        return (
            _text_tokens(system_message_text(message))
            + _tools_tokens(get(message, "toolsAdded"))
            + _tools_tokens(get(message, "toolsRemoved"))
        )
    if role in ("user", "toolResult"):
        return math.ceil(_content_chars(message["content"]) / _CHARS_PER_TOKEN)
    chars = 0
    for block in message["content"]:
        btype = get(block, "type")
        if btype == "text":
            chars += utf16_len(block.get("text", ""))
        elif btype == "thinking":
            chars += utf16_len(block.get("thinking", ""))
        else:
            chars += utf16_len(str(block.get("name", ""))) + _safe_stringify_len(block.get("arguments", UNDEFINED))
    return math.ceil(chars / _CHARS_PER_TOKEN)


def _usage_tokens(usage: Any) -> float:
    total = get(usage, "totalTokens")
    if js_truthy(total):
        return float(total) if type(total) in (int, float) else math.nan
    parts = [get(usage, k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    if all(type(p) in (int, float) for p in parts):
        return float(sum(parts))
    return math.nan


def estimate_context_tokens(messages: list[Any]) -> float:
    """pi-ai ``estimateContextTokens``: the last usable usage plus estimates for what follows it."""
    latest_prefix = -math.inf
    usage_index: int | None = None
    usage_tokens = 0.0
    for i, message in enumerate(messages):
        if get(message, "role") == "assistant":
            ts = get(message, "timestamp")
            if (
                type(ts) in (int, float)
                and ts >= latest_prefix
                and message.get("stopReason") not in ("aborted", "error")
            ):
                tokens = _usage_tokens(get(message, "usage"))
                if tokens > 0:
                    usage_index, usage_tokens = i, tokens
        ts = get(message, "timestamp")
        latest_prefix = max(latest_prefix, ts) if type(ts) in (int, float) else math.nan
    if usage_index is not None:
        return usage_tokens + sum(estimate_message_tokens(m) for m in messages[usage_index + 1 :])
    return sum(estimate_message_tokens(m) for m in messages)


# ------------------------------------------------------------------------------------------ options

_CONTEXT_SAFETY_TOKENS = 4096
_CONTEXT_SAFETY_RATIO = 0.15
_MIN_OUTPUT_WITH_RATIO_MARGIN = 32768
MIN_ANSWER_TOKENS = 1024
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}


def clamp_max_tokens_to_context(model: dict[str, Any], messages: list[Any], max_tokens: float) -> float:
    """pi-ai ``clampMaxTokensToContext``."""
    window = model.get("contextWindow", 0)
    if window <= 0:
        return max(1, max_tokens)
    tokens = estimate_context_tokens(messages)
    margin = max(_CONTEXT_SAFETY_TOKENS, math.ceil(tokens * _CONTEXT_SAFETY_RATIO))
    room = window - tokens - margin
    if room < _MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(_MIN_OUTPUT_WITH_RATIO_MARGIN, window - tokens - _CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(1, room))


def supported_thinking_levels(model: dict[str, Any]) -> list[str]:
    """pi-ai ``getSupportedThinkingLevels``."""
    if not model.get("reasoning"):
        return ["off"]
    level_map = model.get("thinkingLevelMap") or {}
    out = []
    for level in THINKING_LEVELS:
        mapped = level_map.get(level, UNDEFINED)
        if mapped is None:
            continue
        if level in ("xhigh", "max") and mapped is UNDEFINED:
            continue
        out.append(level)
    return out


def map_thinking_level(level_map: dict[str, Any], level: str) -> Any:
    """``thinkingLevelMap[level] ?? level``: the provider's value for a thinking level (the level
    itself when the map leaves it out or maps it to null)."""
    value = level_map.get(level, UNDEFINED)
    return level if value is None or value is UNDEFINED else value


def off_effort(level_map: dict[str, Any]) -> Any:
    """The effort sent to turn reasoning off: ``thinkingLevelMap.off``, or ``"none"`` when unset
    (callers first check that the map does not say null, which means "send nothing")."""
    off = level_map.get("off", UNDEFINED)
    return "none" if off is UNDEFINED else off


def clamp_thinking_level(model: dict[str, Any], level: str) -> str:
    """pi-ai ``clampThinkingLevel``: the nearest supported level, searching upwards first."""
    return nearest_thinking_level(supported_thinking_levels(model), level)


def refuse_grammar_tools(tools: list[Any], grammar_tools: Any) -> None:
    """Raise :class:`RequestError` for a grammar-constrained tool (OpenAI's custom tools) when the
    model takes them (``supportsOpenAIGrammarTools``): pitools refuses them rather than guess."""
    if not grammar_tools:
        return
    for tool in tools:
        config = get(tool, "constrainedSampling")
        if type(config) is dict and config.get("type") == "grammar":
            raise RequestError(
                f"tool {get(tool, 'name')!r} uses grammar-constrained sampling, which pitools does not replay"
            )


def openai_budget(model: dict[str, Any], messages: list[Any], level: str) -> tuple[Any, str | None]:
    """The OpenAI builders' ``max_tokens`` (clamped to the context) and reasoning effort (None when off)."""
    max_tokens = clamp_max_tokens_to_context(model, messages, model["maxTokens"])
    clamped = clamp_thinking_level(model, level) if level != "off" else None
    return max_tokens, None if clamped in (None, "off") else clamped


def nearest_thinking_level(available: list[str], level: str) -> str:
    """``level`` if ``available``, else the nearest available one, searching upwards first."""
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    at = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[at:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:at]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def resolve_sampling_params(model: dict[str, Any], level: str) -> dict[str, Any] | None:
    """pi-ai ``resolveSamplingParams`` (no request-level sampling parameters: Pi passes none)."""
    effective = clamp_thinking_level(model, level)
    base = model.get("samplingParams")
    by_level = (model.get("samplingParamsByThinkingLevel") or {}).get(effective)
    if base or by_level:
        return {**(base or {}), **(by_level or {})}
    return None


#: Pi's ``thinkingBudgets`` setting: tokens per thinking level, over pi-ai's defaults.
Budgets = Mapping[str, float]


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """What Pi's agent passes pi-ai's ``streamSimple`` besides the model and messages: the thinking
    level (``off``: no ``reasoning``), the session id, the ``thinkingBudgets`` setting, and the
    ``cacheRetention`` (``short`` is pi-ai's default; Pi's one-off summaries pass ``none``)."""

    level: str
    session_id: str | None
    budgets: Budgets | None = None
    cache_retention: str = "short"

    @property
    def cache_session_id(self) -> str | None:
        """The session id pi-ai caches and routes by: none when caching is off (``cacheSessionId``)."""
        return None if self.cache_retention == "none" else self.session_id


def thinking_budget(level: str, budgets: Budgets | None = None) -> float:
    """pi-ai ``thinkingBudgetForLevel``: the settings' budget for ``level`` (xhigh and max count as
    high), else pi-ai's default."""
    key = "high" if level in ("xhigh", "max") else level
    if budgets is not None and key in budgets:
        return budgets[key]
    return DEFAULT_THINKING_BUDGETS[key]


def adjust_max_tokens_for_thinking(
    base_max: float, model_max: float, level: str, budgets: Budgets | None = None
) -> tuple[float, float]:
    """pi-ai ``adjustMaxTokensForThinking``: room for the thinking budget on top of the answer."""
    budget: float = thinking_budget(level, budgets)
    max_tokens = min(base_max + budget, model_max)
    if max_tokens <= budget:
        budget = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS))
    return max_tokens, budget


# ------------------------------------------------------------------------------ constrained sampling


class _Unsupported(Exception):
    pass


_UNSUPPORTED_STRICT_KEYS = (
    "$ref", "$defs", "definitions", "allOf", "oneOf", "patternProperties", "dependentSchemas",
    "dependencies", "unevaluatedProperties", "propertyNames", "contains", "prefixItems", "not", "if",
    "then", "else",
)  # fmt: skip


def _structured(schema: Any) -> bool:
    if type(schema) is not dict:
        return False
    t = schema.get("type")
    types = [t] if type(t) is str else (t if type(t) is list else [])
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if type(schema) is not dict:
        return False
    t = schema.get("type")
    if t == "null" or (type(t) is list and "null" in t):
        return True
    if ("const" in schema and schema["const"] is None) or (type(schema.get("enum")) is list and None in schema["enum"]):
        return True
    any_of = schema.get("anyOf")
    return type(any_of) is list and any(_allows_null(v) for v in any_of)


def _make_strict(schema: Any, unsupported: Callable[[str, Any], bool] | None) -> None:
    if type(schema) is not dict:
        raise _Unsupported
    for key in _UNSUPPORTED_STRICT_KEYS:
        if key in schema:
            raise _Unsupported
    if unsupported is not None:
        for key in js_keys(schema):
            if unsupported(key, schema[key]):
                raise _Unsupported
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise _Unsupported
    if "anyOf" in schema:
        any_of = schema["anyOf"]
        if type(any_of) is not list or not any_of:
            raise _Unsupported
        for variant in any_of:
            if _structured(variant):
                raise _Unsupported
            _make_strict(variant, unsupported)
    if "items" in schema:
        if type(schema["items"]) is list:
            raise _Unsupported
        _make_strict(schema["items"], unsupported)
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise _Unsupported
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise _Unsupported
    if "properties" in schema and type(schema["properties"]) is not dict:
        raise _Unsupported
    required = schema.get("required", UNDEFINED)
    if required is not UNDEFINED and (type(required) is not list or any(type(k) is not str for k in required)):
        raise _Unsupported
    properties = schema.get("properties") or {}
    names = js_keys(properties)
    req = set(required) if type(required) is list else set()
    if any(k not in names for k in req):
        raise _Unsupported
    for key in names:
        prop = properties[key]
        _make_strict(prop, unsupported)
        if key not in req and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = names
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any, unsupported: Callable[[str, Any], bool] | None = None) -> Any:
    cloned = copy.deepcopy(schema)
    if type(cloned) is not dict:
        raise _Unsupported
    _make_strict(cloned, unsupported)
    if cloned.get("type") != "object":
        raise _Unsupported
    return cloned


def resolve_strict(
    tool: Any, supports_strict: bool, unsupported: Callable[[str, Any], bool] | None = None
) -> bool | None:
    """pi-ai ``resolveJsonSchemaStrictSampling``: True when the tool goes out in strict mode."""
    config = get(tool, "constrainedSampling")
    if type(config) is not dict or config.get("type") != "json_schema":
        return None
    if supports_strict:
        try:
            make_strict_json_schema(get(tool, "parameters"), unsupported)
            return True
        except _Unsupported:
            if config.get("strict") != "require":
                return None
            raise RequestError(
                f"tool {_short(get(tool, 'name'))} requires strict JSON-schema sampling its schema cannot "
                "satisfy; pi-ai refuses the request"
            ) from None
    if config.get("strict") == "require":
        raise RequestError(f"tool {_short(get(tool, 'name'))} requires strict tools, which the model does not support")
    return None


def tool_parameters(tool: Any, strict: bool | None) -> Any:
    return make_strict_json_schema(get(tool, "parameters")) if strict is True else get(tool, "parameters")
