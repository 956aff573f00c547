"""``export --format markdown``: message text renders as prose, only its code blocks are fenced,
and nothing in the text becomes Markdown or HTML structure (parsed with markdown-it, CommonMark)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

from tests.fuzz.markdown_check import shape

Run = Callable[..., Result]

TEXT = """Here is the fix, in two steps:

# not a heading
- not a list item
1. not an ordered list
    four spaces, not a code block
<div>not HTML</div> [not a link](javascript:alert(1)) *not emphasis* & &amp;
===
```python
def f():
    return "```"
```
after the code
~~~ {weird info}
unclosed fence runs to the end
### still inside it"""


def _session(path: Path) -> None:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "two\nlines", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": TEXT}, {"type": "text", "text": ""}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "m",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _tokens(markdown: str) -> list[Any]:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").parse(markdown)


def test_prose_is_prose_and_code_is_fenced(run: Run, tmp_path: Path) -> None:
    _session(tmp_path / "s.jsonl")
    out = run("export", tmp_path / "s.jsonl", "--format", "markdown").stdout
    assert "```markdown" not in out
    found = shape(out)
    assert found.problems == []
    assert found.headings == {1: 1, 3: 2}  # the title and the two entries: none from the text
    # Only the text's two code blocks are fenced, with the language when it is one plain word.
    assert found.fences == ["python", ""]
    tokens = _tokens(out)
    fences = [t.content for t in tokens if t.type == "fence"]
    assert fences == ['def f():\n    return "```"\n', "unclosed fence runs to the end\n### still inside it\n"]
    kinds = [t.type for t in tokens]
    # pitools' own: the list of facts under the title, and a rule before each entry.
    assert kinds.count("bullet_list_open") == 1 and kinds.count("hr") == 2
    assert not set(kinds) & {"ordered_list_open", "code_block", "html_block"}
    # Every line of the prose shows as written (inline text, line breaks kept as hard breaks).
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(out)
    for line in (
        "# not a heading",
        "- not a list item",
        "1. not an ordered list",
        "&lt;div&gt;not HTML&lt;/div&gt; [not a link](javascript:alert(1)) *not emphasis* &amp; &amp;amp;",
        "after the code",
    ):
        assert line in html
    assert "two<br />\nlines" in html
    assert "\u00a0\u00a0\u00a0\u00a0four spaces, not a code block" in html
