"""Attacks by session content and special files, each reproduced through the CLI (issue 12)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Run
from tests.unit.test_deep_json import DEPTH, HEADER, hidden_message


def test_a_deeply_nested_entry_reaches_pitools_context(tmp_path: Path, run: Run) -> None:
    # Node's JSON.parse reads any depth, so Pi sends this message to the model: so must we.
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + hidden_message(DEPTH) + "\n")
    assert "hidden from pitools?" in run("context", p, "--format", "json").stdout
    assert "hidden from pitools?" in run("context", p, "--format", "markdown").stdout
    run("validate", p)  # no malformed-json finding: the file is clean
