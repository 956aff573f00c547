"""``pitools inspect``: a one-screen summary of a session, computed in one pass."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.types import Entry, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.session.loaded import Session
from pitools.core.session.name import session_name
from pitools.core.session.tree import SessionIndex, get_tree, labels_by_id
from pitools.core.views.stats import session_stats, usage_breakdown
from pitools.errors import PiCrashError


def _role(entry: Entry) -> Any:
    msg = entry.get("message") if type(entry) is dict else None
    return msg.get("role") if type(msg) is dict else None


def _text_or_none(value: JsValue) -> str | None:
    return value if type(value) is str else None


def inspect_session(
    session: Session,
    index: SessionIndex,
    find_crash: Callable[[Session], dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """Everything ``pitools inspect`` shows, as JSON-ready data (Pi's field names).

    ``find_crash`` (:func:`pitools.core.validate.pi_crashes.first_crash`) locates the entry Pi
    throws on when its stats would throw; it is passed in because the validate layer sits above
    the views (core's layer contract).
    """
    entries = session.entries
    header = session.header or {}
    types: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    models: dict[tuple[Any, Any], int] = {}
    thinking: dict[str, int] = {}
    compactions = []
    summaries = []
    for i, e in enumerate(entries):
        t = entry_type(e)
        types["(not an object)" if t is UNDEFINED and type(e) is not dict else str(t)] += 1
        if t == "message":
            role = _role(e)
            roles["(no role)" if role is None else str(role)] += 1
            if role == "assistant":
                m = e["message"]
                key = (_text_or_none(m.get("provider")), _text_or_none(m.get("model")))
                models[key] = models.get(key, 0) + 1
        elif t == "model_change":
            models.setdefault((_text_or_none(e.get("provider")), _text_or_none(e.get("modelId"))), 0)
        elif t == "thinking_level_change":
            level = str(e.get("thinkingLevel"))
            thinking[level] = thinking.get(level, 0) + 1
        elif t == "compaction":
            compactions.append(
                {
                    "id": entry_id(e),
                    "line": session.lines[i],
                    "firstKeptEntryId": e.get("firstKeptEntryId"),
                    "tokensBefore": e.get("tokensBefore"),
                    "fromHook": e.get("fromHook"),
                }
            )
        elif t == "branch_summary":
            summaries.append({"id": entry_id(e), "line": session.lines[i], "fromId": e.get("fromId")})
    leaves = []
    depths = index.depths()  # one pass: leaves × path length would be quadratic on big trees
    for leaf in index.leaves():
        pos = index.pos_by_id[leaf]  # a leaf's id is a string: its own key
        entry = index.entries[pos]
        depth = depths.get(pos)
        leaves.append(
            {"id": leaf, "depth": depth, "timestamp": entry.get("timestamp") if type(entry) is dict else None}
        )
    labels = {str(k): {"label": v[0], "timestamp": v[1]} for k, v in labels_by_id(entries).items()}
    try:
        stats: Any = session_stats(entries).to_json()
    except PiCrashError as exc:
        # Pi's own stats would throw; report tolerant totals and say why they differ, and where.
        stats = session_stats(entries, strict=False).to_json()
        stats["piError"] = exc.message
        at = find_crash(session) if find_crash is not None else None
        if at is not None:
            stats["piErrorAt"] = at
    try:
        breakdown: Any = usage_breakdown(entries)
    except PiCrashError as exc:
        breakdown = {"error": exc.message}
    try:
        name = session_name(entries)
    except PiCrashError:
        name = None
    severities = Counter(d.severity for d in session.diagnostics)
    roots = [entry_id(r.entry) for r in get_tree(index)]
    default_leaf = index.leaf_id
    return {
        "pi": PI_REFERENCE_VERSION,
        "path": session.path,
        "header": {
            "id": header.get("id"),
            "cwd": header.get("cwd"),
            "version": session.version_before,
            "timestamp": header.get("timestamp"),
            "parentSession": header.get("parentSession"),
        },
        "needsMigration": session.migration.needed,
        "name": name,
        "fileBytes": session.raw.size,
        "lineCount": session.raw.line_count,
        "entryCount": len(entries),
        "uniqueIds": len(index.pos_by_id),
        "entryTypes": dict(types.most_common()),
        "messageRoles": dict(roles.most_common()),
        "roots": roots,
        "leaves": leaves,
        "defaultLeaf": None if default_leaf is UNDEFINED else default_leaf,
        "labels": labels,
        "compactions": compactions,
        "branchSummaries": summaries,
        # provider/modelId null when the session does not say (a JSON key cannot be null).
        "models": [{"provider": p, "modelId": m, "assistantMessages": c} for (p, m), c in models.items()],
        "thinkingLevels": thinking,
        "stats": stats,
        "usageBreakdown": breakdown,
        "diagnostics": {
            "error": severities["error"],
            "warning": severities["warning"],
            "info": severities["info"],
        },
    }
