"""Multi-line strings in tool-call arguments become code blocks of their own."""

from __future__ import annotations

from pitools.render.md_args import MAX_BLOCKS, MAX_DEPTH, TextBlock, split_arguments


def test_single_line_arguments_are_left_alone() -> None:
    args = {"path": "a.py", "limit": 3, "flags": ["x", None]}
    rest, blocks = split_arguments(args)
    assert rest is args and blocks == []


def test_multi_line_strings_leave_a_pointer_and_keep_their_text() -> None:
    args = {"path": "src/app.py", "content": "def f():\r\n    return 1\n"}
    rest, blocks = split_arguments(args)
    assert rest == {"path": "src/app.py", "content": "↓ content"}
    assert blocks == [TextBlock("content", "def f():\r\n    return 1\n", "python")]
    assert args["content"].startswith("def")  # the input is not changed


def test_nested_edits_are_labelled_by_their_place() -> None:
    args = {"path": "notes.MD", "edits": [{"oldText": "a\nb", "newText": "c"}, {"new text": "d\re"}]}
    rest, blocks = split_arguments(args)
    assert rest["edits"] == [{"oldText": "↓ edits[0].oldText", "newText": "c"}, {"new text": "↓ edits[1]['new text']"}]
    labels = [(b.label, b.lang) for b in blocks]
    assert labels == [("edits[0].oldText", "markdown"), ("edits[1]['new text']", "markdown")]


def test_language_tags_come_from_pitools_own_list() -> None:
    _, blocks = split_arguments({"command": "ls\npwd"})
    assert blocks[0].lang == "sh"
    _, blocks = split_arguments({"path": "x.evil`lang", "content": "1\n2"})
    assert blocks[0].lang == ""
    _, blocks = split_arguments({"path": "/x/Makefile", "content": "1\n2"})
    assert blocks[0].lang == ""


def test_a_bare_string_is_one_block() -> None:
    rest, blocks = split_arguments("line 1\nline 2")
    assert rest == "↓ arguments" and blocks == [TextBlock("arguments", "line 1\nline 2", "")]


def test_depth_and_count_are_bounded() -> None:
    deep: object = "a\nb"
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    rest, blocks = split_arguments(deep)
    assert blocks == [] and rest is deep
    many = {f"k{i}": "x\ny" for i in range(MAX_BLOCKS + 10)}
    rest, blocks = split_arguments(many)
    assert len(blocks) == MAX_BLOCKS and rest[f"k{MAX_BLOCKS}"] == "x\ny"
