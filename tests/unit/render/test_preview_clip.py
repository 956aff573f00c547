"""``clip``: one line of at most ``limit`` characters, and what it leaves out counted."""

from __future__ import annotations

from pitools.render.preview import clip


def test_short_texts_are_flattened_and_kept_whole() -> None:
    assert clip("a\n\tb   c", 20) == "a b c"
    assert clip("", 5) == ""


def test_a_cut_text_ends_with_the_count_of_what_is_not_shown() -> None:
    text = "word " * 30  # flattened: 149 characters
    out = clip(text, 50)
    assert len(out.split("…")[0]) == 38 and out.endswith("[+111 chars]")
    assert len(" ".join(text.split())) == 38 + 111


def test_a_long_text_is_flattened_only_at_its_head_and_the_rest_counted_raw() -> None:
    text = "x" * 100_000
    out = clip(text, 200)
    assert out == "x" * 188 + "… [+99812 chars]"
    spaced = "y  " * 50_000  # the head flattened (whitespace runs halved), the rest counted as it is
    head = " ".join(spaced[: 8 * 200 + 64].split())
    assert clip(spaced, 200) == head[:188] + f"… [+{len(head) - 188 + len(spaced) - (8 * 200 + 64)} chars]"


def test_a_long_run_of_whitespace_is_flattened_whole() -> None:
    text = " " * 50_000 + "tail"
    assert clip(text, 200) == "tail"


def test_a_custom_message_previews_alike_as_a_message_and_as_its_custom_message_entry() -> None:
    from pitools.render.preview import entry_preview, message_preview

    fields = {"customType": "note", "content": [{"type": "text", "text": "hello\nthere"}]}
    entry = {"type": "custom_message", "id": "a", "parentId": None, "timestamp": "t", "display": True, **fields}
    assert message_preview({"role": "custom", **fields}) == entry_preview(entry) == "<note> hello there"
    assert entry_preview(entry, 10) == message_preview({"role": "custom", **fields}, 10)
