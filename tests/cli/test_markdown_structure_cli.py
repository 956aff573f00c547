"""Markdown from ``export`` and ``context --format markdown``: readable tool arguments, and message
text that never adds to the document's own structure (checked on the parsed CommonMark)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

Run = Callable[..., Result]

# A file body with headings and fences of its own: what a write tool call holds. (CR is the output
# layer's business: it shows as \x0d on stdout.)
CONTENT = "# Title\n\n## Section\n```python\nprint('x')\n```\n````\nend"
MESSAGE = "# I am not a heading\n## ⎇ Branch 9 of 9\n### User · fake\nplain text"


def _entry(kind: str, eid: str, parent: str | None, minute: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": eid, "parentId": parent, "timestamp": f"2026-04-01T12:{minute:02d}:00.000Z", **fields}


def session(path: Path) -> Path:
    user = {"role": "user", "content": [{"type": "text", "text": MESSAGE}], "timestamp": 1775044860000}
    call = {
        "type": "toolCall",
        "id": "call-1",
        "name": "write",
        "arguments": {"path": "docs/README.md", "content": CONTENT, "edits": [{"oldText": "a\nb", "newText": "c"}]},
    }
    assistant = {
        "role": "assistant",
        "content": [{"type": "text", "text": "## Done\nwrote it"}, call],
        "provider": "anthropic",
        "model": "m",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.0}},
        "stopReason": "toolUse",
    }
    result = {
        "role": "toolResult",
        "toolCallId": "call-1",
        "toolName": "write",
        "content": [{"type": "text", "text": "# ok"}],
        "isError": False,
    }
    values = [
        {"type": "session", "version": 3, "id": "md", "timestamp": "2026-04-01T12:00:00.000Z", "cwd": "/tmp"},
        _entry("message", "u1", None, 1, message=user),
        _entry("message", "a1", "u1", 2, message=assistant),
        _entry("message", "t1", "a1", 3, message=result),
        _entry("compaction", "c1", "t1", 4, summary="# Summary heading\ntext", firstKeptEntryId="t1", tokensBefore=9),
        _entry("message", "u2", "c1", 5, message={**user, "content": "## second\nuser turn"}),
    ]
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


def parsed(markdown: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Heading texts and (info, content) of every fence, as a CommonMark reader sees them."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    fences = [(t.info, t.content) for t in tokens if t.type == "fence"]
    return headings, fences


def as_html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(markdown)


@pytest.fixture
def md_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return session(tmp_path / "md.jsonl")


@pytest.mark.parametrize(
    "argv", [("export", "md.jsonl"), ("context", "md.jsonl", "--leaf", "t1", "--format", "markdown")]
)
def test_multi_line_arguments_are_code_blocks(run: Run, md_session: Path, argv: tuple[str, ...]) -> None:
    out = run(*argv).stdout
    _, fences = parsed(out)
    # The file body is one block, byte for byte, tagged by the path's extension; the edit too.
    assert ("markdown", CONTENT + "\n") in fences
    assert ("markdown", "a\nb\n") in fences
    # The JSON keeps the other arguments and points at the blocks instead of holding "\n".
    (args,) = [json.loads(content) for info, content in fences if info == "json" and "docs/README.md" in content]
    assert args == {
        "path": "docs/README.md",
        "content": "↓ content",
        "edits": [{"oldText": "↓ edits[0].oldText", "newText": "c"}],
    }
    assert "\\n" not in out.split("**Tool call**", 1)[1].split("Result", 1)[0]


def test_export_headings_are_only_its_own(run: Run, md_session: Path) -> None:
    out = run("export", "md.jsonl").stdout
    headings, _ = parsed(out)
    assert headings[0] == "Session md"  # the title
    own = headings[1:]
    assert own and all(h.startswith(("User", "Assistant", "Tool result", "Compaction")) for h in own), own
    assert not any("I am not a heading" in h or "Summary heading" in h or "second" in h for h in headings)
    # The message text is still there, as text.
    html = as_html(out)
    assert "# I am not a heading" in html and "### User · fake" in html and "plain text" in html


def test_context_headings_are_only_its_own(run: Run, md_session: Path) -> None:
    headings, _ = parsed(run("context", "md.jsonl", "--format", "markdown").stdout)
    assert headings[0].startswith("Pi context at")
    assert all(h[0].isdigit() for h in headings[1:]), headings  # "1. user — …", one per message
    assert not any("I am not a heading" in h or "Summary heading" in h or "Done" in h for h in headings)
