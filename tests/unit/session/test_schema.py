"""The pydantic models, the fast pre-check generated from them, and the JSON Schema built from them."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from pitools.core.session import entry_precheck
from pitools.core.session import schema as model
from pitools.core.session import schema_check as model_check
from pitools.core.session.schema import (
    ENTRY_TYPES,
    MESSAGE_ROLES,
    entry_adapter,
    entry_check,
    entry_problems,
    line_adapter,
    session_json_schema,
)
from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"
SCHEMA_FILE = ROOT / "schemas" / "session.schema.json"
CHECK_FILE = ROOT / "pitools" / "core" / "session" / "entry_precheck.py"

ASSISTANT_ENTRY: dict[str, Any] = {
    "type": "message",
    "id": "a1",
    "parentId": None,
    "timestamp": "2025-01-01T00:00:00.000Z",
    "message": {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
            {"type": "text", "text": "ok"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 0,
            "cacheWrite": 0,
            "cacheWrite1h": 0,
            "totalTokens": 3,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5},
        },
        "stopReason": "toolUse",
        "timestamp": 1735689600000,
        "somethingNew": {"kept": True},
    },
}


def accepts(value: Any) -> bool:
    try:
        entry_adapter().validate_python(value)
    except ValidationError:
        return False
    return True


# -- the models -----------------------------------------------------------------------------------


def test_aliases_snake_case_attributes_and_extra_fields() -> None:
    entry = entry_adapter().validate_python(ASSISTANT_ENTRY)
    assert isinstance(entry, model.MessageEntry)
    assert entry.parent_id is None
    message = entry.message
    assert isinstance(message, model.AssistantMessage)
    assert message.stop_reason == "toolUse"
    assert message.usage.cache_write_1h == 0 and message.usage.total_tokens == 3
    assert isinstance(message.content[2], model.ToolCall)
    assert message.model_extra == {"somethingNew": {"kept": True}}
    dumped = entry.model_dump(exclude_unset=True)
    assert dumped["parentId"] is None and dumped["message"]["stopReason"] == "toolUse"
    assert dumped["message"]["usage"]["cacheWrite1h"] == 0
    assert dumped["message"]["somethingNew"] == {"kept": True}


def test_snake_case_names_do_not_count_as_pi_fields() -> None:
    entry = {k: v for k, v in ASSISTANT_ENTRY.items() if k != "parentId"} | {"parent_id": None}
    assert not accepts(entry)


@pytest.mark.parametrize(
    ("path", "value"),
    [(("message", "timestamp"), "1"), (("message", "timestamp"), True), (("message", "usage", "input"), "3")],
)
def test_validation_is_strict(path: tuple[str, ...], value: Any) -> None:
    entry = json.loads(json.dumps(ASSISTANT_ENTRY))
    target = entry
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert not accepts(entry)


def test_every_pi_entry_type_and_role_has_a_model() -> None:
    assert set(ENTRY_TYPES) == {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "context_edit",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "usage",
    }
    assert set(MESSAGE_ROLES) == {
        "user",
        "assistant",
        "toolResult",
        "system",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    }


def test_unknown_types_and_roles_fall_back_but_known_ones_do_not() -> None:
    base = {"id": "x", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z"}
    unknown = entry_adapter().validate_python({**base, "type": "bookmark", "note": 1})
    assert isinstance(unknown, model.UnknownEntry) and unknown.model_extra == {"note": 1}
    odd = entry_adapter().validate_python({**base, "type": "message", "message": {"role": "notice"}})
    assert isinstance(odd.message, model.UnknownMessage)
    assert not accepts({**base, "type": "label"})  # a known type must have its fields
    assert not accepts({**base, "type": "message", "message": {"role": "user"}})


def test_header_model() -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/w"}
    parsed = line_adapter().validate_python(header)
    assert isinstance(parsed, model.SessionHeader) and parsed.version == 3
    for bad in ({"version": 4}, {"version": "3"}, {"cwd": 1}, {"id": None}):
        with pytest.raises(ValidationError):
            line_adapter().validate_python(header | bad)


def test_entry_problems_are_readable() -> None:
    entry = json.loads(json.dumps(ASSISTANT_ENTRY))
    entry["message"]["content"][1]["text"] = 5
    del entry["message"]["usage"]["cost"]
    entry["message"]["content"].append({"type": "video"})
    problems = entry_problems(entry)
    assert problems == [
        ("invalid-field", "`message.content[1].text` should be a string (got 5)"),
        (
            "invalid-field",
            "`message.content[3]` has an unknown type (tag 'video' found using 'type') (got {\"type\":\"video\"})",
        ),
        ("missing-field", "`message.usage.cost` is required"),
    ]
    assert entry_problems(ASSISTANT_ENTRY) == []
    assert entry_problems(entry, skip=[("message", "usage")]) == problems[:2]


# -- the fast pre-check ---------------------------------------------------------------------------


@cache
def golden_values() -> tuple[Any, ...]:
    values: list[Any] = []
    for path in sorted(GOLDEN.glob("*/session.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not (isinstance(value, dict) and value.get("type") == "session"):
                values.append(value)
    return tuple(values)


def test_fast_check_agrees_with_pydantic_on_the_corpus() -> None:
    check = entry_check()
    values = golden_values()
    assert len(values) > 5000
    disagreements = [v for v in values if check(v) != accepts(v)]
    assert not disagreements, disagreements[:3]
    assert any(not check(v) for v in values)  # the corpus does hold broken entries


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def _mutate(value: Any, draw: Any) -> Any:
    """Replace, delete or keep one randomly chosen member somewhere inside ``value``."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        action = draw(st.sampled_from(["delete", "replace", "descend"]))
        out = dict(value)
        if action == "delete":
            del out[key]
        elif action == "replace":
            out[key] = draw(_JSON)
        else:
            out[key] = _mutate(value[key], draw)
        return out
    if isinstance(value, list) and value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        out_list[i] = _mutate(value[i], draw) if draw(st.booleans()) else draw(_JSON)
        return out_list
    return draw(_JSON) if draw(st.booleans()) else value


