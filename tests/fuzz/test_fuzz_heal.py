"""Properties of ``pitools heal`` over the golden corpus and mutated copies of it.

For every session pitools can build a request for, and each of four APIs:

* healing is idempotent: a second plan over the healed session finds nothing more to do (in
  place, and on the branch with its tool ids rewritten as ``-o`` writes it);
* a user message's text is never removed: each text a user message on the branch had, its
  healed form still has (images may become notes; an empty message may go);
* nothing off the healed branch is touched: every edit targets an entry of the branch, the new
  entries chain from the leaf, and every other leaf's context is exactly what it was;

and the command itself never fails with a traceback on any of those inputs.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import support
from tests.fuzz.support import CLI_EXAMPLES, check_cli, hypothesis_settings
from tests.support import cli_recursion_limit

SEEDS = support.seed_sessions(max_lines=40)
SEED_NAMES = [name for name, _ in SEEDS]
HEAL_SEEDS = [n for n in SEED_NAMES if n.startswith(("heal-", "request-"))]
MODELS = ["anthropic/claude-sonnet-4-5", "openai/gpt-5", "groq/llama-3.3-70b-versatile", "google/gemini-3.5-flash"]
_MODELS: dict[str, Any] = {}


def _model(ref: str) -> dict[str, Any]:
    if ref not in _MODELS:
        from pitools.ops.request import resolve_model

        _MODELS[ref] = resolve_model(ref, use_config=False)
    return _MODELS[ref]


def _user_texts(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        content = m.get("content") if type(m) is dict else None
        if type(content) is str and content:
            out.append(content)
        elif isinstance(content, list):
            out.extend(b["text"] for b in content if type(b) is dict and b.get("type") == "text" and b.get("text"))
    return out


def _context_text(index: Any, leaf: Any) -> str | None:
    """Pi's context messages at ``leaf`` as JSON text (``buildSessionContext``)."""
    from pitools.core.context.build import build_projection, context_entries_from_path
    from pitools.core.js.json.encode import js_stringify

    path = index.session_path(leaf)
    return js_stringify(build_projection(path, context_entries_from_path(path)).messages)


def check_heal_properties(data: bytes, model_ref: str) -> None:
    from pitools.core.js.access import entry_id
    from pitools.core.request.heal import _context, plan_heal
    from pitools.core.session.load import load
    from pitools.core.session.tree import SessionIndex
    from pitools.errors import PitoolsError

    try:
        loaded = load(data)
        leaf = loaded.leaf(None)
        if leaf is None or loaded.session.migration.needed:
            return
        entries = list(loaded.session.entries)
        plan = plan_heal(entries, leaf, None, _model(model_ref), None)
    except (PitoolsError, RecursionError):
        return  # Pi rejects the file, or pi-ai cannot build a body for it: nothing to heal
    if not plan.entries:
        return
    index = loaded.index
    branch = [entry_id(e) for e in index.get_branch(leaf)]
    # Off the branch: edits target the branch only, chain from the leaf, other leaves unchanged.
    assert {e["targetId"] for e in plan.entries} <= set(branch)
    assert plan.entries[0]["parentId"] == leaf
    assert [e["parentId"] for e in plan.entries[1:]] == [e["id"] for e in plan.entries[:-1]]
    healed = SessionIndex.build([*entries, *plan.entries])
    for at in index.leaf_positions():
        other = entry_id(index.entries[at])
        if other == leaf or type(other) is not str or not other:
            continue  # a falsy id names no leaf in Pi: its walks start at the last entry instead
        try:
            before = _context_text(index, other)
        except PitoolsError:
            continue
        assert _context_text(healed, other) == before, f"leaf {other!r} changed"
    # A user message's text stays: entry by entry, each text it had is still there.
    from pitools.core.request.build import build_request

    old_build = build_request(index, leaf, None, _model(model_ref), None)
    old = _context(index, leaf, old_build.llm_messages)
    new = _context(healed, plan.new_leaf_id, plan.llm_messages)
    after: dict[Any, list[str]] = {}
    for owner, m in zip(new.owners, new.llm, strict=True):
        if owner is not None:
            after.setdefault(owner.source_id, []).extend(_user_texts([m]))
    for owner, m in zip(old.owners, old.llm, strict=True):
        source = owner.source if owner is not None else None
        if type(source) is dict and source.get("type") == "message" and m.get("role") == "user":
            for text in _user_texts([m]):
                assert text in after.get(owner.source_id, []), f"user text of {owner.source_id!r} removed"
    # Idempotent: the healed session needs nothing more.
    again = plan_heal([*entries, *plan.entries], plan.new_leaf_id, None, _model(model_ref), None)
    assert again.entries == [], [r.to_json() for r in again.remedies]
    # -o: the branch with ids rewritten leaves no id finding, and healing it is idempotent too.
    from pitools.core.request.heal import rewrite_tool_ids

    branch_entries, _ = rewrite_tool_ids(list(index.get_branch(leaf)))
    cloned = plan_heal(branch_entries, leaf, None, _model(model_ref), None)
    assert not {f.code for f in cloned.after} & {"tool-id-pattern", "tool-id-length", "duplicate-tool-id"}
    again = plan_heal([*branch_entries, *cloned.entries], cloned.new_leaf_id, None, _model(model_ref), None)
    assert again.entries == [], [r.to_json() for r in again.remedies]


def check(data: bytes, model: str) -> None:
    with cli_recursion_limit():  # deeply nested values: the depth the CLI allows
        check_heal_properties(data, model)


@hypothesis_settings()
@given(name=st.sampled_from(SEED_NAMES), model=st.sampled_from(MODELS))
def test_heal_properties_on_golden_sessions(name: str, model: str) -> None:
    check(b"".join(dict(SEEDS)[name]), model)


@hypothesis_settings()
@given(name=st.sampled_from(SEED_NAMES), seed=st.integers(0, 2**32 - 1), model=st.sampled_from(MODELS))
def test_heal_properties_on_mutated_sessions(name: str, seed: int, model: str) -> None:
    check(support.mutate_lines(random.Random(seed), dict(SEEDS)[name]), model)


def test_heal_properties_on_every_wedge() -> None:
    """The golden wedges, whole, for every model: the cases with the most to heal."""
    for name in HEAL_SEEDS:
        for model in MODELS:
            check(support.GOLDEN.joinpath(name, "session.jsonl").read_bytes(), model)


@hypothesis_settings(CLI_EXAMPLES)
@given(name=st.sampled_from(SEED_NAMES), seed=st.integers(0, 2**32 - 1))
def test_heal_command_never_crashes(name: str, seed: int, scratch: Path) -> None:
    data = support.mutate_lines(random.Random(seed), dict(SEEDS)[name])
    s = str(scratch)
    check_cli(
        data,
        scratch,
        "heal",
        invocations=[
            ["heal", s, "--for-model", MODELS[0], "--no-config"],
            ["heal", s, "--for-model", MODELS[3], "--no-config", "--format", "json"],
        ],
    )
