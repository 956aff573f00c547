"""Compaction planning: Pi 1.6.0's ``prepareCompaction`` and the summarizer input it implies.

Planning never calls a model. The plan says which projected entries get summarized, where the
cut falls, whether a turn is split, and what text the summarizer would receive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.context.build import (
    ProjectedEntry,
    Projection,
    build_projection,
    estimate_projected_context_tokens,
)
from pitools.core.context.messages import content_text, convert_to_llm, entry_to_messages
from pitools.core.js import ops as jsops
from pitools.core.js.json.encode import js_stringify
from pitools.core.js.json.exact import quote as _quote
from pitools.core.js.ops import nullish, prop, truthy
from pitools.core.js.types import Entry, EntryId, JsValue, Message
from pitools.core.js.value import UNDEFINED, slice_head_utf16, utf16_len

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
TOOL_RESULT_MAX_CHARS = 2000

_CUT_ROLES = ("user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary")
_TURN_START_ROLES = ("user", "bashExecution", "custom", "branchSummary", "compactionSummary")


@dataclass(slots=True)
class FileOps:
    """Pi's ``FileOperations``: three insertion-ordered sets of paths."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def to_json(self) -> dict[str, list[str]]:
        return {
            "read": js_sorted(self.read),
            "written": js_sorted(self.written),
            "edited": js_sorted(self.edited),
        }


def js_sorted(items: Any) -> list[Any]:
    """``[...items].sort()``: JavaScript's default order compares UTF-16 code units."""
    return sorted(items, key=_utf16_key)


def _utf16_key(value: JsValue) -> bytes:
    text = value if type(value) is str else jsops.to_string(value)
    return text.encode("utf-16-be", "surrogatepass")


def _add_file_op(name: JsValue, args: JsValue, ops: FileOps) -> None:
    path = prop(args, "path") if not nullish(args) else UNDEFINED
    if type(path) is not str or not path:
        return
    if name == "read":
        ops.read[path] = None
    elif name == "write":
        ops.written[path] = None
    elif name == "edit":
        ops.edited[path] = None


_FILE_TOOLS = ("read", "write", "edit")


def extract_file_ops(message: Any, ops: FileOps) -> None:
    """Pi's ``extractFileOpsFromMessage``: read/write/edit tool calls with a string ``path``."""
    if type(message) is dict:  # the usual shapes, read directly
        role = message.get("role")
        if role == "assistant":
            content = message.get("content")
            if type(content) is list:
                for block in content:
                    if (
                        type(block) is dict
                        and block.get("type") == "toolCall"
                        and block.get("name") in _FILE_TOOLS
                        and "arguments" in block
                    ):
                        _add_file_op(block["name"], block["arguments"], ops)
            return
        if role != "toolResult" or message.get("nestedCalls") is None:
            return  # no file operations (``nestedCalls?.calls ?? []`` is empty)
    role = prop(message, "role")
    if role == "toolResult":
        nested = prop(message, "nestedCalls")
        calls = UNDEFINED if nullish(nested) else prop(nested, "calls")
        for call in jsops.iterate([] if nullish(calls) else calls, "calls"):
            _add_file_op(prop(call, "name"), prop(call, "arguments"), ops)
        return
    if role != "assistant" or type(message) is not dict:
        return
    content = message.get("content", UNDEFINED)
    if "content" not in message or type(content) is not list:
        return
    for block in content:
        if type(block) is not dict or block.get("type") != "toolCall":
            continue
        if "arguments" not in block or "name" not in block:
            continue
        _add_file_op(block["name"], block["arguments"], ops)


def compute_file_lists(ops: FileOps) -> tuple[list[str], list[str]]:
    """Pi's ``computeFileLists``: read-only files and modified files, each sorted."""
    modified = dict.fromkeys([*ops.edited, *ops.written])
    read_only = [f for f in ops.read if f not in modified]
    return js_sorted(read_only), js_sorted(modified)


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """Pi's ``formatFileOperations``: the tags appended to a compaction summary."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


# -- serialization ------------------------------------------------------------------------------


def truncate_for_summary(text: str, max_chars: int) -> str:
    """Pi's ``truncateForSummary``: at most ``max_chars`` UTF-16 units, then how many were cut."""
    if text.isascii():  # the usual tool output: units are characters
        n = len(text)
        if n <= max_chars:
            return text
        head = text[: max_chars if max_chars > 0 else 0]
    else:
        n = utf16_len(text)
        if n <= max_chars:
            return text
        head = slice_head_utf16(text, max_chars)
    return f"{head}\n\n[... {n - max_chars} more characters truncated]"


