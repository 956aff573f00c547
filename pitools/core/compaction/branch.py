"""Branch summaries for tree navigation: what Pi 1.6.0's ``navigateTree`` does to a session.

Leaving a branch for another point of the tree, Pi can summarize the branch being left and attach
that summary at the place it goes to. This module computes every step of that without a model:

- the common ancestor and the entries to summarize (``collectEntriesForBranchSummary``),
- what fits in the token budget (``prepareBranchEntries``: messages, file operations, tokens),
- the request a summarizer gets (Pi's layout, pitools' own instruction wording),
- where the leaf lands and what text goes back to the editor (``navigateTree``),
- the ``branch_summary`` (and ``label``) entries Pi appends (``branchWithSummary``,
  ``appendLabelChange``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.compaction.prepare import (
    FileOps,
    compute_file_lists,
    extract_file_ops,
    format_file_operations,
    serialize_conversation,
)
from pitools.core.context.build import project_entry
from pitools.core.context.messages import (
    content_text,
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from pitools.core.context.tokens import estimate_tokens
from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.date import iso_now
from pitools.core.js.ops import prop, truthy
from pitools.core.js.types import Entry, EntryId, JsonObject, Message
from pitools.core.js.value import UNDEFINED
from pitools.core.session.tree import SessionIndex, id_text, mkey
from pitools.errors import PiCrashError, PitoolsError

if TYPE_CHECKING:
    from pitools.core.compaction.summarizer import SummaryRequest

#: ``model.contextWindow || 128000`` in ``generateBranchSummary``.
FALLBACK_CONTEXT_WINDOW = 128000
#: Pi's ``SETTINGS_DEFAULTS.branchSummary.reserveTokens``.
DEFAULT_BRANCH_RESERVE_TOKENS = 16384

#: The text Pi puts before the model's answer in a ``branch_summary`` entry. It is part of the
#: entry's data (the next context shows it to the model), so it is kept exactly as Pi writes it.
BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)
#: What Pi writes, without calling a model, when nothing of the branch is a message.
NO_CONTENT_SUMMARY = "No content to summarize"

#: pitools' own wording of the instructions (Pi's request layout: transcript first, then these).
BRANCH_INSTRUCTIONS = """The transcript above is a branch of the session that the user is leaving; they may come \
back to it later. Write a summary of it that will sit in the conversation at the place they return to, \
using exactly these sections:

## Goal
[What the user wanted from this branch.]

## Constraints & Preferences
- [Requirements, preferences and limits the user stated, or "(none)".]

## Progress
### Done
- [x] [Work finished in this branch.]

### In Progress
- [ ] [Work started but not finished.]

### Blocked
- [Anything that stopped progress, if any.]

## Key Decisions
- **[Decision]**: [Why it was made.]

## Next Steps
1. [What should happen next to carry this work on.]

