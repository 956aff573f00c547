"""Send an OTLP trace export to a collector over OTLP/HTTP (binary protobuf)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from pitools.errors import ExportError

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@dataclass(slots=True)
class SendResult:
    #: Where the traces went, without credentials (:func:`display_url`).
    url: str
    status: int
    rejected_spans: int
    message: str


def _printable(text: str, limit: int = 200) -> str:
    """A collector's words, safe for a terminal (no control or escape characters)."""
    return "".join(c if c.isprintable() else " " for c in text[:limit])


def traces_url(endpoint: str) -> str:
    """The URL to POST to: a bare collector address gets OTLP/HTTP's ``/v1/traces`` path.

    Raises ``ValueError`` (with the address shown without its credentials) for anything that is
    not an http(s) URL with a host: the CLI turns it into a usage error.
    """
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number or out of range
    except ValueError:
        raise ValueError(f"{display_url(endpoint)!r} is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"{display_url(endpoint)!r} is not an http(s) URL")
    if parts.path in ("", "/"):
        parts = parts._replace(path="/v1/traces")
    return urlunsplit(parts)


def display_url(url: str) -> str:
    """``url`` safe to print: no ``user:password@``, no query (tokens travel there too), no fragment,
    and no control characters. Works on text that does not parse as a URL as well."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    # The authority ends at the first '/', '?' or '#'; credentials end at its last '@'.
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = "***@" + authority.rsplit("@", 1)[1]
    tail = tail.split("#", 1)[0]
    if "?" in tail:
        tail = tail.split("?", 1)[0] + "?…"
    shown = (scheme + "://" if sep else "") + authority + tail
    return _printable(shown, 300)


def send(
    request: ExportTraceServiceRequest, endpoint: str, *, timeout: float = 30.0, headers: dict[str, str] | None = None
) -> SendResult:
    """POST ``request`` (an ``ExportTraceServiceRequest``) and read the collector's answer."""
    import httpx

    from pitools.render.export_otlp import _proto

    trace_service_pb2 = _proto()[0]
    try:
        url = traces_url(endpoint)
    except ValueError as exc:
        raise ExportError(f"--endpoint {exc}") from None
    shown = display_url(url)
    body = request.SerializeToString()
    try:
        response = httpx.post(
            url,
            content=body,
            headers={"Content-Type": "application/x-protobuf", **(headers or {})},
            timeout=timeout,
        )
    except httpx.HTTPError as exc:
        # httpx's words may quote the URL (with its credentials): only the error's kind and a
        # cleaned first line are shown, never the exception chained with the request in it.
        detail = _printable(str(exc).replace(url, shown).replace(endpoint, shown))
        for secret in _credentials(url):
            detail = detail.replace(secret, "***")
        raise ExportError(f"could not send to {shown}: {detail or type(exc).__name__}") from None
    if not 200 <= response.status_code < 300:
        snippet = _printable(response.text)
        raise ExportError(f"{shown} answered HTTP {response.status_code}: {snippet}")
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
    return SendResult(shown, response.status_code, rejected, message)


def _credentials(url: str) -> list[str]:
    """The user name, password and query of ``url`` (each to be masked wherever it shows up)."""
    parts = urlsplit(url)
    found = [p for p in (parts.password, parts.username, parts.query) if p and len(p) >= 3]
    return sorted(found, key=len, reverse=True)
