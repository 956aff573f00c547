"""pitools' results laid out like the reference oracle's output, for field-by-field comparison.

The reference oracle (``shared/reference/oracle.mjs``) runs Pi 1.6.0 on a session and prints
one JSON object. :func:`oracle_view` computes the same object with pitools' core, so the
conformance tests and ``scripts/differential.py`` can diff the two. Where Pi throws, the field
holds ``{"error": "..."}``; where Pi would loop forever, ``{"error": "cycle", ...}``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pitools.core.compaction.prepare import (
    CompactionSettings,
    compute_file_lists,
    format_file_operations,
    prepare_compaction,
)
from pitools.core.context.build import (
    build_projection,
    context_entries_from_path,
    context_usage,
    estimate_projected_context_tokens,
)
from pitools.core.context.messages import convert_to_llm, get_current_system_message
from pitools.core.context.tokens import estimate_tokens
from pitools.core.js.access import entry_id
from pitools.core.js.json.encode import jsonable
from pitools.core.js.types import Entry
from pitools.core.js.value import UNDEFINED, js_to_string
from pitools.core.session.load import load
from pitools.core.session.loaded import Session
from pitools.core.session.migrate import MigrationError
from pitools.core.session.name import session_name
from pitools.core.session.tree import SessionIndex, flatten_tree, get_tree, labels_by_id, mkey
from pitools.core.views.stats import session_stats, usage_breakdown
from pitools.errors import CycleError, PiCrashError


def _attempt(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except PiCrashError as exc:
        return {"error": exc.message}
    except CycleError as exc:
        return {"error": "cycle", "detail": exc.message}


def oracle_view(
    path: str | os.PathLike[str],
    *,
    leaves: list[Any] | None = None,
    all_leaves: bool = True,
    settings: CompactionSettings | None = None,
    context_window: int = 200000,
) -> dict[str, Any]:
    """The oracle's JSON object for ``path`` computed by pitools (same keys, same values)."""
    settings = settings or CompactionSettings()
    out: dict[str, Any] = {}
    try:
        session = load(Path(path), strict=False, freeze=False).session
    except MigrationError as exc:
        raw = load(Path(path), strict=False, migrate=False, freeze=False).session.raw
        return jsonable(
            {
                "fileBytes": raw.size,
                "invalid": False,
                "loadedEntryCount": len(raw.values),
                "loaderAppendedNewline": not raw.ends_with_newline,
                "version_before": raw.values[0].get("version"),
                "error": exc.pi_error or exc.message,
            }
        )
    out["invalid"] = not session.valid
    out["fileBytes"] = session.raw.size
    out["loaderAppendedNewline"] = session.valid and not session.raw.ends_with_newline
    out["loadedEntryCount"] = len(session.raw.values) if session.valid else 0
    if not session.valid:
        out.update(header=None, version_before=None, migrated=False, entries=[], leafId=None)
        out.update(leaves=[], roots=[], tree=[], requestedLeaves=[], byLeaf={})
        out["emptyFile"] = session.raw.size == 0
        return jsonable(out)
    return jsonable(_valid_view(session, out, leaves, all_leaves, settings, context_window))


def _valid_view(
    session: Session,
    out: dict[str, Any],
    leaves: list[Any] | None,
    all_leaves: bool,
    settings: CompactionSettings,
    context_window: int,
) -> dict[str, Any]:
    entries = session.entries
    index = SessionIndex.build(entries)
    out["version_before"] = session.version_before
    out["migrated"] = session.migration.needed
    out["uuidCallsDuringLoad"] = session.migration.ids_assigned
    out["header"] = session.header
    out["entries"] = entries
    out["sessionId"] = session.header.get("id") if session.header else None
    out["sessionName"] = _attempt(lambda: session_name(entries))
    out["entryCount"] = len(index.pos_by_id)
    default_leaf = index.leaf_id
    out["leafId"] = None if default_leaf is UNDEFINED else default_leaf
    out["labels"] = _labels(entries)
    roots = get_tree(index)
    flat = flatten_tree(roots)
    if any(item.get("revisit") for item in flat) and _tree_loops(roots):
        # A node that is its own descendant (duplicate ids): Pi's getTree() never returns.
        out["roots"] = {"error": "timeout"}
        out["tree"] = {"error": "timeout"}
    else:
        out["roots"] = [entry_id(r.entry) for r in roots]
        out["tree"] = flat
    leaf_list = index.leaves()
    out["leaves"] = leaf_list
    out["stats"] = _attempt(lambda: dict(session_stats(entries).to_json(), sessionId=out["sessionId"]))
    out["usageBreakdown"] = _attempt(lambda: usage_breakdown(entries))
    if leaves is not None:
        targets = list(leaves)
    elif all_leaves:
        targets = list(leaf_list)
        if default_leaf is not None and default_leaf is not UNDEFINED and default_leaf not in targets:
            targets.append(default_leaf)
    else:
        targets = [default_leaf]
    out["requestedLeaves"] = [None if t is UNDEFINED else t for t in targets]
    by_leaf: dict[str, Any] = {}
    for leaf in targets:
        key = "null" if leaf is None or leaf is UNDEFINED else str(leaf)
        by_leaf[key] = leaf_view(index, leaf, settings, context_window)
        if all_leaves and "error" not in by_leaf[key] and _navigates(leaf, default_leaf):
            by_leaf[key]["navigateToDefault"] = _attempt(
                functools.partial(navigate_view, index, leaf, default_leaf, context_window)
            )
    out["byLeaf"] = by_leaf
    return out