Be brief in each section. Keep file paths, function names and error messages exactly as written."""


class NavigateError(PitoolsError):
    """The navigation cannot be planned (unknown target, an entry Pi cannot summarize...)."""


# -- collectEntriesForBranchSummary -------------------------------------------------------------


def collect_entries_for_branch_summary(
    index: SessionIndex, old_leaf_id: EntryId, target_id: EntryId
) -> tuple[list[Any], Any]:
    """Pi's ``collectEntriesForBranchSummary``: the entries from the old leaf up to (not including)
    the deepest entry it shares with the target's path, oldest first, and that common ancestor.

    Pi's parent walks never end on a ``parentId`` cycle; here they raise ``CycleError``.
    """
    if not truthy(old_leaf_id):
        return [], None
    ids = index.ids
    old_branch = index.branch_positions(old_leaf_id)
    old_path = {mkey(ids[p]) for p in old_branch}
    common: Any = None
    for pos in reversed(index.branch_positions(target_id)):
        if mkey(ids[pos]) in old_path:
            common = ids[pos]
            break
    # Pi walks up from the old leaf until it reaches the common ancestor (or the root): the part
    # of the old branch below the ancestor's last occurrence on it.
    common_key = mkey(common)
    cut = len(old_branch)
    while cut and mkey(ids[old_branch[cut - 1]]) != common_key:
        cut -= 1
    return index.entries_at(old_branch[cut:]), common


# -- prepareBranchEntries ---------------------------------------------------------------------


def _first(messages: list[Message]) -> Any:
    return messages[0] if messages else None


def message_from_entry(entry: Entry, edit: Any) -> Any:
    """Pi's ``getMessageFromEntry`` (branch-summarization.js): the one message an entry gives the
    summary, or ``None`` (tool results, metadata, an entry hidden by a context edit)."""
    etype = entry_type(entry)
    if etype == "message":
        if prop(prop(entry, "message"), "role") == "toolResult":
            return None
        return _first(project_entry(entry, edit)) if edit is not None else entry.get("message", UNDEFINED)
    if etype == "custom_message":
        return _first(project_entry(entry, edit)) if edit is not None else create_custom_message(entry, as_stored=True)
    if etype == "branch_summary":
        return create_branch_summary_message(entry)
    if etype == "compaction":
        return create_compaction_summary_message(entry)
    return None


@dataclass(slots=True)
class BranchPreparation:
    """Pi's ``prepareBranchEntries`` result: the messages kept (oldest first), the file
    operations of the whole branch, and the estimated tokens of what was kept."""

    messages: list[Any]
    file_ops: FileOps
    total_tokens: Any

    def file_lists(self) -> tuple[list[str], list[str]]:
        return compute_file_lists(self.file_ops)

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "fileOps": self.file_ops.to_json(), "totalTokens": self.total_tokens}


def _add_paths(target: dict[str, None], values: Any) -> None:
    if type(values) is not list:
        return
    for value in values:
        try:
            target[value] = None
        except TypeError:  # an object in the list: Pi keeps it, pitools cannot list it as a path
            continue


def prepare_branch_entries(entries: Sequence[Entry], token_budget: Any = 0) -> BranchPreparation:
    """Pi's ``prepareBranchEntries``: newest messages first until ``token_budget`` (0 = no limit).

    File operations come from every entry: earlier Pi-written branch summaries' details and the
    tool calls of every message visited. A summary entry that does not fit is still kept while
    less than 90% of the budget is used.
    """
    ops = FileOps()
    for entry in entries:
        if entry_type(entry) == "branch_summary" and not truthy(entry.get("fromHook", UNDEFINED)):
            details = entry.get("details", UNDEFINED)
            if truthy(details) and type(details) is dict:
                _add_paths(ops.read, details.get("readFiles"))
                _add_paths(ops.edited, details.get("modifiedFiles"))
    edits: dict[Any, Any] = {}
    for entry in entries:
        if entry_type(entry) == "context_edit":
            edits[mkey(entry.get("targetId", UNDEFINED))] = entry
    messages: list[Any] = []
    total: Any = 0
    limited = _positive(token_budget)
    for entry in reversed(entries):
        message = message_from_entry(entry, edits.get(mkey(entry_id(entry))))
        if message is None or message is UNDEFINED:
            continue
        extract_file_ops(message, ops)
        tokens = estimate_tokens(message)
        if limited and total + tokens > token_budget:
            if entry_type(entry) in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return BranchPreparation(messages, ops, total)


def _positive(value: Any) -> bool:
    return type(value) in (int, float) and value > 0


# -- the request --------------------------------------------------------------------------------


def branch_summary_prompt(messages: list[Message], instructions: str | None = None) -> str:
    """The one user message of the summary request: the transcript (Pi's ``serializeConversation``
    of ``convertToLlm(messages)``, byte for byte) in ``<conversation>`` tags, then the
    instructions, then ``Additional focus: …`` when the user gave one."""
    conversation = serialize_conversation(convert_to_llm(messages))
    text = f"<conversation>\n{conversation}\n</conversation>\n\n{BRANCH_INSTRUCTIONS}"
    if instructions:
        text += f"\n\nAdditional focus: {instructions}"
    return text


def branch_summary_text(answer: str, prep: BranchPreparation) -> tuple[str, list[str], list[str]]:
    """Pi's summary for a model answer: the preamble, the answer, then the file-list tags."""
    read_files, modified_files = prep.file_lists()
    summary = BRANCH_SUMMARY_PREAMBLE + answer + format_file_operations(read_files, modified_files)
    return summary, read_files, modified_files


