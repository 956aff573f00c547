"""Streamed exports: the pieces join to the same document, entries are rendered only as they are
written, an export that fails midway leaves no file behind, and the fast paths print exactly
what the general code prints."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.cli import output as output_mod
from pitools.core.session.load import load
from pitools.render import export_md
from pitools.render.export_md import build_transcript, markdown_pieces
from pitools.render.mdsafe import _longest_run, code, inline
from pitools.render.pretty import MAX_CHARS, pretty_json
from pitools.render.safe import safe_text
from tests import support
from tests.support import PITOOLS

SESSION = support.GOLDEN / "seed-running-example" / "session.jsonl"


@given(
    pieces=st.lists(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x2100)), max_size=10),
    encoding=st.sampled_from(["utf-8", "ascii", "latin-1"]),
)
def test_encoded_text_chunks_join_to_the_whole_text_encoded(pieces: list[str], encoding: str) -> None:
    whole = safe_text("".join(pieces)).encode(encoding, "backslashreplace")
    old = output_mod.TEXT_CHUNK
    output_mod.TEXT_CHUNK = 3  # chunk boundaries everywhere, inside pieces' runs of controls too
    try:
        chunks = list(output_mod.encoded_text(iter(pieces), encoding))
    finally:
        output_mod.TEXT_CHUNK = old
    assert b"".join(chunks) == whole


#: Characters next to the unsafe ones in code point or in UTF-8 bytes, and the unsafe ones.
_NEAR_UNSAFE = "\t\n\r\x00\x1b\x1f \x7e\x7f\x80\x9f\xa0\xb7\xe9\u061b\u061c\u061d\u0600\u200d\u200e\u200f\u2010"
_NEAR_UNSAFE += "\u2019\u2027\u2028\u202e\u202f\u2065\u2066\u2069\u206a\u2193\u30c6\ud7ff\ud800\udfff\ue000😀🚀"


@given(
    pieces=st.lists(st.text(alphabet=st.sampled_from(_NEAR_UNSAFE.replace("\ud800", "").replace("\udfff", "") + "ab")))
)
@settings(max_examples=300)
def test_safe_utf8_chunks_are_the_text_encoded(pieces: list[str]) -> None:
    # The viewer page is written as UTF-8 pieces: the same bytes as its text through encoded_text.
    for encoding in ("utf-8", "ascii"):
        chunks = output_mod.safe_utf8_chunks([p.encode("utf-8") for p in pieces], encoding)
        assert b"".join(chunks) == b"".join(output_mod.encoded_text(pieces, encoding))


@given(st.text(alphabet=st.sampled_from(_NEAR_UNSAFE.replace("\ud800", "").replace("\udfff", "") + '<"ab')))
@settings(max_examples=500)
def test_embed_json_escapes_as_the_one_regular_expression_does(text: str) -> None:
    from pitools.render import viewer_html

    data = text.encode("utf-8")
    expected = viewer_html._UNSAFE_IN_PAGE.sub(viewer_html._escape_unsafe, data.replace(b"<", b"\\u003c"))
    assert viewer_html.embed_json(data) == expected


@pytest.mark.slow
def test_safe_utf8_is_safe_text_encoded_for_every_code_point() -> None:
    for start in range(0, 0x110000, 0x800):
        text = "".join(f"\xb7{chr(c)}\u30c6" for c in range(start, start + 0x800))
        assert output_mod._safe_utf8(text) == safe_text(text).encode("utf-8", "backslashreplace"), hex(start)
    for c in range(0x110000):  # each alone, so no neighbour hides an escape
        if not 0x20 <= c < 0x7F and c not in (0x09, 0x0A):
            text = f"a{chr(c)}\xb7"
            assert output_mod._safe_utf8(text) == safe_text(text).encode("utf-8", "backslashreplace"), hex(c)


@given(st.text(alphabet=st.sampled_from(_NEAR_UNSAFE + "ab"), max_size=40))
@settings(max_examples=500)
def test_safe_utf8_near_the_unsafe_characters(text: str) -> None:
    assert output_mod._safe_utf8(text) == safe_text(text).encode("utf-8", "backslashreplace")


@pytest.mark.parametrize("all_", [False, True])
def test_pieces_make_one_block_per_entry(all_: bool) -> None:
    loaded = load(SESSION)
    leaf = None if all_ else loaded.leaf(None)
    shown = [e for e in (loaded.index.entries if all_ else loaded.index.get_branch(leaf)) if e.get("type") != "label"]
    md = "".join(markdown_pieces(build_transcript(loaded, leaf, all_=all_)))
    assert md.endswith("\n") and not md.endswith("\n\n")  # one line break ends the last block
    assert md.count("\n---\n\n") == len(shown) > 5
    # The viewer page embeds every entry of the file once, whatever the leaf.
    import json

    from pitools.ops.viewer import viewer_chunks

    html = b"".join(viewer_chunks(loaded, leaf, use_config=False)).decode("utf-8")
    data = html.split('<script type="application/json" id="pt-entries">', 1)[1].split("</script>", 1)[0]
    assert len(json.loads(data)) == len(loaded.session.entries)
    assert html.endswith("</body></html>\n")


def test_entries_are_rendered_as_they_are_written(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = export_md.entry_view

    def counting(entry: object, labels: list[str]) -> export_md.EntryView:
        view = real(entry, labels)
        made.append(view.entry_id)
        return view

    monkeypatch.setattr(export_md, "entry_view", counting)
    loaded = load(SESSION)
    transcript = build_transcript(loaded, loaded.leaf(None))
    assert made == []  # building the transcript renders nothing yet
    pieces = markdown_pieces(transcript)
    next(pieces)  # the header (given out once the first entry is made: one group is held back)
    assert len(made) == 1
    list(pieces)
    assert len(made) > 5


@pytest.mark.parametrize("format_", ["markdown", "html"])
def test_output_file_is_not_created_when_rendering_fails_midway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, format_: str
) -> None:
    calls = [0]
    if format_ == "markdown":
        real: Any = export_md.entry_view

        def failing(entry: object, labels: list[str]) -> export_md.EntryView:
            calls[0] += 1
            if calls[0] == 5:
                raise RuntimeError("boom")
            return real(entry, labels)  # type: ignore[no-any-return]

        monkeypatch.setattr(export_md, "entry_view", failing)
    else:
        from pitools.ops import viewer
        from pitools.render import viewer_html

        real = viewer.file_lines

        def failing_lines(index: object) -> Iterator[bytes | None]:
            for line in real(index):
                calls[0] += 1
                if calls[0] == 5:
                    raise RuntimeError("boom")
                yield line

        monkeypatch.setattr(viewer_html, "_BATCH", 1)  # the page's head and entries reach the file first
        monkeypatch.setattr(viewer, "file_lines", failing_lines)
    monkeypatch.setattr(output_mod, "TEXT_CHUNK", 10)  # several chunks reach the temp file first
    out = tmp_path / "out.txt"
    result = CliRunner().invoke(PITOOLS, ["export", str(SESSION), "--format", format_, "-o", str(out)])
    assert result.exit_code == 3, result.output  # an internal error (a bug), reported as such
    assert calls[0] == 5
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temp file


def test_output_file_streamed_equals_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output_mod, "TEXT_CHUNK", 100)
    runner = CliRunner()
    shown = runner.invoke(PITOOLS, ["export", str(SESSION)], catch_exceptions=False).stdout_bytes
    out = tmp_path / "out.md"
    result = runner.invoke(PITOOLS, ["export", str(SESSION), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0
    assert out.read_bytes() == shown
    again = runner.invoke(PITOOLS, ["export", str(SESSION), "-o", str(out)])
    assert again.exit_code == 1 and "already exists" in again.stderr
    assert out.read_bytes() == shown


def _hostile_session(text: str, ensure_ascii: bool) -> str:
    """A session that puts ``text`` wherever session text reaches the page: its name (the
    title), the first prompt, a label, a custom type, a model id, a tool call and its result,
    thinking; every line is valid JSON (controls escaped as JSON escapes them), and one has a
    raw CR as whitespace between its members."""
    import json

    if any("\ud800" <= c <= "\udfff" for c in text):
        ensure_ascii = True  # a lone surrogate has no UTF-8 form: only its JSON escape

    def line(value: dict[str, Any]) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":"))

    t = "2026-01-01T00:00:0%d.000Z"
    msg = {"role": "user", "content": text, "timestamp": 1}
    reply = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": text},
            {"type": "text", "text": text},
            {"type": "toolCall", "id": "c1", "name": text or "x", "arguments": {text: text}},
        ],
        "provider": "anthropic",
        "model": text,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": text, "content": text, "timestamp": 3}
    lines = [
        line({"type": "session", "version": 3, "id": "s", "timestamp": t % 0, "cwd": text}),
        line({"type": "session_info", "id": "i", "parentId": None, "timestamp": t % 1, "name": text}),
        line({"type": "message", "id": "a", "parentId": "i", "timestamp": t % 2, "message": msg}),
        line({"type": "message", "id": "b", "parentId": "a", "timestamp": t % 3, "message": reply}),
        line({"type": "message", "id": "c", "parentId": "b", "timestamp": t % 4, "message": result}),
        line({"type": "label", "id": "l", "parentId": "c", "timestamp": t % 5, "targetId": "a", "label": text}),
        line({"type": "custom", "id": "u", "parentId": "l", "timestamp": t % 6, "customType": text, "data": text}),
    ]
    lines[2] = lines[2].replace(',"parentId"', ',\r"parentId"', 1)
    return "\n".join(lines) + "\n"


_HOSTILE = _NEAR_UNSAFE.replace("\ud800", "") + "<>&\"'a\u202e\u2066\x85\x08"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(_HOSTILE), max_size=12), st.booleans())
def test_page_file_needs_no_safety_pass(text: str, ensure_ascii: bool) -> None:
    """``export --format html -o`` writes the page's pieces as they are: they must already be
    what the writer's terminal-safety pass would leave unchanged, whatever the session holds."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(_hostile_session(text, ensure_ascii).encode("utf-8"))
        out = Path(folder) / "page.html"
        with support.cli_recursion_limit():
            result = CliRunner().invoke(PITOOLS, ["export", str(path), "--format", "html", "-o", str(out)])
        assert result.exit_code == 0, result.output
        page = out.read_bytes()
    assert output_mod._UNSAFE_UTF8.search(page) is None
    assert b"".join(output_mod.safe_utf8_chunks([page])) == page


