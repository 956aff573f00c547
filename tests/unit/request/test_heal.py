"""The heal plan's remedies, rule by rule, on small sessions (the golden proof against Pi and
pi-ai is tests/golden/test_heal.py; this covers the mapping and the edits themselves)."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

import pytest

from pitools.core.request.heal import plan_heal, rewrite_tool_ids
from pitools.core.session.load import load
from pitools.ops.request import resolve_model

NOW = _dt.datetime(2026, 11, 3, tzinfo=_dt.UTC)
CLAUDE = "anthropic/claude-sonnet-4-5"


def _session(*messages: dict[str, Any]) -> bytes:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {"type": "thinking_level_change", "id": "t0", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "thinkingLevel": "off"},
    ]  # fmt: skip
    parent = "t0"
    for n, m in enumerate(messages, 1):
        eid = f"m{n}"
        m.setdefault("timestamp", n)
        lines.append({"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": m})  # fmt: skip
        parent = eid
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _claude(content: list[Any], stop: str = "toolUse") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "provider": "anthropic", "api": "anthropic-messages",
            "model": "claude-sonnet-4-5", "stopReason": stop}  # fmt: skip


def _plan(data: bytes, model: str = CLAUDE) -> Any:
    loaded = load(data)
    return plan_heal(list(loaded.session.entries), loaded.leaf(None), "s1", resolve_model(model, False), None, now=NOW)


def test_arguments_stored_as_a_json_string_become_the_object() -> None:
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": '{"path": "a.ts"}'}
    result = {"role": "toolResult", "toolCallId": "toolu_1", "toolName": "read",
              "content": [{"type": "text", "text": "ok"}], "isError": False}  # fmt: skip
    plan = _plan(_session({"role": "user", "content": "go"}, _claude([call]), result))
    assert [r.entry_id for r in plan.remedies] == ["m2"]
    assert plan.remedies[0].replacement == {"content": [{**call, "arguments": {"path": "a.ts"}}]}
    assert plan.after == []


def test_arguments_that_are_no_object_at_all_become_text() -> None:
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": "[1, 2]"}
    result = {"role": "toolResult", "toolCallId": "toolu_1", "toolName": "read",
              "content": [{"type": "text", "text": "ok"}], "isError": False}  # fmt: skip
    plan = _plan(_session({"role": "user", "content": "go"}, _claude([call]), result))
    assert [(r.entry_id, r.action) for r in plan.remedies] == [("m2", "replace"), ("m3", "drop")]
    assert "[1, 2]" in plan.remedies[0].replacement["content"][0]["text"]
    assert plan.after == []


def test_lone_surrogates_leave_the_arguments() -> None:
    call = {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {"command": "echo \ud800x"}}
    result = {"role": "toolResult", "toolCallId": "toolu_1", "toolName": "bash",
              "content": [{"type": "text", "text": "x"}], "isError": False}  # fmt: skip
    data = _session({"role": "user", "content": "go"}, _claude([call]), result)
    plan = _plan(data)
    assert plan.remedies[0].replacement["content"][0]["arguments"] == {"command": "echo x"}
    assert plan.after == []


def test_an_orphaned_result_is_dropped_and_nothing_else_changes() -> None:
    orphan = {"role": "toolResult", "toolCallId": "gone", "toolName": "bash",
              "content": [{"type": "text", "text": "x"}], "isError": False}  # fmt: skip
    plan = _plan(_session({"role": "user", "content": "go"}, orphan, _claude([{"type": "text", "text": "ok"}], "stop")))
    assert [(r.entry_id, r.action, r.why) for r in plan.remedies] == [("m2", "drop", ["tool-result-without-call"])]
    assert plan.entries[0]["replacement"] is None and plan.entries[0]["targetId"] == "m2"


def test_a_session_with_nothing_wrong_plans_nothing() -> None:
    plan = _plan(_session({"role": "user", "content": "go"}, _claude([{"type": "text", "text": "ok"}], "stop")))
    assert plan.entries == [] and plan.remedies == [] and plan.new_leaf_id == "m2"


def test_a_leaf_without_an_id_is_refused() -> None:
    from pitools.errors import PitoolsError

    data = _session({"role": "user", "content": "go"})
    loaded = load(data)
    with pytest.raises(PitoolsError, match="no usable id"):
        plan_heal(list(loaded.session.entries), "", "s1", resolve_model(CLAUDE, False), None)


def test_rewrite_tool_ids_changes_both_sides_and_only_bad_ids() -> None:
    bad = "call_1|fc_+/="
    entries = [
        {"type": "message", "id": "a", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": bad, "name": "x", "arguments": {}},
            {"type": "toolCall", "id": "good_1", "name": "x", "arguments": {}}]}},
        {"type": "message", "id": "r1", "message": {"role": "toolResult", "toolCallId": bad, "content": []}},
        {"type": "message", "id": "r2", "message": {"role": "toolResult", "toolCallId": "good_1", "content": []}},
        {"type": "message", "id": "b", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": "good_1", "name": "x", "arguments": {}},
            {"type": "toolCall", "id": "", "name": "x", "arguments": {}}]}},
        {"type": "message", "id": "r3", "message": {"role": "toolResult", "toolCallId": "good_1", "content": []}},
    ]  # fmt: skip
    out, rewrites = rewrite_tool_ids(entries)
    assert [(r.entry_id, r.old, r.results) for r in rewrites] == [
        ("a", bad, ["r1"]),
        ("b", "good_1", ["r3"]),
        ("b", "", []),
    ]
    assert out[2] is entries[2]  # untouched entries stay the same objects
    assert out[1]["message"]["toolCallId"] == out[0]["message"]["content"][0]["id"] == rewrites[0].new
    assert out[4]["message"]["toolCallId"] == out[3]["message"]["content"][0]["id"] == rewrites[1].new
    assert entries[0]["message"]["content"][0]["id"] == bad  # the input is not modified
    assert len({r.new for r in rewrites}) == 3


def test_a_body_over_the_size_limit_loses_the_largest_tool_output_first() -> None:
    model = {**resolve_model(CLAUDE, False), "inputLimits": {"maxRequestBytes": 8000}}
    big = {"role": "toolResult", "toolCallId": "toolu_1", "toolName": "bash",
           "content": [{"type": "text", "text": "line\n" * 6000}], "isError": False}  # fmt: skip
    small = {"role": "toolResult", "toolCallId": "toolu_2", "toolName": "bash",
             "content": [{"type": "text", "text": "ok"}], "isError": False}  # fmt: skip
    calls = [{"type": "toolCall", "id": f"toolu_{n}", "name": "bash", "arguments": {"command": "x"}} for n in (1, 2)]
    data = _session({"role": "user", "content": "go"}, _claude(calls), big, small,
                    _claude([{"type": "text", "text": "done"}], "stop"))  # fmt: skip
    loaded = load(data)
    plan = plan_heal(list(loaded.session.entries), loaded.leaf(None), "s1", model, None, now=NOW)
    assert [f.code for f in plan.before] == ["request-too-large"]
    assert [(r.entry_id, r.action) for r in plan.remedies] == [("m3", "replace")]
    text = plan.remedies[0].replacement["content"][0]["text"]
    assert text.startswith("line\n" * 400) and "characters cut by pitools heal" in text
    assert plan.after == []


def test_calls_sharing_an_id_take_their_results_in_order() -> None:
    """Two parallel calls with the same (empty) id: as text and with -o's rewrite, each keeps its own result."""
    calls = [{"type": "toolCall", "id": "", "name": "read", "arguments": {"path": p}} for p in ("a", "b")]
    results = [{"role": "toolResult", "toolCallId": "", "toolName": "read",
                "content": [{"type": "text", "text": t}], "isError": False} for t in ("AAA", "BBB")]  # fmt: skip
    data = _session({"role": "user", "content": "go"}, _claude(calls), *results)
    plan = _plan(data)
    texts = [b["text"] for b in plan.remedies[0].replacement["content"]]
    assert "AAA" in texts[0] and "BBB" not in texts[0] and "BBB" in texts[1] and "AAA" not in texts[1]
    loaded = load(data)
    out, rewrites = rewrite_tool_ids(list(loaded.session.entries))
    assert [r.results for r in rewrites] == [["m3"], ["m4"]]
    assert out[3]["message"]["toolCallId"] == rewrites[0].new and out[4]["message"]["toolCallId"] == rewrites[1].new


