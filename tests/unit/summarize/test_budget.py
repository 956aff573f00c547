"""Output budget: Pi's clampMaxTokensToContext and thinking budgets, as the summarizer uses them.

Expected numbers were computed by running pi-ai 1.6.0's own ``simple-options.js`` in Node
on the same inputs. The arithmetic itself is the request mirror's
(``tests/unit/request/test_budget_parity.py`` checks it on a grid recorded from pi-ai).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pitools.core.request.common import clamp_max_tokens_to_context
from pitools.summarize.budget import clamp_thinking_level, output_budget
from pitools.summarize.types import ModelSpec, SummaryRequest


def spec(api: str = "anthropic-messages", **fields: object) -> ModelSpec:
    base: dict[str, object] = {"provider": "p", "model_id": "m", "api": api}
    base.update(fields)
    return ModelSpec.model_validate(base)


def request(chars: int, level: str | None = None, max_tokens: int | None = None) -> SummaryRequest:
    return SummaryRequest(system_prompt="s" * 5000, prompt="x" * chars, reasoning_level=level, max_tokens=max_tokens)  # type: ignore[arg-type]


def _input_tokens(prompt: str) -> int:
    return output_budget(spec(), SummaryRequest(system_prompt="s", prompt=prompt)).input_tokens  # type: ignore[call-arg]


def test_estimate_counts_utf16_units() -> None:
    assert _input_tokens("") == 0
    assert _input_tokens("abcdefg") == 2  # 7 / 3.5
    assert _input_tokens("abcdefgh") == 3
    assert _input_tokens("😀" * 7) == 4  # 14 UTF-16 units


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
    budget = output_budget(spec(api="openai-completions", context_window=window, max_tokens=cap), request(chars))
    assert budget.max_tokens == expected


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
    budget = output_budget(spec(context_window=200000, max_tokens=64000), request(100, max_tokens=2000))
    assert budget.max_tokens == 2000


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
    model = spec(context_window=window, max_tokens=cap, reasoning=True)
    budget = output_budget(model, request(chars, level))
    assert (budget.thinking, budget.max_tokens, budget.thinking_budget) == ("budget", max_tokens, thinking)


def test_anthropic_thinking_modes() -> None:
    plain = spec(context_window=200000, max_tokens=64000)
    assert output_budget(plain, request(10, "high")).thinking == "none"  # not a reasoning model
    reasoning = spec(context_window=200000, max_tokens=64000, reasoning=True)
    assert output_budget(reasoning, request(10)).thinking == "disabled"
    assert output_budget(reasoning, request(10, "off")).thinking == "disabled"
    always_on = spec(reasoning=True, thinking_level_map={"off": None})
    assert output_budget(always_on, request(10)).thinking == "none"
    adaptive = spec(reasoning=True, compat={"forceAdaptiveThinking": True}, thinking_level_map={"xhigh": "xhigh"})
    assert (
        output_budget(adaptive, request(10, "minimal")).effort,
        output_budget(adaptive, request(10, "xhigh")).effort,
    ) == (
        "low",
        "xhigh",
    )
    assert output_budget(adaptive, request(10, "high")).thinking == "adaptive"


def test_clamp_thinking_level() -> None:
    model = spec(reasoning=True, thinking_level_map={"minimal": None, "xhigh": "xhigh"})
    assert clamp_thinking_level(model, "minimal") == "low"
    assert clamp_thinking_level(model, "xhigh") == "xhigh"
    assert clamp_thinking_level(spec(reasoning=True), "xhigh") == "high"
    assert clamp_thinking_level(spec(), "high") == "off"
    budget = output_budget(spec(api="openai-completions", reasoning=True), request(10, "xhigh"))
    assert budget.reasoning_effort == "high"