@settings(max_examples=150, deadline=None)
@given(pick=st.integers(min_value=0), data=st.data())
def test_fast_check_agrees_with_pydantic_on_mutated_entries(pick: int, data: st.DataObject) -> None:
    values = golden_values()
    original = values[pick % len(values)]
    mutated = _mutate(original, data.draw)
    assert entry_check()(mutated) == accepts(mutated), mutated


def test_the_fast_check_is_the_committed_module() -> None:
    assert entry_check() is entry_precheck.check_root
    assert entry_precheck.ENTRY_TYPES == ENTRY_TYPES and entry_precheck.MESSAGE_ROLES == MESSAGE_ROLES


def test_committed_fast_check_equals_a_fresh_generation() -> None:
    text = CHECK_FILE.read_text(encoding="utf-8")
    assert text == support.load_script("gen_schema").render_check(), "run scripts/gen_schema.py"
    assert text == model_check.render_entry_check()


def test_committed_fast_check_agrees_with_a_fresh_build() -> None:
    fresh = model_check._CheckWriter().build(model.SessionEntry)
    assert fresh is not entry_precheck.check_root
    values = golden_values()
    assert [fresh(v) for v in values] == [entry_precheck.check_root(v) for v in values]


def test_importing_the_fast_check_does_not_import_pydantic() -> None:
    code = (
        "import sys, pitools.core.session.entry_precheck; print(sorted(m for m in sys.modules if m.startswith('pyd')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, pitools.core.session.entry_precheck; print('pitools.core.session.schema' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout.strip() == "False"


class _Tagged:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)


@pytest.mark.parametrize(
    "value",
    [
        {"type": "label"},
        {"type": "session"},
        {"type": "bookmark"},
        {"type": 3},
        {},
        [],
        None,
        _Tagged(type="usage"),
        _Tagged(type="nope"),
        _Tagged(role="user"),
    ],
)
def test_discriminators_are_plain_functions_in_the_generated_module(value: Any) -> None:
    # pydantic also hands model instances to the discriminator: ``getattr`` covers them.
    assert entry_precheck._tag_type(value) == model._entry_tag(value)
    assert entry_precheck._tag_role(value) == model._message_tag(value)


def test_discriminators_read_model_instances() -> None:
    entry = entry_adapter().validate_python(ASSISTANT_ENTRY)
    assert model._entry_tag(entry) == "message" and model._message_tag(entry.message) == "assistant"


# -- the JSON Schema ------------------------------------------------------------------------------


def test_committed_schema_equals_a_fresh_generation() -> None:
    fresh = support.load_script("gen_schema").render()
    assert SCHEMA_FILE.read_text(encoding="utf-8") == fresh, "run scripts/gen_schema.py"
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == session_json_schema()


