"""One session branch as OpenTelemetry GenAI spans (pure data; the protobuf/JSON encoding is in render/).

Convention implemented: the OpenTelemetry GenAI semantic conventions as published in
``open-telemetry/semantic-conventions-genai`` v0.1.0 (the first standalone release of the
``gen_ai.*`` conventions after semantic-conventions v1.41.0). Spans:

- ``invoke_agent pi`` (INTERNAL): the root span of a branch, from its first to its last entry;
- ``chat {model}`` (CLIENT): one per assistant message (and per summarisation model call that
  recorded usage: compactions and branch summaries), child of the root;
- ``execute_tool {name}`` (INTERNAL): one per tool call, child of the root, from the assistant
  message that asked for it to the tool result that answered it;
- usage entries written by extensions (``"type": "usage"``) become CLIENT spans named after
  their ``kind``.

``gen_ai.usage.input_tokens`` includes cache reads and cache writes, as the convention asks
("SHOULD include all types of input tokens, including cached tokens"): Pi's ``usage.input``
counts only the uncached part, so the exporter adds them; Pi's own fields stay available as
``pi.usage.*`` attributes.

Older backends read the names the conventions used before they moved to their own repository
(``gen_ai.system`` for the provider, ``gen_ai.usage.cache_creation.input_tokens`` for cache
writes): ``legacy=True`` (``export --otel-legacy-names``) writes those instead, same values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from pitools.core.js.types import Entry, JsValue
from pitools.core.session.tree import id_text
from pitools.core.views.branch_common import entry_ms, fnum, message_ms, str_or, usage_numbers

SEMCONV_NAME = "OpenTelemetry GenAI semantic conventions"
SEMCONV_VERSION = "0.1.0"
AGENT_NAME = "pi"

AttrValue = str | int | float | bool | list[str]

#: Current attribute name -> the name the pre-move semantic conventions used for it.
LEGACY_NAMES: dict[str, str] = {
    "gen_ai.provider.name": "gen_ai.system",
    "gen_ai.usage.cache_write.input_tokens": "gen_ai.usage.cache_creation.input_tokens",
}

#: Pi provider names -> the convention's well-known ``gen_ai.provider.name`` values.
PROVIDER_NAMES: dict[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "openai-codex": "openai",
    "azure-openai-responses": "azure.ai.openai",
    "google": "gcp.gemini",
    "google-gemini-cli": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "amazon-bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "groq": "groq",
    "deepseek": "deepseek",
    "perplexity": "perplexity",
    "cohere": "cohere",
}

#: Pi stop reasons -> the convention's finish reasons (the raw value is kept as ``pi.stop_reason``).
FINISH_REASONS: dict[str, str] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_call",
    "error": "error",
    "aborted": "error",
}


@dataclass(slots=True)
class SpanData:
    """One span, independent of any wire format."""

    span_id: bytes
    parent_span_id: bytes | None
    name: str
    kind: str  # "internal" | "client"
    start_ms: int
    end_ms: int
    entry_id: str
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    error: str | None = None  # status description when the operation failed


@dataclass(slots=True)
class TraceData:
    """One trace: a session branch, root span first."""

    trace_id: bytes
    session_id: str
    leaf_id: str
    spans: list[SpanData]


def trace_id_for(session_id: str, leaf_id: str) -> bytes:
    """A stable 16-byte trace id: the same branch always exports to the same trace."""
    return hashlib.sha256(f"pitools-trace\0{session_id}\0{leaf_id}".encode("utf-8", "surrogatepass")).digest()[:16]


def span_id_for(trace_id: bytes, key: str) -> bytes:
    digest = hashlib.sha256(trace_id + key.encode("utf-8", "surrogatepass")).digest()[:8]
    return digest if digest != b"\0" * 8 else b"\0" * 7 + b"\1"


def _n(value: AttrValue) -> int | float:
    return value if type(value) in (int, float) and type(value) is not bool else 0  # type: ignore[return-value]


def provider_name(provider: JsValue) -> str:
    text = str_or(provider, "")
    return PROVIDER_NAMES.get(text, text or "_OTHER")


def _usage_attrs(usage: JsValue) -> dict[str, AttrValue]:
    nums = usage_numbers(usage)
    if nums is None:
        return {}
    return {
        "gen_ai.usage.input_tokens": nums["input"] + nums["cacheRead"] + nums["cacheWrite"],
        "gen_ai.usage.output_tokens": nums["output"],
        "gen_ai.usage.cache_read.input_tokens": nums["cacheRead"],
        "gen_ai.usage.cache_write.input_tokens": nums["cacheWrite"],
        "pi.usage.input": nums["input"],
        "pi.usage.cost": fnum(nums["cost"]),
    }


def branch_trace(
    header: Entry,
    branch: Sequence[Entry],
    *,
    copied: Collection[str] = (),
    legacy: bool = False,
) -> TraceData:
    """The spans of one branch (root → leaf entries, as ``SessionIndex.get_branch`` returns them).

    ``copied`` holds the ids of entries copied from a parent session by a fork or clone: their
    spans carry ``pi.copied_context = true`` so a backend can leave them out of totals.
    ``legacy`` renames the attributes of :data:`LEGACY_NAMES` to their old names.
    """
    session_id = str_or(header.get("id"), "")
    leaf_id = id_text(branch[-1].get("id")) if branch and type(branch[-1]) is dict else ""
    trace_id = trace_id_for(session_id, leaf_id)
    root_id = span_id_for(trace_id, "\0root")
    conv = {"gen_ai.conversation.id": session_id}
    spans: list[SpanData] = []
    # tool call id -> its span, waiting for the matching tool result further down the branch
    open_tools: dict[str, SpanData] = {}
    first_ms: int | None = None
    last_ms: int | None = None
    totals: dict[str, int | float] = {"in": 0, "out": 0, "cr": 0, "cw": 0}
    total_cost: int | float = 0.0
    first_provider: str | None = None

    for position, entry in enumerate(branch):
        if type(entry) is not dict:
            continue
        eid = id_text(entry.get("id"))
        end = entry_ms(entry)
        prev_ms = last_ms
        if end is None:
            end = last_ms if last_ms is not None else message_ms(entry.get("message"))
        if end is None:
            continue  # no usable time at all before the first timed entry
        if first_ms is None:
            first_ms = end
        last_ms = max(end, last_ms) if last_ms is not None else end
        etype = entry.get("type")
        is_copied = eid in copied
        key = f"{position}\0{eid}"
        new: list[SpanData] = []
        if etype == "message":
            message = entry.get("message")
            role = message.get("role") if type(message) is dict else None
            if role == "assistant" and type(message) is dict:
                model = str_or(message.get("model"))
                response_model = str_or(message.get("responseModel"), model)
                provider = provider_name(message.get("provider"))
                first_provider = first_provider or provider
                start = message_ms(message)
                if start is None or start > end:
                    start = prev_ms if prev_ms is not None and prev_ms <= end else end
                attrs: dict[str, AttrValue] = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": provider,
                    **conv,
                    "gen_ai.request.model": model,
                    "gen_ai.response.model": response_model,
                }
                if type(response_id := message.get("responseId")) is str:
                    attrs["gen_ai.response.id"] = response_id
                stop = message.get("stopReason")
                if type(stop) is str:
                    attrs["gen_ai.response.finish_reasons"] = [FINISH_REASONS.get(stop, stop)]
                    attrs["pi.stop_reason"] = stop
                attrs.update(_usage_attrs(message.get("usage")))
                if type(provider_field := message.get("provider")) is str:
                    attrs["pi.provider"] = provider_field
                if type(api := message.get("api")) is str:
                    attrs["pi.api"] = api
                error = None
                if stop in ("error", "aborted"):
                    error = str_or(message.get("errorMessage"), stop)
                    attrs["error.type"] = "aborted" if stop == "aborted" else "_OTHER"
                chat = SpanData(
                    span_id_for(trace_id, key),
                    root_id,
                    f"chat {model}" if model else "chat",
                    "client",
                    start,
                    end,
                    eid,
                    attrs,
                    error,
                )
                new.append(chat)
                content = message.get("content")
                for block in content if type(content) is list else ():
                    if type(block) is not dict or block.get("type") != "toolCall":
                        continue
                    call_id = str_or(block.get("id"))
                    name = str_or(block.get("name"))
                    tool = SpanData(
                        span_id_for(trace_id, f"{key}\0tool\0{call_id}"),
                        root_id,
                        f"execute_tool {name}" if name else "execute_tool",
                        "internal",
                        end,
                        end,
                        eid,
                        {
                            "gen_ai.operation.name": "execute_tool",
                            **conv,
                            "gen_ai.tool.name": name,
                            "gen_ai.tool.call.id": call_id,
                            "gen_ai.tool.type": "function",
                            "pi.tool.result_missing": True,
                        },
                    )
                    new.append(tool)
                    open_tools[call_id] = tool
            elif role == "toolResult" and type(message) is dict:
                done = open_tools.pop(str_or(message.get("toolCallId")), None)
                if done is not None:
                    done.end_ms = max(end, done.start_ms)
                    del done.attributes["pi.tool.result_missing"]
                    done.attributes["pi.tool.result_entry_id"] = eid
                    if message.get("isError") is True:
                        done.error = "the tool reported an error"
                        done.attributes["error.type"] = "tool_error"
        elif etype in ("compaction", "branch_summary") and type(entry.get("usage")) is dict:
            attrs = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "_OTHER",
                **conv,
                "pi.entry.type": etype,
            }
            attrs.update(_usage_attrs(entry["usage"]))
            start = prev_ms if prev_ms is not None and prev_ms <= end else end
            new.append(SpanData(span_id_for(trace_id, key), root_id, f"chat {etype}", "client", start, end, eid, attrs))
        elif etype == "usage":
            kind = str_or(entry.get("kind"), "usage")
            model = str_or(entry.get("model"))
            attrs = {
                "gen_ai.operation.name": kind,
                "gen_ai.provider.name": provider_name(entry.get("provider")),
                **conv,
                "gen_ai.request.model": model,
                "pi.entry.type": "usage",
            }
            attrs.update(_usage_attrs(entry.get("usage")))
            new.append(
                SpanData(span_id_for(trace_id, key), root_id, f"{kind} {model}".strip(), "client", end, end, eid, attrs)
            )
        for span in new:
            span.attributes["pi.entry.id"] = eid
            if is_copied:
                span.attributes["pi.copied_context"] = True
            if "gen_ai.usage.output_tokens" in span.attributes and not is_copied:
                a = span.attributes
                totals["in"] += _n(a["gen_ai.usage.input_tokens"])
                totals["out"] += _n(a["gen_ai.usage.output_tokens"])
                totals["cr"] += _n(a["gen_ai.usage.cache_read.input_tokens"])
                totals["cw"] += _n(a["gen_ai.usage.cache_write.input_tokens"])
                total_cost += _n(a["pi.usage.cost"])
        spans.extend(new)

    start_ms = first_ms if first_ms is not None else 0
    end_ms = last_ms if last_ms is not None else start_ms
    root_attrs: dict[str, AttrValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": first_provider or "_OTHER",
        "gen_ai.agent.name": AGENT_NAME,
        **conv,
        "gen_ai.usage.input_tokens": totals["in"],
        "gen_ai.usage.output_tokens": totals["out"],
        "gen_ai.usage.cache_read.input_tokens": totals["cr"],
        "gen_ai.usage.cache_write.input_tokens": totals["cw"],
        "pi.usage.cost": total_cost,
        "pi.leaf.id": leaf_id,
    }
    if type(cwd := header.get("cwd")) is str:
        root_attrs["pi.session.cwd"] = cwd
    if type(parent_session := header.get("parentSession")) is str:
        root_attrs["pi.session.parent"] = parent_session
    root = SpanData(root_id, None, f"invoke_agent {AGENT_NAME}", "internal", start_ms, end_ms, leaf_id, root_attrs)
    if legacy:
        for span in (root, *spans):
            span.attributes = {LEGACY_NAMES.get(k, k): v for k, v in span.attributes.items()}
    return TraceData(trace_id, session_id, leaf_id, [root, *spans])


def branch_traces(
    header: Entry,
    branches: Iterable[Sequence[Entry]],
    *,
    copied: Collection[str] = (),
    legacy: bool = False,
) -> Iterator[TraceData]:
    """:func:`branch_trace` of each branch, made only when asked for: with ``branches`` itself
    lazy, one branch's spans exist at a time (``export --all`` writes each trace before the next)."""
    for branch in branches:
        yield branch_trace(header, branch, copied=copied, legacy=legacy)
