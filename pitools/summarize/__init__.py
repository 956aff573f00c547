"""The model side of ``compact --apply``: the only code in pitools that talks to a model.

Typical use::

    spec = resolve_model(args.model, session_model=("anthropic", "claude-sonnet-4-5"))
    summarizer = build_summarizer(spec, on_retry=warn)
    result = summarizer.summarize(SummaryRequest(system_prompt=..., prompt=..., kind="history"))

``resolve_model`` reads Pi's own settings/models/auth files; ``build_summarizer`` returns
the offline extractive summarizer for ``builtin`` and an HTTP client otherwise. Failures
are ``pitools.errors.ModelError`` subclasses (see ``pitools.summarize.errors``).
"""

from __future__ import annotations

from collections.abc import Callable

from pitools.summarize.errors import (
    MissingApiKeyError,
    ModelAuthError,
    ModelLengthError,
    ModelQuotaError,
    ModelRequestError,
    ModelResponseError,
    ModelToolCallError,
    ModelTransientError,
    UnsupportedProviderError,
)
from pitools.summarize.resolve import builtin_spec, resolve_model
from pitools.summarize.types import (
    ModelCost,
    ModelSpec,
    Summarizer,
    SummaryRequest,
    SummaryResult,
)
from pitools.summarize.usage import combine_usage, zero_usage


def build_summarizer(
    spec: ModelSpec,
    *,
    on_retry: Callable[[str], None] | None = None,
    timeout: float = 120,
    max_retries: int = 3,
) -> Summarizer:
    """A summarizer for ``spec``: extractive for ``builtin``, HTTP otherwise.

    ``on_retry`` receives a one-line reason before each retry of a transient failure;
    ``timeout`` (seconds) applies to connecting and to each read; ``max_retries`` is the
    number of retries after the first attempt (Pi's default is 3).
    """
    if spec.api == "builtin":
        from pitools.summarize.builtin import BuiltinSummarizer

        return BuiltinSummarizer()
    from pitools.summarize.client import HttpSummarizer

    return HttpSummarizer(spec, on_retry=on_retry, timeout=timeout, max_retries=max_retries)


__all__ = [
    "MissingApiKeyError",
    "ModelAuthError",
    "ModelCost",
    "ModelLengthError",
    "ModelQuotaError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelSpec",
    "ModelToolCallError",
    "ModelTransientError",
    "Summarizer",
    "SummaryRequest",
    "SummaryResult",
    "UnsupportedProviderError",
    "build_summarizer",
    "builtin_spec",
    "combine_usage",
    "resolve_model",
    "zero_usage",
]
