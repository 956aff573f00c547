"""Message text is drawn as a small Markdown, and hostile text stays inert: no markup, no script,
no request (links only to http(s), with rel=noopener; images never fetched)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, Browser
from tests.viewer.test_viewer_page import write_page

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")

TEXT = """# Plan

Some **bold**, some *emphasis*, `inline <code>` and a [safe link](https://example.com/a?b=1&c=2).

- first item
- second with `x < y`

1. one
2. two

> quoted **text**

```python
def f():
    return "</pre><script>alert(1)</script>"
```

Hostile: <img src=x onerror="alert(1)"> <script>alert(2)</script>
[bad link](javascript:alert(3)) [data link](data:text/html,<b>x</b>) ![tracker](https://evil.example/p.png)
<a href="https://evil.example" onclick="alert(4)">raw anchor</a>
"""


def test_markdown_renders_and_hostile_text_stays_inert(tmp_path: Path) -> None:
    values = [
        {"type": "session", "version": 3, "id": "md", "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-05-01T10:00:01.000Z",
            "message": {"role": "user", "content": TEXT, "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2026-05-01T10:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": TEXT}],
                "stopReason": "stop",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            },
        },
    ]
    session = tmp_path / "md.jsonl"
    session.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    page = write_page(session, tmp_path / "md.html")
    with Browser() as b:
        b.open(page.as_uri())
        found = b.eval(
            """(() => {
          const t = document.getElementById('transcript');
          const md = t.querySelector('article[data-entry-id="a1"] .md');
          return {
            h: Array.from(md.querySelectorAll('h3'), e => e.textContent),
            strong: Array.from(md.querySelectorAll('strong'), e => e.textContent),
            em: Array.from(md.querySelectorAll('em'), e => e.textContent),
            code: Array.from(md.querySelectorAll('p code, li code'), e => e.textContent),
            ul: Array.from(md.querySelectorAll('ul > li'), e => e.textContent),
            ol: Array.from(md.querySelectorAll('ol > li'), e => e.textContent),
            quote: md.querySelector('blockquote') ? md.querySelector('blockquote').textContent.trim() : null,
            fence: Array.from(md.querySelectorAll('pre'), e => e.textContent),
            links: Array.from(t.querySelectorAll('a'), a => [a.getAttribute('href'), a.rel, a.textContent]),
            imgs: document.images.length,
            scripts: document.scripts.length,
            handlers: Array.from(document.querySelectorAll('*'))
              .filter(e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length,
            text: md.innerText,
          };
        })()"""
        )
    assert found["h"] == ["Plan"]
    assert found["strong"] == ["bold", "text"] and found["em"] == ["emphasis"]
    assert found["code"] == ["inline <code>", "x < y"]
    assert found["ul"] == ["first item", "second with x < y"] and found["ol"] == ["one", "two"]
    assert found["quote"] == "quoted text"
    assert found["fence"] == ['def f():\n    return "</pre><script>alert(1)</script>"']
    # Only the https link is a link; javascript:/data: addresses and raw anchors stay text.
    for links in (found["links"],):
        assert [link[0] for link in links] == ["https://example.com/a?b=1&c=2"] * 2
        assert all(link[1] == "noopener noreferrer" for link in links)
    assert found["imgs"] == 0 and found["scripts"] == 4 and found["handlers"] == 0
    for shown in ('<img src=x onerror="alert(1)">', "<script>alert(2)</script>", "javascript:alert(3)",
                  "[image: tracker https://evil.example/p.png]", '<a href="https://evil.example"'):  # fmt: skip
        assert shown in found["text"], shown


#: Text at the renderer's size cap (longer text is shown plain), in shapes whose delimiters never
#: close or nest deeply: a search for each closer from each opener was quadratic (issue 36 item
#: 10: ``*a*a…`` took 2 s at 20,000 characters, 19.5 s at 60,000, minutes at the cap).
CAP = 200_000
HOSTILE = {
    "emphasis": "*a",
    "underscore": "_a",
    "strong": "**a",
    "nested": "*_",
    "links": "[a",
    "images": "![a",
    "code runs": "`a``",
    "quotes": "> ",
    "list continuation": "- a\n  b\n",
    "fence strings": '```\n"\\"\\"',
    "fence comments": "```\n/*a",
}


def test_markdown_at_its_size_cap_is_linear(tmp_path: Path) -> None:
    session = tmp_path / "cap.jsonl"
    header = {"type": "session", "version": 3, "id": "cap", "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/w"}
    text = ("*a" * CAP)[:CAP]
    user = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-05-01T10:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1}}  # fmt: skip
    session.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n", encoding="utf-8")
    page = write_page(session, tmp_path / "cap.html")
    with Browser() as b:
        b.open(page.as_uri())  # the entry itself is drawn, as Markdown
        md = "document.querySelector('#transcript article[data-entry-id=\"u1\"] .md')"
        assert b.eval(f"{md}.textContent") == text
        for name, unit in HOSTILE.items():
            sample = (unit * (CAP // len(unit) + 1))[:CAP]
            took = b.eval(
                "(() => { const t = performance.now(); const html = window.pitoolsViewer.markdown("
                + json.dumps(sample)
                + "); return [performance.now() - t, html.length]; })()",
                timeout=120,
            )
            # Linear: tens of milliseconds here; the quadratic rules took minutes. The bound is
            # loose for a loaded machine, and still far below what a quadratic pass needs.
            assert took[0] < 5000, (name, took)
            assert took[1] >= CAP // 2, name  # the text is all there (escaped or marked up)
