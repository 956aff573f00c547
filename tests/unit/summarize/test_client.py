"""The HTTP summarizer against the scripted local server: requests, replies, errors, retries."""

from __future__ import annotations

import json
import socket
import traceback
from datetime import UTC, datetime

import httpx
import pytest

from pitools.errors import ModelError
from pitools.summarize import (
    ModelAuthError,
    ModelLengthError,
    ModelQuotaError,
    ModelRequestError,
    ModelResponseError,
    ModelSpec,
    ModelToolCallError,
    ModelTransientError,
    SummaryRequest,
    build_summarizer,
)
from pitools.summarize.client import HttpSummarizer, retry_after_seconds
from tests.unit.summarize.summarize_fakes import SECRET_KEY, SUMMARY_TEXT, FakeModelServer, Step

REQUEST = SummaryRequest(system_prompt="You summarize.", prompt="<conversation>hi</conversation>")


def assert_no_secret(exc: BaseException, secret: str = SECRET_KEY) -> None:
    """The key appears nowhere in the exception: message, repr or formatted traceback."""
    shown = "".join(traceback.format_exception(exc))
    for text in (str(exc), repr(exc), shown):
        assert secret not in text
        assert secret[8:] not in text


def _summarize(spec: ModelSpec, *, retries: list[str] | None = None, **kwargs: object) -> object:
    summarizer = build_summarizer(spec, on_retry=None if retries is None else retries.append, **kwargs)  # type: ignore[arg-type]
    return summarizer.summarize(REQUEST)


# -- OpenAI-compatible ------------------------------------------------------------------


