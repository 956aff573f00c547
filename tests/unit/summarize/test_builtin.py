"""The offline extractive summarizer: sections, determinism, merging, truncation."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.summarize import Summarizer, SummaryRequest, build_summarizer, builtin_spec, zero_usage
from pitools.summarize.builtin import MARKER, BuiltinSummarizer, parse_sections
from tests.support import free_usage

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Add a --json flag to the report command."},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me look."},
            {"type": "text", "text": "Reading the command first."},
            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "src/report.py"}},
        ],
    },
    {
        "role": "toolResult",
        "toolCallId": "1",
        "toolName": "read",
        "content": [{"type": "text", "text": "def report(): ..."}],
        "isError": False,
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "toolCall",
                "id": "2",
                "name": "edit",
                "arguments": {"path": "src/report.py", "oldText": "a", "newText": "b"},
            },
            {"type": "toolCall", "id": "3", "name": "bash", "arguments": {"command": "pytest -q"}},
        ],
    },
    {
        "role": "toolResult",
        "toolCallId": "2",
        "toolName": "edit",
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
    },
    {
        "role": "toolResult",
        "toolCallId": "3",
        "toolName": "bash",
        "content": [{"type": "text", "text": "FAILED tests/test_report.py::test_json - KeyError: 'rows'"}],
        "isError": True,
    },
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Keep the output sorted by date."},
            {"type": "image", "data": "...", "mimeType": "image/png"},
        ],
    },
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Sorted output added; the JSON test passes now."}],
    },
    {"role": "user", "content": "Now document the flag in the README."},
]


def summarize(**fields: Any) -> str:
    request = SummaryRequest(system_prompt="ignored", prompt="ignored", **fields)
    return BuiltinSummarizer().summarize(request).text


def test_history_sections() -> None:
    text = summarize(messages=MESSAGES)
    assert text.splitlines()[0] == MARKER
    assert text == "\n".join(
        [
            MARKER,
            "",
            "## Goal",
            "Add a --json flag to the report command.",
            "",
            "## Constraints & Preferences",
            "- Keep the output sorted by date.",
            "",
            "## Progress",
            "### Done",
            "- [x] Reading the command first.",
            "- [x] Sorted output added; the JSON test passes now.",
            "",
            "### In Progress",
            "- [ ] Now document the flag in the README.",
            "",
            "### Blocked",
            "- `bash` failed: FAILED tests/test_report.py::test_json - KeyError: 'rows'",
            "",
            "## Key Decisions",
            "- (none)",
            "",
            "## Next Steps",
            "1. Now document the flag in the README.",
            "",
            "## Critical Context",
            "- `src/report.py`",
        ]
    )


def test_goal_skips_commands_and_acknowledgements_and_decisions_come_from_the_text() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "/mode plan"},
        {"role": "user", "content": "yo"},
        {"role": "user", "content": "ok thanks"},
        {"role": "user", "content": "Make the cache survive restarts."},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "I'll store it in SQLite instead of a JSON file. It is written on every change. "
                    "Next I will add a migration for old caches.",
                }
            ],
        },
        {"role": "user", "content": "ok"},
        {"role": "user", "content": "wow"},
        {"role": "user", "content": "Use WAL mode, please."},
    ]
    sections = parse_sections(summarize(messages=messages))
    assert sections["goal"] == ["Make the cache survive restarts."]
    assert sections.get("constraints", []) == []  # "ok", "wow", "yo" are not requests
    assert sections["decisions"] == ["I'll store it in SQLite instead of a JSON file."]
    assert "Use WAL mode, please." in sections["next"]
    assert "Next I will add a migration for old caches." in sections["next"]
    assert not any(item in ("ok", "wow", "yo", "/mode plan") for items in sections.values() for item in items)


def test_fences_in_messages_never_leave_a_summary_unbalanced() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix this:\n```python\nprint(1)\n"},  # an unclosed fence
        {"role": "assistant", "content": [{"type": "text", "text": "Done: ```` and ~~~ stay inline."}]},
    ]
    text = summarize(messages=messages)
    assert "```" not in text and "~~~" not in text


def test_empty_history_uses_placeholders() -> None:
    text = summarize(messages=[])
    assert "## Goal\n(none)" in text
    assert "### Blocked\n- (none)" in text
    assert "## Next Steps\n1. (none)" in text
    assert "## Critical Context\n- (none)" in text


def test_deterministic() -> None:
    first = summarize(messages=MESSAGES, custom_instructions="focus on tests")
    second = summarize(messages=[dict(m) for m in MESSAGES], custom_instructions="focus on tests")
    assert first == second
    assert "focus on tests" in first


def test_long_items_are_truncated() -> None:
    text = summarize(messages=[{"role": "user", "content": "word " * 200}])
    goal = text.split("## Goal\n", 1)[1].split("\n", 1)[0]
    assert len(goal) < 300 and goal.endswith("chars]") and "…" in goal


def test_many_items_are_capped() -> None:
    messages = [{"role": "assistant", "content": [{"type": "text", "text": f"step {i}"}]} for i in range(30)]
    text = summarize(messages=messages)
    assert "- [x] (10 earlier items omitted)" in text
    assert "step 29" in text and "step 9\n" not in text


def test_merge_with_previous_summary() -> None:
    previous = summarize(messages=MESSAGES) + "\n\n<read-files>\nsrc/report.py\n</read-files>"
    later = [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "README updated."},
                {"type": "toolCall", "id": "9", "name": "write", "arguments": {"path": "README.md"}},
            ],
        },
        {"role": "user", "content": "Release it."},
    ]
    text = summarize(messages=later, previous_summary=previous)
    sections = parse_sections(text)
    assert sections["goal"] == ["Add a --json flag to the report command."]
    # The earlier "next step" is now just one of the later requests.
    assert sections["constraints"] == [
        "Keep the output sorted by date.",
        "Now document the flag in the README.",
    ]
    assert sections["done"][-1] == "README updated."
    assert "Reading the command first." in sections["done"]
    assert sections["blocked"][0].startswith("`bash` failed")
    assert sections["next"] == ["Release it."]
    assert sections["in_progress"] == ["Release it."]
    assert sections["context"] == ["`src/report.py`", "`README.md`"]
    assert "<read-files>" not in text
    assert text.count(MARKER) == 1
    # Merging the same new messages again adds nothing twice.
    assert summarize(messages=later, previous_summary=text) == text


def test_turn_prefix_sections() -> None:
    text = summarize(kind="turnPrefix", messages=MESSAGES[:6])
    assert text.splitlines()[0] == MARKER
    assert "## Original Request\nAdd a --json flag to the report command." in text
    assert (
        "## Progress So Far\n- Reading the command first.\n- Tools used: read (1 call), edit (1 call), bash (1 call)"
        in text
    )
    assert "## Context Needed to Continue\n- `bash` failed" in text
    assert "- `src/report.py`" in text


def test_result_usage_is_zero() -> None:
    result = build_summarizer(builtin_spec()).summarize(SummaryRequest(messages=MESSAGES))
    assert result.usage == zero_usage()
    assert result.usage == free_usage(0, 0)
    assert (result.provider, result.model, result.attempts) == ("pitools", "builtin", 1)
    assert isinstance(build_summarizer(builtin_spec()), Summarizer)


_text = st.text(max_size=60)
_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _text}),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "name": _text,
            "arguments": st.dictionaries(st.sampled_from(["path", "x"]), _text),
        }
    ),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _text}),
)
_message = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "content": st.one_of(_text, st.lists(_block, max_size=3))}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.lists(_block, max_size=3)}),
    st.fixed_dictionaries(
        {
            "role": st.just("toolResult"),
            "toolName": _text,
            "isError": st.booleans(),
            "content": st.lists(_block, max_size=2),
        }
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    messages=st.lists(_message, max_size=8),
    previous=st.one_of(st.none(), _text),
    kind=st.sampled_from(["history", "turnPrefix"]),
)
def test_any_messages_give_a_marked_deterministic_summary(
    messages: list[dict[str, Any]], previous: str | None, kind: str
) -> None:
    fields = {"messages": messages, "previous_summary": previous, "kind": kind}
    text = summarize(**fields)
    assert text.startswith(MARKER + "\n")
    assert summarize(**fields) == text


def test_lone_surrogates_do_not_reach_the_summary() -> None:
    text = summarize(messages=[{"role": "user", "content": "fix \ud83d this"}])
    assert "fix  this" in text
    text.encode("utf-8")


def test_summarizers_satisfy_cores_protocol() -> None:
    """core defines the Summarizer protocol; both implementations in summarize satisfy it."""
    from pitools.core.compaction.summarizer import Summarizer
    from pitools.summarize import build_summarizer, builtin_spec
    from pitools.summarize.client import HttpSummarizer

    assert isinstance(build_summarizer(builtin_spec()), Summarizer)
    assert issubclass(HttpSummarizer, Summarizer)


def _golden_requests() -> list[tuple[str, SummaryRequest]]:
    from pitools.core.compaction.plan import summary_inputs
    from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
    from pitools.core.session.load import load
    from pitools.errors import PitoolsError
    from tests import support

    out = []
    for file in sorted(support.GOLDEN.glob("*/session.jsonl")):
        try:
            loaded = load(str(file))
        except PitoolsError:
            continue  # a file Pi rejects
        if loaded.session.migration.needed:
            continue  # compact --apply refuses these
        for leaf in loaded.index.leaves():
            for keep in (20000, 2000, 300):
                try:
                    branch = loaded.index.get_branch(leaf)
                    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=keep))
                    requests = [] if prep is None else summary_inputs(loaded, leaf, prep)
                except PitoolsError:
                    continue  # Pi would throw here too
                out.extend((f"{file.parent.name}@{leaf}/{keep}", r) for r in requests)
    return out


def test_builtin_summaries_of_every_golden_session_read_like_summaries() -> None:
    requests = _golden_requests()
    assert len(requests) > 300
    for where, request in requests:
        text = BuiltinSummarizer().summarize(request).text
        assert text.count("```") % 2 == 0 and text.count("~~~") % 2 == 0, where  # every fence balanced
        sections = parse_sections(text)
        for goal in sections.get("goal", [])[:1]:
            assert not goal.startswith("/") and len(goal.split()) >= 2, (where, goal)
        assert not any("×" in item for item in sections.get("decisions", [])), where  # no tool counts


def test_a_request_without_spaces_is_still_a_request() -> None:
    assert parse_sections(summarize(messages=[{"role": "user", "content": "检查认证实现"}]))["goal"] == ["检查认证实现"]