def _entries_of(value: JsValue) -> list[tuple[str, Any]]:
    from pitools.core.context.messages import _object_entries

    return _object_entries(value)


def serialize_conversation(messages: list[Message]) -> str:
    """Pi's ``serializeConversation``: the plain-text transcript the summarizer reads."""
    return "\n\n".join(conversation_parts(messages))


def conversation_parts(messages: list[Message]) -> Iterator[str]:
    """The parts ``serializeConversation`` joins with blank lines, one at a time.

    The usual shapes (dict messages whose blocks are dicts with string fields) are read directly;
    any other message goes through the general rules, which throw where Pi's code does.
    """
    for msg in messages:
        if type(msg) is dict:
            part = _fast_part(msg)
            if part is not _SLOW:
                if part is not None:
                    yield from part
                continue
        yield from _general_parts(msg)


def checked_conversation(messages: list[Message]) -> Callable[[], Iterator[str]]:
    """:func:`conversation_parts` in two steps: everything that can throw runs now, the text is
    made later, by the returned function, as often as it is called.

    A message in the usual shape (:func:`_plain_message`) cannot make the serialization throw,
    so it is only checked now; the parts of any other message (rare) are made now and kept. A
    caller can so write a transcript piece by piece without holding it, and still fail before
    the first byte where Pi's ``serializeConversation`` would throw.
    """
    kept: dict[int, tuple[str, ...]] = {}
    for i, msg in enumerate(messages):
        if type(msg) is dict and _plain_message(msg):
            continue
        part = _fast_part(msg) if type(msg) is dict else _SLOW
        kept[i] = tuple(_general_parts(msg)) if part is _SLOW else (part or ())

    def parts() -> Iterator[str]:
        for i, msg in enumerate(messages):
            done = kept.get(i)
            if done is not None:
                yield from done
                continue
            part = _fast_part(msg)
            if part is _SLOW:  # pragma: no cover - _plain_message and _fast_part disagree (a bug)
                yield from _general_parts(msg)
            elif part is not None:
                yield from part

    return parts


def _plain_message(msg: dict[str, Any]) -> bool:
    """True when :func:`_fast_part` takes ``msg`` and nothing it calls can throw: blocks are
    dicts, texts and tool names strings, tool arguments objects of strings (other argument
    values go through ``JSON.stringify``, which is left to the step that may throw)."""
    role: JsValue = msg.get("role")
    if role == "toolResult" or role == "user" or role == "assistant":
        content = msg.get("content")
        if type(content) is str:
            return role != "assistant"
        if type(content) is not list:
            return False
        for block in content:
            if type(block) is not dict:
                return False
            btype = block.get("type")
            if btype == "text":
                if type(block.get("text")) is not str:
                    return False
            elif btype == "toolCall" and role == "assistant":
                args = block.get("arguments")
                if type(block.get("name")) is not str or type(args) is not dict:
                    return False
                for value in args.values():
                    if type(value) is not str:
                        return False
        return True
    return role == "system" or role is None


#: :func:`_fast_part` could not decide: the message takes the general rules.
_SLOW: Any = object()


def _text_blocks(content: list[Any]) -> list[str] | None:
    """The ``text`` of every text block, or None when a block is not the usual dict with a string."""
    texts = []
    for block in content:
        if type(block) is not dict:
            return None
        if block.get("type") == "text":
            text = block.get("text")
            if type(text) is not str:
                return None
            texts.append(text)
    return texts


def _fast_part(msg: dict[str, Any]) -> Any:
    """The parts one usual message contributes (a tuple, or None for none), or :data:`_SLOW`."""
    role = msg.get("role")
    if role == "toolResult" or role == "user":
        content = msg.get("content")
        text: Any
        if type(content) is str:
            text = content
        elif type(content) is list:
            block = content[0] if len(content) == 1 else None
            if type(block) is dict and block.get("type") == "text":  # the usual single text block
                text = block.get("text")
                if type(text) is not str:
                    return _SLOW
            else:
                texts = _text_blocks(content)
                if texts is None:
                    return _SLOW
                text = "".join(texts)
        else:
            return _SLOW
        if not text:
            return None
        if role == "user":
            return (f"[User]: {text}",)
        return (f"[Tool result]: {truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}",)
    if role == "assistant":
        content = msg.get("content")
        if type(content) is not list:
            return _SLOW
        texts = []
        calls = []
        has_text = False
        for block in content:
            if type(block) is not dict:
                return _SLOW
            btype = block.get("type")
            if btype == "text":
                block_text = block.get("text")
                if type(block_text) is not str:
                    return _SLOW
                has_text = True
                texts.append(block_text)
            elif btype == "toolCall":
                name = block.get("name")
                args = block.get("arguments")
                if type(name) is not str or type(args) is not dict:
                    return _SLOW
                items = []
                for k, v in args.items():
                    if k[:1] in _DIGITS:  # an array-index key: V8 lists those first
                        items = [f"{k}={_arg_json(v)}" for k, v in _entries_of(args)]
                        break
                    items.append(f"{k}={_quote(v)}" if type(v) is str else f"{k}={_arg_json(v)}")
                calls.append(f"{name}({', '.join(items)})")
        if not has_text:
            return (f"[Assistant tool calls]: {'; '.join(calls)}",) if calls else None
        head = f"[Assistant]: {chr(10).join(texts)}"
        return (head, f"[Assistant tool calls]: {'; '.join(calls)}") if calls else (head,)
    if role == "system" or role is None:
        return None
    return _SLOW


