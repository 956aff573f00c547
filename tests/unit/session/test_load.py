"""The loader: Pi's acceptance rules (checked against recordings) and pitools' diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.session.lines import read_session
from pitools.core.session.load import load

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
ENTRY = (
    b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    b'"message":{"role":"user","content":"hi","timestamp":1}}'
)


def write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    return p


def codes(tmp_path: Path, data: bytes) -> list[str]:
    return [d.code for d in read_session(write(tmp_path, data)).diagnostics]


def test_clean_file_has_no_diagnostics(tmp_path: Path) -> None:
    raw = read_session(write(tmp_path, HEADER + b"\n" + ENTRY + b"\n"))
    assert raw.valid
    assert raw.diagnostics == []
    assert raw.lines == [1, 2]
    assert raw.offsets == [0, len(HEADER) + 1]


@pytest.mark.parametrize(
    ("data", "code", "valid"),
    [
        (b"\xef\xbb\xbf" + HEADER + b"\n", "utf8-bom", False),
        (b"garbage\n" + HEADER + b"\n", "header-not-first", True),
        (HEADER + b"\r\n" + ENTRY + b"\r\n", "crlf-line-endings", True),
        (HEADER + b"\n" + ENTRY, "unterminated-last-line", True),
        (HEADER + b"\n42\n", "non-object-line", True),
        (HEADER + b'\nnull\n0\nfalse\n""\n', "falsy-line", True),
        (HEADER + b'\n{"type":"message",\n', "malformed-json", True),
        (HEADER + b"\n\n   \n", "blank-line", True),
        (HEADER + b'\n{"type":"label","id":"x\xff\xfe"}\n', "invalid-utf8", True),
        (ENTRY + b"\n" + HEADER + b"\n", "missing-header", False),
        (b'{"type":"session","id":5}\n', "invalid-header", False),
        (b"", "empty-file", False),
        (b"  \n\t\n", "missing-header", False),
        (HEADER + b"\n" + HEADER + b"\n", None, True),
    ],
)
def test_diagnostic_codes(tmp_path: Path, data: bytes, code: str | None, valid: bool) -> None:
    raw = read_session(write(tmp_path, data))
    assert raw.valid is valid
    if code:
        assert code in [d.code for d in raw.diagnostics]


def test_falsy_line_names_the_value_as_json_text(tmp_path: Path) -> None:
    # JSON.stringify of the parsed value: -0 and 0.0 parse to a zero that prints as 0.
    raw = read_session(write(tmp_path, HEADER + b'\nnull\n0\nfalse\n""\n-0\n0.0\n'))
    shown = [d.message.split(",")[0] for d in raw.diagnostics if d.code == "falsy-line"]
    assert shown == [f"line parses to {text}" for text in ("null", "0", "false", '""', "0", "0")]


def test_second_header_is_reported_and_dropped(tmp_path: Path) -> None:
    s = load(write(tmp_path, HEADER + b"\n" + ENTRY + b"\n" + HEADER + b"\n"), strict=False).session
    assert [d.code for d in s.diagnostics] == ["extra-header"]
    assert len(s.entries) == 1


def test_lone_surrogate_and_infinity_parse_like_json_parse(tmp_path: Path) -> None:
    s = load(write(tmp_path, HEADER + b'\n{"type":"custom","id":"c","x":"\\ud800","n":1e400}\n'), strict=False).session
    assert s.entries[0]["x"] == "\ud800"
    assert s.entries[0]["n"] == float("inf")


def test_long_line_is_reported(tmp_path: Path) -> None:
    raw = read_session(write(tmp_path, HEADER + b"\n" + ENTRY + b"\n"), max_line_bytes=50)
    assert [d.code for d in raw.diagnostics] == ["line-too-long", "line-too-long"]


def test_line_numbers_and_offsets_point_at_the_line(tmp_path: Path) -> None:
    data = HEADER + b"\n\nnot json\n" + ENTRY + b"\n"
    raw = read_session(write(tmp_path, data))
    malformed = next(d for d in raw.diagnostics if d.code == "malformed-json")
    assert malformed.line == 3
    assert data[malformed.offset : malformed.offset + 8] == b"not json"
    assert raw.lines == [1, 4]


def test_reading_never_writes(tmp_path: Path) -> None:
    p = write(tmp_path, HEADER + b"\n" + ENTRY)  # Pi would append a newline here
    before = p.read_bytes()
    load(p, strict=False)
    assert p.read_bytes() == before


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_only_give_diagnostics(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    p = tmp_path_factory.mktemp("fz") / "s.jsonl"
    p.write_bytes(data)
    raw = read_session(p)
    assert raw.valid in (True, False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([HEADER, ENTRY, b"", b"x", b"42", b"[]", b"\xff", b"{}", b"null"]), max_size=12))
def test_line_soup_never_raises(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]) -> None:
    p = tmp_path_factory.mktemp("fz") / "s.jsonl"
    p.write_bytes(b"\n".join(lines))
    s = load(p, strict=False).session
    # Pi's rule: the first line that parses to a truthy JSON value must be the header.
    first = next((x for x in lines if x in (HEADER, ENTRY, b"42", b"[]", b"{}")), None)
    assert s.valid == (first == HEADER)
