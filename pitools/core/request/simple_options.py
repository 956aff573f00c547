"""pi-ai's simple-stream options (``src/api/simple-options.ts``, ``dist/api/simple-options.js``).

The output budget (``clampMaxTokensToContext``, ``thinkingBudgetForLevel``,
``adjustMaxTokensForThinking``), ``resolveSamplingParams``, and :class:`StreamOptions`: what Pi
passes ``streamSimple`` besides the model and the messages. The one copy of these rules in
pitools (``tests/unit/request/test_budget_parity.py`` keeps it so).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pitools.core.request.estimate import estimate_input_tokens
from pitools.core.request.thinking import clamp_thinking_level

_CONTEXT_SAFETY_TOKENS = 4096
_CONTEXT_SAFETY_RATIO = 0.15
_MIN_OUTPUT_WITH_RATIO_MARGIN = 32768
MIN_ANSWER_TOKENS = 1024
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}


def input_estimate(model: dict[str, Any], messages: list[Any]) -> float | None:
    """pi-ai's input estimate as ``clampMaxTokensToContext`` takes it: None when the model has no
    window (then nothing is estimated). Computed once per body and passed on: on a long session
    each estimate walks every message."""
    window = model.get("contextWindow", 0)
    if window <= 0:
        return None
    return estimate_input_tokens(messages)


def clamp_max_tokens_to_context(
    model: dict[str, Any], messages: list[Any], max_tokens: float, tokens: float | None = None
) -> float:
    """pi-ai ``clampMaxTokensToContext`` (``tokens``: :func:`input_estimate`'s result, when known)."""
    window = model.get("contextWindow", 0)
    if window <= 0:
        return max(1, max_tokens)
    if tokens is None:
        tokens = estimate_input_tokens(messages)
    margin = max(_CONTEXT_SAFETY_TOKENS, math.ceil(tokens * _CONTEXT_SAFETY_RATIO))
    room = window - tokens - margin
    if room < _MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(_MIN_OUTPUT_WITH_RATIO_MARGIN, window - tokens - _CONTEXT_SAFETY_TOKENS)
    budget: float = min(max_tokens, max(1, room))
    return budget


def openai_budget(
    model: dict[str, Any], messages: list[Any], level: str, tokens: float | None = None
) -> tuple[Any, str | None]:
    """The OpenAI builders' ``max_tokens`` (clamped to the context) and reasoning effort (None when off)."""
    max_tokens = clamp_max_tokens_to_context(model, messages, model["maxTokens"], tokens)
    clamped = clamp_thinking_level(model, level) if level != "off" else None
    return max_tokens, None if clamped in (None, "off") else clamped


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
    #: :func:`input_estimate` of the messages, when the caller already has it (None: estimated here).
    input_tokens: float | None = None

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
