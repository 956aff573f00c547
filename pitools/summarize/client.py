"""The HTTP summarizer: one synchronous request per summary, with retries for transient failures.

The body is pi-ai's, from the one request builder (:mod:`pitools.summarize.body`); this module
adds the transport: the URL and headers of each API, and one change to the body: pi-ai streams
the reply (``"stream": true``, ``stream_options``), pitools asks for a single JSON reply
(``"stream": false``, no ``stream_options``). Anthropic's ``betas`` field travels as the
``anthropic-beta`` header, as Anthropic's SDK sends it.

Transient failures (timeouts, refused or dropped connections, HTTP 408/429/5xx including
Anthropic's 529) are retried with exponential backoff like Pi's ``retryAssistantCall``
(base 2 s, doubling, at most 60 s; ``Retry-After`` honoured up to the same cap). The base
delay can be lowered with ``PITOOLS_RETRY_BASE_DELAY`` (seconds) to keep tests fast.
Authentication (401/403), quota and billing errors (402, or a quota code), other 4xx, length
stops and tool calls fail at once.
"""

from __future__ import annotations

import email.utils
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.value import UNDEFINED
from pitools.core.request.sanitize_unicode import join_surrogate_pairs
from pitools.summarize import anthropic_wire, openai_wire, responses_wire
from pitools.summarize.body import build_body
from pitools.summarize.errors import (
    ModelAuthError,
    ModelQuotaError,
    ModelRequestError,
    ModelResponseError,
    ModelTransientError,
)
from pitools.summarize.redact import excerpt
from pitools.summarize.types import ModelSpec, SummaryRequest, SummaryResult

RETRY_BASE_DELAY_ENV = "PITOOLS_RETRY_BASE_DELAY"
DEFAULT_BASE_DELAY = 2.0
DEFAULT_MAX_DELAY = 60.0
ANTHROPIC_VERSION = "2023-06-01"
#: The APIs the HTTP summarizer calls natively.
HTTP_APIS = ("openai-completions", "openai-responses", "anthropic-messages")

