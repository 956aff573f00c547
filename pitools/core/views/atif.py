"""One session branch as an ATIF trajectory (Agent Trajectory Interchange Format, Harbor RFC 0001).

Version implemented: ``ATIF-v1.8`` (``trajectory_id``, ``is_copied_context``, multimodal content
parts). The mapping from Pi's entries:

- user message -> ``user`` step; Pi's ``custom`` messages and ``bashExecution`` (a ``!command``
  the user ran) are user-side input too and become ``user`` steps, their Pi role in ``extra``;
- assistant message -> ``agent`` step: text as ``message``, thinking as ``reasoning_content``,
  tool calls as ``tool_calls``, the matching tool results later on the branch as its
  ``observation``, usage as ``metrics`` (``prompt_tokens`` = input + cache reads + cache writes,
  ``cached_tokens`` = cache reads, since ATIF's prompt count includes cached tokens);
- system message, compaction and branch summary -> ``system`` step (the summary text); a
  compaction step also carries ``extra.compaction`` (see :func:`_compaction_extra`);
- a message or tool result with images -> a ``ContentPart`` array (text parts and image parts
  whose ``source.path`` is a ``data:`` URL, since Pi keeps images inline); with ``images=False``,
  or for an image type ATIF does not list, the image is a short text placeholder instead;
- a tool result with no matching call earlier on the branch -> ``system`` step with an
  observation whose ``source_call_id`` is left out (ATIF requires it to match a call of the
  same step).

Entries copied from a parent session by a fork or clone get ``is_copied_context: true``
("consumers MUST filter such steps out of SFT training data"), and their usage is left out of
``final_metrics``. Other entries (model and thinking-level changes, labels, custom entries) are
not steps; model changes show in each agent step's ``model_name``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from pitools.core.js.json.encode import jsonable
from pitools.core.js.types import Entry, JsonObject, JsValue
from pitools.core.session.tree import id_text
from pitools.core.views.branch_common import entry_ms, fnum, str_or, text_of, usage_numbers

ATIF_VERSION = "ATIF-v1.8"
AGENT_NAME = "pi"

#: The image types an ATIF ``ImageSource`` accepts.
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _content(content: JsValue, images: bool) -> str | list[dict[str, Any]]:
    """A message's text, or (when it holds an image ATIF can carry) its ``ContentPart`` array."""
    if not images or type(content) is not list or not any(_carried_image(b) for b in content):
        return text_of(content, images=True)
    parts: list[dict[str, Any]] = []
    for block in content:
        if type(block) is not dict:
            continue
        if _carried_image(block):
            uri = f"data:{block['mimeType']};base64,{block['data']}"
            parts.append({"type": "image", "source": {"media_type": block["mimeType"], "path": uri}})
        elif block.get("type") in ("text", "image"):
            text = text_of([block], images=True)
            if text:
                parts.append({"type": "text", "text": text})
    return parts


def _carried_image(block: Any) -> bool:
    return (
        type(block) is dict
        and block.get("type") == "image"
        and block.get("mimeType") in IMAGE_TYPES
        and type(block.get("data")) is str
    )


def _compaction_extra(entry: dict[str, Any], step_at: dict[str, int]) -> dict[str, Any]:
    """``extra.compaction`` of a compaction step: what a reader needs to know that the steps
    before it were replaced by its summary in the model's context from here on.

    ``kept_from_step_id`` is the first step Pi kept verbatim (``firstKeptEntryId``, or the first
    step after it when that entry is not a step); absent when it is not on this branch.
    """
    out: dict[str, Any] = {"summary": True}
    if type(entry.get("tokensBefore")) in (int, float):
        out["tokens_before"] = entry["tokensBefore"]
    kept = entry.get("firstKeptEntryId")
    if type(kept) is str:
        out["pi_first_kept_entry_id"] = kept
        if kept in step_at:
            out["kept_from_step_id"] = step_at[kept]
    if entry.get("fromHook") is True:
        out["pi_from_hook"] = True
    return out


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    try:
        when = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _arguments(value: JsValue) -> dict[str, Any]:
    """ATIF wants a JSON object; Pi's arguments are one unless the file is damaged."""
    if type(value) is dict:
        return value
    return {} if value is None else {"_value": value}