def test_a_message_entry_with_the_custom_role_is_not_edited() -> None:
    """Pi's appendContextEdit takes a ``custom_message`` entry but refuses a ``message`` entry whose
    role is "custom" (fuzzing healed one, and ``validate`` then warned context-edit-not-editable):
    its image stays a finding heal cannot cure."""
    from tests.golden.request_cases import PNG

    bad = {"type": "image", "data": PNG, "mimeType": "image/jpeg"}  # PNG bytes
    custom = {"role": "custom", "customType": "ext", "content": [{"type": "text", "text": "n"}, bad], "display": True}
    plan = _plan(_session({"role": "user", "content": "go"}, custom, {"role": "user", "content": "and?"}))
    assert "image-data-mismatch" in [f.code for f in plan.before]
    assert plan.remedies == [] and "image-data-mismatch" in [f.code for f in plan.after]


def _image(mime: str) -> dict[str, Any]:
    from tests.golden.request_cases import PNG

    return {"type": "image", "data": PNG, "mimeType": mime}


def _stop(text: str) -> dict[str, Any]:
    return _claude([{"type": "text", "text": text}], "stop")


def test_each_image_finding_names_only_its_own_entry() -> None:
    """The same bytes in two messages, each refused: each finding is answered by its own entry."""
    data = _session({"role": "user", "content": [{"type": "text", "text": "a"}, _image("image/bmp")]}, _stop("A"),
                    {"role": "user", "content": [{"type": "text", "text": "b"}, _image("image/bmp")]}, _stop("B"),
                    {"role": "user", "content": "thanks"})  # fmt: skip
    plan = _plan(data)
    assert [(f.code, f.index) for f in plan.before] == [("image-media-type", 0), ("image-media-type", 2)]
    assert plan.healed_by_finding() == [["m1"], ["m3"]]
    assert [r.entry_id for r in plan.remedies] == ["m1", "m3"] and plan.after == []


