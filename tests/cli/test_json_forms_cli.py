"""Every command's JSON is written as ``JSON.stringify`` writes it: JavaScript number forms
(``0.0000075``, never ``7.5e-6``) and key order (array-index keys first).

golden/js-number-forms is a small session whose usage costs are 0.0000075 per message (0.000015
in total) and whose tool call has arguments ``{"path": ..., "10": ..., "2": ...}`` (Pi lists them
as ``{"2", "10", "path"}``; its recordings hold the same values).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests import support

Run = Callable[..., Result]  # the `run` fixture of tests/cli/conftest.py

CASE = support.ROOT / "golden" / "js-number-forms" / "session.jsonl"
#: A float in exponent form where JavaScript writes decimals (orjson: 7.5e-6, Python: 7.5e-06).
EXPONENT = re.compile(r"\d(?:\.\d+)?e-0?[5-6]\b")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private Pi agent dir holding the case as this directory's only session; returns the copy."""
    here = support.pi_project(tmp_path, monkeypatch, tmp_path / "home" / "app", tmp_path / "home" / ".pi" / "agent")
    copy = here / "2026-03-02T09-00-00-000Z_019c21b5.jsonl"
    copy.write_bytes(CASE.read_bytes())
    return copy


ARGS_IN_JS_ORDER = '"arguments":{"2":"y","10":"x","path":"a.txt"}'

#: (argv with FILE for the session, exit code, what the JSON must hold)
CASES: dict[str, tuple[list[str], int, list[str]]] = {
    "inspect": (["inspect", "FILE", "--format", "json"], 0, ['"cost":0.000015']),
    "context": (
        ["context", "FILE", "--format", "json"],
        0,
        ['"total":0.0000075', '"input":0.0000045', ARGS_IN_JS_ORDER],
    ),
    "ls": (["ls", "--format", "json"], 0, ['"cost":0.000015']),
    "ls --no-cache": (["ls", "--no-cache", "--format", "json"], 0, ['"cost":0.000015']),
    "ls --all": (["ls", "--all", "--format", "json"], 0, ['"cost":0.000015']),
    "usage": (["usage", "--format", "json"], 0, ['"cost":0.000015']),
    "usage by session": (["usage", "--by", "session", "--breakdown", "--format", "json"], 0, ['"cost":0.000015']),
    "export jsonl": (["export", "FILE", "--format", "jsonl"], 0, ['"total":0.0000075', ARGS_IN_JS_ORDER]),
    "export otlp": (["export", "FILE", "--format", "otlp"], 0, ['"doubleValue":0.0000075', '"doubleValue":0.000015']),
}


@pytest.mark.parametrize("name", list(CASES))
def test_json_has_javascript_number_forms_and_key_order(run: Run, home: Path, name: str) -> None:
    argv, code, wanted = CASES[name]
    out = run(*[str(home) if a == "FILE" else a for a in argv], exit_code=code).stdout
    for text in wanted:
        assert text in out, text
    assert not EXPONENT.search(out), EXPONENT.search(out)


def test_atif_is_json_stringify_indented(run: Run, home: Path) -> None:
    out = run("export", home, "--format", "atif").stdout
    assert '"cost_usd": 0.0000075' in out
    assert not EXPONENT.search(out)
    assert out.index('"2": "y"') < out.index('"10": "x"') < out.index('"path": "a.txt"')
    assert '\n    {\n      "step_id": 1,' in out  # still laid out two spaces a level


def test_dataset_jsonl_rows(run: Run, home: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    run("dataset", home.parent, "-o", out, "--format", "jsonl")
    rows: list[Any] = sorted(out.rglob("*.jsonl"))
    usage = "".join(p.read_text() for p in rows if "usage" in p.parts)
    assert '"cost":0.0000075' in usage
    assert not EXPONENT.search("".join(p.read_text() for p in rows))
