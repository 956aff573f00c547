"""core/branches.py: Pi's /tree view (flatten, filters, layout, display text) and the branch list."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.parse import parse_json_line
from pitools.core.session.load import load
from pitools.core.session.tree import SessionIndex
from pitools.core.views.branches import (
    display_text,
    first_user_message,
    fork_index,
    format_read_range,
    format_tool_call,
    list_branches,
    tree_view,
)
from pitools.errors import PitoolsError
from tests import support

GOLDEN = support.GOLDEN
SEED = GOLDEN / "seed-running-example" / "session.jsonl"
HEADER = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}


def recording(case: str) -> dict[str, Any]:
    # The loader's parser: golden/hostile-deep-nesting nests deeper than json allows.
    return parse_json_line(support.recording_text(GOLDEN / case / "pi.krt20000.json.xz"))[0]


def write(tmp_path: Path, entries: list[dict[str, Any]], name: str = "s.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in [HEADER, *entries]) + "\n")
    return p


def ts(n: int) -> str:
    return f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z"


def msg(eid: str, parent: str | None, n: int, role: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, **extra}
    if content is not None:
        message["content"] = content
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts(n), "message": message}


def text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


def ids(view: Any) -> list[Any]:
    return [r.id for r in view.rows]


# -- the seed running example ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed() -> SessionIndex:
    return load(SEED).index


def test_seed_branches_match_pi(seed: SessionIndex) -> None:
    pi = recording("seed-running-example")
    result = list_branches(seed)
    assert [b.leaf_id for b in result.branches] == pi["leaves"] == ["A3", "C1"]
    assert result.default_leaf_id == "C1"
    a3, c1 = result.branches
    for b in (a3, c1):
        path = pi["byLeaf"][b.leaf_id]["path"]
        assert b.entry_count == len(path)
        assert b.depth == len(path) - 1
        assert b.tokens == pi["byLeaf"][b.leaf_id]["estimatedContextTokens"]["tokens"]
        assert b.is_leaf and b.error is None and b.label is None
    # A2 is the only entry with two children (U2 and BS1 in Pi's tree): both branches fork there.
    a2 = next(n for n in pi["tree"] if n["id"] == "A2")
    assert sorted(a2["children"]) == ["BS1", "U2"]
    assert a3.fork["id"] == c1.fork["id"] == "A2"
    # The divergent user message is the first user message after A2 on each path.
    assert a3.divergent_user["id"] == "U2"
    assert c1.divergent_user["id"] == "U2B"  # BS1 (the branch summary) comes first on that path
    assert (a3.is_default_leaf, c1.is_default_leaf) == (False, True)
    assert a3.timestamp == "2026-07-29T09:01:01Z" and c1.timestamp == "2026-07-29T09:05:00Z"
    assert (a3.tokens, c1.tokens) == (16, 13)


def test_seed_tree_default_view(seed: SessionIndex) -> None:
    view = tree_view(seed, "C1")
    # A1 holds only a tool call (no text): Pi hides it. The branch holding the leaf (BS1) comes
    # before the older U2 branch.
    assert ids(view) == ["U1", "T1", "A2", "BS1", "U2B", "A4", "U3", "A5", "U4", "A6", "C1", "U2", "A3"]
    rows = {r.id: r for r in view.rows}
    assert [rows[i].indent for i in ("U1", "T1", "A2")] == [0, 0, 0]
    assert rows["BS1"].indent == rows["U2"].indent == 1 and rows["BS1"].show_connector
    assert rows["U2B"].indent == rows["C1"].indent == rows["A3"].indent == 2  # first generation after a fork
    assert not rows["BS1"].is_last and rows["U2"].is_last
    assert {r.id for r in view.rows if r.on_path} == {
        "U1",
        "T1",
        "A2",
        "BS1",
        "U2B",
        "A4",
        "U3",
        "A5",
        "U4",
        "A6",
        "C1",
    }
    assert [r.id for r in view.rows if r.is_leaf] == ["C1"]
    assert view.rows[view.selected].id == "C1"
    assert rows["T1"].preview == "[read: auth.ts]"  # Pi shows the tool call behind a result
    assert rows["C1"].preview == "[compaction: 115k tokens]" and rows["C1"].style == "compaction"
    assert rows["BS1"].preview == "[branch summary]: 离开的 JWT 路径已完成认证改造。"
    assert rows["U2"].preview == "user: 改成 JWT"
    assert view.revisits == 0 and view.unreachable == [] and not view.multiple_roots
    assert view.entry_count == 14


def test_seed_tree_covers_pis_tree(seed: SessionIndex) -> None:
    pi_ids = {n["id"] for n in recording("seed-running-example")["tree"]}
    shown = set(ids(tree_view(seed, "C1", "all")))
    assert shown == pi_ids - {"A1"}  # the tool-call-only assistant turn is hidden even in "all"


def test_seed_tree_other_leaf_and_filters(seed: SessionIndex) -> None:
    view = tree_view(seed, "A3", "no-tools")
    assert ids(view) == ["U1", "A2", "U2", "A3", "BS1", "U2B", "A4", "U3", "A5", "U4", "A6", "C1"]
    assert view.rows[view.selected].id == "A3"
    users = tree_view(seed, "C1", "user-only")
    assert ids(users) == ["U1", "U2B", "U3", "U4", "U2"]
    # The leaf (a compaction) is hidden: Pi's cursor falls back to its nearest visible ancestor.
    assert users.rows[users.selected].id == "U4"
    assert [r.id for r in users.rows if r.children] == ["U1", "U2B", "U3"]
    assert tree_view(seed, "C1", "labeled-only").rows == []


def test_unknown_filter_is_an_error(seed: SessionIndex) -> None:
    with pytest.raises(PitoolsError, match="unknown tree filter"):
        tree_view(seed, "C1", "tools")


# -- filters on a hand-built session ---------------------------------------------------------------


@pytest.fixture
def mixed(tmp_path: Path) -> SessionIndex:
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls -la\n"}}
    entries = [
        {"type": "model_change", "id": "m1", "parentId": None, "timestamp": ts(1), "provider": "p", "modelId": "x-1"},
        {"type": "thinking_level_change", "id": "t1", "parentId": "m1", "timestamp": ts(2), "thinkingLevel": "high"},
        msg("u1", "t1", 3, "user", "hello\tthere\n"),
        msg("a1", "u1", 4, "assistant", [call], stopReason="toolUse"),
        msg("r1", "a1", 5, "toolResult", text("out"), toolCallId="c1", toolName="bash"),
        msg("a2", "r1", 6, "assistant", [], stopReason="aborted"),
        msg("a3", "a2", 7, "assistant", [], stopReason="error", errorMessage="boom\nagain"),
        {"type": "label", "id": "l1", "parentId": "a3", "timestamp": ts(8), "targetId": "u1", "label": "start"},
        {"type": "session_info", "id": "n1", "parentId": "l1", "timestamp": ts(9), "name": "demo"},
        {"type": "custom", "id": "x1", "parentId": "n1", "timestamp": ts(10), "customType": "ext", "data": {}},
        {
            "type": "context_edit",
            "id": "e1",
            "parentId": "x1",
            "timestamp": ts(11),
            "targetId": "r1",
            "replacement": None,
        },
        {"type": "usage", "id": "g1", "parentId": "e1", "timestamp": ts(12), "kind": "turn"},
        {
            "type": "custom_message",
            "id": "cm",
            "parentId": "g1",
            "timestamp": ts(13),
            "customType": "note",
            "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}],
            "display": True,
        },
        msg("b1", "cm", 14, "bashExecution", command="make test", output="ok", exitCode=0),
        msg("a4", "b1", 15, "assistant", [call]),
    ]
    return load(write(tmp_path, entries)).index


def test_filters_follow_pi(mixed: SessionIndex) -> None:
    # a4 (tool call only) is the current leaf, so it stays visible; a1 does not. Usage never shows.
    def shown(mode: str) -> list[Any]:
        return ids(tree_view(mixed, "a4", mode))

    assert shown("default") == ["u1", "r1", "a2", "a3", "cm", "b1", "a4"]
    assert shown("no-tools") == ["u1", "a2", "a3", "cm", "b1", "a4"]
    assert shown("user-only") == ["u1"]
    assert shown("labeled-only") == ["u1"]
    assert shown("all") == ["m1", "t1", "u1", "r1", "a2", "a3", "l1", "n1", "x1", "e1", "cm", "b1", "a4"]
    assert "a4" not in ids(tree_view(mixed, "cm", "default"))


def test_display_text_is_pis(mixed: SessionIndex) -> None:
    rows = {r.id: r for r in tree_view(mixed, "a4", "all").rows}
    assert rows["m1"].preview == "[model: x-1]"
    assert rows["t1"].preview == "[thinking: high]"
    assert rows["u1"].preview == "user: hello there"
    assert rows["u1"].node.label == "start"
    assert rows["r1"].preview == "[bash: ls -la]"
    assert rows["a2"].preview == "assistant: (aborted)"
    assert rows["a3"].preview == "assistant: boom again"
    assert rows["l1"].preview == "[label: start]"
    assert rows["n1"].preview == "[title: demo]"
    assert rows["x1"].preview == "[custom: ext]"
    assert rows["e1"].preview == "[context omit: r1]"
    assert rows["cm"].preview == "[note]: ab"
    assert rows["b1"].preview == "[bash]: make test"
    assert rows["a4"].preview == "assistant: (no content)"
    # Everything is one chain: no indentation at all.
    assert {r.indent for r in rows.values()} == {0}


def test_display_text_edge_values() -> None:
    assert display_text({"type": "compaction", "tokensBefore": 1499}, {}) == (
        "",
        "[compaction: 1k tokens]",
        "compaction",
    )
    assert display_text({"type": "compaction", "tokensBefore": 1500}, {})[1] == "[compaction: 2k tokens]"
    assert display_text({"type": "compaction"}, {})[1] == "[compaction: NaNk tokens]"
    assert display_text({"type": "session_info", "name": ""}, {})[1] == "[title: empty]"
    assert display_text({"type": "label", "targetId": "x"}, {})[1] == "[label: (cleared)]"
    assert display_text({"type": "context_edit", "targetId": "x", "replacement": {}}, {})[1] == "[context replace: x]"
    assert display_text({"type": "message", "message": {"role": "toolResult", "toolCallId": "zz"}}, {})[1] == "[tool]"
    assert display_text({"type": "message", "message": {"role": "system"}}, {})[1] == "[system]"
    assert display_text({"type": "message"}, {})[1] == "[message without a message]"
    assert display_text({"type": "something-new"}, {}) == ("", "", "dim")
    long = "x" * 300
    assert display_text({"type": "message", "message": {"role": "user", "content": long}}, {})[1] == "x" * 200
    # extractFullContent concatenates text blocks as JavaScript does, `undefined` included.
    user = {
        "type": "message",
        "message": {"role": "user", "content": [{"type": "text"}, {"type": "text", "text": "!"}]},
    }
    assert display_text(user, {})[1] == "undefined!"


def test_format_tool_call() -> None:
    home = "/home/me"
    assert (
        format_tool_call("read", {"path": "/home/me/src/a.ts", "offset": 10, "limit": 5}, home)
        == "[read: ~/src/a.ts:10-14]"
    )
    assert format_tool_call("read", {"file_path": "/etc/x", "limit": "3"}, home) == "[read: /etc/x:1-3]"
    assert format_tool_call("read", {"path": "/home/me"}, home) == "[read: ~]"
    assert format_tool_call("read", {"path": "/home/meow/a"}, home) == "[read: /home/meow/a]"
    assert format_tool_call("read", {"path": "/home/me/a"}, None) == "[read: /home/me/a]"
    assert format_tool_call("edit", {"path": "rel/a.py"}, home) == "[edit: rel/a.py]"
    assert format_tool_call("bash", {"command": "y" * 60}) == "[bash: " + "y" * 50 + "...]"
    assert format_tool_call("grep", {"pattern": "foo"}) == "[grep: /foo/ in .]"
    assert format_tool_call("find", {"pattern": "*.py", "path": "src"}) == "[find: *.py in src]"
    assert format_tool_call("ls", {}) == "[ls: .]"
    assert format_tool_call("mcp", {"query": "a" * 50}) == '[mcp: {"query":"' + "a" * 30 + "...]"
    assert format_read_range(None, None) == ""
    assert format_read_range(5, None) == ":5"
    assert format_read_range("x", 3) == ""
    assert format_read_range(1, 0) == ":1"  # end 0 is falsy in JavaScript


# -- structure: forks, roots, broken links ---------------------------------------------------------


def test_indent_only_at_forks(tmp_path: Path) -> None:
    entries = [msg("r", None, 1, "user", "root")]
    prev = "r"
    for i in range(5):
        entries.append(msg(f"c{i}", prev, 2 + i, "user" if i % 2 else "assistant", text(f"c{i}")))
        prev = f"c{i}"
    entries += [
        msg("x1", "c4", 10, "user", "left"),
        msg("x2", "x1", 11, "assistant", text("left reply")),
        msg("y1", "c4", 12, "user", "right"),
        msg("y2", "y1", 13, "assistant", text("right reply")),
    ]
    view = tree_view(load(write(tmp_path, entries)).index, "y2")
    rows = {r.id: r for r in view.rows}
    assert ids(view) == ["r", "c0", "c1", "c2", "c3", "c4", "y1", "y2", "x1", "x2"]  # the leaf's branch first
    assert {rows[i].indent for i in ("r", "c0", "c4")} == {0}
    assert (rows["y1"].indent, rows["y2"].indent, rows["x1"].indent, rows["x2"].indent) == (1, 2, 1, 2)
    assert [g.show for g in rows["y2"].gutters] == [True] and [g.show for g in rows["x2"].gutters] == [False]


def test_orphans_make_several_roots(tmp_path: Path) -> None:
    entries = [
        msg("a", None, 1, "user", "one"),
        msg("b", "missing", 2, "user", "two"),
        msg("c", "b", 3, "user", "three"),
    ]
    view = tree_view(load(write(tmp_path, entries)).index, "c")
    assert view.multiple_roots
    assert ids(view) == ["b", "c", "a"]  # the root holding the leaf comes first
    assert [r.parent for r in view.rows] == [None, 0, None]


def test_cycle_entries_are_unreachable_not_a_hang() -> None:
    index = load(GOLDEN / "broken-cycle" / "session.jsonl").index
    view = tree_view(index, index.leaf_id)
    assert view.rows == [] and view.selected is None
    assert view.unreachable == [f"b000000{i}" for i in range(8)]
    [branch] = list_branches(index).branches
    assert branch.leaf_id == "b0000007" and branch.entry_count is None
    assert branch.error is not None and "cycle" in branch.error


def test_duplicate_ids_are_marked_as_revisits() -> None:
    index = load(GOLDEN / "broken-duplicate-ids" / "session.jsonl").index
    view = tree_view(index, index.leaf_id, "all")
    assert view.revisits == 1
    assert [r.id for r in view.rows if r.revisit] == ["b0000002"]
    assert len(view.rows) == len(ids(view))  # finite
    result = {b.leaf_id: b for b in list_branches(index).branches}
    pi = recording("broken-duplicate-ids")
    assert list(result) == pi["leaves"]
    assert result["b0000007"].error is not None and result["b0000001"].error is None
    assert result["b0000001"].entry_count == len(pi["byLeaf"]["b0000001"]["path"])


def test_self_parent_and_two_node_loop(tmp_path: Path) -> None:
    entries = [
        msg("a", None, 1, "user", "root"),
        msg("s", "s", 2, "user", "self parent"),  # Pi's getTree makes this a root
        msg("p", "q", 3, "user", "loop p"),
        msg("q", "p", 4, "assistant", text("loop q")),
    ]
    index = load(write(tmp_path, entries)).index
    for mode in ("default", "all", "user-only"):
        view = tree_view(index, "q", mode)
        assert "s" in ids(view) and view.unreachable == ["p", "q"]
    rows = {b.leaf_id: b for b in list_branches(index).branches}
    # s is its own child and p/q are each other's: only a is a leaf. Pi's default leaf q is
    # listed anyway, with the loop as its error.
    assert list(rows) == ["a", "q"]
    assert rows["a"].error is None and rows["a"].entry_count == 1
    assert not rows["q"].is_leaf and rows["q"].is_default_leaf and "cycle" in (rows["q"].error or "")


# -- branches --------------------------------------------------------------------------------------


def test_branch_fields_on_a_small_session(tmp_path: Path) -> None:
    entries = [
        msg("u1", None, 1, "user", "start"),
        msg("a1", "u1", 2, "assistant", text("ok")),
        msg("u2", "a1", 3, "user", "plan A"),
        msg("a2", "u2", 4, "assistant", text("did A")),
        {"type": "branch_summary", "id": "bs", "parentId": "a1", "timestamp": ts(5), "fromId": "a2", "summary": "A"},
        msg("a3", "bs", 6, "assistant", text("no user message here")),
        msg("u3", "a1", 7, "user", "plan C"),
        {"type": "label", "id": "lb", "parentId": "u3", "timestamp": ts(8), "targetId": "u3", "label": "C"},
        {"type": "label", "id": "lb2", "parentId": "lb", "timestamp": ts(9), "targetId": "a2", "label": "A done"},
    ]
    result = list_branches(load(write(tmp_path, entries)).index)
    rows = {b.leaf_id: b for b in result.branches}
    assert list(rows) == ["a2", "a3", "lb2"]
    assert rows["a2"].label == "A done" and rows["a2"].fork["id"] == "a1" and rows["a2"].divergent_user["id"] == "u2"
    assert rows["a3"].divergent_user is None and rows["a3"].entry_count == 4
    # The label entries themselves form the third branch; the leaf's own label is what is reported.
    assert rows["lb2"].label is None and rows["lb2"].divergent_user["id"] == "u3" and rows["lb2"].is_default_leaf
    assert all(isinstance(b.tokens, int) for b in result.branches)


def test_default_leaf_with_children_is_listed(tmp_path: Path) -> None:
    # The last line is the parent of an earlier one: Pi's leaf (the last entry) is not a leaf.
    entries = [
        msg("u1", None, 1, "user", "root"),
        msg("a1", "z9", 3, "assistant", text("child")),
        msg("z9", "u1", 2, "user", "last"),
    ]
    result = list_branches(load(write(tmp_path, entries)).index)
    assert [(b.leaf_id, b.is_leaf, b.is_default_leaf) for b in result.branches] == [
        ("a1", True, False),
        ("z9", False, True),
    ]
    assert result.branches[1].entry_count == 2


def test_linear_session_has_no_fork() -> None:
    index = load(GOLDEN / "gen-s0003_v3" / "session.jsonl").index
    [branch] = list_branches(index).branches
    assert branch.fork is None and branch.divergent_user is not None
    path = index.get_branch(branch.leaf_id)
    assert branch.divergent_user is first_user_message(path)
    assert fork_index(path, index.children_positions()) is None


@pytest.mark.parametrize("case", sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl")))
def test_branches_agree_with_pi_recordings(case: str) -> None:
    pi = recording(case)
    try:
        index = load(GOLDEN / case / "session.jsonl").index
    except PitoolsError:
        assert not pi.get("leaves")
        return
    result = list_branches(index)
    assert [b.leaf_id for b in result.branches if b.is_leaf] == pi["leaves"]
    for b in result.branches:
        rec = pi["byLeaf"][b.leaf_id]
        if "error" in rec:
            assert b.error is not None and "cycle" in b.error
            continue
        assert b.entry_count == len(rec["path"])
        if "estimatedContextTokens" not in rec:
            # Pi throws while projecting this path (e.g. a message entry without a message).
            assert b.tokens is None and b.error is not None and "TypeError" in b.error
            continue
        expected = rec["estimatedContextTokens"]
        expected = expected.get("tokens") if isinstance(expected, dict) else None
        if expected is None:
            assert b.tokens is None or (isinstance(b.tokens, float) and math.isnan(b.tokens))
        else:
            assert b.tokens == expected


def test_token_estimate_from_the_tail_equals_the_whole_path_replay() -> None:
    # list_branches reads each leaf's path only from its last trusted usage or its latest
    # compaction's kept entry on; the whole-path replay (`pitools context`, checked against Pi by
    # the golden tests) must agree.
    from pitools.core.context.build import replay_context

    for case in ("branches-compaction-tails", "branches-usage-tails", "seed-running-example", "gen-s0003_v3"):
        index = load(GOLDEN / case / "session.jsonl").index
        for b in list_branches(index).branches:
            assert b.tokens == replay_context(index, b.leaf_id).estimate.tokens, (case, b.leaf_id)


def test_a_message_without_message_above_a_compaction_still_fails_the_estimate(tmp_path: Path) -> None:
    # Pi's model scan reads the whole path and throws there, even though the context itself
    # starts after the compaction: the estimate must not come out of the tail alone.
    entries = [
        msg("u1", None, 1, "user", "start"),
        {"type": "message", "id": "bad", "parentId": "u1", "timestamp": ts(2)},
        msg("u2", "bad", 3, "user", "go on"),
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "u2",
            "timestamp": ts(4),
            "summary": "s",
            "firstKeptEntryId": "u2",
            "tokensBefore": 10,
        },
        msg("a1", "c1", 5, "assistant", text("after")),
    ]
    [branch] = list_branches(load(write(tmp_path, entries)).index).branches
    assert branch.tokens is None and branch.error is not None and "TypeError" in branch.error
    assert branch.entry_count == 5
