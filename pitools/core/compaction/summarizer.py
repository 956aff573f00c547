"""The boundary between a compaction and the model that writes its summary.

Core code builds :class:`SummaryRequest` values and expects :class:`SummaryResult` values back
from anything that satisfies the :class:`Summarizer` protocol. The implementations (an offline
extractive one and an HTTP client) live in :mod:`pitools.summarize`; core never imports them.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

SummaryKind = Literal["history", "turnPrefix"]
ReasoningLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]


class SummaryRequest(BaseModel):
    """One summarization call.

    HTTP summarizers send ``system_prompt`` and ``prompt`` (the single user message) as they
    are; the builtin summarizer reads ``messages`` (Pi LLM messages as JSON dicts),
    ``previous_summary`` and ``custom_instructions`` instead.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    system_prompt: str = ""
    prompt: str = ""
    kind: SummaryKind = "history"
    max_tokens: int | None = None
    reasoning_level: ReasoningLevel | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    previous_summary: str | None = None
    custom_instructions: str | None = None


class SummaryResult(BaseModel):
    """The summary text and Pi-shaped usage of the call that produced it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    #: Pi's usage JSON: input, output, cacheRead, cacheWrite, totalTokens, cost{...,total}.
    usage: dict[str, Any]
    stop_reason: str = "stop"
    provider: str
    model: str
    attempts: int = 1


@runtime_checkable
class Summarizer(Protocol):
    """Turns a request into a summary; raises ``pitools.errors.ModelError`` on failure."""

    def summarize(self, request: SummaryRequest) -> SummaryResult: ...
