"""The rows of one session for every ``pitools dataset`` table (see :mod:`.tables`), as a stream.

Rows come out entry by entry (``(table, row)`` pairs), the ``sessions`` row last, so a writer can
flush row batches as it goes. Usage sources and their provider/model keys are the archive usage
records' (:mod:`pitools.core.views.usage`, Pi's ``getSessionStats`` and ``getUsageCostBreakdown``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from pitools.core.context.build import context_entries_from_path
from pitools.core.js.date import js_date_ms
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.types import Entry, JsValue
from pitools.core.session.loaded import Session
from pitools.core.session.tree import SessionIndex
from pitools.core.views.branch_common import entry_ms, fnum, text_of
from pitools.core.views.usage import entry_usage
from pitools.errors import PitoolsError

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionMeta:
    """What the caller knows of a session file beyond its entries."""

    key: str
    path: str
    file_bytes: int
    copied: Collection[str] = ()
    parent_key: str | None = None
    lineage_root: str | None = None


def clean(text: JsValue) -> str | None:
    """A string Arrow and UTF-8 accept: lone surrogates (damaged files) become U+FFFD."""
    if type(text) is not str:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def tokens(value: JsValue) -> int:
    """A token count as an int64 (a non-integral number from a damaged file is truncated)."""
    if type(value) is int:
        return value if -(2**63) <= value < 2**63 else 0
    if type(value) is float and math.isfinite(value) and abs(value) < 9.2e18:
        return int(value)
    return 0


def project_of(cwd: JsValue) -> str | None:
    if type(cwd) is not str or not cwd:
        return None
    parts = [p for p in cwd.replace("\\", "/").split("/") if p]
    return clean(parts[-1]) if parts else clean(cwd)


def _usage_cols(usage: JsValue) -> Row:
    if type(usage) is not dict:
        return dict.fromkeys(
            ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens", "cost")
        )
    i, o = tokens(usage.get("input")), tokens(usage.get("output"))
    r, w = tokens(usage.get("cacheRead")), tokens(usage.get("cacheWrite"))
    cost = usage.get("cost")
    total = cost.get("total") if type(cost) is dict else None
    return {
        "input_tokens": i,
        "output_tokens": o,
        "cache_read_tokens": r,
        "cache_write_tokens": w,
        "total_tokens": i + o + r + w,
        "cost": fnum(total),
    }


def _str(value: JsValue) -> str | None:
    return clean(value) if type(value) is str else None


def _ms_of_iso(iso: str | None) -> int | None:
    if iso is None:
        return None
    ms = js_date_ms(iso)
    return None if isinstance(ms, float) and math.isnan(ms) else int(ms)


def _message_text(message: dict[str, Any]) -> str:
    role = message.get("role")
    if role == "bashExecution":
        command = message.get("command")
        output = message.get("output")
        return f"{command if type(command) is str else ''}\n{output if type(output) is str else ''}"
    return text_of(message.get("content"))


def _default_path(index: SessionIndex) -> list[Any]:
    try:
        return index.session_path(index.leaf_id)
    except PitoolsError:  # a parentId cycle: Pi would loop forever, so there is no default branch
        return []


def _tool_results(index: SessionIndex, entries: list[Entry]) -> dict[int, dict[str, Any]]:
    """id(assistant entry) → {toolCallId: the tool result entry answering it}.

    A tool result hangs off its assistant message directly or after earlier results of the same
    turn, so the assistant is found by walking up through tool results only.
    """
    out: dict[int, dict[str, Any]] = {}
    for entry in entries:
        if type(entry) is not dict or entry.get("type") != "message":
            continue
        message = entry.get("message")
        if type(message) is not dict or message.get("role") != "toolResult":
            continue
        call_id = message.get("toolCallId")
        if type(call_id) is not str:
            continue
        current = entry
        for _ in range(10_000):
            parent = index.get(current.get("parentId")) if type(current.get("parentId")) is str else None
            if type(parent) is not dict or parent.get("type") != "message":
                break
            pmsg = parent.get("message")
            if type(pmsg) is not dict:
                break
            if pmsg.get("role") == "assistant":
                out.setdefault(id(parent), {}).setdefault(call_id, entry)
                break
            if pmsg.get("role") != "toolResult":
                break
            current = parent
    return out


def session_rows(session: Session, index: SessionIndex, meta: SessionMeta) -> Iterator[tuple[str, Row]]:
    """Every row of one loaded session: entries, messages, tool calls, compactions, usage, then the session."""
    header = session.header or {}
    sid = _str(header.get("id"))
    key = clean(meta.key)
    base = {"session_key": key, "session_id": sid}
    project = _str(header.get("cwd"))
    project_name = project_of(header.get("cwd"))
    copied = meta.copied
    entries = session.entries
    path = _default_path(index)
    on_path = {id(e) for e in path}
    in_context = {id(e) for e in context_entries_from_path(path)} if path else set()
    depths = index.depths()
    results = _tool_results(index, entries)
    raw_offsets = session.raw.offsets
    file_bytes = meta.file_bytes

    name: str | None = None
    messages = 0
    copied_entries = 0
    totals = dict.fromkeys(
        ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens"), 0
    )
    cost = 0.0
    own_tokens = 0
    own_cost = 0.0

    for i, entry in enumerate(entries):
        if type(entry) is not dict:
            continue
        eid = entry.get("id")
        eid_s = _str(eid)
        etype = entry.get("type")
        is_copied = type(eid) is str and eid in copied
        copied_entries += is_copied
        on_default = id(entry) in on_path
        ts = entry_ms(entry)
        message = entry.get("message") if etype == "message" else None
        role = message.get("role") if type(message) is dict else None
        pos = session.positions[i]
        end = raw_offsets[pos + 1] if pos + 1 < len(raw_offsets) else file_bytes
        yield (
            "entries",
            {
                **base,
                "entry_id": eid_s,
                "parent_id": _str(entry.get("parentId")),
                "type": _str(etype),
                "role": _str(role),
                "timestamp": ts,
                "line": session.lines[i],
                "bytes": max(0, end - session.offsets[i]),
                "depth": depths.get(i),
                "on_default_branch": on_default,
                "in_context": id(entry) in in_context,
                "compacted": on_default and id(entry) not in in_context,
                "copied": is_copied,
            },
        )
        if etype == "session_info" and type(entry.get("name")) is str:
            name = clean(entry["name"])
        if type(message) is dict:
            messages += 1
            text = clean(_message_text(message)) or ""
            content = message.get("content")
            calls = (
                [b for b in content if type(b) is dict and b.get("type") == "toolCall"] if type(content) is list else []
            )
            model = message.get("responseModel")
            if type(model) is not str:
                model = message.get("model")
            usage_cols = _usage_cols(message.get("usage")) if role in ("assistant", "toolResult") else _usage_cols(None)
            yield (
                "messages",
                {
                    **base,
                    "entry_id": eid_s,
                    "timestamp": ts,
                    "role": _str(role),
                    "text": text,
                    "text_chars": len(text),
                    "model": _str(model) if role == "assistant" else None,
                    "provider": _str(message.get("provider")) if role == "assistant" else None,
                    "api": _str(message.get("api")) if role == "assistant" else None,
                    "stop_reason": _str(message.get("stopReason")),
                    "error_message": _str(message.get("errorMessage")),
                    "tool_calls": len(calls) if role == "assistant" else None,
                    **usage_cols,
                    "on_default_branch": on_default,
                    "copied": is_copied,
                },
            )
            answered = results.get(id(entry), {})
            for block in calls if role == "assistant" else ():
                call_id = block.get("id")
                result = answered.get(call_id) if type(call_id) is str else None
                rmsg = result.get("message") if result is not None else None
                ended = entry_ms(result) if result is not None else None
                rtext = (clean(text_of(rmsg.get("content"))) or "") if type(rmsg) is dict else None
                yield (
                    "tool_calls",
                    {
                        **base,
                        "entry_id": eid_s,
                        "tool_call_id": _str(call_id),
                        "name": _str(block.get("name")),
                        "arguments": clean(to_json_bytes(block.get("arguments")).decode("utf-8", "replace")),
                        "result_entry_id": _str(result.get("id")) if result is not None else None,
                        "result_chars": len(rtext) if rtext is not None else None,
                        "is_error": (rmsg.get("isError") is True) if type(rmsg) is dict else None,
                        "started": ts,
                        "ended": ended,
                        "duration_ms": ended - ts if ended is not None and ts is not None else None,
                        "on_default_branch": on_default,
                        "copied": is_copied,
                    },
                )
        if etype == "compaction":
            summary = entry.get("summary")
            tb = entry.get("tokensBefore")
            yield (
                "compactions",
                {
                    **base,
                    "entry_id": eid_s,
                    "parent_id": _str(entry.get("parentId")),
                    "timestamp": ts,
                    "first_kept_entry_id": _str(entry.get("firstKeptEntryId")),
                    "tokens_before": tokens(tb) if type(tb) in (int, float) else None,
                    "summary_chars": len(summary) if type(summary) is str else None,
                    "from_hook": entry.get("fromHook") is True,
                    **_usage_cols(entry.get("usage")),
                    "on_default_branch": on_default,
                    "copied": is_copied,
                },
            )
        record = entry_usage(entry, sid)
        if record is not None:
            cols = _usage_cols(
                {
                    "input": record.input,
                    "output": record.output,
                    "cacheRead": record.cache_read,
                    "cacheWrite": record.cache_write,
                    "cost": {"total": record.cost},
                }
            )
            for k in totals:
                totals[k] += cols[k]
            cost += cols["cost"]
            if not is_copied:
                own_tokens += cols["total_tokens"]
                own_cost += cols["cost"]
            yield (
                "usage",
                {
                    **base,
                    "entry_id": eid_s,
                    # The record's time is the entry's, else its message's (usage.entry_time).
                    "timestamp": ts if ts is not None else _ms_of_iso(record.timestamp),
                    "source": record.source,
                    "provider": clean(record.provider),
                    "model": clean(record.model),
                    **cols,
                    "project": project,
                    "project_name": project_name,
                    "on_default_branch": on_default,
                    "copied": is_copied,
                },
            )

    version = session.version_before
    yield (
        "sessions",
        {
            **base,
            "path": clean(meta.path),
            "cwd": _str(header.get("cwd")),
            "project": project,
            "project_name": project_name,
            "name": name,
            "created": entry_ms(header),
            "parent_session": _str(header.get("parentSession")),
            "parent_key": clean(meta.parent_key),
            "lineage_root": clean(meta.lineage_root) or key,
            "version": version if type(version) is int and -(2**63) <= version < 2**63 else None,
            "default_leaf": _str(index.leaf_id),
            "file_bytes": file_bytes,
            "entries": len(entries),
            "messages": messages,
            "leaves": len(index.leaves()),
            "copied_entries": copied_entries,
            **totals,
            "cost": cost,
            "own_total_tokens": own_tokens,
            "own_cost": own_cost,
        },
    )
