"""Entry → message conversion and Pi's message transforms (``messages.js``, pi-ai text utilities).

Messages stay plain dicts in Pi's JSON shape. A key whose value is ``UNDEFINED`` exists in
JavaScript but is left out of JSON output; renderers drop such keys.
"""

from __future__ import annotations

from typing import Any

from pitools.core.js import ops as jsops
from pitools.core.js.date import js_date_ms
from pitools.core.js.ops import nullish, prop, truthy
from pitools.core.js.types import Entry, JsValue, Message
from pitools.core.js.value import UNDEFINED

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"

_CONTENT_ROLES = ("user", "assistant", "toolResult")


def _spread(message: JsValue, **changes: Any) -> Any:
    """``{...message, key: value}`` for a parsed JSON value."""
    if type(message) is dict:
        out = dict(message)
    elif type(message) is list:
        out = {str(i): v for i, v in enumerate(message)}
    elif type(message) is str:
        out = {str(i): ch for i, ch in enumerate(message)}
    else:
        out = {}
    out.update(changes)
    return out


def _drop_undefined(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not UNDEFINED}


def create_custom_message(entry: dict[str, Any], *, as_stored: bool = False) -> dict[str, Any]:
    """Pi's ``createCustomMessage``; the context's projection makes a missing content ``[]``, while
    ``getMessageFromEntry`` (``as_stored``) keeps the content as stored."""
    content = entry.get("content", UNDEFINED)
    if nullish(content) and not as_stored:
        content = []
    return {
        "role": "custom",
        "customType": entry.get("customType", UNDEFINED),
        "content": content,
        "display": entry.get("display", UNDEFINED),
        "details": entry.get("details", UNDEFINED),
        "timestamp": js_date_ms(entry.get("timestamp", UNDEFINED)),
    }


def create_branch_summary_message(entry: dict[str, Any]) -> dict[str, Any]:
    return _summary_message("branchSummary", entry, "fromId")


def create_compaction_summary_message(entry: dict[str, Any]) -> dict[str, Any]:
    return _summary_message("compactionSummary", entry, "tokensBefore")


def _summary_message(role: str, entry: dict[str, Any], extra: str) -> dict[str, Any]:
    """A summary entry as Pi's message: role, summary, the one ``extra`` field, timestamp (in that order)."""
    return {
        "role": role,
        "summary": entry.get("summary", UNDEFINED),
        extra: entry.get(extra, UNDEFINED),
        "timestamp": js_date_ms(entry.get("timestamp", UNDEFINED)),
    }


def entry_to_messages(entry: Entry) -> list[Any]:
    """Pi's ``sessionEntryToContextMessages``: what one entry contributes to the context."""
    if type(entry) is not dict:
        return []
    etype = entry.get("type")
    if etype == "message":
        message = entry.get("message", UNDEFINED)
        role = prop(message, "role")
        if role == "system" and nullish(prop(message, "content")):
            return [_spread(message, content="")]
        if role in _CONTENT_ROLES and nullish(prop(message, "content")):
            return [_spread(message, content=[])]
        return [message]
    if etype == "custom_message":
        return [create_custom_message(entry)]
    if etype == "branch_summary" and truthy(entry.get("summary", UNDEFINED)):
        return [create_branch_summary_message(entry)]
    if etype == "compaction":
        summary = create_compaction_summary_message(entry)
        system = entry.get("systemMessage", UNDEFINED)
        return [system, summary] if truthy(system) else [summary]
    return []


def contributes(entry: Entry) -> bool:
    """True when ``entry_to_messages`` would return something (cheap check, no copies)."""
    if type(entry) is not dict:
        return False
    etype = entry.get("type")
    if etype in ("message", "custom_message", "compaction"):
        if etype == "message":
            prop(entry.get("message", UNDEFINED), "role")
        return True
    return etype == "branch_summary" and truthy(entry.get("summary", UNDEFINED))


# -- pi-ai text utilities -------------------------------------------------------------


def content_text(content: JsValue, separator: str = "\n") -> str:
    """pi-ai ``contentText``: a string as is, else the text blocks joined."""
    if type(content) is str:
        return content
    if type(content) is not list:
        if nullish(content):
            raise jsops.type_error(
                f"Cannot read properties of {'null' if content is None else 'undefined'} (reading 'filter')"
            )
        raise jsops.type_error("content.filter is not a function")
    texts = [prop(b, "text") for b in content if prop(b, "type") == "text"]
    return jsops.join(texts, separator)


