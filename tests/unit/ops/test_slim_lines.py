"""ops/slim's line splitter gives exactly what the loader's line reader gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitools.core.session.load import iter_file_lines
from pitools.ops.slim import file_lines

GOLDEN = Path(__file__).resolve().parents[3] / "golden"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"a",
        b"a\n",
        b"a\nb",
        b"a\r\nb\r\n",
        b"\n\n\nx\n\n",
        b"x" * 100 + b"\n" + b"y" * 37,
        b"x" * 1000,
        (b"z" * 250 + b"\n") * 9 + b"tail",
    ],
)
@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 22])
def test_same_lines_as_the_loader(tmp_path: Path, data: bytes, chunk: int) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    assert list(file_lines(str(path), chunk)) == list(iter_file_lines(str(path)))


@pytest.mark.parametrize("chunk", [13, 4096])
def test_same_lines_on_golden_files(chunk: int) -> None:
    for path in sorted(GOLDEN.glob("*/*.jsonl")):
        assert list(file_lines(str(path), chunk)) == list(iter_file_lines(str(path))), path
