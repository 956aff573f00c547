"""Every usage record a session holds, as flat rows: what ``pitools usage`` and the index sum.

The sources are exactly those Pi's ``AgentSession.getSessionStats`` adds up (mirrored by
:func:`pitools.core.views.stats.session_stats`), over every entry of the file (every branch):

* ``assistant``: an assistant message's ``usage`` (always counted by Pi);
* ``toolResult``: a tool result message with a truthy ``usage`` (a tool that called a model);
* ``compaction`` and ``branch_summary``: entries with a truthy ``usage`` (the summary's model call);
* ``usage``: a ``usage`` entry (extension-recorded model calls).

So the records of one session sum to the token and cost totals ``pitools inspect`` shows. Numbers
follow the tolerant rule of ``session_stats(strict=False)``: a usage that is not an object adds
nothing, a field that is not a number counts as 0 (Pi would throw or concatenate strings there).
``totalTokens`` is input + output + cacheRead + cacheWrite, as Pi's stats total it (the record's
own ``totalTokens`` field is not trusted).

Provider and model follow Pi's ``getUsageCostBreakdown``: an assistant message's ``provider`` and
``responseModel ?? model``; a ``usage`` entry's ``provider`` and ``model``; everything else is
Pi's ``Tools/summaries`` bucket (provider ``Tools``, model ``summaries``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pitools.core.js import ops as jsops
from pitools.core.js.date import js_date_ms
from pitools.core.js.json.record import record_json
from pitools.core.js.types import Entry, JsonObject, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.views.isotime import iso_utc

SOURCE_ASSISTANT = "assistant"
SOURCE_TOOL_RESULT = "toolResult"
SOURCE_COMPACTION = "compaction"
SOURCE_BRANCH_SUMMARY = "branch_summary"
SOURCE_USAGE = "usage"
SOURCES = (SOURCE_ASSISTANT, SOURCE_TOOL_RESULT, SOURCE_COMPACTION, SOURCE_BRANCH_SUMMARY, SOURCE_USAGE)

#: Pi's ``getUsageCostBreakdown`` key for tool results and summaries: ``Tools/summaries``.
SUMMARY_PROVIDER = "Tools"
SUMMARY_MODEL = "summaries"

_FIELDS = ("input", "output", "cacheRead", "cacheWrite")


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One model call's tokens and cost, where it was recorded."""

    session_id: str | None
    entry_id: str | None
    #: ISO 8601 UTC with milliseconds (``Date#toISOString``), or None when the entry has no valid time.
    timestamp: str | None
    provider: str
    model: str
    input: int | float
    output: int | float
    cache_read: int | float
    cache_write: int | float
    cost: int | float
    source: str

    @property
    def total_tokens(self) -> int | float:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_json(self) -> JsonObject:
        return record_json(self, (*_IDENTITY, *_TOTALS, "source"))


#: The fields of a usage record that say where it is from, and the token totals both kinds print.
_IDENTITY = ("session_id", "entry_id", "timestamp", "provider", "model")
_TOTALS = ("input", "output", "cache_read", "cache_write", "total_tokens", "cost")


def _number(value: Any) -> int | float:
    t = type(value)
    if t is int or t is float:
        return value  # type: ignore[no-any-return,unused-ignore]
    return 0


def entry_time(entry: dict[str, Any]) -> str | None:
    """The entry's ``timestamp`` as ISO UTC, else its message's numeric ``timestamp``, else None."""
    ts = entry.get("timestamp", UNDEFINED)
    if type(ts) is str:
        if len(ts) == 24 and ts[-1] == "Z" and ts[10] == "T":
            return ts  # already Date#toISOString's shape: the common case, no parsing
        try:
            iso = iso_utc(js_date_ms(ts))
        except TypeError:
            iso = None
        if iso is not None:
            return iso
    message = entry.get("message")
    if type(message) is dict:
        return iso_utc(message.get("timestamp"))
    return None


