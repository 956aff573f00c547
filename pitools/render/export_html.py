"""A transcript as one self-contained HTML page: inline CSS, no script, no network, all text escaped.

The page forbids every external load with a Content-Security-Policy (images only as ``data:``
URIs), folds thinking and long tool output in ``<details>``, and nests branches of ``--all``
exports in indented sections.
"""

from __future__ import annotations

from collections.abc import Iterator

from pitools.render.export_md import EntryView, Part, Transcript, tool_call_json

CSS = """
:root { --fg: #1f2328; --muted: #656d76; --bg: #ffffff; --line: #d0d7de; --user: #ddf4ff;
  --assistant: #f6f8fa; --tool: #fff8c5; --error: #ffebe9; --summary: #fbefff; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #8d96a0; --bg: #0d1117; --line: #30363d; --user: #0c2d6b;
    --assistant: #161b22; --tool: #3b2e00; --error: #5d0f12; --summary: #3c1e70; --code: #161b22; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 24px 20px 64px; }
h1 { font-size: 24px; margin: 0 0 8px; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0 0 24px;
  color: var(--muted); font-size: 13px; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
article { border: 1px solid var(--line); border-radius: 8px; margin: 12px 0; padding: 10px 14px;
  background: var(--assistant); }
article.user { background: var(--user); }
article.tool, article.bash { background: var(--tool); }
article.compaction, article.branch-summary { background: var(--summary); border-width: 2px; }
article.system, article.custom, article.other, article.event { background: var(--bg); }
header.entry { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; font-size: 13px;
  color: var(--muted); margin-bottom: 6px; }
header.entry .title { font-weight: 700; color: var(--fg); font-size: 14px; overflow-wrap: anywhere; }
code, pre { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--code); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
pre.error { background: var(--error); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
blockquote { margin: 6px 0; padding: 4px 12px; border-left: 4px solid #8250df; white-space: pre-wrap;
  overflow-wrap: anywhere; }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--muted); font-size: 13px; }
.label { display: inline-block; background: #8250df; color: #fff; border-radius: 10px; padding: 0 8px;
  font-size: 12px; }
.meta { color: var(--muted); font-size: 12px; }
p.event { color: var(--muted); font-size: 13px; margin: 6px 0 6px 4px; }
.tool-call .name { font-weight: 600; }
img.embedded { max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
.image-placeholder { display: inline-block; border: 1px dashed var(--line); padding: 4px 10px;
  border-radius: 6px; color: var(--muted); font-size: 13px; }
section.branch { border-left: 3px solid var(--line); margin: 14px 0 14px 6px; padding-left: 14px; }
section.branch > h2 { font-size: 14px; color: var(--muted); margin: 4px 0; }
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _e(text: str) -> str:
    """``html.escape(text, quote=True)``, replacing only the characters that occur.

    html.escape runs five replace passes over the whole text; a search for an absent character
    is much cheaper than a replace pass (memchr), and most texts lack most of the five.
    """
    if "&" in text:  # first, so the entities made below are not escaped again
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "'" in text:
        text = text.replace("'", "&#x27;")
    return text


def _pre(out: list[str], part: Part, lang_class: str = "", text: str | None = None) -> None:
    """``<pre>`` with the part's text (or ``text``), appended to ``out`` in pieces."""
    classes = " ".join(c for c in (lang_class, "error" if part.error else "") if c)
    out.append(f'<pre class="{classes}">' if classes else "<pre>")
    out.append(_e(part.text if text is None else text))
    out.append("</pre>")