_DIGITS = frozenset("0123456789")


def _arg_json(value: JsValue) -> str:
    """``JSON.stringify(value)`` as a template literal shows it."""
    if type(value) is str:
        return js_stringify(value) or ""
    return jsops.to_string(js_stringify(value))


def _general_parts(msg: Any) -> Iterator[str]:
    """One message under the general rules (every property read as JavaScript would)."""
    role = prop(msg, "role")
    if role == "user":
        text = content_text(prop(msg, "content"), "")
        if text:
            yield f"[User]: {text}"
    elif role == "assistant":
        content = prop(msg, "content")
        calls = []
        for block in jsops.iterate(content, "msg.content"):
            if prop(block, "type") == "toolCall":
                args = ", ".join(
                    f"{k}={jsops.to_string(js_stringify(v))}" for k, v in _entries_of(prop(block, "arguments"))
                )
                calls.append(f"{jsops.to_string(prop(block, 'name'))}({args})")
        if type(content) is not list:
            # A string iterates above (character by character) but has no .some().
            raise jsops.type_error("msg.content.some is not a function")
        if any(prop(b, "type") == "text" for b in content):
            yield f"[Assistant]: {content_text(content)}"
        if calls:
            yield f"[Assistant tool calls]: {'; '.join(calls)}"
    elif role == "toolResult":
        text = content_text(prop(msg, "content"), "")
        if text:
            yield f"[Tool result]: {truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}"


# -- cut points -----------------------------------------------------------------------------------


def _has_role(pe: ProjectedEntry, roles: tuple[str, ...]) -> bool:
    """``sourceEntry.type !== "compaction" && messages.some(m => roles has m.role)``."""
    source = pe.source
    if type(source) is dict and source.get("type") == "compaction":
        return False
    for m in pe.messages:
        role = m.get("role", UNDEFINED) if type(m) is dict else prop(m, "role")
        if role in roles:
            return True
    return False


def _is_cut_point(pe: ProjectedEntry) -> bool:
    return _has_role(pe, _CUT_ROLES)


def _is_turn_start(pe: ProjectedEntry) -> bool:
    return _has_role(pe, _TURN_START_ROLES)


_MESSAGE_ENTRY_TYPES = ("message", "custom_message", "branch_summary", "compaction")


def _intrinsically_visible(pe: ProjectedEntry) -> bool:
    """``type !== "context_edit" && sessionEntryToContextMessages(sourceEntry).length > 0``."""
    source = pe.source
    if type(source) is dict:
        etype = source.get("type")
        if etype == "message" and type(source.get("message")) is dict:
            return True  # one message, whatever its role
        if etype not in _MESSAGE_ENTRY_TYPES:
            return False  # context edits and every entry type that contributes nothing
    return len(entry_to_messages(source)) > 0


@dataclass(frozen=True, slots=True)
class CutPoint:
    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _entry_tokens(pe: ProjectedEntry) -> Any:
    return pe.tokens()


