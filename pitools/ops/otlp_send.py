"""Send an OTLP trace export to a collector over OTLP/HTTP (binary protobuf)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pitools.errors import ExportError


@dataclass(slots=True)
class SendResult:
    url: str
    status: int
    rejected_spans: int
    message: str


def _printable(text: str, limit: int = 200) -> str:
    """A collector's words, safe for a terminal (no control or escape characters)."""
    return "".join(c if c.isprintable() else " " for c in text[:limit])


def traces_url(endpoint: str) -> str:
    """The URL to POST to: a bare collector address gets OTLP/HTTP's ``/v1/traces`` path."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ExportError(f"--endpoint {endpoint!r} is not an http(s) URL")
    if parts.path in ("", "/"):
        parts = parts._replace(path="/v1/traces")
    return urlunsplit(parts)


def send(request: Any, endpoint: str, *, timeout: float = 30.0, headers: dict[str, str] | None = None) -> SendResult:
    """POST ``request`` (an ``ExportTraceServiceRequest``) and read the collector's answer."""
    import httpx

    from pitools.render.export_otlp import _proto

    trace_service_pb2 = _proto()[0]
    url = traces_url(endpoint)
    body = request.SerializeToString()
    try:
        response = httpx.post(
            url,
            content=body,
            headers={"Content-Type": "application/x-protobuf", **(headers or {})},
            timeout=timeout,
        )
    except httpx.HTTPError as exc:
        raise ExportError(f"could not send to {url}: {exc}") from exc
    if not 200 <= response.status_code < 300:
        snippet = _printable(response.text)
        raise ExportError(f"{url} answered HTTP {response.status_code}: {snippet}")
    rejected, message = 0, ""
    if response.content:
        answer = trace_service_pb2.ExportTraceServiceResponse()
        try:
            answer.ParseFromString(response.content)
        except Exception:  # a collector answering with JSON or nothing useful: accepted all the same
            answer = None
        if answer is not None and answer.HasField("partial_success"):
            rejected = answer.partial_success.rejected_spans
            message = _printable(answer.partial_success.error_message)
    return SendResult(url, response.status_code, rejected, message)
