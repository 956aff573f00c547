"""Message text in Markdown: no headings of its own, no fence left open (checked with CommonMark)."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from pitools.render.md_text import code_span, no_headings

MD = MarkdownIt("commonmark")


def headings(markdown: str) -> list[str]:
    tokens = MD.parse(markdown)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


@pytest.mark.parametrize(
    "text",
    [
        "# A\n## B\ntext\n===\nmore\n---\n",
        "> # quoted\n- ## item\n1. # num\n",
        "```\n# in code\n```\n# after",
        "````md\n```\n# x\n",  # a fence left open
        "  ### indented\n#hashtag\n###### six",
        "text\r\n---\r\n# crlf\r\nx\r===",
        "~~~\n# t\n~~~~\n# out",
        "``` not a fence ``` \n# h",
    ],
)
def test_text_adds_no_heading_and_leaves_no_fence_open(text: str) -> None:
    shown = no_headings(text)
    # What follows the text (pitools' next entry heading) is still a heading, and the only one.
    assert headings(shown + "\n\n### Next") == ["Next"]


def test_text_stays_readable() -> None:
    html = MD.render(no_headings("# Plan\n1. do it\n```py\n# comment\n```\n"))
    assert "<p># Plan</p>" in html and "<li>do it</li>" in html
    assert "# comment" in html and "\\#" not in html  # code is left as written


def test_plain_text_is_unchanged() -> None:
    text = "no headings here\n\n- a list\n\n```\ncode\n```\n"
    assert no_headings(text) == text


def test_code_span() -> None:
    assert code_span("a`b\nc") == "``a`b c``"
    assert code_span("`x") == "`` `x ``"