def _navigates(leaf: Any, default_leaf: Any) -> bool:
    """The oracle records ``navigateToDefault`` for every other leaf when the default one exists."""
    if leaf is None or leaf is UNDEFINED or default_leaf is None or default_leaf is UNDEFINED:
        return False
    return leaf != default_leaf or type(leaf) is not type(default_leaf)


def navigate_view(index: SessionIndex, leaf: Any, target: Any, context_window: int) -> dict[str, Any]:
    """The oracle's ``navigateToDefault`` record: ``navigateTree`` from ``leaf`` to ``target``,
    summarized by a fake model that answers ``<<summary>>`` (the request text is not compared
    here: its instructions are pitools' own words)."""
    from pitools.core.compaction.branch import (
        NO_CONTENT_SUMMARY,
        branch_summary_prompt,
        branch_summary_text,
        collect_entries_for_branch_summary,
        prepare_branch_entries,
        token_budget,
    )

    if (at := index.position_of(target)) is not None:
        index.walk_positions(at)  # the oracle's cycle guard on the target's path
    entries, common = collect_entries_for_branch_summary(index, leaf, target)
    budget = token_budget(context_window, 16384)
    nav: dict[str, Any] = {"targetId": target, "commonAncestorId": common}
    nav["entries"] = [entry_id(e) for e in entries]
    nav["tokenBudget"] = budget
    prepared = _attempt(lambda: prepare_branch_entries(entries, budget))
    nav["prepared"] = prepared if isinstance(prepared, dict) else prepared.to_json()
    if entries:
        if isinstance(prepared, dict):
            nav["result"] = prepared
        elif not prepared.messages:
            nav["result"] = {"summary": NO_CONTENT_SUMMARY}
        elif isinstance(error := _attempt(lambda: branch_summary_prompt(prepared.messages)), dict):
            nav["result"] = error
        else:
            summary, read_files, modified_files = branch_summary_text("<<summary>>", prepared)
            nav["result"] = {"summary": summary, "readFiles": read_files, "modifiedFiles": modified_files}
    return nav


def _labels(entries: list[Entry]) -> dict[str, Any]:
    """The oracle's ``labels``: Pi's ``labelsById`` with each key through JavaScript's ``String(k)``
    (``true``, ``1e+21``, ``[object Object]``, ``1,,x``), so the target's own value is needed, not its
    map key (which stands for a boolean or an object by identity)."""
    targets = {
        mkey(target): target
        for e in entries
        if type(e) is dict and e.get("type") == "label"
        for target in (e.get("targetId", UNDEFINED),)
    }
    return {
        js_to_string(targets[k]): {"label": label, "timestamp": timestamp}
        for k, (label, timestamp) in labels_by_id(entries).items()
    }


def _tree_loops(roots: list[Any]) -> bool:
    """True when a node is its own descendant (Pi's getTree sort loop never ends)."""
    stack: list[tuple[Any, frozenset[int]]] = [(r, frozenset()) for r in roots]
    budget = 1_000_000
    while stack and budget:
        budget -= 1
        node, ancestors = stack.pop()
        if id(node) in ancestors:
            return True
        nxt = ancestors | {id(node)}
        stack.extend((c, nxt) for c in node.children)
    return not budget


