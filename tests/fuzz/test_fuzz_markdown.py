"""Hostile Markdown: session text full of Markdown and HTML must come out of
``export --format markdown`` and ``context --format markdown`` as text, never as structure.

Every string a session controls (header id, cwd and timestamp, entry ids and timestamps, names,
labels, roles, model names, tool names and arguments, MIME types, message bodies, thinking,
summaries, commands) is drawn from fragments that would start a heading, a link, raw HTML, a
code span or fence, a list or a table, with CR/LF line breaks in between. The rendered document
is parsed with markdown-it-py and checked by :func:`tests.fuzz.markdown_check.shape`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import support
from tests.fuzz.markdown_check import shape
from tests.fuzz.support import EXAMPLES, hypothesis_settings, run_cli_inprocess, save_crash
from tests.support import free_usage

#: 1/100 of the budget (each example renders two documents and parses them).
MARKDOWN_EXAMPLES = max(min(EXAMPLES, 25), EXAMPLES // 100)

FRAGMENTS = [
    "\n",
    "\r",
    "\r\n",
    "\n\n",
    "### User",
    "# Title",
    "## x",
    "[click](javascript:alert(1))",
    "![i](http://evil/x.png)",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "`",
    "``",
    "```",
    "````",
    "~~~",
    "</details>",
    "<details>",
    "</summary>",
    "<!--",
    "-->",
    "&lt;",
    "&#60;",
    "\\",
    "*",
    "_",
    "**",
    "> ",
    "- ",
    "1. ",
    "===",
    "---",
    "    indented",
    "|a|b|\n|-|-|",
    "<http://x>",
    "[ref]: http://evil",
    "[ref]",
    "\u2028",
    "\x00",
    "\t",
    " ",
    "é",
    "javascript:",
    "data:image/png;base64,",
]
hostile = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=6).map("".join)


def _ts(i: int) -> str:
    return f"2026-01-01T00:00:{i:02d}.000Z"


@st.composite
def sessions(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """A linear hostile session and how many entries export shows as blocks (### headings)."""
    header = {
        "type": "session",
        "version": 3,
        "id": draw(hostile) or "s",
        "timestamp": draw(hostile),
        "cwd": draw(hostile),
    }
    entries: list[dict[str, Any]] = []
    blocks = 0
    kinds = draw(
        st.lists(
            st.sampled_from(
                ["user", "assistant", "tool", "bash", "custom_message", "name", "label", "model", "summary", "custom"]
            ),
            min_size=1,
            max_size=8,
        )
    )
    for i, kind in enumerate(kinds):
        base: dict[str, Any] = {
            "id": f"e{i}" if draw(st.booleans()) else f"e{i}{draw(hostile)}",
            "parentId": entries[-1]["id"] if entries else None,
            "timestamp": draw(st.sampled_from([_ts(i), draw(hostile)])),
        }
        text = draw(hostile)
        if kind == "user":
            base |= {
                "type": "message",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": text},
                        {
                            "type": "image",
                            "mimeType": draw(st.sampled_from(["image/png", "image/png\n", draw(hostile)])),
                            "data": "iVBORw0KGgo=",
                        },
                    ],
                    "timestamp": 1,
                },
            }
        elif kind == "assistant":
            base |= {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": draw(hostile)},
                        {"type": "text", "text": text},
                        {
                            "type": "toolCall",
                            "id": draw(hostile),
                            "name": draw(hostile),
                            "arguments": {draw(hostile): text},
                        },
                    ],
                    "provider": draw(hostile),
                    "model": draw(hostile),
                    "stopReason": draw(hostile),
                    "usage": free_usage(),
                    "api": "x",
                    "timestamp": 2,
                },
            }
        elif kind == "tool":
            base |= {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": draw(hostile),
                    "toolName": draw(hostile),
                    "content": [{"type": "text", "text": text}],
                    "isError": False,
                    "timestamp": 3,
                },
            }
        elif kind == "bash":
            base |= {
                "type": "message",
                "message": {
                    "role": "bashExecution",
                    "command": draw(hostile),
                    "output": text,
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": 4,
                },
            }
        elif kind == "custom_message":
            base |= {"type": "custom_message", "customType": draw(hostile), "content": text, "display": True}
        elif kind == "name":
            base |= {"type": "session_info", "name": draw(hostile) or "n"}
        elif kind == "label":
            target = entries[-1]["id"] if entries else "e0"
            base |= {"type": "label", "targetId": target, "label": draw(hostile) or "l"}
        elif kind == "model":
            base |= {"type": "model_change", "provider": draw(hostile), "modelId": draw(hostile)}
        elif kind == "summary":
            base |= {"type": "branch_summary", "fromId": draw(hostile), "summary": text}
        else:
            base |= {"type": "custom", "customType": draw(hostile), "data": {draw(hostile): [text]}}
        blocks += kind not in ("name", "label", "model")
        entries.append(base)
    return [header, *entries], blocks


def _check(args: list[str], data: bytes, expected_h3: int | None) -> str:
    rc, out, err = run_cli_inprocess(args)
    support.STATS.runs["markdown"] += 1
    problems = [] if rc in (0, 1) else [f"exit {rc}: {err[-500:]}"]
    if rc == 0:
        found = shape(out)
        problems += found.problems
        if found.headings.get(1) != 1:
            problems.append(f"{found.headings.get(1, 0)} level-1 headings")
        extra = {level: n for level, n in found.headings.items() if level not in (1, 3)}
        if extra:
            problems.append(f"unexpected headings {extra}: {found.heading_texts}")
        if expected_h3 is not None and found.headings.get(3, 0) != expected_h3:
            problems.append(f"{found.headings.get(3, 0)} ### headings, expected {expected_h3}: {found.heading_texts}")
    if problems:
        path = save_crash("markdown", data, f"pitools {' '.join(args)}\n" + "\n".join(problems) + "\n\n" + out)
        raise AssertionError(f"`pitools {' '.join(args)}` on {path}: {problems}")
    return out


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@hypothesis_settings(MARKDOWN_EXAMPLES)
@given(session=sessions())
def test_session_text_stays_text_in_markdown(session: tuple[list[dict[str, Any]], int], scratch: Path) -> None:
    values, blocks = session
    data = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode("utf-8", "surrogatepass")
    scratch.write_bytes(data)
    _check(["export", str(scratch), "--format", "markdown"], data, blocks)
    rc, out, _ = run_cli_inprocess(["context", str(scratch), "--format", "json"])
    messages = sum(len(p["messages"]) for p in json.loads(out)["projection"]) if rc == 0 else None
    _check(["context", str(scratch), "--format", "markdown"], data, messages)