def find_cut_point(entries: list[ProjectedEntry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Pi's ``findProjectedCutPoint``: keep about ``keep_recent_tokens`` of the newest context.

    Pi lists every valid cut point first; only the first one and the first at or after the
    budget's entry are ever used, so those two are searched for (a projection that was built
    has no message whose role could not be read, so the skipped checks could not throw).
    """
    first = next((i for i in range(start, end) if _is_cut_point(entries[i])), -1)
    if first < 0:
        return CutPoint(start, -1, False)
    accumulated: Any = 0
    exceeded = False
    cut = first
    for i in range(end - 1, start - 1, -1):
        tokens = _entry_tokens(entries[i])
        if tokens == 0:
            continue
        accumulated = jsops.add(accumulated, tokens)
        if type(accumulated) in (int, float) and accumulated >= keep_recent_tokens:
            exceeded = True
            # cutPoints.find(c => c >= i) ?? the last cut point
            after = next((c for c in range(max(i, first), end) if _is_cut_point(entries[c])), -1)
            if after < 0:
                after = next(c for c in range(min(i, end) - 1, first - 1, -1) if _is_cut_point(entries[c]))
            cut = after
            break
    # A failed recovery attempt whose messages were all edited out, after the last visible
    # input, is skipped rather than kept (Pi advances the cut by one in that case only).
    suffix = entries[cut + 1 : end]

    intrinsically_visible = _intrinsically_visible

    def omitted(pe: ProjectedEntry) -> bool:
        return intrinsically_visible(pe) and not pe.messages

    omitted_ids = {_key(pe.source_id) for pe in suffix if omitted(pe)}
    external_replacement = any(
        pe.source_type == "context_edit"
        and pe.source.get("replacement", UNDEFINED) is not None
        and _key(pe.source.get("targetId", UNDEFINED)) not in omitted_ids
        for pe in suffix
    )
    recovery_suffix = (
        exceeded
        and not external_replacement
        and any(
            pe.source_type == "message"
            and prop(pe.source.get("message", UNDEFINED), "role") == "assistant"
            and omitted(pe)
            for pe in suffix
        )
        and all(pe.source_type != "compaction" and (not intrinsically_visible(pe) or omitted(pe)) for pe in suffix)
    )
    if recovery_suffix:
        cut += 1
    while cut > start:
        prev = entries[cut - 1]
        if prev.source_type == "compaction" or prev.messages:
            break
        cut -= 1
    if cut >= len(entries):
        # Pi reads entries[cut].sourceEntry here and throws on an empty projection.
        raise jsops.type_error("Cannot read properties of undefined (reading 'sourceEntry')")
    starts_turn = _is_turn_start(entries[cut])
    turn_start = -1
    if not starts_turn:
        for i in range(cut, start - 1, -1):
            if _is_turn_start(entries[i]):
                turn_start = i
                break
    return CutPoint(cut, turn_start, not starts_turn and turn_start != -1)


def _key(value: JsValue) -> Any:
    from pitools.core.session.tree import mkey

    return mkey(value)


# -- prepareCompaction ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    enabled: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@dataclass(slots=True)
class CompactionPreparation:
    """Pi's ``CompactionPreparation`` plus the regions (projected-entry index ranges) behind it."""

    first_kept_entry_id: EntryId
    messages_to_summarize: list[Message]
    turn_prefix_messages: list[Message]
    is_split_turn: bool
    tokens_before: Any
    previous_summary: Any
    file_ops: FileOps
    settings: CompactionSettings
    projection: Projection
    boundary_start: int
    history_end: int
    first_kept_index: int
    prev_compaction_index: int

    def serialized_conversation(self) -> str:
        return serialize_conversation(convert_to_llm(self.messages_to_summarize))

    def serialized_turn_prefix(self) -> str | None:
        if not self.is_split_turn:
            return None
        return serialize_conversation(convert_to_llm(self.turn_prefix_messages))

    def file_lists(self) -> tuple[list[str], list[str]]:
        return compute_file_lists(self.file_ops)

    def to_json(
        self, guard: Callable[[Callable[[], Any]], Any] | None = None, *, stream: bool = False
    ) -> dict[str, Any]:
        """Pi's ``CompactionPreparation`` fields (``fileOps`` sorted) plus the serialized inputs.

        ``guard`` wraps the two serializations (which throw where Pi's would), e.g. to record
        the error in place of the text. ``stream=True`` gives the message lists and the texts as
        :class:`~pitools.core.js.json.stream.JsonStream` members for
        :func:`~pitools.core.js.json.stream.json_chunks` (the texts are escaped now, the
        messages serialized only as they are written).
        """
        run = guard or (lambda fn: fn())
        to_summarize: Any = self.messages_to_summarize
        prefix: Any = self.turn_prefix_messages
        if stream:
            from pitools.core.js.json.stream import stream_array, stream_text

            to_summarize, prefix = stream_array(to_summarize), stream_array(prefix)
            conversation = run(lambda: stream_text(checked_conversation(convert_to_llm(self.messages_to_summarize))))
            turn_prefix = (
                run(lambda: stream_text(checked_conversation(convert_to_llm(self.turn_prefix_messages))))
                if self.is_split_turn
                else None
            )
        else:
            conversation = run(self.serialized_conversation)
            turn_prefix = run(self.serialized_turn_prefix)
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": to_summarize,
            "turnPrefixMessages": prefix,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": None if self.previous_summary is UNDEFINED else self.previous_summary,
            "fileOps": self.file_ops.to_json(),
            "settings": self.settings.to_json(),
            "serializedConversation": conversation,
            "serializedTurnPrefix": turn_prefix,
        }