def branch_trajectory(
    header: Entry,
    branch: Sequence[Entry],
    *,
    copied: Collection[str] = (),
    agent_version: str = "unknown",
    images: bool = True,
) -> JsonObject:
    """The ATIF trajectory (a JSON-ready dict) of one branch, root → leaf; ``images=False``
    writes images as text placeholders instead of content parts."""
    session_id = str_or(header.get("id"), "")
    leaf_id = id_text(branch[-1].get("id")) if branch and type(branch[-1]) is dict else ""
    steps: list[dict[str, Any]] = []
    # tool call id -> the agent step that made the call
    calls: dict[str, dict[str, Any]] = {}
    totals = {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0}
    default_model: str | None = None
    copied_steps = 0
    # entry id -> the id of the first step made at or after it (for a compaction's kept tail)
    step_at: dict[str, int] = {}

    def add(step: dict[str, Any], entry: dict[str, Any], eid: str) -> dict[str, Any]:
        nonlocal copied_steps
        full: dict[str, Any] = {"step_id": len(steps) + 1}
        ts = _iso(entry_ms(entry))
        if ts is not None:
            full["timestamp"] = ts
        full.update(step)
        extra = full.setdefault("extra", {})
        extra["pi_entry_id"] = eid
        if eid in copied:
            full["is_copied_context"] = True
            copied_steps += 1
        steps.append(full)
        return full

    for entry in branch:
        if type(entry) is not dict:
            continue
        eid = id_text(entry.get("id"))
        step_at.setdefault(eid, len(steps) + 1)
        etype = entry.get("type")
        if etype == "message":
            message = entry.get("message")
            if type(message) is not dict:
                continue
            role = message.get("role")
            if role == "user":
                add({"source": "user", "message": _content(message.get("content"), images)}, entry, eid)
            elif role == "custom":
                add(
                    {
                        "source": "user",
                        "message": _content(message.get("content"), images),
                        "extra": {"pi_role": "custom", "pi_custom_type": str_or(message.get("customType"))},
                    },
                    entry,
                    eid,
                )
            elif role == "bashExecution":
                text = f"$ {str_or(message.get('command'))}\n{str_or(message.get('output'))}"
                add({"source": "user", "message": text, "extra": {"pi_role": "bashExecution"}}, entry, eid)
            elif role == "system":
                add({"source": "system", "message": _content(message.get("content"), images)}, entry, eid)
            elif role == "assistant":
                model = str_or(message.get("model"))
                default_model = default_model or (model or None)
                step: dict[str, Any] = {"source": "agent", "message": _content(message.get("content"), images)}
                if model:
                    step["model_name"] = model
                reasoning = text_of(message.get("content"), ("thinking",))
                if reasoning:
                    step["reasoning_content"] = reasoning
                tool_calls = []
                content = message.get("content")
                for block in content if type(content) is list else ():
                    if type(block) is dict and block.get("type") == "toolCall":
                        tool_calls.append(
                            {
                                "tool_call_id": str_or(block.get("id")),
                                "function_name": str_or(block.get("name")),
                                "arguments": jsonable(_arguments(block.get("arguments"))),
                            }
                        )
                if tool_calls:
                    step["tool_calls"] = tool_calls
                nums = usage_numbers(message.get("usage"))
                extra: dict[str, Any] = {"pi_role": "assistant"}
                for key in ("provider", "api", "stopReason", "responseModel", "errorMessage"):
                    if type(message.get(key)) is str:
                        extra[f"pi_{key}"] = message[key]
                if nums is not None:
                    prompt = nums["input"] + nums["cacheRead"] + nums["cacheWrite"]
                    step["metrics"] = {
                        "prompt_tokens": prompt,
                        "completion_tokens": nums["output"],
                        "cached_tokens": nums["cacheRead"],
                        "cost_usd": fnum(nums["cost"]),
                        "extra": {"cache_write_tokens": nums["cacheWrite"]},
                    }
                    if eid not in copied:
                        totals["prompt"] += prompt
                        totals["completion"] += nums["output"]
                        totals["cached"] += nums["cacheRead"]
                        totals["cost"] += nums["cost"]
                step["extra"] = extra
                made = add(step, entry, eid)
                for call in tool_calls:
                    calls[call["tool_call_id"]] = made
            elif role == "toolResult":
                call_id = str_or(message.get("toolCallId"))
                result: dict[str, Any] = {"content": _content(message.get("content"), images)}
                result_extra = {
                    "pi_entry_id": eid,
                    "pi_tool_name": str_or(message.get("toolName")),
                    "is_error": message.get("isError") is True,
                }
                owner = calls.get(call_id)
                if owner is not None:
                    result["source_call_id"] = call_id
                    result["extra"] = result_extra
                    owner.setdefault("observation", {"results": []})["results"].append(result)
                else:
                    result["extra"] = {**result_extra, "pi_tool_call_id": call_id}
                    add({"source": "system", "message": "", "observation": {"results": [result]}}, entry, eid)
        elif etype in ("compaction", "branch_summary"):
            extra = {"pi_entry_type": etype}
            if etype == "compaction":
                if type(entry.get("tokensBefore")) in (int, float):
                    extra["pi_tokens_before"] = entry["tokensBefore"]
                extra["compaction"] = _compaction_extra(entry, step_at)
            add({"source": "system", "message": str_or(entry.get("summary")), "extra": extra}, entry, eid)

    trajectory: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": session_id,
        "trajectory_id": f"{session_id}:{leaf_id}",
        "agent": {"name": AGENT_NAME, "version": agent_version},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": totals["prompt"],
            "total_completion_tokens": totals["completion"],
            "total_cached_tokens": totals["cached"],
            "total_cost_usd": fnum(totals["cost"]),
            "total_steps": len(steps),
        },
        "extra": {"pi_leaf_id": leaf_id, "pi_copied_steps": copied_steps},
    }
    if default_model:
        trajectory["agent"]["model_name"] = default_model
    if type(header.get("cwd")) is str:
        trajectory["extra"]["pi_cwd"] = header["cwd"]
    if type(header.get("parentSession")) is str:
        trajectory["extra"]["pi_parent_session"] = header["parentSession"]
    if copied_steps:
        trajectory["notes"] = (
            "Steps with is_copied_context were copied from the parent session by a fork or clone; "
            "final_metrics counts only this session's own steps."
        )
    return trajectory


def branch_trajectories(
    header: Entry,
    branches: Iterable[Sequence[Entry]],
    *,
    copied: Collection[str] = (),
    agent_version: str = "unknown",
    images: bool = True,
) -> Iterator[JsonObject]:
    """:func:`branch_trajectory` of each branch, made only when asked for: with ``branches``
    itself lazy, one trajectory exists at a time (``export --all`` writes each before the next)."""
    for branch in branches:
        yield branch_trajectory(header, branch, copied=copied, agent_version=agent_version, images=images)
