"""Each ``--check`` rule fires on the body it describes and stays quiet on a clean one.

The bodies are built by pitools' port of pi-ai (proved byte-equal to pi-ai on the golden corpus)
from small hand-made message lists, or written directly where pi-ai would never produce the shape.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pitools.core.request.build import build_payload
from pitools.core.request.check import RULES, check_request
from pitools.core.request.common import Notes, RequestError
from pitools.core.request.estimate import estimate_input_tokens
from pitools.core.request.models import resolve_request_model
from pitools.core.request.sanitize_unicode import has_surrogates, join_surrogate_pairs, sanitize_surrogates
from pitools.piconfig.catalog import chat_models

SONNET = resolve_request_model("anthropic/claude-sonnet-4-5", chat_models())
GPT5 = resolve_request_model("openai/gpt-5", chat_models())
LLAMA = resolve_request_model("groq/llama-3.3-70b-versatile", chat_models())
GEMINI = resolve_request_model("google/gemini-2.5-pro", chat_models())


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _assistant(model: dict[str, Any], content: list[Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "provider": model["provider"],
        "api": model["api"],
        "model": model["id"],
        "stopReason": "toolUse",
        "timestamp": 2,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
    }


def _result(call_id: str, text: str = "ok", images: list[Any] | None = None) -> dict[str, Any]:
    content: list[Any] = [{"type": "text", "text": text}, *(images or [])]
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": content,
        "isError": False,
        "timestamp": 3,
    }


def _codes(model: dict[str, Any], messages: list[Any], level: str = "off") -> set[str]:
    payload = build_payload(model, messages, level, "sid", Notes()).body
    return {f.code for f in check_request(model, payload, messages)}


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": "ls"}}


def test_every_rule_has_a_severity_and_a_source() -> None:
    for code, (severity, description, source) in RULES.items():
        assert severity in ("error", "warning") and description and source, code


def test_the_output_schema_and_the_docs_list_every_rule() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    schema = json.loads((root / "schemas" / "output" / "request.schema.json").read_text())
    assert schema["$defs"]["finding"]["properties"]["code"]["enum"] == list(RULES)
    docs = (root / "docs" / "request.md").read_text()
    assert all(f"| `{code}` | {RULES[code][0]} |" in docs for code in RULES)


@pytest.mark.parametrize("model", [SONNET, GPT5, LLAMA, GEMINI], ids=lambda m: m["api"])
def test_a_clean_tool_loop_passes(model: dict[str, Any]) -> None:
    messages = [_user("hi"), _assistant(model, [_call("call_1")]), _result("call_1"), _user("next")]
    assert _codes(model, messages) == set()


def test_same_model_ids_are_not_rewritten_and_are_flagged() -> None:
    long_id = "toolu_" + "a" * 70
    messages = [_user("hi"), _assistant(SONNET, [_call("bad|id"), _call(long_id)]), _result("bad|id"), _result(long_id)]
    assert {"tool-id-pattern", "tool-id-length"} <= _codes(SONNET, messages)
    # From another model pi-ai rewrites them, so nothing is left to flag.
    assert _codes(SONNET, [_user("hi"), _assistant(GPT5, [_call("bad|id")]), _result("bad|id")]) == set()


def test_duplicate_ids() -> None:
    messages = [
        _user("a"),
        _assistant(SONNET, [_call("toolu_1")]),
        _result("toolu_1"),
        _assistant(SONNET, [_call("toolu_1")]),
        _result("toolu_1"),
    ]
    assert "duplicate-tool-id" in _codes(SONNET, messages)


@pytest.mark.parametrize("model", [SONNET, GPT5, LLAMA, GEMINI], ids=lambda m: m["api"])
def test_a_tool_result_without_its_call(model: dict[str, Any]) -> None:
    # pi-ai answers calls without results, but passes on results without calls.
    messages = [_user("hi"), _result("call_gone"), _user("next")]
    assert "tool-result-without-call" in _codes(model, messages)


def test_foreign_signature_under_the_same_model_name() -> None:
    thinking = {"type": "thinking", "thinking": "x", "thinkingSignature": '{"type":"reasoning","id":"rs_1"}'}
    messages = [_user("hi"), _assistant(SONNET, [thinking, {"type": "text", "text": "done"}]), _user("next")]
    assert "foreign-thinking-signature" in _codes(SONNET, messages)
    real = {"type": "thinking", "thinking": "x", "thinkingSignature": "Eq" + "A" * 120}
    assert _codes(SONNET, [_user("hi"), _assistant(SONNET, [real, {"type": "text", "text": "d"}]), _user("n")]) == set()


def test_thinking_missing_in_an_open_tool_loop_only_when_thinking_is_on() -> None:
    messages = [_user("hi"), _assistant(GPT5, [_call("call_1")]), _result("call_1")]
    assert "thinking-missing-in-tool-loop" in _codes(SONNET, messages, level="high")
    assert "thinking-missing-in-tool-loop" not in _codes(SONNET, messages, level="off")


def test_empty_blocks_and_messages() -> None:
    payload = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": ""}]},
            {"role": "user", "content": []},
        ],
    }
    assert {f.code for f in check_request(SONNET, payload, [])} == {"empty-text-block", "empty-message"}
    google = {"model": "g", "contents": [{"role": "user", "parts": []}], "config": {}}
    assert {f.code for f in check_request(GEMINI, google, [])} == {"empty-message"}


def test_tool_names() -> None:
    payload = {"model": "m", "messages": [], "tools": [{"name": "bad name!", "input_schema": {}}]}
    assert {f.code for f in check_request(SONNET, payload, [])} == {"tool-name-pattern"}
    openai = {"model": "m", "input": [], "tools": [{"type": "function", "name": "x" * 65}]}
    assert {f.code for f in check_request(GPT5, openai, [])} == {"tool-name-pattern"}


def test_images() -> None:
    big = base64.b64encode(b"\0" * 5_000_000).decode()
    image = {"type": "image", "data": big, "mimeType": "image/tiff"}
    messages = [{"role": "user", "content": [{"type": "text", "text": "look"}, image], "timestamp": 1}]
    assert {"image-media-type", "image-too-large"} <= _codes(SONNET, messages)
    many = [
        {"role": "user", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}] * 101, "timestamp": 1}
    ]
    assert "image-count" in _codes(SONNET, many)


@pytest.mark.parametrize("base", [LLAMA, GPT5, GEMINI], ids=lambda m: m["api"])
def test_image_count_counts_each_image_once_on_every_api(base: dict[str, Any]) -> None:
    """Chat Completions writes an image as ``{"type": "image_url", "image_url": {...}}``: counting
    the text ``"image_url"`` in the serialized body saw two images in each, so the rule fired at
    half the limit; a text that merely says "image_url" or "inlineData" is no image either."""
    model = {**base, "input": ["text", "image"], "inputLimits": {"images": {"maxPerRequest": 3}}}
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    words = {"type": "text", "text": 'a note about "image_url" and "inlineData" keys'}

    def turn(n: int) -> list[Any]:
        return [{"role": "user", "content": [words, *[image] * n], "timestamp": 1}]

    assert "image-count" not in _codes(model, turn(3))
    assert "image-count" in _codes(model, turn(4))


def test_context_window_rules() -> None:
    small = {**LLAMA, "contextWindow": 1000, "maxTokens": 500}
    assert "context-over-window" in _codes(small, [_user("word " * 2000)])
    assert "context-near-window" in _codes({**small, "contextWindow": 4600}, [_user("word " * 100)])
    assert estimate_input_tokens([_user("abcdefg")]) == 2  # ceil(7 / 3.5)


def test_request_too_large() -> None:
    tiny = {**GPT5, "inputLimits": {"maxRequestBytes": 100}}
    assert "request-too-large" in _codes(tiny, [_user("x" * 200)])


def test_unsupported_api_is_refused_by_name() -> None:
    mistral = resolve_request_model("mistral/mistral-large-latest", chat_models())
    with pytest.raises(RequestError, match="mistral-conversations"):
        build_payload(mistral, [_user("hi")], "off", "sid", Notes())


def test_sanitize_surrogates_keeps_pairs_and_drops_lone_halves() -> None:
    assert sanitize_surrogates("a\ud83d b\U0001f600 c\udc00") == "a b\U0001f600 c"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain",
        "h\xe9llo",
        "\u4e2d\u6587",
        "\U0001f600",
        "a\ud83d",
        "\udc00b",
        "\ud83d\ude00",
        "\ud7ff\ue000",
        "\udfff",
    ],
)
def test_has_surrogates_is_the_surrogate_range_test(text: str) -> None:
    expected = any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    assert has_surrogates(text) is expected
    if not expected:  # nothing to drop or join: the same string comes back
        assert sanitize_surrogates(text) is text and join_surrogate_pairs(text) is text


def test_gemini_3_current_turn_needs_thought_signatures() -> None:
    gemini3 = resolve_request_model("google/gemini-3.5-flash", chat_models())
    foreign = [_user("run it"), _assistant(GPT5, [_call("call_1")]), _result("call_1")]
    assert "missing-thought-signature" in _codes(gemini3, foreign)
    assert "missing-thought-signature" not in _codes(GEMINI, foreign)  # Gemini 2.5 does not validate them
    signed = {**_call("call_1"), "thoughtSignature": "c2lnbmF0dXJl"}
    own = [_user("run it"), _assistant(gemini3, [signed]), _result("call_1")]
    assert _codes(gemini3, own) == set()
    # An earlier turn (before the last user text) is not validated.
    assert "missing-thought-signature" not in _codes(gemini3, [*foreign, _user("thanks")])


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAFUok9dAAAAAElFTkSuQmCC"
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + b"\x00" * 20).decode()
GPT4O = resolve_request_model("openai/gpt-4o", chat_models())  # Responses
QWEN = resolve_request_model("groq/qwen/qwen3.6-27b", chat_models())  # Chat Completions with image input


def _findings(model: dict[str, Any], messages: list[Any], level: str = "off", budgets: Any = None) -> list[Any]:
    payload = build_payload(model, messages, level, "sid", Notes(), budgets).body
    return check_request(model, payload, messages)


def _with_arguments(model: dict[str, Any], arguments: Any) -> list[Any]:
    call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": arguments}
    return [_user("hi"), _assistant(model, [call]), _result("call_1"), _user("next")]


@pytest.mark.parametrize("model", [SONNET, LLAMA, GEMINI], ids=lambda m: m["api"])
def test_arguments_stored_as_a_json_string(model: dict[str, Any]) -> None:
    # A session that kept the model's raw argument text: pi-ai passes the string on.
    found = [f for f in _findings(model, _with_arguments(model, '{"command": "ls"}'))]
    assert [f.code for f in found] == ["tool-arguments-not-object"]
    assert found[0].index == 1
    assert "JSON string" in found[0].message
    for other in ([1, 2], 7):
        assert "tool-arguments-not-object" in {f.code for f in _findings(model, _with_arguments(model, other))}
    # null and missing arguments become {} in pi-ai's Anthropic and Gemini bodies.
    if model is not LLAMA:
        assert _findings(model, _with_arguments(model, None)) == []


def test_arguments_paths_name_the_field() -> None:
    (anthropic,) = _findings(SONNET, _with_arguments(SONNET, "x"))
    assert anthropic.path == "messages.1.content.0.input"
    (chat,) = _findings(LLAMA, _with_arguments(LLAMA, "x"))
    assert chat.path == "messages.1.tool_calls.0.function.arguments"
    (gemini,) = _findings(GEMINI, _with_arguments(GEMINI, "x"))
    assert gemini.path == "contents.1.parts.0.functionCall.args"


def test_responses_arguments_are_not_judged() -> None:
    # OpenAI's own Responses API takes the arguments text as it is.
    assert _findings(GPT5, _with_arguments(GPT5, '{"command": "ls"}')) == []


def test_lone_surrogate_in_arguments_only_for_anthropic() -> None:
    messages = _with_arguments(SONNET, {"command": "echo \ud83d", "env": {"K\udc00": "v"}})
    found = _findings(SONNET, messages)
    where = "messages.1.content.0.input.command"
    assert [(f.code, f.path) for f in found] == [("tool-arguments-lone-surrogate", where)]
    paired = _with_arguments(SONNET, {"command": "echo \U0001f600 \ud83d\ude00"})
    assert _findings(SONNET, paired) == []
    # Chat Completions carries JSON.stringify(arguments): the escape is text inside a string there.
    assert _findings(LLAMA, _with_arguments(LLAMA, {"command": "echo \ud83d"})) == []


def _image_messages(data: str, mime: str) -> list[Any]:
    image = {"type": "image", "data": data, "mimeType": mime}
    return [{"role": "user", "content": [{"type": "text", "text": "look"}, image], "timestamp": 1}]


def test_image_bytes_that_do_not_match_the_type() -> None:
    (found,) = _findings(SONNET, _image_messages(PNG, "image/jpeg"))
    assert (found.code, found.path) == ("image-data-mismatch", "messages.0.content.1.source.data")
    assert "PNG" in found.message
    assert _findings(SONNET, _image_messages(PNG, "image/png")) == []
    assert _findings(SONNET, _image_messages(JPEG, "image/jpeg")) == []
    text = base64.b64encode(b"hello, not an image").decode()
    assert [f.code for f in _findings(SONNET, _image_messages(text, "image/png"))] == ["image-data-mismatch"]
    # OpenAI reads the bytes whatever the data URL says; it refuses only what is no image at all.
    assert _findings(GPT4O, _image_messages(PNG, "image/jpeg")) == []
    (responses,) = _findings(GPT4O, _image_messages(text, "image/png"))
    assert (responses.code, responses.path) == ("image-data-mismatch", "input.0.content.1.image_url")
    (chat,) = _findings(QWEN, _image_messages(text, "image/png"))
    assert (chat.code, chat.path) == ("image-data-mismatch", "messages.0.content.1.image_url.url")


@pytest.mark.parametrize("model", [SONNET, GPT4O, QWEN, GEMINI], ids=lambda m: m["api"])
@pytest.mark.parametrize(
    "data", ["", "data:image/png;base64," + PNG, "iVBOR w0K", "iVBORw0K=A==", "iVBORw0KG"], ids=repr
)
def test_invalid_base64(model: dict[str, Any], data: str) -> None:
    codes = [f.code for f in _findings(model, _image_messages(data, "image/png"))]
    assert codes == ["image-base64-invalid"], codes


def test_base64_without_padding_and_google_url_safe_letters() -> None:
    assert _findings(SONNET, _image_messages(PNG.rstrip("="), "image/png")) == []
    url_safe = PNG.replace("/", "_").replace("+", "-")
    assert _findings(GEMINI, _image_messages(url_safe, "image/png")) == []


def test_thinking_budget_below_the_minimum() -> None:
    messages = [_user("hi")]
    (found,) = _findings(SONNET, messages, "low", {"low": 500})
    assert (found.code, found.path) == ("thinking-budget-too-small", "thinking.budget_tokens")
    assert _findings(SONNET, messages, "low", {"low": 1024}) == []
    assert _findings(SONNET, messages, "low", {"low": 0}) == []  # pi-ai sends 1024 for 0
    (gemini,) = _findings(GEMINI, messages, "low", {"low": 100})
    assert (gemini.code, gemini.path) == ("thinking-budget-too-small", "config.thinkingConfig.thinkingBudget")
    assert _findings(GEMINI, messages, "low", {"low": 128}) == []
    lite = resolve_request_model("google/gemini-2.5-flash-lite", chat_models())
    assert [f.code for f in _findings(lite, messages, "low", {"low": 300})] == ["thinking-budget-too-small"]
    assert _findings(lite, messages, "low", {"low": 0}) == []  # 0: no thinking, allowed


def test_gemini_takes_dots_and_colons_in_function_names() -> None:
    def declaration(name: str) -> dict[str, Any]:
        return {"model": "g", "contents": [], "config": {"tools": [{"functionDeclarations": [{"name": name}]}]}}

    for name in ("fs.read", "mcp:server.tool", "_private-1"):
        assert check_request(GEMINI, declaration(name), []) == [], name
    for name in ("1tool", "bad name", "x" * 65, "slash/tool"):
        assert [f.code for f in check_request(GEMINI, declaration(name), [])] == ["tool-name-pattern"], name
    # Anthropic and OpenAI still refuse the dot.
    dotted = {"model": "m", "messages": [], "tools": [{"name": "fs.read"}]}
    assert [f.code for f in check_request(SONNET, dotted, [])] == ["tool-name-pattern"]
