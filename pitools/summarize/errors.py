"""Failure kinds of the summarizer.

Every model failure is a :class:`pitools.errors.ModelError`; the subclasses let the CLI
pick a hint (set a key, raise the output cap, retry later) without parsing messages.
Configuration problems found before any request is sent are :class:`ConfigError` subclasses.
Messages never contain API keys: they are built from redacted provider text only.
"""

from __future__ import annotations

from pitools.errors import ConfigError, ModelError


class MissingApiKeyError(ConfigError):
    """The chosen provider needs an API key and none of Pi's sources provides one."""


class UnsupportedProviderError(ConfigError):
    """The provider or its API (OAuth login, Bedrock, Vertex...) is not one pitools can call."""


class ModelRequestError(ModelError):
    """The provider answered with an error pitools will not retry (HTTP 400, 404, refusal...)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ModelAuthError(ModelRequestError):
    """The provider rejected the credentials (HTTP 401/403)."""


class ModelQuotaError(ModelRequestError):
    """Billing or quota is exhausted (HTTP 402, or 429 with a quota code); retrying will not help."""


class ModelLengthError(ModelError):
    """Generation hit the output cap, so the summary is incomplete and must not be saved."""


class ModelToolCallError(ModelError):
    """The model tried to call a tool instead of writing the summary."""


class ModelResponseError(ModelError):
    """The provider's reply could not be used (not JSON, no text, unknown stop reason)."""


class ModelTransientError(ModelError):
    """A transient failure (timeout, dropped connection, 429, 5xx) persisted through every retry."""

    def __init__(self, message: str, *, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status


__all__ = [
    "ConfigError",
    "MissingApiKeyError",
    "ModelAuthError",
    "ModelError",
    "ModelLengthError",
    "ModelQuotaError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelToolCallError",
    "ModelTransientError",
    "UnsupportedProviderError",
]
