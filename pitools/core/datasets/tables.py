"""The tables ``pitools dataset`` writes: names, column types and what each column means.

Types are engine-neutral names mapped to Arrow types by the writer: ``string``, ``int64``,
``float64``, ``bool`` and ``timestamp`` (UTC, millisecond precision; JSONL holds ISO 8601 text).
Every table starts with ``session_key`` (the session file's canonical path, unique per file) and
``session_id`` (the header id, which ``/export`` copies, so not unique); every row that stands for
an entry carries ``copied``: true when a fork or clone copied that entry from an ancestor session
in the dataset, so fork-correct totals are ``WHERE NOT copied``.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    doc: str


def _c(name: str, type_: str, doc: str) -> Column:
    return Column(name, type_, doc)


_KEY = [
    _c("session_key", "string", "canonical path of the session file (unique per file)"),
    _c("session_id", "string", "the header's id"),
]
_USAGE = [
    _c("input_tokens", "int64", "Pi's usage.input (uncached input only)"),
    _c("output_tokens", "int64", "usage.output"),
    _c("cache_read_tokens", "int64", "usage.cacheRead"),
    _c("cache_write_tokens", "int64", "usage.cacheWrite"),
    _c("total_tokens", "int64", "input + output + cache reads + cache writes, as Pi's stats total it"),
    _c("cost", "float64", "usage.cost.total (USD, as recorded)"),
]

TABLES: dict[str, list[Column]] = {
    "sessions": [
        *_KEY,
        _c("path", "string", "the file path as given or found"),
        _c("cwd", "string", "the header's cwd"),
        _c("project", "string", "the project: the header's cwd in full (as usage --by project keys it)"),
        _c("project_name", "string", "the cwd's last folder name (two projects may share one)"),
        _c("name", "string", "the session name (the last session_info entry's name)"),
        _c("created", "timestamp", "the header's timestamp"),
        _c("parent_session", "string", "the header's parentSession as written"),
        _c("parent_key", "string", "session_key of the parent when it is in the dataset"),
        _c("lineage_root", "string", "session_key of the oldest ancestor in the dataset (itself when none)"),
        _c("version", "int64", "the file's session format version before migration"),
        _c("default_leaf", "string", "Pi's default leaf: the last entry's id"),
        _c("file_bytes", "int64", "file size"),
        _c("entries", "int64", "number of entries (header excluded)"),
        _c("messages", "int64", "number of message entries"),
        _c("leaves", "int64", "number of branches (leaves)"),
        _c("copied_entries", "int64", "entries copied from an ancestor session"),
        *_USAGE,
        _c("own_total_tokens", "int64", "total_tokens of the usage records not copied from an ancestor"),
        _c("own_cost", "float64", "cost of the usage records not copied from an ancestor"),
    ],
    "entries": [
        *_KEY,
        _c("entry_id", "string", "the entry's id"),
        _c("parent_id", "string", "the entry's parentId"),
        _c("type", "string", "entry type (message, compaction, model_change, ...)"),
        _c("role", "string", "message role for message entries"),
        _c("timestamp", "timestamp", "the entry's timestamp"),
        _c("line", "int64", "1-based line in the file"),
        _c("bytes", "int64", "length of the entry's line in bytes"),
        _c("depth", "int64", "position on the branch Pi walks to it (root = 0; null on or below a parentId loop)"),
        _c("on_default_branch", "bool", "on the path from the root to the default leaf"),
        _c("in_context", "bool", "among the entries Pi builds the default leaf's context from"),
        _c("compacted", "bool", "on the default branch but summarised away by a compaction"),
        _c("copied", "bool", "copied from an ancestor session by a fork or clone"),
    ],
    "messages": [
        *_KEY,
        _c("entry_id", "string", "the message entry's id"),
        _c("timestamp", "timestamp", "the entry's timestamp"),
        _c("role", "string", "user, assistant, toolResult, bashExecution, custom, system, ..."),
        _c("text", "string", "the text blocks joined by newlines (thinking and tool calls left out)"),
        _c("text_chars", "int64", "length of text in characters"),
        _c("model", "string", "assistant: the model (responseModel when recorded)"),
        _c("provider", "string", "assistant: the provider"),
        _c("api", "string", "assistant: the API"),
        _c("stop_reason", "string", "assistant: stopReason"),
        _c("error_message", "string", "assistant: errorMessage"),
        _c("tool_calls", "int64", "assistant: number of tool calls"),
        *_USAGE,
        _c("on_default_branch", "bool", "on the default branch"),
        _c("copied", "bool", "copied from an ancestor session"),
    ],
    "tool_calls": [
        *_KEY,
        _c("entry_id", "string", "the assistant entry holding the call"),
        _c("tool_call_id", "string", "the call's id"),
        _c("name", "string", "the tool name"),
        _c("arguments", "string", "the arguments as JSON text"),
        _c("result_entry_id", "string", "the tool result entry answering the call (null: none)"),
        _c("result_chars", "int64", "length of the result's text in characters"),
        _c("is_error", "bool", "the result's isError"),
        _c("started", "timestamp", "when the assistant message was written"),
        _c("ended", "timestamp", "when the result was written"),
        _c("duration_ms", "int64", "ended - started when both are known"),
        _c("on_default_branch", "bool", "the call is on the default branch"),
        _c("copied", "bool", "copied from an ancestor session"),
    ],
    "compactions": [
        *_KEY,
        _c("entry_id", "string", "the compaction entry's id"),
        _c("parent_id", "string", "its parentId"),
        _c("timestamp", "timestamp", "when it was written"),
        _c("first_kept_entry_id", "string", "firstKeptEntryId"),
        _c("tokens_before", "int64", "tokensBefore: the context size before compacting"),
        _c("summary_chars", "int64", "length of the summary in characters"),
        _c("from_hook", "bool", "fromHook"),
        *_USAGE,
        _c("on_default_branch", "bool", "on the default branch"),
        _c("copied", "bool", "copied from an ancestor session"),
    ],
    "usage": [
        *_KEY,
        _c("entry_id", "string", "the entry carrying the usage"),
        _c("timestamp", "timestamp", "the entry's time (else its message's)"),
        _c("source", "string", "assistant, toolResult, compaction, branch_summary or usage"),
        _c("provider", "string", "provider as Pi's usage breakdown keys it (Tools for summaries)"),
        _c("model", "string", "model as Pi's usage breakdown keys it (summaries for summaries)"),
        *_USAGE,
        _c("project", "string", "the session's project: its cwd in full"),
        _c("project_name", "string", "the cwd's last folder name"),
        _c("on_default_branch", "bool", "on the default branch"),
        _c("copied", "bool", "copied from an ancestor session: leave out for fork-correct totals"),
    ],
}