# -- the navigation ----------------------------------------------------------------------------


def landing(target: Any) -> tuple[Any, str | None]:
    """Where ``navigateTree`` puts the leaf for ``target`` and the text it puts back in the editor.

    A user message or a custom message is re-opened for editing: the leaf goes to its parent
    (``None`` for a root) and its text goes to the editor. Any other entry becomes the leaf.
    """
    etype = entry_type(target)
    if etype == "message" and prop(prop(target, "message"), "role") == "user":
        return target.get("parentId", UNDEFINED), content_text(prop(target["message"], "content"), "")
    if etype == "custom_message":
        return target.get("parentId", UNDEFINED), content_text(target.get("content", UNDEFINED), "")
    return entry_id(target), None


@dataclass(slots=True)
class NavigationPlan:
    """Everything ``navigateTree(target)`` would do from ``from_id``, computed without a model."""

    from_id: EntryId
    target_id: EntryId
    common_ancestor_id: EntryId
    entries: list[Entry]
    token_budget: Any
    prepared: BranchPreparation
    prompt: str | None
    new_leaf_id: EntryId
    editor_text: str | None
    #: Pi returns at once when the target is the current leaf: nothing is summarized or moved.
    noop: bool = False
    #: Pi's error when building the request throws (a message Pi cannot serialize or estimate).
    prompt_error: str | None = None
    #: The error came from ``prepareBranchEntries`` itself (estimating a message's tokens): no
    #: message was prepared. Pi's ``navigateTree`` calls it only to summarize, so moving works.
    prepare_failed: bool = False
    #: The resolved settings behind the budget, for the report (``contextWindow``, ``reserveTokens``).
    budget_sources: dict[str, Any] = field(default_factory=dict)

    @property
    def entry_ids(self) -> list[EntryId]:
        return [entry_id(e) for e in self.entries]

    @property
    def would_call_model(self) -> bool:
        """Whether ``--summarize`` asks a model (Pi writes a fixed text when no message is left)."""
        return bool(self.entries) and bool(self.prepared.messages)

    def to_json(self) -> dict[str, Any]:
        """The ``pitools navigate --format json`` document (schemas/output/navigate.schema.json)."""
        return {
            "pi": PI_REFERENCE_VERSION,
            "fromId": self.from_id,
            "targetId": self.target_id,
            "noop": self.noop,
            "commonAncestorId": self.common_ancestor_id,
            "entries": self.entry_ids,
            "tokenBudget": self.token_budget,
            "budget": self.budget_sources,
            "prepared": self.prepared.to_json(),
            "prompt": self.prompt,
            "promptError": self.prompt_error,
            "newLeafId": self.new_leaf_id,
            "editorText": self.editor_text,
        }


def token_budget(context_window: Any, reserve_tokens: Any) -> Any:
    """``(model.contextWindow || 128000) - reserveTokens`` (NaN when the setting is not a number)."""
    window = context_window if truthy(context_window) else FALLBACK_CONTEXT_WINDOW
    if type(window) not in (int, float) or type(reserve_tokens) not in (int, float) or type(reserve_tokens) is bool:
        return float("nan")
    return window - reserve_tokens


