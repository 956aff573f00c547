"""Output budget: Pi's clampMaxTokensToContext and thinking budgets, in the summarizer's body.

Expected numbers were computed by running pi-ai 1.6.0's own ``simple-options.js`` in Node
on the same inputs. The arithmetic itself is the request mirror's
(``tests/unit/request/test_budget_parity.py`` checks it on a grid recorded from pi-ai), and the
summarizer's body is the request mirror's (``tests/golden/test_summary_request_parity.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pitools.core.request.estimate import estimate_input_tokens
from pitools.core.request.simple_options import clamp_max_tokens_to_context
from pitools.summarize.body import build_body, request_model, summary_level, summary_messages
from pitools.summarize.types import ModelSpec, SummaryRequest


def spec(api: str = "anthropic-messages", **fields: object) -> ModelSpec:
    base: dict[str, object] = {"provider": "p", "model_id": "m", "api": api}
    base.update(fields)
    return ModelSpec.model_validate(base)


def request(chars: int, level: str | None = None, max_tokens: int | None = None) -> SummaryRequest:
    # No system prompt: the recorded pi-ai numbers are for the user message alone (pi-ai counts a
    # system message too, see test_the_system_prompt_counts).
    return SummaryRequest(prompt="x" * chars, reasoning_level=level, max_tokens=max_tokens)  # type: ignore[arg-type]


def body(model: ModelSpec, req: SummaryRequest) -> dict[str, Any]:
    return build_body(model, req)


def _input_tokens(prompt: str) -> int:
    return int(estimate_input_tokens(summary_messages(SummaryRequest(prompt=prompt))))  # type: ignore[call-arg]


def test_estimate_counts_utf16_units() -> None:
    assert _input_tokens("") == 0
    assert _input_tokens("abcdefg") == 2  # 7 / 3.5
    assert _input_tokens("abcdefgh") == 3
    assert _input_tokens("😀" * 7) == 4  # 14 UTF-16 units


def test_the_system_prompt_counts() -> None:
    """pi-ai estimates the whole normalized context, the system message included
    (``estimateMessageTokens`` has a branch for it): 7000 characters are 2000 tokens more. The
    numbers are pi-ai 1.6.0's ``clampMaxTokensToContext`` on ``normalizeContext`` of the same input."""
    model = spec(context_window=32000, max_tokens=16384)
    alone = body(model, request(70000))["max_tokens"]
    with_system = body(model, SummaryRequest(system_prompt="s" * 7000, prompt="x" * 70000))["max_tokens"]  # type: ignore[call-arg]
    assert (alone, with_system) == (7904, 5904)


@pytest.mark.parametrize(
    ("window", "cap", "chars", "expected"),
    [
        (200000, 64000, 3500, 64000),
        (32000, 16384, 3500, 16384),
        (32000, 16384, 70000, 7904),
        (200000, 64000, 525000, 32768),
        (8000, 4096, 35000, 1),
        (0, 4096, 100, 4096),
    ],
)
def test_clamp_matches_pi(window: int, cap: int, chars: int, expected: int) -> None:
    # The system prompt is not part of the estimate, as in Pi.
    assert body(spec(context_window=window, max_tokens=cap), request(chars))["max_tokens"] == expected


@given(
    window=st.integers(min_value=0, max_value=2_000_000),
    tokens=st.integers(min_value=0, max_value=3_000_000),
    cap=st.integers(min_value=1, max_value=200_000),
)
def test_clamp_never_exceeds_cap_or_goes_below_one(window: int, tokens: int, cap: int) -> None:
    # One assistant message whose usage the estimate takes as the input size.
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens}
    messages = [{"role": "assistant", "content": [], "usage": usage, "stopReason": "stop", "timestamp": 0}]
    out = clamp_max_tokens_to_context({"contextWindow": window}, messages, cap)
    assert 1 <= out <= max(cap, 1)


def test_request_cap_replaces_model_cap() -> None:
    assert body(spec(context_window=200000, max_tokens=64000), request(100, max_tokens=2000))["max_tokens"] == 2000


@pytest.mark.parametrize(
    ("window", "cap", "chars", "level", "max_tokens", "thinking"),
    [
        (200000, 64000, 3500, "medium", 64000, 8192),
        (32000, 8000, 3500, "high", 8000, 6976),
        (20000, 16384, 35000, "low", 5904, 2048),
        (200000, 2000, 100, "high", 2000, 976),
        (200000, 64000, 100, "xhigh", 64000, 16384),  # xhigh budgets like high
    ],
)
def test_anthropic_thinking_budget_matches_pi(
    window: int, cap: int, chars: int, level: str, max_tokens: int, thinking: int
) -> None:
    got = body(spec(context_window=window, max_tokens=cap, reasoning=True), request(chars, level))
    thinking_field = got["thinking"]
    assert (thinking_field["type"], got["max_tokens"], thinking_field["budget_tokens"]) == (
        "enabled",
        max_tokens,
        thinking,
    )


def test_anthropic_thinking_modes() -> None:
    plain = spec(context_window=200000, max_tokens=64000)
    assert "thinking" not in body(plain, request(10, "high"))  # not a reasoning model
    reasoning = spec(context_window=200000, max_tokens=64000, reasoning=True)
    assert body(reasoning, request(10))["thinking"] == {"type": "disabled"}
    assert body(reasoning, request(10, "off"))["thinking"] == {"type": "disabled"}
    # A model that cannot turn thinking off: Pi's agent never holds "off" for it (clamped up).
    always_on = spec(reasoning=True, thinking_level_map={"off": None})
    assert body(always_on, request(10))["thinking"]["type"] == "enabled"
    adaptive = spec(reasoning=True, compat={"forceAdaptiveThinking": True}, thinking_level_map={"xhigh": "xhigh"})
    assert body(adaptive, request(10, "minimal"))["output_config"] == {"effort": "low"}
    assert body(adaptive, request(10, "xhigh"))["output_config"] == {"effort": "xhigh"}
    assert body(adaptive, request(10, "high"))["thinking"] == {"type": "adaptive", "display": "summarized"}


def test_clamp_thinking_level() -> None:
    def level(model: ModelSpec, wanted: str) -> str:
        return summary_level(request_model(model), request(10, wanted))

    model = spec(reasoning=True, thinking_level_map={"minimal": None, "xhigh": "xhigh"})
    assert level(model, "minimal") == "low"
    assert level(model, "xhigh") == "xhigh"
    assert level(spec(reasoning=True), "xhigh") == "high"
    assert level(spec(), "high") == "off"
    openai = "https://api.openai.com/v1"
    completions = spec(api="openai-completions", provider="openai", base_url=openai, reasoning=True)
    assert body(completions, request(10, "xhigh"))["reasoning_effort"] == "high"
