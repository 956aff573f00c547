"""``load()``'s keywords, which replaced the other doors: each gives what the old door gave.

Every golden session is loaded the plain way and through the keyword under test; the two must
agree (the plain way is held to Pi by the golden conformance test).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from pitools.core.session.load import Loaded, LoadedSession, Stream, load
from pitools.core.session.migrate import MigrationError
from pitools.errors import SessionParseError
from tests import support

GOLDEN = sorted(p for p in support.GOLDEN.glob("*/session.jsonl") if p.stat().st_size < 2_000_000)
IDS = [p.parent.name for p in GOLDEN]
HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'


def _loose(path: Path) -> LoadedSession | None:
    try:
        return load(path, strict=False, freeze=False)
    except MigrationError:
        return None


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_a_stream_sees_what_a_load_keeps(path: Path) -> None:
    loaded = _loose(path)
    raw, values = load(path, keep="none")
    seen = [(line, offset, size) for _value, line, offset, size in values]
    if loaded is None:
        return
    kept = loaded.session.raw
    assert seen == list(zip(kept.lines, kept.offsets, kept.lengths, strict=True))
    assert raw.diagnostics == kept.diagnostics
    assert raw.valid == kept.valid


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_strict_raises_where_loose_says_invalid(path: Path) -> None:
    loaded = _loose(path)
    if loaded is None:
        return
    if loaded.session.valid:
        strict = load(path, freeze=False).session
        assert strict.lines == loaded.session.lines and strict.diagnostics == loaded.session.diagnostics
        return
    assert loaded.session.entries == [] and loaded.index.ids == []
    with pytest.raises(SessionParseError):
        load(path, freeze=False)


@pytest.mark.parametrize("path", GOLDEN[:40], ids=IDS[:40])
def test_tap_sees_every_byte_and_a_function_sees_every_value(path: Path) -> None:
    chunks: list[bytes] = []
    seen: list[Any] = []

    def reduce(value: Any) -> Any:
        seen.append(value)
        return value

    with contextlib.suppress(SessionParseError, MigrationError):
        load(path, keep=reduce, tap=chunks.append, strict=False, freeze=False)
    assert b"".join(chunks) == path.read_bytes()
    loaded = _loose(path)
    if loaded is not None and not loaded.session.migration.needed:
        with contextlib.suppress(RecursionError):  # hostile-deep-nesting: too deep for ==
            assert seen == loaded.session.raw.values


def test_a_path_object_is_a_file_never_a_session_reference(tmp_path: Path) -> None:
    with pytest.raises(SessionParseError, match="cannot read file") as caught:
        load(Path("no-such-session"), cwd=str(tmp_path), env={"HOME": str(tmp_path)})
    assert caught.value.path == "no-such-session"


def test_bytes_load_whole_under_the_context_policy_and_cannot_stream() -> None:
    loaded: Loaded = load(HEADER, keep="context")
    assert loaded.kept == "all" and loaded.path == "<bytes>"
    assert load(HEADER, name="mine.jsonl").path == "mine.jsonl"
    with pytest.raises(ValueError):
        load(HEADER, keep="none")  # type: ignore[call-overload]


def test_a_stream_reads_parts_of_a_file(tmp_path: Path) -> None:
    entry = b'{"type":"custom","id":"c1","parentId":null,"timestamp":"t"}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + entry + entry)
    first = load(path, keep="none", stop=len(HEADER) + len(entry), finish=False)
    assert isinstance(first, Stream)
    assert [line for _v, line, _o, _s in first.values] == [1, 2]
    later = load(path, keep="none", start=len(HEADER) + len(entry), finish=False)
    assert [(line, offset) for _v, line, offset, _s in later.values] == [(1, len(HEADER) + len(entry))]
