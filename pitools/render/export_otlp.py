"""Traces built by :mod:`pitools.core.views.otel` as OTLP messages (protobuf) and OTLP/JSON.

The messages come from the ``opentelemetry-proto`` package (the optional extra ``pi-session-tools[otel]``);
the JSON form is protobuf's JSON mapping with the two changes OTLP/JSON makes to it: trace and
span ids are hex strings (not base64) and enums are integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pitools import __version__
from pitools.core.js.types import JsValue
from pitools.core.views.branch_common import fnum
from pitools.core.views.otel import SEMCONV_VERSION, AttrValue, TraceData
from pitools.errors import MissingExtraError

if TYPE_CHECKING:  # pragma: no cover
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

MISSING = "OTLP export needs the OpenTelemetry protocol package: pip install 'pi-session-tools[otel]'"


def _proto() -> Any:
    """The OTLP message modules; :class:`MissingExtraError` (one line, exit 1) when the optional
    extra, or the protobuf runtime under it, is not installed."""
    try:
        from google.protobuf import json_format  # noqa: F401 - the JSON mapping, checked with the rest
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
        from opentelemetry.proto.common.v1 import common_pb2
        from opentelemetry.proto.resource.v1 import resource_pb2
        from opentelemetry.proto.trace.v1 import trace_pb2
    except ImportError as exc:  # pragma: no cover - exercised by hiding the module in a test
        raise MissingExtraError(MISSING) from exc
    return trace_service_pb2, common_pb2, resource_pb2, trace_pb2


def require_otlp() -> None:
    """Fail now, before anything is read or written, when the optional extra is missing."""
    _proto()


def _json_format() -> Any:
    _proto()
    from google.protobuf import json_format

    return json_format


def _any_value(common_pb2: Any, value: AttrValue) -> Any:
    if type(value) is bool:
        return common_pb2.AnyValue(bool_value=value)
    if type(value) is int:
        if -(2**63) <= value < 2**63:
            return common_pb2.AnyValue(int_value=value)
        return common_pb2.AnyValue(double_value=fnum(value))
    if type(value) is float:
        return common_pb2.AnyValue(double_value=value)
    if type(value) is list:
        return common_pb2.AnyValue(
            array_value=common_pb2.ArrayValue(values=[common_pb2.AnyValue(string_value=str(v)) for v in value])
        )
    # Lone surrogates cannot be UTF-8 encoded; protobuf strings must be valid UTF-8.
    text = str(value).encode("utf-8", "replace").decode("utf-8")
    return common_pb2.AnyValue(string_value=text)


def _attrs(common_pb2: Any, attributes: dict[str, AttrValue]) -> list[Any]:
    return [common_pb2.KeyValue(key=k, value=_any_value(common_pb2, v)) for k, v in attributes.items()]


def _span(trace_pb2: Any, common_pb2: Any, trace: TraceData, s: Any) -> Any:
    kinds = {"internal": trace_pb2.Span.SPAN_KIND_INTERNAL, "client": trace_pb2.Span.SPAN_KIND_CLIENT}
    status = (
        trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR, message=s.error)
        if s.error is not None
        else trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_UNSET)
    )
    return trace_pb2.Span(
        trace_id=trace.trace_id,
        span_id=s.span_id,
        parent_span_id=s.parent_span_id or b"",
        name=s.name,
        kind=kinds[s.kind],
        start_time_unix_nano=s.start_ms * 1_000_000,
        end_time_unix_nano=s.end_ms * 1_000_000,
        attributes=_attrs(common_pb2, s.attributes),
        status=status,
    )


def otlp_request(traces: Sequence[TraceData]) -> ExportTraceServiceRequest:
    """One ``ExportTraceServiceRequest`` holding every trace (one resource, one scope)."""
    trace_service_pb2, common_pb2, resource_pb2, trace_pb2 = _proto()
    spans = [_span(trace_pb2, common_pb2, trace, s) for trace in traces for s in trace.spans]
    scope = common_pb2.InstrumentationScope(
        name="pitools",
        version=__version__,
        attributes=_attrs(
            common_pb2,
            {"pitools.semconv.gen_ai.version": SEMCONV_VERSION, "pitools.source": "Pi 1.6.0 session files"},
        ),
    )
    resource = resource_pb2.Resource(
        attributes=_attrs(common_pb2, {"service.name": "pi-coding-agent", "gen_ai.agent.name": "pi"})
    )
    request: ExportTraceServiceRequest = trace_service_pb2.ExportTraceServiceRequest(
        resource_spans=[
            trace_pb2.ResourceSpans(resource=resource, scope_spans=[trace_pb2.ScopeSpans(scope=scope, spans=spans)])
        ]
    )
    return request


def otlp_json_chunks(traces: Iterable[TraceData]) -> Iterator[bytes]:
    """``to_json_bytes(otlp_json(otlp_request(traces))) + b"\\n"``, made one span at a time.

    The request's envelope (resource and scope) is converted once without spans; each span is
    converted and serialized on its own and written between. Protobuf's JSON mapping and
    ``JSON.stringify`` both work member by member, so the bytes are the same as the whole
    request's, while only one span's protobuf and dict forms exist at a time. ``traces`` may be
    lazy (:func:`pitools.core.views.otel.branch_traces`): each trace is asked for only once the
    previous one is written, and is not kept afterwards.
    """
    from pitools.core.js.json.encode import to_json_bytes

    json_format = _json_format()
    pending = iter(traces)
    # Traces are taken until one has a span (every built trace has its root span); if none has,
    # the request has no "spans" member at all: the whole way, as otlp_json writes it.
    skipped: list[TraceData] = []
    current: TraceData | None = None
    for trace in pending:
        if trace.spans:
            current = trace
            break
        skipped.append(trace)
    if current is None:
        yield to_json_bytes(otlp_json(otlp_request(skipped))) + b"\n"
        return
    _, common_pb2, _, trace_pb2 = _proto()
    envelope = otlp_json(otlp_request([]))
    scope_spans = envelope["resourceSpans"][0]["scopeSpans"][0]
    # ScopeSpans' fields in JSON order: scope, spans, schemaUrl (empty, so absent).
    envelope["resourceSpans"][0]["scopeSpans"][0] = {**scope_spans, "spans": []}
    head, tail = to_json_bytes(envelope).split(b'"spans":[]')  # unique: quotes in strings are escaped
    yield head + b'"spans":['
    first = True
    while current is not None:
        for s in current.spans:
            span = json_format.MessageToDict(_span(trace_pb2, common_pb2, current, s), use_integers_for_enums=True)
            _hex_ids(span)
            yield to_json_bytes(span) if first else b"," + to_json_bytes(span)
            first = False
        current = None  # let a lazily built trace go before the next is made
        current = next(pending, None)
    yield b"]" + tail + b"\n"


def _hex_ids(value: JsValue) -> None:
    import base64

    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                value[key] = base64.b64decode(item).hex()
            else:
                _hex_ids(item)
    elif isinstance(value, list):
        for item in value:
            _hex_ids(item)


def otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP/JSON for a request: protobuf's JSON mapping, hex ids, integer enums."""
    json_format = _json_format()
    data: dict[str, Any] = json_format.MessageToDict(request, use_integers_for_enums=True)
    _hex_ids(data)
    return data
