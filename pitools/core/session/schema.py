"""Pydantic v2 models of Pi 1.6.0's session lines: the header, every v3 entry type, every message role.

The shapes follow Pi's own TypeScript declarations (``session-manager.d.ts``, ``messages.d.ts`` and
pi-ai's ``types.d.ts``). Attributes are snake_case; Pi's camelCase names are the aliases, so
``Model.model_validate(parsed_json)`` reads a line as Pi wrote it and ``model_dump(by_alias=True)``
writes it back. Unknown fields are kept (``extra="allow"``): Pi ignores them and so do we.

These models exist for validation and for ``schemas/session.schema.json`` only. The core loads
sessions as plain dicts (far faster), and :mod:`pitools.core.validate` imports this module lazily,
running it only on entries whose cheap checks look suspicious.

Validation is strict: ``"3"`` is not a number and ``1`` is not a boolean, because Pi would not
coerce them either. Entry and message types Pi does not know fall through to
:class:`UnknownEntry` / :class:`UnknownMessage` rather than failing, as Pi keeps them too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from pitools import PI_REFERENCE_VERSION
from pitools.core.js.json.encode import short_json as _short_json
from pitools.core.js.value import UNDEFINED

__all__ = [
    "ENTRY_TYPES",
    "MESSAGE_ROLES",
    "AgentMessage",
    "SessionEntry",
    "SessionHeader",
    "SessionLine",
    "entry_adapter",
    "entry_check",
    "entry_problems",
    "field_problems",
    "line_adapter",
]


class PiModel(BaseModel):
    """Base: camelCase aliases, unknown fields kept, no type coercion."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        # Only Pi's spelling counts when validating a file: ``parent_id`` is not ``parentId``.
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        extra="allow",
        strict=True,
        protected_namespaces=(),
    )


#: A JavaScript number (JSON integer or float; booleans and strings are rejected).
Number = float
#: Any JSON object.
JsonObject = dict[str, Any]


# -- content blocks (pi-ai types.d.ts) ------------------------------------------------------------


class TextContent(PiModel):
    type: Literal["text"]
    text: str
    text_signature: str | None = None


class ThinkingContent(PiModel):
    type: Literal["thinking"]
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(PiModel):
    type: Literal["image"]
    data: str
    mime_type: str


class ToolCall(PiModel):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: JsonObject
    thought_signature: str | None = None
    namespace: str | None = None
    arguments_error: str | None = None


UserBlock = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantBlock = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]
AnyBlock = Annotated[TextContent | ThinkingContent | ImageContent | ToolCall, Field(discriminator="type")]


# -- usage and helpers --------------------------------------------------------------------------


class UsageCost(PiModel):
    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    total: Number
    total_from_provider: bool | None = None


class Usage(PiModel):
    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    # to_camel would spell this "cacheWrite1H".
    cache_write_1h: Number | None = Field(default=None, alias="cacheWrite1h")
    reasoning: Number | None = None
    total_tokens: Number
    cost: UsageCost


class Tool(PiModel):
    name: str
    description: str
    parameters: JsonObject


class ToolReference(PiModel):
    name: str


class NestedToolCallRecord(PiModel):
    id: str
    name: str
    arguments: JsonObject | None = None
    arguments_bytes: Number | None = None
    status: Literal["ok", "error", "unfinished"]
    duration_ms: Number | None = None
    error: str | None = None


class NestedToolCalls(PiModel):
    calls: list[NestedToolCallRecord]
    complete: bool


class DeferredHandle(PiModel):
    provider: str
    model_id: str
    api: str
    id: str
    expires_at: Number | None = None
    poll_after_ms: Number | None = None
    data: Any = None


StopReason = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]


# -- messages (AgentMessage) --------------------------------------------------------------------


class SystemMessage(PiModel):
    role: Literal["system"]
    content: str | list[TextContent]
    sections: dict[str, str | None] | None = None
    tools_added: list[Tool] | None = None
    tools_removed: list[ToolReference] | None = None
    timestamp: Number