# Quota and billing exhaustion: not helped by waiting (a subset of pi-ai's
# NON_RETRYABLE_PROVIDER_LIMIT_ERROR_PATTERN).
_QUOTA = re.compile(
    r"insufficient_quota|quota.?exceeded|exceeded your current quota|out of budget|billing"
    r"|credit balance|payment required|GoUsageLimitError|FreeUsageLimitError|available balance"
    r'|"code"\s*:\s*"?1308(?![0-9])',
    re.IGNORECASE,
)
# Wording of transient failures some gateways report inside a 200 reply or a 4xx.
_TRANSIENT_TEXT = re.compile(
    r"overloaded|server_busy|rate.?limit|too many requests|temporarily unavailable"
    r"|provider.?returned.?(?:an.?)?error|upstream.?(?:connect|request.?failed)|timed? ?out",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Retry:
    """A failed attempt that may be retried."""

    reason: str
    status: int | None = None
    retry_after: float | None = None


def base_delay_from_env() -> float:
    """``PITOOLS_RETRY_BASE_DELAY`` in seconds, or Pi's 2 s."""
    raw = os.environ.get(RETRY_BASE_DELAY_ENV)
    if raw:
        try:
            value = float(raw)
        except ValueError:
            return DEFAULT_BASE_DELAY
        if value >= 0:
            return value
    return DEFAULT_BASE_DELAY


def retry_after_seconds(headers: httpx.Headers, now: datetime | None = None) -> float | None:
    """The server's requested delay from ``retry-after-ms`` or ``Retry-After`` (seconds or a date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _error_detail(body: str) -> tuple[str, object]:
    """(message, code) from a provider's JSON error body, or the raw text."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body, None
    if not isinstance(data, dict):
        return body, None
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message") or error.get("type") or body
        return str(message), error.get("code", error.get("type"))
    if isinstance(error, str):
        return error, data.get("code")
    for key in ("message", "detail"):
        if isinstance(data.get(key), str):
            return str(data[key]), data.get("code")
    return body, None


def http_request(spec: ModelSpec, body: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
    """(URL, headers, encoded body) that send pi-ai's ``body`` to ``spec``'s endpoint without streaming."""
    sent = dict(body)
    if "stream" in sent:
        sent["stream"] = False
    sent.pop("stream_options", None)
    base = spec.base_url.rstrip("/")
    key = spec.api_key.get_secret_value() if spec.api_key is not None else None
    headers = {"content-type": "application/json", "accept": "application/json"}
    if spec.api == "anthropic-messages":
        betas = sent.pop("betas", UNDEFINED)
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if isinstance(betas, list) and betas:
            headers["anthropic-beta"] = ",".join(str(b) for b in betas)
        if key is not None:
            headers["x-api-key"] = key
        # The SDK Pi uses appends /v1/messages to the configured base URL.
        url = f"{base}/v1/messages"
    else:
        if key is not None:
            headers["authorization"] = f"Bearer {key}"
        url = f"{base}/responses" if spec.api == "openai-responses" else f"{base}/chat/completions"
    headers.update(spec.headers)
    return url, headers, join_surrogate_pairs(js_stringify(sent) or "{}").encode("utf-8")


class HttpSummarizer:
    """Calls an OpenAI Chat Completions, OpenAI Responses or Anthropic Messages endpoint to write a summary."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        on_retry: Callable[[str], None] | None = None,
        timeout: float = 120,
        max_retries: int = 3,
        base_delay: float | None = None,
        max_delay: float = DEFAULT_MAX_DELAY,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if spec.api not in HTTP_APIS:
            raise ValueError(f"HttpSummarizer cannot call api {spec.api!r}")
        self.spec = spec
        self.on_retry = on_retry
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.base_delay = base_delay_from_env() if base_delay is None else base_delay
        self.max_delay = max_delay
        self._sleep = sleep
        self._secrets = spec.secrets()

    def __repr__(self) -> str:
        return f"HttpSummarizer({self.spec.label}, api={self.spec.api}, base_url={self.spec.base_url})"

    def _excerpt(self, text: str) -> str:
        return excerpt(text, self._secrets)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.max_delay)
        backoff: float = self.base_delay * 2.0 ** max(0, attempt - 1)
        return min(backoff, self.max_delay)

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Send the request, retrying transient failures; see the module docstring."""
        spec = self.spec
        wire = {"anthropic-messages": anthropic_wire, "openai-responses": responses_wire}.get(spec.api, openai_wire)
        url, headers, payload = http_request(spec, build_body(spec, request))
        attempts = 0
        with httpx.Client(timeout=httpx.Timeout(self.timeout), follow_redirects=False) as client:
            while True:
                attempts += 1
                outcome = self._attempt(client, url, headers, payload)
                if not isinstance(outcome, _Retry):
                    text, usage, stop = wire.parse_response(spec, outcome)
                    if not text.strip():
                        raise ModelResponseError(f"{spec.label}: the reply contains no summary text")
                    return SummaryResult(
                        text=text,
                        usage=usage,
                        stop_reason=stop,
                        provider=spec.provider,
                        model=spec.model_id,
                        attempts=attempts,
                    )
                if attempts > self.max_retries:
                    raise ModelTransientError(
                        f"{spec.label}: {outcome.reason} (gave up after {attempts} attempts)",
                        attempts=attempts,
                        status=outcome.status,
                    )
                wait = self.delay(attempts, outcome.retry_after)
                if self.on_retry is not None:
                    self.on_retry(
                        f"{spec.label}: {outcome.reason}; retrying in {wait:.1f}s "
                        f"(attempt {attempts + 1} of {self.max_retries + 1})"
                    )
                self._sleep(wait)

    def _attempt(
        self, client: httpx.Client, url: str, headers: dict[str, str], payload: bytes
    ) -> dict[str, Any] | _Retry:
        """One HTTP exchange: the decoded reply, a retryable failure, or an exception."""
        label = self.spec.label
        try:
            response = client.post(url, content=payload, headers=headers)
        except httpx.TimeoutException:
            return _Retry(f"no reply within {self.timeout:g}s (timeout)")
        except httpx.RemoteProtocolError:
            return _Retry("the server closed the connection without a complete reply")
        except httpx.ConnectError as exc:
            return _Retry(self._excerpt(f"could not connect to {self.spec.base_url} ({exc})"))
        except httpx.NetworkError as exc:
            return _Retry(f"the connection failed ({self._excerpt(str(exc)) or type(exc).__name__})")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ModelRequestError(self._excerpt(f"{label}: request to {url} failed: {exc}")) from None
        status = response.status_code
        if 200 <= status < 300:
            try:
                data = orjson.loads(response.content)
            except orjson.JSONDecodeError:
                raise ModelResponseError(
                    f"{label}: HTTP {status} reply is not JSON: {self._excerpt(response.text)}"
                ) from None
            if not isinstance(data, dict):
                raise ModelResponseError(f"{label}: HTTP {status} reply is not a JSON object")
            if data.get("error") and not data.get("choices") and not data.get("content") and not data.get("output"):
                return self._embedded_error(status, response.text)
            return data
        return self._http_error(response)

    def _embedded_error(self, status: int, body: str) -> _Retry:
        """A 2xx reply that carries an error object (OpenRouter relays upstream failures so)."""
        message, code = _error_detail(body)
        text = self._excerpt(message)
        upstream = code if isinstance(code, int) else None
        if _QUOTA.search(body):
            raise ModelQuotaError(f"{self.spec.label}: quota or billing error: {text}", status=upstream)
        if upstream in (401, 403):
            raise ModelAuthError(f"{self.spec.label}: authentication failed: {text}", status=upstream)
        retryable_code = upstream is not None and (upstream in (408, 429) or upstream >= 500)
        if retryable_code or _TRANSIENT_TEXT.search(message):
            code = f" {upstream}" if upstream is not None else ""
            return _Retry(f"provider error{code}: {text}", status=upstream)
        raise ModelRequestError(f"{self.spec.label}: HTTP {status} with an error: {text}", status=upstream)

    def _http_error(self, response: httpx.Response) -> _Retry:
        status = response.status_code
        body = response.text
        message, _code = _error_detail(body)
        text = self._excerpt(message) or response.reason_phrase
        where = f"{self.spec.label}: HTTP {status}"
        if status in (401, 403):
            raise ModelAuthError(
                f"{where}: {text} (check the API key for provider {self.spec.provider!r}"
                f"{', from ' + self.spec.key_source if self.spec.key_source else ''})",
                status=status,
            )
        if status == 402 or _QUOTA.search(body):
            raise ModelQuotaError(f"{where}: quota or billing error: {text}", status=status)
        if status in (408, 429) or status >= 500:
            wait = retry_after_seconds(response.headers)
            return _Retry(f"HTTP {status}: {text}", status=status, retry_after=wait)
        raise ModelRequestError(f"{where}: {text}", status=status)
