"""How many output tokens (and thinking tokens) a summary request may ask for.

Pi sends a summary as ``completeSimple(model, {systemPrompt, messages: [one user message]})``,
so pi-ai's ``simple-options.ts`` decides the budget: the output cap is the model's
``maxTokens`` (Pi's summaries pass no explicit cap, #9512), reduced so that the estimated
input plus a safety margin plus the output fit the context window
(``clampMaxTokensToContext``); thinking budgets follow ``adjustMaxTokensForThinking`` and the
Anthropic provider's ``streamSimple``.

The arithmetic is the request mirror's (:mod:`pitools.core.request.common`), the one copy of
pi-ai's rules: this module only builds the model and the message list it reads. Like Pi, only
the messages are estimated (the user message: ``ceil(UTF-16 length / 3.5)``); the system
prompt is covered by the fixed safety margin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pitools.core.request import common
from pitools.core.request.anthropic import adaptive_effort
from pitools.summarize.types import ModelSpec, SummaryRequest

ThinkingMode = Literal["none", "disabled", "adaptive", "budget"]


def summary_messages(request: SummaryRequest) -> list[dict[str, Any]]:
    """The message list Pi passes for a summary: the prompt as one user text message."""
    return [{"role": "user", "content": [{"type": "text", "text": request.prompt}], "timestamp": 0}]


def _pi_ai_model(spec: ModelSpec) -> dict[str, Any]:
    """The fields of pi-ai's model object the budget and thinking-level rules read."""
    model: dict[str, Any] = {"reasoning": spec.reasoning, "contextWindow": spec.context_window}
    if spec.thinking_level_map is not None:
        model["thinkingLevelMap"] = spec.thinking_level_map
    return model


def supported_thinking_levels(spec: ModelSpec) -> list[str]:
    """pi-ai ``getSupportedThinkingLevels``: xhigh/max only when the model maps them (the one
    implementation, :func:`pitools.core.request.common.supported_thinking_levels`)."""
    return common.supported_thinking_levels(_pi_ai_model(spec))


def clamp_thinking_level(spec: ModelSpec, level: str) -> str:
    """pi-ai ``clampThinkingLevel``: the nearest supported level, preferring higher ones (the
    one implementation, :func:`pitools.core.request.common.clamp_thinking_level`)."""
    return common.clamp_thinking_level(_pi_ai_model(spec), level)


def requested_reasoning(spec: ModelSpec, request: SummaryRequest) -> str | None:
    """The thinking level to use: only for reasoning models and a level other than off."""
    level = request.reasoning_level
    if spec.reasoning and level and level != "off":
        return level
    return None


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
    model = _pi_ai_model(spec)
    messages = summary_messages(request)
    input_tokens = int(common.estimate_context_tokens(messages))
    cap = request.max_tokens if request.max_tokens is not None else spec.max_tokens
    base = int(common.clamp_max_tokens_to_context(model, messages, cap))
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
            effort=adaptive_effort(model, level),
        )
    widened, budget = common.adjust_max_tokens_for_thinking(base, spec.max_tokens, level)
    max_tokens = int(common.clamp_max_tokens_to_context(model, messages, widened))
    thinking_budget = int(min(budget, max(0, max_tokens - common.MIN_ANSWER_TOKENS)))
    return OutputBudget(
        max_tokens=max_tokens,
        input_tokens=input_tokens,
        thinking="budget",
        # Anthropic rejects budgets under 1024; Pi sends 1024 when the clamp left nothing.
        thinking_budget=thinking_budget or common.MIN_ANSWER_TOKENS,
    )
