"""What pitools' Markdown may contain, checked on the parsed document (markdown-it-py, CommonMark).

Session text must stay inert, so the block structure is exactly what pitools lays out:

* one ``#`` title, ``###`` headings only where pitools starts an entry or a message, branch
  headings only for ``export --all``;
* no links at all, images only as ``data:image/...;base64,...`` with a checked MIME type;
* raw HTML only in the ``<details><summary>…</summary>`` / ``</details>`` lines pitools writes;
* every fence pitools opens closes where pitools closed it (the counts match).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SUMMARY = re.compile(r"<details><summary>[^<>\r\n]*</summary>\n")
_IMAGE_SRC = re.compile(r"data:image/[A-Za-z0-9.+-]{1,64};base64,[A-Za-z0-9+/]*={0,2}")


@dataclass
class Shape:
    """The parts of a rendered document the checks count."""

    headings: dict[int, int] = field(default_factory=dict)
    heading_texts: list[str] = field(default_factory=list)
    fences: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def shape(markdown: str) -> Shape:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    out = Shape()
    tokens = md.parse(markdown)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            out.headings[level] = out.headings.get(level, 0) + 1
            out.heading_texts.append(tokens[i + 1].content)
        elif tok.type == "fence":
            out.fences.append(tok.info)
        elif tok.type == "html_block":
            if not (_SUMMARY.fullmatch(tok.content) or tok.content == "</details>\n"):
                out.problems.append(f"raw HTML block {tok.content[:80]!r}")
        elif tok.type == "code_block":
            out.problems.append(f"indented code block {tok.content[:80]!r}")
        for child in tok.children or []:
            if child.type == "html_inline":
                out.problems.append(f"raw inline HTML {child.content[:80]!r}")
            elif child.type == "link_open":
                out.problems.append(f"link to {child.attrGet('href')!r}")
            elif child.type == "image":
                src = str(child.attrGet("src") or "")
                if not _IMAGE_SRC.fullmatch(src):
                    out.problems.append(f"image from {src[:80]!r}")
    return out
