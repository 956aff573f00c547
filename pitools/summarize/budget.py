"""How many output tokens (and thinking tokens) a summary request may ask for.

Mirrors pi-ai's ``simple-options.ts``: the output cap is the model's ``maxTokens`` (Pi's
summaries pass no explicit cap, #9512), reduced so that the estimated input plus a safety
margin plus the output fit the context window (``clampMaxTokensToContext``); thinking
budgets follow ``adjustMaxTokensForThinking`` and the Anthropic provider's
``streamSimple``.

Like Pi, only the user message is estimated (``ceil(UTF-16 length / 3.5)``); the system
prompt is covered by the fixed safety margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pitools.summarize.types import ModelSpec, SummaryRequest

CHARS_PER_TOKEN = 3.5
CONTEXT_SAFETY_TOKENS = 4096
CONTEXT_SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_RATIO_MARGIN = 32768
MIN_MAX_TOKENS = 1
MIN_ANSWER_TOKENS = 1024
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

ThinkingMode = Literal["none", "disabled", "adaptive", "budget"]


def utf16_length(text: str) -> int:
    """JavaScript's ``string.length``."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def estimate_text_tokens(text: str) -> int:
    """pi-ai's ``estimateTextTokens``: ceil(UTF-16 length / 3.5)."""
    return math.ceil(utf16_length(text) / CHARS_PER_TOKEN)


def clamp_max_tokens_to_context(context_window: int, input_tokens: int, max_tokens: int) -> int:
    """Fit ``max_tokens`` into the window, leaving room for the input being undercounted.

    The margin is 15% of the input (at least 4096 tokens); when that would leave less than
    32768 tokens of output, only the fixed 4096 margin is kept and the output is capped at
    32768. Never below 1 (``clampMaxTokensToContext``).
    """
    if context_window <= 0:
        return max(MIN_MAX_TOKENS, max_tokens)
    margin = max(CONTEXT_SAFETY_TOKENS, math.ceil(input_tokens * CONTEXT_SAFETY_RATIO))
    room = context_window - input_tokens - margin
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, context_window - input_tokens - CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(MIN_MAX_TOKENS, room))


def supported_thinking_levels(spec: ModelSpec) -> list[str]:
    """pi-ai ``getSupportedThinkingLevels``: xhigh/max only when the model maps them."""
    if not spec.reasoning:
        return ["off"]
    levels = spec.thinking_level_map or {}
    out: list[str] = []
    for level in THINKING_LEVELS:
        if level in levels and levels[level] is None:
            continue
        if level in ("xhigh", "max") and level not in levels:
            continue
        out.append(level)
    return out


def clamp_thinking_level(spec: ModelSpec, level: str) -> str:
    """pi-ai ``clampThinkingLevel``: the nearest supported level, preferring higher ones."""
    from pitools.core.request.common import nearest_thinking_level  # the request builder's rule, loaded late

    return nearest_thinking_level(supported_thinking_levels(spec), level)


def requested_reasoning(spec: ModelSpec, request: SummaryRequest) -> str | None:
    """The thinking level to use: only for reasoning models and a level other than off."""
    level = request.reasoning_level
    if spec.reasoning and level and level != "off":
        return level
    return None


def _thinking_budget(level: str) -> int:
    return THINKING_BUDGETS["high" if level in ("xhigh", "max") else level]


def _anthropic_effort(spec: ModelSpec, level: str) -> str:
    mapped = (spec.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


@dataclass(frozen=True)
class OutputBudget:
    """The output cap to send and how to ask for thinking."""

    max_tokens: int
    input_tokens: int
    #: OpenAI-compatible APIs: the clamped thinking level, or None for none.
    reasoning_effort: str | None = None
    #: Anthropic: no thinking field, thinking disabled, adaptive (effort) or a token budget.
    thinking: ThinkingMode = "none"
    thinking_budget: int | None = None
    effort: str | None = None


def output_budget(spec: ModelSpec, request: SummaryRequest) -> OutputBudget:
    """Output cap and thinking settings for ``request`` sent to ``spec``."""
    input_tokens = estimate_text_tokens(request.prompt)
    cap = request.max_tokens if request.max_tokens is not None else spec.max_tokens
    base = clamp_max_tokens_to_context(spec.context_window, input_tokens, cap)
    level = requested_reasoning(spec, request)
    if spec.api != "anthropic-messages":
        clamped = clamp_thinking_level(spec, level) if level else None
        effort = None if clamped in (None, "off") else clamped
        return OutputBudget(max_tokens=base, input_tokens=input_tokens, reasoning_effort=effort)
    if level is None:
        levels = spec.thinking_level_map or {}
        can_disable = "off" not in levels or levels["off"] is not None
        mode: ThinkingMode = "disabled" if spec.reasoning and can_disable else "none"
        return OutputBudget(max_tokens=base, input_tokens=input_tokens, thinking=mode)
    if spec.compat.get("forceAdaptiveThinking") is True:
        return OutputBudget(
            max_tokens=base,
            input_tokens=input_tokens,
            thinking="adaptive",
            effort=_anthropic_effort(spec, level),
        )
    budget = _thinking_budget(level)
    widened = min(base + budget, spec.max_tokens)
    if widened <= budget:
        budget = min(budget, max(0, widened - MIN_ANSWER_TOKENS))
    max_tokens = clamp_max_tokens_to_context(spec.context_window, input_tokens, widened)
    thinking_budget = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS))
    return OutputBudget(
        max_tokens=max_tokens,
        input_tokens=input_tokens,
        thinking="budget",
        # Anthropic rejects budgets under 1024; Pi sends 1024 when the clamp left nothing.
        thinking_budget=thinking_budget or MIN_ANSWER_TOKENS,
    )
