"""Attacks by session content and special files, each reproduced through the CLI (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Run
from tests.unit.test_deep_json import DEPTH, HEADER, hidden_message

CUSTOM = (
    '{"type":"custom","id":"c1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"x","data":DATA}'
)


def test_a_deeply_nested_entry_reaches_pitools_context(tmp_path: Path, run: Run) -> None:
    # Node's JSON.parse reads any depth, so Pi sends this message to the model: so must we.
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + hidden_message(DEPTH) + "\n")
    assert "hidden from pitools?" in run("context", p, "--format", "json").stdout
    assert "hidden from pitools?" in run("context", p, "--format", "markdown").stdout
    run("validate", p)  # no malformed-json finding: the file is clean


@pytest.mark.parametrize("depth", [8_000, 19_500])
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_export_of_deep_nesting_stays_linear(tmp_path: Path, run: Run, depth: int, fmt: str) -> None:
    # json.dumps(indent=2) made a 16 KB custom entry nested 8,000 deep into 128 MB of Markdown.
    deep = '{"a":' * depth + "1" + "}" * depth
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + CUSTOM.replace("DATA", deep) + "\n")
    out = tmp_path / f"out.{fmt}"
    run("export", p, "--format", fmt, "-o", out)
    size = out.stat().st_size
    assert size < 20 * p.stat().st_size + 50_000, size
    assert '"a": {' in out.read_text() or "&quot;a&quot;: {" in out.read_text()