def test_the_same_bytes_declared_with_a_type_the_api_takes_stay() -> None:
    """Only the image the finding is about becomes a note: the same bytes as a PNG elsewhere are fine."""
    data = _session({"role": "user", "content": [{"type": "text", "text": "a"}, _image("image/png")]}, _stop("A"),
                    {"role": "user", "content": [{"type": "text", "text": "b"}, _image("image/bmp")]}, _stop("B"),
                    {"role": "user", "content": "thanks"})  # fmt: skip
    plan = _plan(data)
    assert [(f.code, f.index) for f in plan.before] == [("image-media-type", 2)]
    assert plan.healed_by_finding() == [["m3"]]
    assert [r.entry_id for r in plan.remedies] == ["m3"] and plan.after == []


def test_an_image_finding_and_a_thinking_finding_name_their_own_entries() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "thinkingSignature": '{"type": "reasoning", "id": "rs_1"}'}
    data = _session({"role": "user", "content": [{"type": "text", "text": "a"}, _image("image/bmp")]},
                    _claude([thinking, {"type": "text", "text": "A"}], "stop"),
                    {"role": "user", "content": [{"type": "text", "text": "b"}, _image("image/bmp")]}, _stop("B"),
                    {"role": "user", "content": "thanks"})  # fmt: skip
    plan = _plan(data)
    got = [(f.code, ids) for f, ids in zip(plan.before, plan.healed_by_finding(), strict=True)]
    assert got == [("image-media-type", ["m1"]), ("foreign-thinking-signature", ["m2"]), ("image-media-type", ["m3"])]


def test_each_duplicate_tool_id_names_its_own_exchange() -> None:
    """One id used by three turns: the two later calls are the duplicates, each healed with its result."""
    call = {"type": "toolCall", "id": "toolu_same", "name": "read", "arguments": {"path": "a"}}
    result = {"role": "toolResult", "toolCallId": "toolu_same", "toolName": "read",
              "content": [{"type": "text", "text": "ok"}], "isError": False}  # fmt: skip
    data = _session({"role": "user", "content": "go"}, _claude([call]), result, _claude([call]), dict(result),
                    _claude([call]), dict(result), _stop("done"))  # fmt: skip
    plan = _plan(data)
    dupes = [(f.index, ids) for f, ids in zip(plan.before, plan.healed_by_finding(), strict=True)
             if f.code == "duplicate-tool-id"]  # fmt: skip
    assert dupes == [(3, ["m4", "m5"]), (5, ["m6", "m7"])]


def test_a_string_argument_repairs_only_its_own_call() -> None:
    """A later call reuses an earlier call's id with arguments stored as text: the earlier call,
    whose arguments are fine, is not rewritten for it."""
    good = {"type": "toolCall", "id": "toolu_same", "name": "read", "arguments": {"path": "a"}}
    bad = {**good, "arguments": '{"path": "b"}'}
    result = {"role": "toolResult", "toolCallId": "toolu_same", "toolName": "read",
              "content": [{"type": "text", "text": "ok"}], "isError": False}  # fmt: skip
    data = _session({"role": "user", "content": "go"}, _claude([good]), result, _claude([bad]), dict(result),
                    _stop("done"))  # fmt: skip
    plan = _plan(data)
    by_code = {f.code: ids for f, ids in zip(plan.before, plan.healed_by_finding(), strict=True)}
    assert by_code["tool-arguments-not-object"] == ["m4"]
    assert "m2" not in {r.entry_id for r in plan.remedies}


@pytest.mark.parametrize("model", ["google/gemini-2.5-pro", "openai/gpt-4o", CLAUDE])
def test_each_orphaned_result_names_its_own_entry(model: str) -> None:
    """Two orphaned results in two turns. Gemini's finding names a whole turn's parts, no id: the
    k-th finding of the rule is the k-th orphan in Pi's messages."""

    def orphan(call: str) -> dict[str, Any]:
        return {"role": "toolResult", "toolCallId": call, "toolName": "bash",
                "content": [{"type": "text", "text": "x"}], "isError": False}  # fmt: skip

    data = _session({"role": "user", "content": "go"}, orphan("gone1"), _stop("A"), {"role": "user", "content": "more"},
                    orphan("gone2"), _stop("B"), {"role": "user", "content": "end"})  # fmt: skip
    plan = _plan(data, model)
    got = [
        ids
        for f, ids in zip(plan.before, plan.healed_by_finding(), strict=True)
        if f.code == "tool-result-without-call"
    ]
    assert got == [["m2"], ["m5"]]