class UserMessage(PiModel):
    role: Literal["user"]
    content: str | list[UserBlock]
    timestamp: Number


class AssistantMessage(PiModel):
    role: Literal["assistant"]
    content: list[AssistantBlock]
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    provider_thinking_level: str | None = None
    thinking_level: str | None = None
    diagnostics: list[Any] | None = None
    usage: Usage
    stop_reason: StopReason
    deferred: DeferredHandle | None = None
    error_message: str | None = None
    raw_stop_reason: str | None = None
    end_turn: bool | None = None
    timestamp: Number
    duration_ms: Number | None = None


class ToolResultMessage(PiModel):
    role: Literal["toolResult"]
    tool_call_id: str
    tool_name: str
    content: list[UserBlock]
    details: Any = None
    usage: Usage | None = None
    nested_calls: NestedToolCalls | None = None
    is_error: bool
    timestamp: Number
    duration_ms: Number | None = None


class BashExecutionMessage(PiModel):
    role: Literal["bashExecution"]
    command: str
    output: str
    # ``number | undefined`` in Pi: JSON.stringify drops the key when the command had no exit code.
    exit_code: Number | None = None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: Number


class CustomMessage(PiModel):
    role: Literal["custom"]
    custom_type: str
    content: str | list[UserBlock]
    display: bool
    details: Any = None
    timestamp: Number


class BranchSummaryMessage(PiModel):
    role: Literal["branchSummary"]
    summary: str
    from_id: str | None
    timestamp: Number


class CompactionSummaryMessage(PiModel):
    role: Literal["compactionSummary"]
    summary: str
    tokens_before: Number
    timestamp: Number


_KNOWN_MESSAGES = (
    SystemMessage,
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
)
#: The roles Pi 1.6.0 knows, as the models' ``role`` literals spell them.
MESSAGE_ROLES: tuple[str, ...] = tuple(get_args(m.model_fields["role"].annotation)[0] for m in _KNOWN_MESSAGES)


class UnknownMessage(PiModel):
    """A role Pi 1.6.0 does not know: kept in the session, dropped by ``convertToLlm``."""

    role: str = Field(json_schema_extra={"not": {"enum": list(MESSAGE_ROLES)}})


class TagOf:
    """A union's discriminator: the value's ``field`` if it is one of ``known``, else ``"unknown"``.

    A class, not a function, so the fast check's generator can write it out as source. pydantic
    names it in error messages, as it would a function: ``name`` stands for that.
    """

    def __init__(self, name: str, field: str, known: Iterable[str]) -> None:
        self.__name__ = name
        self.field = field
        self.known = frozenset(known)

    def __call__(self, value: Any) -> str:
        tag = value.get(self.field) if isinstance(value, dict) else getattr(value, self.field, None)
        return tag if isinstance(tag, str) and tag in self.known else "unknown"

    def __repr__(self) -> str:
        return f"TagOf({self.__name__!r}, {self.field!r}, {sorted(self.known)!r})"


_message_tag = TagOf("_message_tag", "role", MESSAGE_ROLES)


AgentMessage = Annotated[
    Annotated[SystemMessage, Tag("system")]
    | Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[BashExecutionMessage, Tag("bashExecution")]
    | Annotated[CustomMessage, Tag("custom")]
    | Annotated[BranchSummaryMessage, Tag("branchSummary")]
    | Annotated[CompactionSummaryMessage, Tag("compactionSummary")]
    | Annotated[UnknownMessage, Tag("unknown")],
    Discriminator(_message_tag),
]


# -- header and entries (session-manager.d.ts) --------------------------------------------------


class SessionHeader(PiModel):
    """The first line of a session file (``SessionHeader``)."""

    type: Literal["session"]
    version: Annotated[int, Field(ge=1, le=3)] | None = None
    id: str
    timestamp: str = Field(json_schema_extra={"format": "date-time"})
    cwd: str
    parent_session: str | None = None


class EntryBase(PiModel):
    """``SessionEntryBase``: every entry has an id, a parent (null for a root) and an ISO timestamp."""

    id: str
    parent_id: str | None
    timestamp: str = Field(json_schema_extra={"format": "date-time"})