def _summary_messages(entries: list[ProjectedEntry]) -> list[Any]:
    """The messages of each entry, concatenated, without older compactions (they contribute
    nothing) and system messages (prompt state, replayed separately)."""
    out: list[Any] = []
    append = out.append
    for pe in entries:
        source = pe.source
        if type(source) is dict and source.get("type") == "compaction":
            continue
        for m in pe.messages:
            if type(m) is dict:
                if m.get("role") != "system":
                    append(m)
            elif prop(m, "role") != "system":
                append(m)
    return out


def prepare_compaction(
    path_entries: Sequence[Entry],
    settings: CompactionSettings,
    *,
    projection: Projection | None = None,
    tokens_before: Any = None,
) -> CompactionPreparation | None:
    """Pi's ``prepareCompaction(pathEntries, settings)``; None where Pi returns undefined.

    ``projection`` may pass in ``build_projection(path_entries)`` when the caller has it already.
    """
    if path_entries:
        last = path_entries[-1]
        if type(last) is dict and last.get("type") == "compaction":
            return None
    if projection is None:
        projection = build_projection(reprojected_path(list(path_entries)))
    projected = projection.entries
    prev_idx = next(
        (
            i
            for i, pe in enumerate(projected)
            if pe.messages and type(pe.source) is dict and pe.source.get("type") == "compaction"
        ),
        -1,
    )
    previous_summary: Any = UNDEFINED
    boundary_start = 0
    if prev_idx >= 0:
        previous_summary = projected[prev_idx].source.get("summary", UNDEFINED)
        boundary_start = prev_idx + 1
    boundary_end = len(projected)
    if tokens_before is None:
        tokens_before = estimate_projected_context_tokens(projection, list(path_entries)).tokens
    cut = find_cut_point(projected, boundary_start, boundary_end, settings.keep_recent_tokens)
    first_kept = projected[cut.first_kept_index].source
    first_kept_id = first_kept.get("id", UNDEFINED) if type(first_kept) is dict else UNDEFINED
    if not truthy(first_kept_id):
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    to_summarize = _summary_messages(projected[boundary_start:history_end])
    prefix = _summary_messages(projected[cut.turn_start_index : cut.first_kept_index]) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    ops = FileOps()
    if prev_idx >= 0:
        prev = projected[prev_idx].source
        details = prev.get("details", UNDEFINED)
        if not truthy(prev.get("fromHook", UNDEFINED)) and truthy(details):
            read_files = prop(details, "readFiles")
            if type(read_files) is list:
                for f in read_files:
                    ops.read[_hashable(f)] = None
            modified = prop(details, "modifiedFiles")
            if type(modified) is list:
                for f in modified:
                    ops.edited[_hashable(f)] = None
    for m in to_summarize:
        extract_file_ops(m, ops)
    if cut.is_split_turn:
        for m in prefix:
            extract_file_ops(m, ops)
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=ops,
        settings=settings,
        projection=projection,
        boundary_start=boundary_start,
        history_end=history_end,
        first_kept_index=cut.first_kept_index,
        prev_compaction_index=prev_idx,
    )


def reprojected_path(path: list[Entry]) -> list[Any]:
    """The path Pi's ``buildSessionProjection(pathEntries)`` walks: from the last entry up, by id.

    For a branch whose ids are all distinct that is the branch itself; only duplicate ids can
    make Pi's re-walk differ, so only then is it repeated.
    """
    from pitools.core.session.tree import SessionIndex, mkey

    seen = {mkey(e.get("id", UNDEFINED) if type(e) is dict else UNDEFINED) for e in path}
    if len(seen) == len(path):
        return path
    return SessionIndex.build(path).session_path(UNDEFINED)


def _hashable(value: JsValue) -> Any:
    return value if type(value) is str else jsops.to_string(value)


def should_compact(context_tokens: Any, context_window: int, settings: CompactionSettings) -> bool:
    """Pi's ``shouldCompact``: context above ``window - reserveTokens``."""
    if not settings.enabled or type(context_tokens) not in (int, float):
        return False
    return bool(context_tokens > context_window - settings.reserve_tokens)
