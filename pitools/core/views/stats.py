"""Session-wide token and cost totals, as Pi's ``AgentSession.getSessionStats`` and
``getUsageCostBreakdown`` (``usage-totals.js``) compute them over every entry of every branch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js import ops as jsops
from pitools.core.js.ops import prop, truthy
from pitools.core.js.types import Entry, JsonObject, JsValue
from pitools.core.js.value import UNDEFINED


@dataclass(slots=True)
class UsageTotals:
    input: Any = 0
    output: Any = 0
    cache_read: Any = 0
    cache_write: Any = 0
    cost: Any = 0

    def add(self, usage: JsValue, strict: bool = True) -> None:
        """Pi's ``addUsageToTotals`` (throws like Pi on a missing usage or cost unless not strict)."""
        if not strict:
            if type(usage) is not dict:
                return
            cost = usage.get("cost")
            usage = {
                k: (usage.get(k) if type(usage.get(k)) in (int, float) else 0)
                for k in ("input", "output", "cacheRead", "cacheWrite")
            } | {"cost": {"total": cost.get("total", 0) if type(cost) is dict else 0}}
        self.input = jsops.add(self.input, prop(usage, "input"))
        self.output = jsops.add(self.output, prop(usage, "output"))
        self.cache_read = jsops.add(self.cache_read, prop(usage, "cacheRead"))
        self.cache_write = jsops.add(self.cache_write, prop(usage, "cacheWrite"))
        self.cost = jsops.add(self.cost, prop(prop(usage, "cost"), "total"))

    @property
    def tokens(self) -> Any:
        return jsops.add(jsops.add(jsops.add(self.input, self.output), self.cache_read), self.cache_write)


@dataclass(slots=True)
class SessionStats:
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    total_messages: int = 0
    totals: UsageTotals = field(default_factory=UsageTotals)

    def to_json(self) -> JsonObject:
        t = self.totals
        return {
            "userMessages": self.user_messages,
            "assistantMessages": self.assistant_messages,
            "toolCalls": self.tool_calls,
            "toolResults": self.tool_results,
            "totalMessages": self.total_messages,
            "tokens": {
                "input": t.input,
                "output": t.output,
                "cacheRead": t.cache_read,
                "cacheWrite": t.cache_write,
                "total": t.tokens,
            },
            "cost": t.cost,
        }


def session_stats(entries: Iterable[Entry], *, strict: bool = True) -> SessionStats:
    """Pi's ``getSessionStats`` message counts and usage totals.

    ``strict=False`` skips usage records Pi would choke on (missing usage or cost) instead of
    raising, for summaries of damaged or hand-written files.
    """
    stats = SessionStats()
    totals = stats.totals
    for entry in entries:
        if type(entry) is not dict:
            continue
        etype = entry.get("type")
        if etype == "usage":
            totals.add(entry.get("usage"), strict)
        elif etype in ("branch_summary", "compaction") and truthy(entry.get("usage")):
            totals.add(entry["usage"], strict)
        if etype != "message":
            continue
        stats.total_messages += 1
        message = entry.get("message", UNDEFINED)
        if not strict and jsops.nullish(message):
            continue  # Pi throws reading its role; the tolerant totals count the entry and go on
        role = prop(message, "role")
        if role == "user":
            stats.user_messages += 1
        elif role == "toolResult":
            stats.tool_results += 1
            if truthy(usage := prop(message, "usage")):
                totals.add(usage, strict)
        elif role == "assistant":
            stats.assistant_messages += 1
            content = prop(message, "content")
            if type(content) is list:
                stats.tool_calls += sum(1 for c in content if prop(c, "type") == "toolCall")
            totals.add(prop(message, "usage"), strict)
    return stats


def usage_breakdown(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """Pi's ``getUsageCostBreakdown``: cost and tokens per provider/model, summaries apart."""
    by_key: dict[str, UsageTotals] = {}
    for entry in entries:
        if type(entry) is not dict:
            continue
        etype = entry.get("type")
        key: str | None = None
        usage: Any = None
        message = entry.get("message", UNDEFINED)
        if etype == "message" and prop(message, "role") == "assistant":
            model = prop(message, "responseModel")
            if jsops.nullish(model):
                model = prop(message, "model")
            key = f"{jsops.to_string(prop(message, 'provider'))}/{jsops.to_string(model)}"
            usage = prop(message, "usage")
        elif etype == "usage":
            provider = jsops.to_string(entry.get("provider", UNDEFINED))
            key = f"{provider}/{jsops.to_string(entry.get('model', UNDEFINED))}"
            usage = entry.get("usage", UNDEFINED)
        elif etype == "message" and prop(message, "role") == "toolResult" and truthy(prop(message, "usage")):
            key = "Tools/summaries"
            usage = prop(message, "usage")
        elif etype in ("branch_summary", "compaction") and truthy(entry.get("usage")):
            key = "Tools/summaries"
            usage = entry["usage"]
        if not key or not truthy(usage):
            continue
        totals = by_key.setdefault(key, UsageTotals())
        totals.add(usage)
    rows = [{"key": k, "cost": t.cost, "tokens": t.tokens} for k, t in by_key.items()]
    rows = [r for r in rows if jsops.gt_zero(r["cost"]) or jsops.gt_zero(r["tokens"])]
    rows.sort(key=lambda r: -r["cost"] if type(r["cost"]) in (int, float) else 0)
    return rows