#: One record's fields without its place (what the archive index stores per record): provider,
#: model, input, output, cacheRead, cacheWrite, cost, source.
UsageFields = tuple[str, str, "int | float", "int | float", "int | float", "int | float", "int | float", str]


def _fields(usage: dict[str, Any], provider: JsValue, model: Any, source: str) -> UsageFields:
    cost = usage.get("cost")
    return (
        jsops.to_string(provider),
        jsops.to_string(model),
        _number(usage.get("input")),
        _number(usage.get("output")),
        _number(usage.get("cacheRead")),
        _number(usage.get("cacheWrite")),
        _number(cost.get("total")) if type(cost) is dict else 0,
        source,
    )


def entry_usage_fields(entry: Entry) -> UsageFields | None:
    """:func:`entry_usage` without the session, entry id and timestamp (a cold index build
    meets every entry of the archive: it reads the time once, in its own way)."""
    if type(entry) is not dict:
        return None
    etype = entry.get("type")
    if etype == "message":
        message = entry.get("message")
        if type(message) is not dict:
            return None
        role = message.get("role")
        usage = message.get("usage")
        if type(usage) is not dict:
            return None  # Pi adds it (and throws on undefined); non-objects add nothing here
        if role == "assistant":
            model = message.get("responseModel", UNDEFINED)
            if jsops.nullish(model):
                model = message.get("model", UNDEFINED)
            return _fields(usage, message.get("provider", UNDEFINED), model, SOURCE_ASSISTANT)
        if role == "toolResult":
            return _fields(usage, SUMMARY_PROVIDER, SUMMARY_MODEL, SOURCE_TOOL_RESULT)
        return None
    if etype == "usage":
        usage = entry.get("usage")
        if type(usage) is not dict:
            return None
        return _fields(usage, entry.get("provider", UNDEFINED), entry.get("model", UNDEFINED), SOURCE_USAGE)
    if etype == "compaction" or etype == "branch_summary":
        usage = entry.get("usage")
        if type(usage) is not dict:
            return None
        return _fields(usage, SUMMARY_PROVIDER, SUMMARY_MODEL, etype)
    return None


def entry_usage(entry: Entry, session_id: str | None = None) -> UsageRecord | None:
    """The usage record ``entry`` carries in Pi's ``getSessionStats``, or None."""
    fields = entry_usage_fields(entry)
    if fields is None:
        return None
    eid = entry.get("id")
    return UsageRecord(session_id, eid if type(eid) is str else None, entry_time(entry), *fields)


def iter_usage_records(entries: Iterable[Entry], session_id: str | None = None) -> Iterator[UsageRecord]:
    """Every usage record of ``entries`` (Pi's ``getEntries()``, file order), as ``getSessionStats`` counts."""
    for entry in entries:
        record = entry_usage(entry, session_id)
        if record is not None:
            yield record


def usage_records(entries: Iterable[Entry], session_id: str | None = None) -> list[UsageRecord]:
    """:func:`iter_usage_records` as a list."""
    return list(iter_usage_records(entries, session_id))


@dataclass(slots=True)
class UsageSum:
    """Running totals over records (tokens, cost and the number of records)."""

    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0
    cost: int | float = 0
    records: int = 0

    def add(self, record: UsageRecord) -> None:
        self._add(record, 1)

    def merge(self, other: UsageSum) -> None:
        """Add another running total (its record count too)."""
        self._add(other, other.records)

    def _add(self, part: UsageRecord | UsageSum, records: int) -> None:
        self.input += part.input
        self.output += part.output
        self.cache_read += part.cache_read
        self.cache_write += part.cache_write
        self.cost += part.cost
        self.records += records

    @property
    def total_tokens(self) -> int | float:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_json(self) -> JsonObject:
        return record_json(self, (*_TOTALS, "records"))


def sum_records(records: Iterable[UsageRecord]) -> UsageSum:
    total = UsageSum()
    for record in records:
        total.add(record)
    return total