@cache
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _recorded_errors(case: str) -> bool:
    """Pi threw somewhere in the case, beyond a parent cycle or the oracle's timeout (read from the
    collection index's ``errors``: collecting this module parses no recording)."""
    return any(not e.startswith(("cycle", "timeout")) for e in support.recording_outline(case)["errors"])


def clean_v3_cases() -> list[str]:
    """v3 sessions from the reference generator (Pi-valid by construction) that Pi runs without throwing.

    Hand-written and derived cases (seeds, clones, compactions) may leave out fields Pi's types
    require, such as an assistant message's ``api``; they are covered by the validate tests.
    """
    cases = []
    for path in sorted(GOLDEN.glob("gen-s*_v3/session.jsonl")):
        case = path.parent.name
        if (path.parent / "pi.krt20000.json.xz").exists() and not _recorded_errors(case):
            cases.append(case)
    return cases


def test_there_are_clean_v3_cases() -> None:
    assert len(clean_v3_cases()) >= 20


@pytest.mark.parametrize("case", clean_v3_cases())
def test_every_line_of_a_clean_v3_golden_session_matches_the_schema(case: str) -> None:
    v = validator()
    for n, line in enumerate((GOLDEN / case / "session.jsonl").read_bytes().splitlines(), 1):
        errors = list(v.iter_errors(orjson.loads(line)))
        assert not errors, f"line {n}: {errors[0].message[:300]}"


@pytest.mark.parametrize(
    "line",
    [
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00Z"},
        {"type": "session", "id": 5, "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"},
        {"type": "label", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00Z", "targetId": 1},
        {"type": "mystery", "parentId": None, "timestamp": "2025-01-01T00:00:00Z"},
    ],
)
def test_the_schema_rejects_what_the_models_reject(line: dict[str, Any]) -> None:
    assert not validator().is_valid(line)
    with pytest.raises(ValidationError):
        line_adapter().validate_python(line)


def test_the_schema_id_names_pi_format_version() -> None:
    schema = orjson.loads(SCHEMA_FILE.read_bytes())
    assert schema["$id"] == "urn:pitools:schema:pi-session:v3"
    assert "Pi 1.6.0" in schema["$comment"]


def test_every_line_pi_itself_wrote_matches_the_schema() -> None:
    # golden/reference-written: written by Pi 1.6.0's SessionManager (scripts/record_reference_session.mjs),
    # every entry type it can append, branch summary and context edit included.
    v = validator()
    lines = (GOLDEN / "reference-written" / "session.jsonl").read_bytes().splitlines()
    types = {orjson.loads(line)["type"] for line in lines}
    assert {"session", "message", "model_change", "thinking_level_change", "compaction", "branch_summary"} <= types
    assert {"custom", "custom_message", "label", "session_info", "usage", "context_edit"} <= types
    for n, line in enumerate(lines, 1):
        errors = list(v.iter_errors(orjson.loads(line)))
        assert not errors, f"line {n}: {errors[0].message[:300]}"


def migrated_cases() -> list[str]:
    generated = sorted(p.parent.name for p in GOLDEN.glob("*_v[12]*/session.jsonl"))
    return [*generated, "v2-hook-message", "v1-compaction-by-index"]


@pytest.mark.parametrize("case", migrated_cases())
def test_what_pi_writes_when_it_migrates_matches_the_schema(case: str) -> None:
    # Pi rewrites a v1/v2 file as v3 when it opens it: the recording's header and entries are what it writes.

    recorded = orjson.loads(support.recording_text(GOLDEN / case / "pi.krt20000.json.xz"))
    if recorded.get("error"):
        pytest.skip(f"Pi cannot open {case}: {recorded['error']}")
    assert recorded["migrated"] is True
    v = validator()
    for n, line in enumerate([recorded["header"], *recorded["entries"]]):
        errors = [e.message for e in v.iter_errors(line)]
        if line.get("type") == "compaction" and "firstKeptEntryId" not in line:
            # A v1 firstKeptEntryIndex that names no entry leaves Pi's migrated compaction without
            # firstKeptEntryId (the README's compaction-missing-first-kept): the one thing Pi writes
            # that its own types reject.
            errors = [m for m in errors if m != "'firstKeptEntryId' is a required property"]
        assert not errors, f"{case} entry {n}: {errors[0][:300]}"