class MessageEntry(EntryBase):
    type: Literal["message"]
    message: AgentMessage


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"]
    thinking_level: str


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"]
    provider: str
    model_id: str


class UsageEntry(EntryBase):
    type: Literal["usage"]
    kind: str
    provider: str
    model: str
    usage: Usage
    note: str | None = None


class CompactionEntry(EntryBase):
    type: Literal["compaction"]
    summary: str
    first_kept_entry_id: str
    tokens_before: Number
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None
    system_message: SystemMessage | None = None


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"]
    from_id: str
    summary: str
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


class ContextEditReplacement(PiModel):
    """``{content: ContextEditableContent}``: a string or a content-block array."""

    content: str | list[AnyBlock]


class ContextEditEntry(EntryBase):
    type: Literal["context_edit"]
    target_id: str
    # Required key; ``null`` removes the target from the model context.
    replacement: ContextEditReplacement | None


class CustomEntry(EntryBase):
    type: Literal["custom"]
    custom_type: str
    data: Any = None


class CustomMessageEntry(EntryBase):
    type: Literal["custom_message"]
    custom_type: str
    content: str | list[UserBlock]
    details: Any = None
    display: bool


class LabelEntry(EntryBase):
    type: Literal["label"]
    target_id: str
    # ``string | undefined``: an absent (or empty) label clears the target's label.
    label: str | None = None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"]
    name: str | None = None


ENTRY_MODELS: dict[str, type[EntryBase]] = {
    "message": MessageEntry,
    "model_change": ModelChangeEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "context_edit": ContextEditEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
    "usage": UsageEntry,
}
ENTRY_TYPES: tuple[str, ...] = tuple(ENTRY_MODELS)


class UnknownEntry(EntryBase):
    """An entry type Pi 1.6.0 does not know: Pi keeps it in the tree and ignores it for context."""

    type: str = Field(json_schema_extra={"not": {"enum": ["session", *ENTRY_TYPES]}})


_entry_tag = TagOf("_entry_tag", "type", (*ENTRY_TYPES, "session"))