def leaf_view(index: SessionIndex, leaf: Any, settings: CompactionSettings, context_window: int) -> dict[str, Any]:
    """One ``byLeaf`` record of the oracle."""
    r: dict[str, Any] = {"leafExists": leaf is not None and leaf is not UNDEFINED and index.has(leaf)}
    try:
        start = None if leaf is None else index.position_of(leaf) if index.has(leaf) and leaf else None
        if leaf is not None:
            if start is None and index.entries:
                start = len(index.entries) - 1
            if start is not None:
                index.walk_positions(start)
    except CycleError as exc:
        return {"leafExists": r["leafExists"], "error": "cycle", "detail": exc.message}
    r["path"] = [] if leaf is None else _attempt(lambda: [entry_id(e) for e in index.get_branch(leaf)])
    session_path = [] if leaf is None else index.session_path(leaf)
    r["contextEntries"] = _attempt(lambda: [entry_id(e) for e in context_entries_from_path(session_path)])
    projection = _attempt(lambda: build_projection(session_path))
    if isinstance(projection, dict):
        r["projection"] = projection
        r["context"] = projection
    else:
        r["projection"] = [
            {"sourceId": pe.source_id, "sourceType": pe.source_type, "messages": pe.messages}
            for pe in projection.entries
        ]
        r["context"] = {
            "messages": projection.messages,
            "thinkingLevel": projection.thinking_level,
            "model": projection.model,
        }
        r["tokenEstimates"] = _attempt(lambda: [estimate_tokens(m) for m in projection.messages])
        r["llmMessages"] = _attempt(lambda: convert_to_llm(projection.messages))
    branch = [] if leaf is None else index.get_branch(leaf)
    if not isinstance(projection, dict):
        r["estimatedContextTokens"] = _attempt(lambda: estimate_projected_context_tokens(projection, branch).to_json())
        r["contextUsage"] = _attempt(lambda: _context_usage_at(index, leaf, context_window))
    else:
        r["contextUsage"] = _attempt(lambda: _context_usage_at(index, leaf, context_window))
    r["compaction"] = _attempt(lambda: compaction_view(branch, settings, projection))
    return r


def _context_usage_at(index: SessionIndex, leaf: Any, context_window: int) -> Any:
    session_path = [] if leaf is None else index.session_path(leaf)
    projection = build_projection(session_path)
    branch = [] if leaf is None else index.get_branch(leaf)
    return context_usage(projection, branch, context_window)


def compaction_view(branch: list[Any], settings: CompactionSettings, projection: Any) -> Any:
    """The oracle's ``compaction`` record (without the summary-request fields)."""
    prep = prepare_compaction(branch, settings)
    if prep is None:
        return None
    read_files, modified_files = compute_file_lists(prep.file_ops)
    c = prep.to_json(guard=_attempt)
    c["fileLists"] = {"readFiles": read_files, "modifiedFiles": modified_files}
    c["fileListsText"] = format_file_operations(read_files, modified_files)
    if isinstance(projection, dict):
        c["systemCheckpoint"] = projection
    else:
        c["systemCheckpoint"] = _attempt(lambda: get_current_system_message(projection.messages))
    return c


#: Oracle fields pitools does not compute (oracle metadata, branch-summary navigation, the
#: fake-LLM summary run and Pi's own error text for rejected files).
SKIPPED_KEYS = frozenset(
    {
        "oracle",
        "file",
        "options",
        "summaryRequests",
        "summarySystemPrompt",
        "compactResult",
        "openError",
        "openBehavior",
    }
)


def diff_values(ours: Any, theirs: Any, where: str = "", out: list[str] | None = None, limit: int = 50) -> list[str]:
    """Differences between pitools' view and the oracle's, as readable ``where: ours != theirs``.

    An ``{"error": ...}`` record matches any other error record of the same kind (Pi's exact
    ``TypeError`` wording is not reproduced); a cycle must be a cycle, a timeout a timeout.
    """
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    if isinstance(theirs, dict) and "error" in theirs and len(theirs) <= 3:
        if not (isinstance(ours, dict) and "error" in ours):
            out.append(f"{where}: pitools has no error, Pi: {theirs['error']}")
        elif (theirs["error"] in ("cycle", "timeout")) != (ours["error"] in ("cycle", "timeout")):
            out.append(f"{where}: error {ours['error']!r} != {theirs['error']!r}")
        return out
    if isinstance(ours, dict) and "error" in ours and len(ours) <= 3 and not isinstance(theirs, dict):
        out.append(f"{where}: pitools error {ours['error']!r}, Pi: {_short(theirs)}")
        return out
    if isinstance(theirs, dict) and isinstance(ours, dict):
        for k in sorted(set(theirs) | set(ours)):
            if k in SKIPPED_KEYS:
                continue
            if k not in ours:
                out.append(f"{where}.{k}: missing in pitools (Pi: {_short(theirs[k])})")
            elif k not in theirs:
                out.append(f"{where}.{k}: extra in pitools ({_short(ours[k])})")
            else:
                diff_values(ours[k], theirs[k], f"{where}.{k}", out, limit)
        return out
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(theirs) != len(ours):
            out.append(f"{where}: length {len(ours)} != {len(theirs)}")
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            diff_values(a, b, f"{where}[{i}]", out, limit)
        return out
    if type(ours) in (int, float) and type(theirs) in (int, float):
        # The oracle prints doubles beyond 2**53 in JavaScript's shortest form, which Python
        # reads back as an exact int: compare them as doubles.
        if float(ours) != float(theirs):
            out.append(f"{where}: {ours!r} != {theirs!r}")
        return out
    if ours != theirs or type(ours) is not type(theirs):
        out.append(f"{where}: {_short(ours)} != {_short(theirs)}")
    return out


def _short(v: Any, n: int = 120) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 1] + "…"