def _part_html(out: list[str], part: Part, embed: bool) -> None:
    """One part appended to ``out`` (pieces that join to its HTML)."""
    kind = part.kind
    if kind == "text":
        out.append('<div class="text">')
        out.append(_e(part.text))
        out.append("</div>")
    elif kind == "thinking":
        out.append(f'<details class="thinking"><summary>{_e(part.title or "Thinking")}</summary>')
        _pre(out, part)
        out.append("</details>")
    elif kind == "tool-call":
        out.append(
            f'<div class="tool-call"><span class="meta">Tool call</span> <code class="name">{_e(part.title)}</code>'
        )
        _pre(out, part, "json", tool_call_json(part))
        out.append("</div>")
    elif kind == "image":
        if embed and part.data and part.mime:
            out.append(f'<img class="embedded" alt="{_e(part.title)}" src="data:{_e(part.mime)};base64,')
            out.append(part.data)
            out.append('">')
        else:
            out.append(f'<span class="image-placeholder">[{_e(part.title)}]</span>')
    elif kind == "quote":
        out.append("<blockquote>")
        out.append(_e(part.text))
        out.append("</blockquote>")
    else:
        title = part.title or ("Output" if kind == "output" else "Data")
        if part.folded:
            lines = part.text.count("\n") + 1
            summary = f"{title}: {lines:,} lines, {len(part.text):,} characters (folded)"
            out.append(f"<details><summary>{_e(summary)}</summary>")
            _pre(out, part)
            out.append("</details>")
        else:
            if part.title:
                out.append(f'<div class="meta">{_e(part.title)}</div>')
            _pre(out, part)


def _entry_html(out: list[str], view: EntryView, embed: bool) -> None:
    """One entry appended to ``out`` in pieces."""
    labels = "".join(f' <span class="label">{_e(lab)}</span>' for lab in view.labels) if view.labels else ""
    entry_id = _e(view.entry_id)
    ident = f"<code>{entry_id}</code>" if entry_id else ""
    when = f"<time>{_e(view.timestamp)}</time>" if view.timestamp else ""
    anchor = f' id="entry-{entry_id}"' if entry_id else ""
    if view.inline:
        out.append(f'<p class="event"{anchor}>{_e(view.title)} {ident} {when}{labels}</p>')
        return
    meta = f'<div class="meta">{_e(" · ".join(view.meta))}</div>' if view.meta else ""
    out.append(
        f'<article class="{_e(view.kind)}"{anchor}><header class="entry">'
        f'<span class="title">{_e(view.title)}</span>'
        f"{ident}{when}{labels}</header>{meta}"
    )
    for part in view.parts:
        _part_html(out, part, embed)
    out.append("</article>")


def html_pieces(t: Transcript) -> Iterator[str]:
    """The page in pieces, made entry by entry as they are written (the pieces join to the page)."""
    h = t.header

    def text(v: object) -> str:
        return "" if v is None else v if isinstance(v, str) else str(v)

    facts = [("Session id", text(h.get("id"))), ("File", t.path), ("Working directory", text(h.get("cwd")))]
    facts.append(("Created", text(h.get("timestamp"))))
    if h.get("parentSession"):
        facts.append(("Forked from", text(h.get("parentSession"))))
    if t.all:
        facts.append(("Shown", f"the whole tree: {t.entry_count:,} entries, {t.leaf_count:,} leaves"))
    else:
        facts.append(("Shown", f"the branch ending at {t.leaf or '(none)'}"))
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="pitools">',
        f"<title>{_e(t.title)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>{_e(t.title)}</h1>",
        '<dl class="facts">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts) + "</dl>",
    ]
    # The page is these blocks joined by line breaks: each later block brings its own.
    yield "\n".join(head)
    depth = 0
    embed = t.embed_images
    for kind, item in t.items:
        if kind == "entry":
            out = ["\n"]
            _entry_html(out, item, embed)
            yield from out
        elif kind == "open":
            depth += 1
            where = f" from {item.parent_id}" if item.parent_id else " (separate root)"
            yield f'\n<section class="branch"><h2>⎇ Branch {item.number} of {item.of}{_e(where)}</h2>'
        else:
            depth -= 1
            yield "\n</section>"
    yield "\n</section>" * depth
    yield "\n</main></body></html>\n"