def plan_navigation(
    index: SessionIndex,
    from_id: EntryId,
    target_id: EntryId,
    budget: Any,
    *,
    instructions: str | None = None,
    path: str | None = None,
) -> NavigationPlan:
    """Pi's ``navigateTree(targetId)`` from leaf ``from_id``, up to the model call."""
    if mkey(target_id) == mkey(from_id):  # checked first, as Pi does
        empty = BranchPreparation([], FileOps(), 0)
        return NavigationPlan(from_id, target_id, None, [], budget, empty, None, from_id, None, noop=True)
    target = index.get(target_id)
    if target is None:
        raise NavigateError(f"entry {id_text(target_id)} not found", path=path)
    entries, common = collect_entries_for_branch_summary(index, from_id, target_id)
    prompt: str | None = None
    prompt_error: str | None = None
    try:
        prepared = prepare_branch_entries(entries, budget)
    except PiCrashError as exc:  # only generateBranchSummary calls it: --summarize cannot run
        new_leaf, editor = landing(target)
        empty = BranchPreparation([], FileOps(), 0)
        return NavigationPlan(
            from_id,
            target_id,
            common,
            entries,
            budget,
            empty,
            None,
            new_leaf,
            editor,
            prompt_error=f"{exc.message} (in prepareBranchEntries)",
            prepare_failed=True,
        )
    if entries and prepared.messages:
        try:
            prompt = branch_summary_prompt(prepared.messages, instructions)
        except PiCrashError as exc:  # Pi's generateBranchSummary throws here: --summarize cannot run
            prompt_error = exc.message
    new_leaf, editor = landing(target)
    return NavigationPlan(
        from_id, target_id, common, entries, budget, prepared, prompt, new_leaf, editor, prompt_error=prompt_error
    )


# -- the entries Pi appends ---------------------------------------------------------------------


def build_branch_summary_entry(
    index: SessionIndex,
    plan: NavigationPlan,
    summary: str,
    details: dict[str, Any],
    usage: JsonObject | None,
    *,
    now: _dt.datetime | None = None,
    entry_id_: str | None = None,
) -> dict[str, Any]:
    """The entry Pi's ``branchWithSummary(newLeafId, summary, details, false, usage)`` appends."""
    from pitools.core.session.ids import generate_id

    return {
        "type": "branch_summary",
        "id": entry_id_ or generate_id(index.has),
        "parentId": plan.new_leaf_id,
        "timestamp": iso_now(now),
        # ``this.leafId ?? "root"``: only a null/undefined leaf becomes "root".
        "fromId": "root" if plan.from_id is None or plan.from_id is UNDEFINED else plan.from_id,
        "summary": summary,
        "details": details,
        "usage": usage if usage is not None else UNDEFINED,
        "fromHook": False,
    }


def build_label_entry(
    index: SessionIndex,
    parent_id: EntryId,
    target_id: EntryId,
    label: str,
    *,
    taken: Sequence[str] = (),
    now: _dt.datetime | None = None,
    entry_id_: str | None = None,
) -> dict[str, Any]:
    """The entry Pi's ``appendLabelChange(targetId, label)`` appends (child of the current leaf)."""
    from pitools.core.session.ids import generate_id

    def has(value: str) -> bool:
        return index.has(value) or value in taken

    return {
        "type": "label",
        "id": entry_id_ or generate_id(has),
        "parentId": parent_id,
        "timestamp": iso_now(now),
        "targetId": target_id,
        "label": label,
    }


def summary_request(index: SessionIndex, plan: NavigationPlan, instructions: str | None = None) -> SummaryRequest:
    """The one summarization call ``generateBranchSummary`` makes for ``plan``.

    The system prompt is the compaction's (pitools' wording); the reasoning level is the
    session's thinking level at the leaf being left, as Pi passes its current one.
    """
    from pitools.core.compaction.prompts import SYSTEM_PROMPT
    from pitools.core.compaction.summarizer import SummaryRequest
    from pitools.core.context.build import build_projection
    from pitools.core.js.json.encode import jsonable

    if plan.prompt_error is not None:
        raise PiCrashError(f"Pi 1.6.0 throws while building the summary request: {plan.prompt_error}")
    if plan.prompt is None:
        raise NavigateError("nothing on the branch being left is a message: no summary request is made")
    thinking = build_projection(index.session_path(plan.from_id)).thinking_level
    level = thinking if thinking in ("minimal", "low", "medium", "high", "xhigh") else None
    llm = [m for m in jsonable(convert_to_llm(plan.prepared.messages)) if isinstance(m, dict)]
    return SummaryRequest(
        system_prompt=SYSTEM_PROMPT,
        prompt=plan.prompt,
        kind="history",
        reasoning_level=level,
        messages=llm,
        custom_instructions=instructions,
    )
