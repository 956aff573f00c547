"""The summarizer's data types: what is asked, of which model, and what comes back.

``ModelSpec`` is a resolved model (provider, endpoint, credentials, limits); ``SummaryRequest``
is one summarization call; ``SummaryResult`` carries the text and Pi-shaped usage. A
``Summarizer`` turns a request into a result and raises ``ModelError`` subclasses on failure.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_serializer

# The request/result types and the protocol are core's (pitools.core.compaction.summarizer);
# they are re-exported here because every summarizer module speaks them.
from pitools.core.compaction.summarizer import (
    ReasoningLevel,
    Summarizer,
    SummaryKind,
    SummaryRequest,
    SummaryResult,
)

Api = Literal["openai-completions", "openai-responses", "anthropic-messages", "builtin"]

#: Header names whose values are credentials and must never be shown.
_SENSITIVE_HEADER = re.compile(r"auth|key|token|secret|cookie|signature|session", re.IGNORECASE)


def is_sensitive_header(name: str) -> bool:
    """True when a header of this name may carry a credential."""
    return bool(_SENSITIVE_HEADER.search(name))


class CostTier(BaseModel):
    """A request-wide price tier: applies when input tokens exceed ``input_tokens_above``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    input_tokens_above: float = Field(alias="inputTokensAbove")
    input: float
    output: float
    cache_read: float = Field(alias="cacheRead")
    cache_write: float = Field(alias="cacheWrite")


class ModelCost(BaseModel):
    """Prices in USD per million tokens, as in Pi's model catalogue and ``models.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    input: float = 0
    output: float = 0
    cache_read: float = Field(default=0, alias="cacheRead")
    cache_write: float = Field(default=0, alias="cacheWrite")
    tiers: tuple[CostTier, ...] = ()


class ModelSpec(BaseModel):
    """A resolved model: where to send the request, how to authenticate, and its limits.

    ``api_key`` is a ``SecretStr`` and sensitive header values are masked in ``repr``, so a
    spec can be logged or shown in an error without leaking credentials.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model_id: str
    api: Api
    base_url: str = ""
    api_key: SecretStr | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    context_window: int = 128000
    max_tokens: int = 16384
    reasoning: bool = False
    cost: ModelCost | None = None
    thinking_level_map: dict[str, str | None] | None = None
    #: Pi compat flags that change the request (``maxTokensField``, ``thinkingFormat``...).
    compat: dict[str, Any] = Field(default_factory=dict)
    #: Where the credential came from (``"env ANTHROPIC_API_KEY"``, ``"auth.json"``...); never the key.
    key_source: str | None = None
    #: Headers whose value came from a ``!command`` or ``$VARIABLE``: secret whatever their name.
    secret_headers: tuple[str, ...] = ()

    def _header_is_secret(self, name: str) -> bool:
        return is_sensitive_header(name) or name in self.secret_headers

    @property
    def label(self) -> str:
        """``provider/model`` as Pi writes it."""
        return f"{self.provider}/{self.model_id}"

    def secrets(self) -> list[str]:
        """Every credential string this spec carries, for redaction."""
        found: list[str] = []
        if self.api_key is not None and self.api_key.get_secret_value():
            found.append(self.api_key.get_secret_value())
        for name, value in self.headers.items():
            if self._header_is_secret(name) and value:
                found.append(value)
                # "Bearer <token>": also hide the bare token wherever it is echoed.
                parts = value.split(None, 1)
                if len(parts) == 2 and len(parts[1]) >= 8:
                    found.append(parts[1])
        return found

    @field_serializer("headers")
    def _mask_headers(self, headers: dict[str, str]) -> dict[str, str]:
        # Dumps are for display and logs: credentials stay in the live object only.
        return {k: ("***" if self._header_is_secret(k) else v) for k, v in headers.items()}

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if name == "headers" and isinstance(value, dict):
                yield name, {k: ("***" if self._header_is_secret(k) else v) for k, v in value.items()}
            elif name == "api_key" and value is not None:
                yield name, "***"
            else:
                yield name, value


__all__ = [
    "Api",
    "CostTier",
    "ModelCost",
    "ModelSpec",
    "ReasoningLevel",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "is_sensitive_header",
]