# -- the fast paths print exactly what the general code prints --------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.sampled_from([2**53, -(2**53), 2**53 + 1, 1.0, 1e-7, 1e16, 0.1])
    | st.text(alphabet=st.characters(codec=None, max_codepoint=0xE000)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(json_values)
def test_transcript_json_is_pretty_json(value: object) -> None:
    assert export_md._pretty(value) == pretty_json(value)


@pytest.mark.parametrize("depth", [14, 15, 16, 17, 40])
@pytest.mark.parametrize("leaf", [1, [], {}, "x", [1]])
def test_transcript_json_is_pretty_json_at_the_indentation_limit(depth: int, leaf: object) -> None:
    value = _nested(depth, leaf)
    assert export_md._pretty(value) == pretty_json(value)


def test_transcript_json_is_pretty_json_past_the_size_cap() -> None:
    value = {"a": "x" * (MAX_CHARS + 10)}
    assert export_md._pretty(value) == pretty_json(value)
    assert "folded" in export_md._pretty(value)


def _longest_run_by_regex(text: str) -> int:
    return max((len(m) for m in re.findall("`+", text)), default=0)


@given(st.text(alphabet="`a\n", max_size=200))
def test_longest_backtick_run(text: str) -> None:
    assert _longest_run(text) == _longest_run_by_regex(text)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 1000, 100_000])