_ENTRY_VARIANTS = (
    Annotated[MessageEntry, Tag("message")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[ContextEditEntry, Tag("context_edit")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[UsageEntry, Tag("usage")]
    | Annotated[UnknownEntry, Tag("unknown")]
)

#: Any non-header line (``SessionEntry`` plus unknown types), discriminated on ``type``.
SessionEntry = Annotated[_ENTRY_VARIANTS, Discriminator(_entry_tag)]

#: One line of a v3 session file: the header or an entry (``FileEntry``).
SessionLine = Annotated[
    Annotated[SessionHeader, Tag("session")] | _ENTRY_VARIANTS,
    Discriminator(_entry_tag),
]

_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def entry_adapter() -> TypeAdapter[Any]:
    """A cached ``TypeAdapter`` for :data:`SessionEntry`."""
    if "entry" not in _ADAPTERS:
        _ADAPTERS["entry"] = TypeAdapter(SessionEntry)
    return _ADAPTERS["entry"]


def line_adapter() -> TypeAdapter[Any]:
    """A cached ``TypeAdapter`` for :data:`SessionLine` (what the JSON Schema describes)."""
    if "line" not in _ADAPTERS:
        _ADAPTERS["line"] = TypeAdapter(SessionLine)
    return _ADAPTERS["line"]


# -- a cheap pre-check generated from the same annotations --------------------------------------
#
# Running pydantic on every entry of a 100 MB session costs as much as loading it. The predicate
# :mod:`pitools.core.session.entry_precheck` is generated from the models' own annotations (by
# :mod:`pitools.core.session.schema_check`, run from ``scripts/gen_schema.py``) as plain Python source, one
# flat function per model: when it says True, pydantic accepts the value too, and validate runs
# pydantic -- for its precise messages -- only where it says False. The module is committed, so
# using it imports neither pydantic nor this module; a test fails when it is out of date.

Check = Callable[[Any], bool]


def entry_check() -> Check:
    """A fast predicate: True means ``entry_adapter()`` accepts the entry (False: maybe not)."""
    from pitools.core.session.entry_precheck import check_root

    return check_root


# -- pydantic errors as readable problems ------------------------------------------------------

_TYPE_WORDS = {
    "string_type": "a string",
    "float_type": "a number",
    "int_type": "an integer",
    "bool_type": "a boolean",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "none_required": "null",
}


class FieldProblem(NamedTuple):
    """One thing the models reject, independent of the values involved (so it can be reused)."""

    code: str  # "missing-field" or "invalid-field"
    #: JSON path to the field (``("message", "content", 0, "text")``); None for "… and N more".
    path: tuple[Any, ...] | None
    text: str  # "is required", "should be a string", ...
    show_value: bool = False

    def describe(self, entry: Any) -> str:
        """The finding message for this problem in ``entry`` (quoting the offending value)."""
        if self.path is None:
            return self.text
        message = f"{_path_text(self.path)} {self.text}"
        if self.show_value:
            message += f" (got {_short_json(_value_at(entry, self.path))})"
        return message


def field_problems(entry: Any, skip: Iterable[tuple[str, ...]] = (), limit: int = 5) -> list[FieldProblem]:
    """What :data:`SessionEntry` finds wrong with ``entry``, at most ``limit`` problems.

    Paths are Pi's JSON paths without pydantic's union tags; problems under a path in ``skip``
    (already explained by another finding) are left out.
    """
    covered = tuple(skip)
    try:
        entry_adapter().validate_python(entry)
        return []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    # Clean each location into a JSON path, then merge union alternatives reported at one path.
    by_path: dict[tuple[Any, ...], list[Any]] = {}
    for err in errors:
        path = _clean_loc(err["loc"], entry)
        if any(path[: len(c)] == c for c in covered):
            continue
        by_path.setdefault(path, []).append(err)
    paths = list(by_path)
    out: list[FieldProblem] = []
    for path in paths:
        errs = by_path[path]
        # A union member that got further (a list whose items fail) explains more than "not a string".
        if any(len(p) > len(path) and p[: len(path)] == path for p in paths) and all(
            e["type"] in _TYPE_WORDS for e in errs
        ):
            continue
        out.append(_problem(path, errs))
    if len(out) > limit:
        extra = len(out) - limit + 1
        out = out[: limit - 1]
        out.append(FieldProblem("invalid-field", None, f"… and {extra} more field problem(s) in this entry"))
    return out


def entry_problems(entry: Any, skip: Iterable[tuple[str, ...]] = (), limit: int = 5) -> list[tuple[str, str]]:
    """:func:`field_problems` as ``(code, message)`` pairs."""
    return [(p.code, p.describe(entry)) for p in field_problems(entry, skip, limit)]


def _problem(path: tuple[Any, ...], errs: list[Any]) -> FieldProblem:
    if all(e["type"] == "missing" for e in errs):
        return FieldProblem("missing-field", path, "is required")
    kinds = [_TYPE_WORDS[e["type"]] for e in errs if e["type"] in _TYPE_WORDS]
    wants: list[str] = [f"should be {' or '.join(dict.fromkeys(kinds))}"] if kinds else []
    for e in errs:
        if e["type"] == "missing" or e["type"] in _TYPE_WORDS:
            continue
        if e["type"] == "union_tag_invalid":
            text = f"has an unknown type ({e['msg'].split(' does not match')[0].removeprefix('Input ')})"
        elif e["type"] == "union_tag_not_found":
            text = "has no type"
        else:
            text = e["msg"].replace("Input should", "should")
        if text not in wants:
            wants.append(text)
    return FieldProblem("invalid-field", path, " or ".join(wants), True)


def _value_at(value: Any, path: tuple[Any, ...]) -> Any:
    for seg in path:
        if type(value) is dict and type(seg) is str:
            value = value.get(seg, UNDEFINED)
        elif type(value) is list and type(seg) is int and -len(value) <= seg < len(value):
            value = value[seg]
        else:
            return UNDEFINED
    return value


def _path_text(path: tuple[Any, ...]) -> str:
    text = ""
    for seg in path:
        text += f"[{seg}]" if type(seg) is int else (f".{seg}" if text else str(seg))
    return f"`{text}`" if text else "the entry"


_UNION_LABELS = frozenset({"str", "int", "float", "bool", "none", "dict", "list"})


def _clean_loc(loc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
    """Drop the union tags pydantic puts in error locations, by walking the value itself."""
    out: list[Any] = []
    cur = value
    tag_done = False
    for seg in loc:
        if type(seg) is int:
            out.append(seg)
            cur = cur[seg] if type(cur) is list and -len(cur) <= seg < len(cur) else UNDEFINED
            tag_done = False
            continue
        if type(cur) is dict and not (seg not in cur and (seg in _UNION_LABELS or "[" in seg)):
            if not tag_done and (seg == "unknown" or cur.get("type") == seg or cur.get("role") == seg):
                tag_done = True
                continue
            out.append(seg)
            cur = cur.get(seg, UNDEFINED)
            tag_done = False
            continue
        # a union member label ("str", "list[...]") or a tag on a non-object: not part of the path
    return tuple(out)


#: The schema's identity: Pi's session format version (the header's ``version``), not pitools' release.
#: It changes only when Pi's format does (v4 would be ``...:v4``); a URN, since no host is promised.
SCHEMA_ID = "urn:pitools:schema:pi-session:v3"


def session_json_schema() -> dict[str, Any]:
    """JSON Schema 2020-12 for one line of a v3 session file (``schemas/session.schema.json``)."""
    schema = line_adapter().json_schema(by_alias=True, mode="validation", ref_template="#/$defs/{model}")
    defs = schema.get("$defs", {})
    for definition in defs.values():
        # pydantic titles every property after its name ("Parentid"): noise in a published schema.
        for prop_schema in definition.get("properties", {}).values():
            prop_schema.pop("title", None)
    schema = _dispatch_unions(schema, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "$comment": f"Pi session format v3 as Pi {PI_REFERENCE_VERSION} reads and writes it.",
        "title": "Pi session line (format v3)",
        "description": (
            "One line of a Pi coding-agent session file as Pi 1.6.0 writes it: the session header or an "
            "entry. Generated from pitools/core/session/schema.py by scripts/gen_schema.py; do not edit by hand."
        ),
        **schema,
    }


def _dispatch_unions(node: Any, defs: dict[str, Any]) -> Any:
    """Rewrite each ``oneOf`` over tagged models as ``if``/``then`` on the tag.

    Same meaning, since the tags are distinct; but a validator then checks one branch instead of
    all of them, and reports the real problem instead of "not valid under any of the schemas".
    """
    if isinstance(node, list):
        return [_dispatch_unions(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    node = {k: _dispatch_unions(v, defs) for k, v in node.items()}
    branches = node.get("oneOf")
    if not isinstance(branches, list) or not all(isinstance(b, dict) and "$ref" in b for b in branches):
        return node
    targets = [defs[b["$ref"].rsplit("/", 1)[-1]] for b in branches]
    for key in ("type", "role"):
        tags = [t.get("properties", {}).get(key, {}) for t in targets]
        if all("const" in tag or "not" in tag for tag in tags):
            break
    else:
        return node
    consts = [tag["const"] for tag in tags if "const" in tag]
    rules: list[Any] = []
    fallback = None
    for branch, tag in zip(branches, tags, strict=True):
        if "const" in tag:
            # No "required" in the test: a value without the tag fails every branch's own "required".
            rules.append({"if": {"properties": {key: {"const": tag["const"]}}}, "then": branch})
        else:
            fallback = branch
    if fallback is not None:
        rules.append({"if": {"properties": {key: {"not": {"enum": consts}}}}, "then": fallback})
    else:
        rules.append({"required": [key], "properties": {key: {"enum": consts}}})
    rest = {k: v for k, v in node.items() if k not in ("oneOf", "discriminator")}
    return {**rest, "allOf": rules}