def test_openai_request_and_result(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    result = build_summarizer(openai_spec).summarize(REQUEST)
    assert result.text == SUMMARY_TEXT
    assert (result.provider, result.model, result.attempts, result.stop_reason) == (
        "local",
        "test-model",
        1,
        "stop",
    )
    # 1200 prompt tokens of which 200 cached: Pi counts 1000 input + 200 cache reads. The
    # cost values are what pi-ai's calculateCost gives in Node for the same numbers.
    assert result.usage == {
        "input": 1000,
        "output": 300,
        "cacheRead": 200,
        "cacheWrite": 0,
        "totalTokens": 1500,
        "cost": {
            "input": 0.003,
            "output": 0.0045000000000000005,
            "cacheRead": 0.000059999999999999995,
            "cacheWrite": 0,
            "total": 0.007560000000000001,
        },
    }
    (req,) = model_server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.body["model"] == "test-model"
    # pi-ai's messages (the prompt as a text block); pi-ai's stream_options go with its streaming.
    assert req.body["messages"] == [
        {"role": "system", "content": "You summarize."},
        {"role": "user", "content": [{"type": "text", "text": "<conversation>hi</conversation>"}]},
    ]
    assert req.body["stream"] is False and "stream_options" not in req.body
    # pi-ai's field for a server it does not know (compat.maxTokensField picks the other one);
    # 4096 fits the 32k window.
    assert req.body["max_completion_tokens"] == 4096
    assert "tools" not in req.body and "tool_choice" not in req.body
    assert "cache_control" not in json.dumps(req.body)
    assert "reasoning_effort" not in req.body


def test_openai_own_api_uses_max_completion_tokens(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    spec = openai_spec.model_copy(update={"provider": "openai", "reasoning": True})
    build_summarizer(spec).summarize(REQUEST.model_copy(update={"reasoning_level": "high"}))
    body = model_server.requests[0].body
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body
    assert body["store"] is False
    assert body["messages"][0]["role"] == "developer"
    assert body["reasoning_effort"] == "high"


def test_openai_reasoning_only_for_reasoning_models(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    build_summarizer(openai_spec).summarize(REQUEST.model_copy(update={"reasoning_level": "high"}))
    assert "reasoning_effort" not in model_server.requests[0].body


def test_openai_compat_overrides(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    spec = openai_spec.model_copy(
        update={
            "reasoning": True,
            "compat": {"maxTokensField": "max_completion_tokens", "thinkingFormat": "openrouter"},
            "thinking_level_map": {"off": "none", "xhigh": None},
        }
    )
    build_summarizer(spec).summarize(REQUEST.model_copy(update={"reasoning_level": "xhigh"}))
    build_summarizer(spec).summarize(REQUEST)
    first, second = (r.body for r in model_server.requests)
    assert first["max_completion_tokens"] == 4096
    # xhigh is not supported by this model: clamped down to high (clampThinkingLevel).
    assert first["reasoning"] == {"effort": "high"}
    assert second["reasoning"] == {"effort": "none"}


def test_openai_length_stop(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(Step("length"))
    with pytest.raises(ModelLengthError, match="token cap"):
        _summarize(openai_spec)
    assert len(model_server.requests) == 1


def test_openai_tool_call(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(Step("tool"))
    with pytest.raises(ModelToolCallError):
        _summarize(openai_spec)


def test_openai_empty_reply_is_an_error(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(Step(text="   "))
    with pytest.raises(ModelResponseError, match="no summary text"):
        _summarize(openai_spec)


def test_openai_not_json(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(Step("raw", status=200, body="<html>gateway</html>"))
    with pytest.raises(ModelResponseError, match="not JSON"):
        _summarize(openai_spec)


# -- OpenAI Responses -------------------------------------------------------------------


def test_responses_request_and_result(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    spec = openai_spec.model_copy(update={"api": "openai-responses", "reasoning": True})
    result = build_summarizer(spec).summarize(REQUEST.model_copy(update={"reasoning_level": "high"}))
    assert result.text == SUMMARY_TEXT
    # input_tokens includes the 200 cached ones (pi-ai takes them out of the input).
    assert (result.usage["input"], result.usage["cacheRead"], result.usage["output"]) == (1000, 200, 300)
    (req,) = model_server.requests
    assert req.path == "/v1/responses"
    assert req.headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert req.body["stream"] is False
    assert req.body["input"][0] == {"role": "developer", "content": "You summarize."}
    assert req.body["reasoning"] == {"effort": "high", "summary": "auto"}
    # Caching is off for a summary: no prompt_cache_key.
    assert "prompt_cache_key" not in req.body


def test_responses_length_and_tool(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    spec = openai_spec.model_copy(update={"api": "openai-responses"})
    model_server.script(Step("length"), Step("tool"))
    with pytest.raises(ModelLengthError, match="token cap"):
        _summarize(spec)
    with pytest.raises(ModelToolCallError):
        _summarize(spec)


def test_responses_failed_status(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    spec = openai_spec.model_copy(update={"api": "openai-responses"})
    body = {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []}
    model_server.script(Step("raw", status=200, body=body))
    with pytest.raises(ModelResponseError, match="content_filter"):
        _summarize(spec)


# -- Anthropic --------------------------------------------------------------------------


def test_anthropic_request_and_result(model_server: FakeModelServer, anthropic_spec: ModelSpec) -> None:
    result = build_summarizer(anthropic_spec).summarize(REQUEST)
    assert result.text == SUMMARY_TEXT
    assert result.usage["input"] == 1000 and result.usage["output"] == 250
    assert result.usage["totalTokens"] == 1250
    assert result.usage["cost"]["total"] == pytest.approx(0.003 + 0.00375)
    (req,) = model_server.requests
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == SECRET_KEY
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    # pi-ai's body (no cache_control: Pi turns caching off for summaries), not streamed.
    assert req.body == {
        "model": "claude-test",
        "messages": [{"role": "user", "content": [{"type": "text", "text": REQUEST.prompt}]}],
        "max_tokens": 64000,
        "stream": False,
        "system": [{"type": "text", "text": "You summarize."}],
    }


def test_anthropic_thinking(model_server: FakeModelServer, anthropic_spec: ModelSpec) -> None:
    spec = anthropic_spec.model_copy(update={"reasoning": True})
    build_summarizer(spec).summarize(REQUEST.model_copy(update={"reasoning_level": "medium"}))
    build_summarizer(spec).summarize(REQUEST)
    thinking, plain = (r.body for r in model_server.requests)
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert thinking["max_tokens"] == 64000
    assert plain["thinking"] == {"type": "disabled"}
    assert "cache_control" not in json.dumps(thinking)


def test_anthropic_length_and_tool(model_server: FakeModelServer, anthropic_spec: ModelSpec) -> None:
    model_server.script(Step("length"), Step("tool"))
    with pytest.raises(ModelLengthError):
        _summarize(anthropic_spec)
    with pytest.raises(ModelToolCallError):
        _summarize(anthropic_spec)
    assert len(model_server.requests) == 2


# -- errors -----------------------------------------------------------------------------


def _openai_error(message: str, code: str | None = None) -> dict[str, object]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_are_not_retried(model_server: FakeModelServer, openai_spec: ModelSpec, status: int) -> None:
    model_server.script(Step("error", status=status, body=_openai_error(f"Incorrect API key provided: {SECRET_KEY}")))
    with pytest.raises(ModelAuthError) as caught:
        _summarize(openai_spec)
    assert len(model_server.requests) == 1
    assert f"HTTP {status}" in str(caught.value) and "local/test-model" in str(caught.value)
    assert "Incorrect API key provided" in str(caught.value)
    assert caught.value.status == status
    assert_no_secret(caught.value)


def test_bad_request_shows_provider_status_and_excerpt(
    model_server: FakeModelServer, anthropic_spec: ModelSpec
) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}
    model_server.script(Step("error", status=400, body=body))
    with pytest.raises(ModelRequestError) as caught:
        _summarize(anthropic_spec)
    assert str(caught.value) == "anthropic/claude-test: HTTP 400: max_tokens: too large"
    assert len(model_server.requests) == 1


def test_error_text_redacts_key_like_strings(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    other = "sk-proj-ANOTHERKEY123456789"
    model_server.script(Step("error", status=400, body=_openai_error(f"bad key {other} and Bearer abcdefghijkl")))
    with pytest.raises(ModelRequestError) as caught:
        _summarize(openai_spec)
    assert other not in str(caught.value)
    assert "abcdefghijkl" not in str(caught.value)
    assert "***" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (402, {"error": {"message": "Payment required"}}),
        (429, _openai_error("You exceeded your current quota", "insufficient_quota")),
    ],
)
def test_quota_errors_are_not_retried(
    model_server: FakeModelServer, openai_spec: ModelSpec, status: int, body: object
) -> None:
    model_server.script(Step("error", status=status, body=body))
    with pytest.raises(ModelQuotaError) as caught:
        _summarize(openai_spec)
    assert len(model_server.requests) == 1
    assert f"HTTP {status}" in str(caught.value)


@pytest.mark.parametrize("status", [500, 502, 503, 529])
def test_server_error_then_success(model_server: FakeModelServer, openai_spec: ModelSpec, status: int) -> None:
    model_server.script(Step("error", status=status, body={"error": {"message": "Overloaded"}}))
    retries: list[str] = []
    result = build_summarizer(openai_spec, on_retry=retries.append).summarize(REQUEST)
    assert result.attempts == 2 and result.text == SUMMARY_TEXT
    assert len(retries) == 1
    assert f"HTTP {status}" in retries[0] and "attempt 2 of 4" in retries[0]
    assert "\n" not in retries[0]


def test_rate_limit_then_success(model_server: FakeModelServer, anthropic_spec: ModelSpec) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    model_server.script(Step("error", status=429, body=body, headers={"retry-after": "0"}))
    retries: list[str] = []
    result = build_summarizer(anthropic_spec, on_retry=retries.append).summarize(REQUEST)
    assert result.attempts == 2
    assert retries == ["anthropic/claude-test: HTTP 429: slow down; retrying in 0.0s (attempt 2 of 4)"]


def test_persistent_overload_gives_up(model_server: FakeModelServer, anthropic_spec: ModelSpec) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    model_server.script(*[Step("error", status=529, body=body)] * 3)
    retries: list[str] = []
    with pytest.raises(ModelTransientError) as caught:
        build_summarizer(anthropic_spec, on_retry=retries.append, max_retries=2).summarize(REQUEST)
    assert caught.value.attempts == 3 and caught.value.status == 529
    assert "gave up after 3 attempts" in str(caught.value)
    assert len(model_server.requests) == 3 and len(retries) == 2
    assert isinstance(caught.value, ModelError)
    assert_no_secret(caught.value)


def test_timeout_is_retried_then_reported(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(Step("sleep", delay=1.0), Step("sleep", delay=1.0))
    retries: list[str] = []
    with pytest.raises(ModelTransientError, match="timeout") as caught:
        build_summarizer(openai_spec, on_retry=retries.append, timeout=0.2, max_retries=1).summarize(REQUEST)
    assert caught.value.attempts == 2
    assert len(retries) == 1 and "no reply within 0.2s" in retries[0]
    assert_no_secret(caught.value)


def test_dropped_connection_then_success(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(Step("drop"))
    retries: list[str] = []
    result = build_summarizer(openai_spec, on_retry=retries.append).summarize(REQUEST)
    assert result.attempts == 2
    assert len(retries) == 1 and "closed the connection" in retries[0]


def test_connection_refused(openai_spec: ModelSpec) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = openai_spec.model_copy(update={"base_url": f"http://127.0.0.1:{port}/v1"})
    with pytest.raises(ModelTransientError, match="could not connect") as caught:
        build_summarizer(spec, max_retries=1).summarize(REQUEST)
    assert caught.value.attempts == 2
    assert_no_secret(caught.value)


def test_embedded_error_in_ok_reply(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    # OpenRouter relays upstream failures as a 200 reply carrying an error object.
    body = {"error": {"message": "Provider returned error", "code": 502}}
    model_server.script(Step("raw", status=200, body=body))
    result = build_summarizer(openai_spec).summarize(REQUEST)
    assert result.attempts == 2


def test_non_loopback_hosts_are_blocked() -> None:
    with pytest.raises(httpx.ConnectError):
        httpx.post("http://example.invalid/", timeout=1)


# -- retry delays -----------------------------------------------------------------------


def test_backoff_and_retry_after_cap(openai_spec: ModelSpec) -> None:
    summarizer = HttpSummarizer(openai_spec, base_delay=2.0, max_delay=60.0)
    assert [summarizer.delay(n, None) for n in (1, 2, 3, 4, 5, 6, 7)] == [2, 4, 8, 16, 32, 60, 60]
    assert summarizer.delay(1, 5.0) == 5.0
    assert summarizer.delay(1, 3600.0) == 60.0


def test_retry_after_parsing() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds(httpx.Headers({"retry-after": "7"})) == 7.0
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    date = "Thu, 01 Jan 2026 12:00:30 GMT"
    assert retry_after_seconds(httpx.Headers({"retry-after": date}), now=now) == 30.0
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None


def test_retry_sleeps_are_reported(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    model_server.script(
        Step("error", status=503, body="busy"),
        Step("error", status=429, body="slow", headers={"retry-after": "12"}),
    )
    slept: list[float] = []
    summarizer = HttpSummarizer(openai_spec, base_delay=2.0, sleep=slept.append)
    assert summarizer.summarize(REQUEST).attempts == 3
    assert slept == [2.0, 12.0]


def test_repr_hides_the_key(openai_spec: ModelSpec) -> None:
    spec = openai_spec.model_copy(update={"headers": {"Authorization": f"Bearer {SECRET_KEY}", "X-Title": "t"}})
    for text in (repr(spec), str(spec), repr(build_summarizer(spec)), spec.model_dump_json()):
        assert SECRET_KEY not in text
    assert "X-Title" in repr(spec) and "'t'" in repr(spec)


def test_lone_surrogates_are_dropped(model_server: FakeModelServer, anthropic_spec: ModelSpec) -> None:
    request = SummaryRequest(system_prompt="sys\ud800", prompt="a\ud83d b \U0001f600")
    build_summarizer(anthropic_spec).summarize(request)
    body = model_server.requests[0].body
    assert body["messages"][0]["content"][0]["text"] == "a b \U0001f600"
    assert body["system"][0]["text"] == "sys"


def test_a_surrogate_pair_is_sent_as_its_character(model_server: FakeModelServer, openai_spec: ModelSpec) -> None:
    """Session text from JavaScript may hold a pair as two halves: pi-ai keeps the pair, and the
    UTF-8 body carries the character it encodes."""
    build_summarizer(openai_spec).summarize(SummaryRequest(prompt="x\ud83d\ude00y"))
    assert model_server.requests[0].body["messages"][0]["content"][0]["text"] == "x\U0001f600y"


def test_importing_the_package_does_not_load_httpx() -> None:
    import subprocess
    import sys

    code = "import sys, pitools.summarize; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