def test_longest_backtick_run_exact_sizes(n: int) -> None:
    text = "a`" + "`" * (n - 1) + "b" + "``" + "`" * (n // 2)
    assert _longest_run(text) == _longest_run_by_regex(text) == max(n, 2 + n // 2)


@pytest.mark.parametrize(
    "value",
    [{"a": "\ud800"}, ["x\udfffy"], {"\ud83d": 1}, {"a": '\x00\x1f\x7f\x85\u2028 é 😀 \\ "'}, [1.5], [2**53 + 1]],
)
def test_transcript_json_is_pretty_json_for_awkward_values(value: object) -> None:
    assert export_md._pretty(value) == pretty_json(value)


def _code_reference(text: str) -> str:
    """mdsafe.code before its fast path: fence length from the longest run, padding rules."""
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    ticks = "`" * (_longest_run_by_regex(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text and not text.strip(" ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else "` `"


@settings(max_examples=500)
@given(st.text(alphabet=" `a\n\r\t", max_size=12))
def test_code_span_fast_path(text: str) -> None:
    assert code(text) == _code_reference(text)


@settings(max_examples=500)
@given(st.text(alphabet="\\`*_[]<>&!~|a #\n\r", max_size=16))
def test_inline_escapes_every_special_character(text: str) -> None:
    expected = re.sub(r"([\\`*_\[\]<>&!~|])", r"\\\1", re.sub(r"\r\n|\r|\n", " ", text))
    assert inline(text) == expected


@settings(max_examples=500)
@given(st.text(alphabet="&<>\"'a;#x\n", max_size=24))
def test_html_escaping_is_html_escape(text: str) -> None:
    import html

    from pitools.render.viewer_html import _e

    assert _e(text) == html.escape(text, quote=True)


@given(st.text(alphabet=st.sampled_from("AZaz09+/=-_ \né\x00"), max_size=14))
@settings(max_examples=2000)
def test_base64_size_is_what_strict_decoding_gives(text: str) -> None:
    import base64
    import binascii

    # The rule it stands for: a multiple of four long, the alphabet then at most two "=", and
    # what strict decoding then gives (strict decoding alone also takes "0000=").
    expected: int | None = None
    if len(text) % 4 == 0 and re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        try:
            expected = len(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError):
            expected = None
    assert export_md._base64_size(text) == expected


#: Pieces of prose near the rules: blanks, line breaks, fence characters (in runs of one and two,
#: never three), block openers and markup.
_PROSE_PIECES = [*" \t\r\n`~#-1.*_x\u00a0\u2028", "``", "~~", "\r\n"]


@given(text=st.lists(st.sampled_from(_PROSE_PIECES), max_size=40).map("".join))
@settings(max_examples=500)
def test_prose_without_a_fence_is_the_general_rule(text: str) -> None:
    # prose() skips the per-line fence search when no line can open one ("```" or "~~~"): the
    # same Markdown as the general rule, which looks on every line.
    from pitools.render import mdsafe

    if "```" in text or "~~~" in text:
        return
    assert mdsafe.prose(text) == mdsafe._prose_blocks(mdsafe._LINE_BREAKS.split(text))


@given(text=st.lists(st.sampled_from([*"\r\nab \u2028\x85", "\r\n"]), max_size=30).map("".join))
@settings(max_examples=300)
def test_split_lines_is_the_line_break_rule(text: str) -> None:
    # split_lines() cuts with str.split where the text holds no CR: the same lines as CommonMark's
    # line endings (LF, CR, CRLF; not U+2028 or NEL, which are ordinary characters there).
    from pitools.render import mdsafe

    assert mdsafe.split_lines(text) == mdsafe._LINE_BREAKS.split(text)
