"""Attacks by session content and special files, each reproduced through the CLI (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Run
from tests.fuzz.markdown_check import shape
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


# -- Markdown injection ---------------------------------------------------------------------------


def _hostile_markdown_session(path: Path) -> Path:
    """The attacks of issue 12, one per field."""
    asst_usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    values = [
        {
            "type": "session",
            "version": 3,
            "id": "s\n### User",
            "timestamp": "<img src=x onerror=alert(1)>",
            "cwd": "/repo\r# Injected cwd heading `x`",
        },
        {
            "type": "session_info",
            "id": "n1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "name": "Nice name\n### User\n[click me](javascript:alert(1))",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": "n1",
            "timestamp": "<img src=x onerror=alert(2)>",
            "message": {
                "role": "user",
                "timestamp": 1,
                "content": [
                    {"type": "text", "text": "### User\nfake turn\n<script>alert(3)</script>"},
                    {"type": "image", "mimeType": "image/png\n", "data": "iVBORw0KGgo="},
                ],
            },
        },
        {
            "type": "label",
            "id": "l1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "targetId": "u1",
            "label": "x\n\n## Label heading\n[a](javascript:alert(4))",
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "l1",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {
                "role": "assistant",
                "api": "x",
                "provider": "p\n### P",
                "model": "m",
                "stopReason": "stop\n### Stop",
                "usage": asst_usage,
                "timestamp": 2,
                "content": [
                    {"type": "thinking", "thinking": "</details>\n\n### Thinking heading\n<b>x</b>"},
                    {"type": "text", "text": "```\n### Out of the fence\n```"},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "`x` ``` [l](javascript:y)",
                        "arguments": {"k": "````\n### Args"},
                    },
                ],
            },
        },
        {
            "type": "custom_message",
            "id": "c1",
            "parentId": "a1",
            "timestamp": "2026-01-01T00:00:04.000Z",
            "customType": "t\n### Custom",
            "content": "body",
            "display": True,
        },
    ]
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


@pytest.mark.parametrize("command", ["export", "context"])
def test_markdown_output_keeps_session_text_inert(tmp_path: Path, run: Run, command: str) -> None:
    p = _hostile_markdown_session(tmp_path / "s.jsonl")
    out = run(command, p, "--format", "markdown").stdout
    found = shape(out)
    assert found.problems == []
    assert found.headings.get(1) == 1
    assert set(found.headings) <= {1, 3}
    # export: user, assistant, custom message (the name is an inline line); context: 3 messages.
    assert found.headings[3] == 3, found.heading_texts
    assert "image/png\n" not in out


def test_mime_type_with_a_trailing_newline_is_not_embedded(tmp_path: Path, run: Run) -> None:
    p = _hostile_markdown_session(tmp_path / "s.jsonl")
    out = run("export", p, "--format", "markdown", "--images", "embed").stdout
    assert "data:image" not in out
    assert shape(out).problems == []