def bash_execution_to_text(msg: Any) -> str:
    """Pi's ``bashExecutionToText``: how a ``!command`` run is shown to the model."""
    text = f"Ran `{jsops.to_string(prop(msg, 'command'))}`\n"
    output = prop(msg, "output")
    if truthy(output):
        text += f"```\n{jsops.to_string(output)}\n```"
    else:
        text += "(no output)"
    exit_code = prop(msg, "exitCode")
    if truthy(prop(msg, "cancelled")):
        text += "\n\n(command cancelled)"
    elif not nullish(exit_code) and not (type(exit_code) in (int, float) and exit_code == 0):
        text += f"\n\nCommand exited with code {jsops.to_string(exit_code)}"
    if truthy(prop(msg, "truncated")) and truthy(prop(msg, "fullOutputPath")):
        text += f"\n\n[Output truncated. Full output: {jsops.to_string(prop(msg, 'fullOutputPath'))}]"
    return text


def _user_text(text: str, m: Any) -> dict[str, Any]:
    """A user message holding one text block, at ``m``'s timestamp (how convertToLlm rewrites a role)."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": prop(m, "timestamp")}


def convert_to_llm(messages: list[Message]) -> list[Any]:
    """Pi's ``convertToLlm``: custom roles become user messages; unknown roles are dropped."""
    out: list[Any] = []
    for m in messages:
        role = m.get("role", UNDEFINED) if type(m) is dict else prop(m, "role")
        if role == "user" or role == "assistant" or role == "toolResult":  # the usual: passed on as is
            out.append(m)
            continue
        if role == "bashExecution":
            if truthy(prop(m, "excludeFromContext")):
                continue
            out.append(_user_text(bash_execution_to_text(m), m))
        elif role == "custom":
            content = prop(m, "content")
            if type(content) is str:
                content = [{"type": "text", "text": content}]
            out.append({"role": "user", "content": content, "timestamp": prop(m, "timestamp")})
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + jsops.to_string(prop(m, "summary")) + BRANCH_SUMMARY_SUFFIX
            out.append(_user_text(text, m))
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + jsops.to_string(prop(m, "summary")) + COMPACTION_SUMMARY_SUFFIX
            out.append(_user_text(text, m))
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(m)
    return out


def _object_entries(value: JsValue) -> list[tuple[str, Any]]:
    from pitools.core.js.value import js_keys

    if type(value) is dict:
        return [(k, value[k]) for k in js_keys(value)]
    if type(value) is list:
        return [(str(i), v) for i, v in enumerate(value)]
    if type(value) is str:
        return [(str(i), ch) for i, ch in enumerate(value)]
    if nullish(value):
        raise jsops.type_error("Cannot convert undefined or null to object")
    return []


def get_current_tools(messages: list[Message]) -> list[Any]:
    """pi-ai ``getCurrentTools``: the tool set after replaying every system message's delta."""
    from pitools.core.session.tree import mkey

    tools: dict[Any, Any] = {}
    for message in messages:
        if prop(message, "role") != "system":
            continue
        removed = prop(message, "toolsRemoved")
        for tool in jsops.iterate([] if nullish(removed) else removed, "message.toolsRemoved ?? []"):
            tools.pop(mkey(prop(tool, "name")), None)
        added = prop(message, "toolsAdded")
        for tool in jsops.iterate([] if nullish(added) else added, "message.toolsAdded ?? []"):
            tools[mkey(prop(tool, "name"))] = tool
    return list(tools.values())


def get_current_system_message(messages: list[Message]) -> dict[str, Any] | None:
    """pi-ai ``getCurrentSystemMessage``: every system message folded into one checkpoint."""
    content: list[str] = []
    sections: dict[str, Any] = {}
    timestamp: Any = UNDEFINED
    seen_system = False
    for message in messages:
        if prop(message, "role") != "system":
            continue
        seen_system = True
        if nullish(timestamp):
            timestamp = prop(message, "timestamp")
        text = content_text(prop(message, "content"))
        if text:
            content.append(text)
        secs = prop(message, "sections")
        for name, value in _object_entries({} if nullish(secs) else secs):
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    if not seen_system:
        return None
    tools = get_current_tools(messages)
    if nullish(timestamp) and not tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = tools
    out["timestamp"] = 0 if nullish(timestamp) else timestamp
    return out
